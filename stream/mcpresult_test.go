package stream

import (
	"bytes"
	"encoding/base64"
	"reflect"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

func TestNormalizeToolResult(t *testing.T) {
	blob := []byte{0, 1, 2, 3, 254, 255}
	blobB64 := base64.StdEncoding.EncodeToString(blob)
	cases := []struct {
		name     string
		content  string
		mode     AttachmentMode
		wantText string
		wantAtts []Attachment
	}{
		{"texts", `[{"type":"text","text":"one"},{"type":"text","text":"two"}]`, AttachInline, "one\ntwo", nil},
		{"empty array", `[]`, AttachInline, "", nil},
		{"null", `null`, AttachInline, "", nil},
		{"absent", ``, AttachInline, "", nil},
		{"mcp image, inline", `[{"type":"text","text":"look:"},{"type":"image","data":"` + imgB64 + `","mimeType":"image/png"}]`, AttachInline,
			"look:\n[image image/png 34 B]",
			[]Attachment{{Kind: "image", MediaType: "image/png", Size: len(imgBytes), SHA256: imgSHA, Data: imgB64}}},
		{"mcp image, strip", `[{"type":"image","data":"` + imgB64 + `","mimeType":"image/png"}]`, AttachStrip,
			"[image image/png 34 B]",
			[]Attachment{{Kind: "image", MediaType: "image/png", Size: len(imgBytes), SHA256: imgSHA}}},
		{"embedded text resource", `[{"type":"resource","resource":{"uri":"x://r","mimeType":"text/plain","text":"body"}}]`, AttachInline, "body", nil},
		{"embedded blob", `[{"type":"resource","resource":{"uri":"x://b","mimeType":"application/octet-stream","blob":"` + blobB64 + `"}}]`, AttachStrip,
			"[resource application/octet-stream x://b 6 B]",
			[]Attachment{{Kind: "resource", MediaType: "application/octet-stream", URI: "x://b", Size: len(blob), SHA256: sha(blob)}}},
		{"resource link", `[{"type":"resource_link","uri":"x://r","name":"readme"}]`, AttachInline, "[resource link: readme] x://r", nil},
		{"a string", `"plain"`, AttachInline, "plain", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			text, atts, err := NormalizeToolResult([]byte(c.content), Options{Attachments: c.mode})
			if err != nil {
				t.Fatal(err)
			}
			if text != c.wantText {
				t.Errorf("text = %q, want %q", text, c.wantText)
			}
			if !reflect.DeepEqual(atts, c.wantAtts) {
				t.Errorf("attachments = %+v, want %+v", atts, c.wantAtts)
			}
			// The same content in a session tool_result normalizes the same.
			content := c.content
			if content == "" {
				content = "null"
			}
			ev := NewNormalizer(Options{Attachments: c.mode}).Normalize([]byte(userEvent(`{"type":"tool_result","tool_use_id":"t1","content":`+content+`}`, "")))
			block := gjson.GetBytes(ev.JSON, "message.content.0")
			if got := block.Get("content").String(); got != text {
				t.Errorf("session normalization gives %q, direct gives %q", got, text)
			}
			if got, want := block.Get("attachments").Raw, string(bytes.Join(attachmentPieces(atts), nil)); len(atts) > 0 && got != want {
				t.Errorf("session attachments %s, direct %s", got, want)
			}
		})
	}
}

func TestNormalizeToolResultInvalid(t *testing.T) {
	_, _, err := NormalizeToolResult([]byte(`[{"type":"text"`), Options{})
	if err == nil || !strings.Contains(err.Error(), "not valid JSON") {
		t.Fatalf("err = %v, want a 'not valid JSON' error", err)
	}
}
