package stream

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
)

func TestUserTurn(t *testing.T) {
	png := base64.StdEncoding.EncodeToString([]byte("\x89PNG..."))
	tests := []struct {
		name    string
		text    string
		images  []Image
		limit   int
		want    string
		wantErr string
	}{
		{name: "text", text: "hi <b>\u2028there", want: `{"message":{"content":"hi <b>\u2028there","role":"user"},"parent_tool_use_id":null,"session_id":"default","type":"user"}`},
		{name: "text and image", text: "look", images: []Image{{MediaType: "image/png", Data: png}},
			want: `{"message":{"content":[{"type":"text","text":"look"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + png + `"}}],"role":"user"},"parent_tool_use_id":null,"session_id":"default","type":"user"}`},
		{name: "image only", images: []Image{{MediaType: "image/png", Data: png}},
			want: `{"message":{"content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + png + `"}}],"role":"user"},"parent_tool_use_id":null,"session_id":"default","type":"user"}`},
		{name: "empty", text: "  ", wantErr: "text is empty"},
		{name: "bad media type", text: "x", images: []Image{{MediaType: "text/html", Data: png}}, wantErr: `images[0]: media type "text/html"`},
		{name: "bad base64", text: "x", images: []Image{{MediaType: "image/png", Data: "%%%"}}, wantErr: "images[0]: data is not valid base64"},
		{name: "too big", text: "x", images: []Image{{MediaType: "image/png", Data: base64.StdEncoding.EncodeToString(make([]byte, MaxImageBytes+1))}}, wantErr: "images[0]: 5242881 bytes (5.0 MiB) of data, more than the 5242880 bytes (5.0 MiB) allowed: image too large"},
		// The sizes are exact before decoding too, whatever the padding.
		{name: "too big, no padding", text: "x", images: []Image{{MediaType: "image/png", Data: base64.StdEncoding.EncodeToString(make([]byte, 3000))}}, limit: 2999, wantErr: "images[0]: 3000 bytes (2.9 KiB) of data, more than the 2999 bytes (2.9 KiB) allowed: image too large"},
		{name: "too big, two padding", text: "x", images: []Image{{MediaType: "image/png", Data: base64.StdEncoding.EncodeToString(make([]byte, 3001))}}, limit: 2999, wantErr: "images[0]: 3001 bytes (2.9 KiB) of data, more than the 2999 bytes (2.9 KiB) allowed: image too large"},
		{name: "too big, one padding", text: "x", images: []Image{{MediaType: "image/png", Data: base64.StdEncoding.EncodeToString(make([]byte, 3002))}}, limit: 2999, wantErr: "images[0]: 3002 bytes (2.9 KiB) of data, more than the 2999 bytes (2.9 KiB) allowed: image too large"},
		{name: "over a lower limit", text: "x", images: []Image{{MediaType: "image/png", Data: png}}, limit: 4, wantErr: "bytes of data, more than the 4 bytes allowed: image too large"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			limit := tt.limit
			if limit == 0 {
				limit = MaxImageBytes
			}
			got, err := UserTurnLimit(tt.text, tt.images, limit)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || strings.Contains(tt.wantErr, "too large") != errors.Is(err, ErrImageTooLarge) {
					t.Fatalf("err = %v, want it to say %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			assertOneLine(t, got)
			jsonEqual(t, string(got), tt.want)
		})
	}
}

func TestControlMessages(t *testing.T) {
	got, err := ControlRequest("req_1", "mcp_set_servers", map[string]any{"servers": map[string]any{"a": map[string]any{"command": "x", "args": []string{}}}})
	if err != nil {
		t.Fatal(err)
	}
	assertOneLine(t, got)
	jsonEqual(t, string(got), `{"type":"control_request","request_id":"req_1","request":{"subtype":"mcp_set_servers","servers":{"a":{"command":"x","args":[]}}}}`)

	if _, err := ControlRequest("req_2", "interrupt", []int{1}); err == nil {
		t.Error("fields that are not an object must be refused")
	}
	if _, err := ControlRequest("", "interrupt", nil); err == nil {
		t.Error("a request without id must be refused")
	}

	got, err = ControlSuccess("abc", map[string]any{"behavior": "allow", "updatedInput": map[string]any{"m": "x"}})
	if err != nil {
		t.Fatal(err)
	}
	jsonEqual(t, string(got), `{"type":"control_response","response":{"subtype":"success","request_id":"abc","response":{"behavior":"allow","updatedInput":{"m":"x"}}}}`)

	got = ControlError("abc", "not supported by ccproxy: \"bogus\"\n")
	assertOneLine(t, got)
	jsonEqual(t, string(got), `{"type":"control_response","response":{"subtype":"error","request_id":"abc","error":"not supported by ccproxy: \"bogus\"\n"}}`)
}

func assertOneLine(t *testing.T, b []byte) {
	t.Helper()
	if !bytes.HasSuffix(b, []byte("\n")) || bytes.Count(b, []byte("\n")) != 1 || bytes.Contains(b, []byte("\u2028")) {
		t.Fatalf("not exactly one line: %q", b)
	}
}
