package proxy

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ccproxy/ccproxy/protocol"
)

// permissionRequest is a permission/request whose input is size bytes of
// a Write tool's content (with characters JSON escapes).
func permissionRequest(size int) protocol.PermissionRequest {
	input, _ := json.Marshal(map[string]any{"file_path": "/tmp/x.html", "content": strings.Repeat("<p>é & \"q\"</p>\n", size/16+1)})
	return protocol.PermissionRequest{Session: "s-0123456789abcdef", RequestID: "req-1", ToolName: "Write", Input: input,
		ToolUseID: "toolu_1", MCP: &protocol.MCPRef{Server: "my.srv", Tool: "do-it"}, Deadline: time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)}
}

// The frames encoded with protocol.AppendFrame are byte for byte those
// json.Marshal makes of the same Frame.
func TestFramesEncoding(t *testing.T) {
	marshal := func(f protocol.Frame, err error) []byte {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	check := func(what string, got []byte, err error, want []byte) {
		t.Helper()
		if err != nil {
			t.Errorf("%s: %v", what, err)
		} else if string(got) != string(want) {
			t.Errorf("%s:\n got %s\nwant %s", what, got, want)
		}
		if !json.Valid(got) {
			t.Errorf("%s: not valid JSON: %s", what, got)
		}
	}

	pr := permissionRequest(100)
	got, err := protocol.EncodePush(protocol.TypePermissionRequest, pr)
	check("permission/request", got, err, marshal(protocol.NewPush(protocol.TypePermissionRequest, pr)))
	st := protocol.SessionState{Session: "s-0123456789abcdef", State: protocol.StateIdle}
	got, err = protocol.EncodePush(protocol.TypeSessionState, st)
	check("session/state", got, err, marshal(protocol.NewPush(protocol.TypeSessionState, st)))

	for _, id := range []json.RawMessage{json.RawMessage(`"req-é-1"`), json.RawMessage(`42`), nil} {
		res := protocol.SessionCreateResult{Session: "s-0123456789abcdef", State: protocol.StateStarting, Cwd: "/home/u/<project>"}
		got, err = encodeReply(id, res)
		check("reply "+string(id), got, err, marshal(protocol.NewReply(id, res)))
		got, err = encodeReply(id, nil)
		check("empty reply "+string(id), got, err, marshal(protocol.NewReply(id, nil)))
		pe := protocol.Errorf(protocol.CodeBadRequest, "session/send: data.text: <bad> & wrong")
		pe.Details = &protocol.ErrorDetails{Fields: []protocol.FieldError{{Path: "data.text", Message: "required"}}}
		check("error reply "+string(id), encodeError(id, pe), nil, marshal(protocol.NewErrorReply(id, pe), nil))
		check("internal error reply "+string(id), encodeError(id, errors.New("secret /path")), nil, marshal(protocol.NewErrorReply(id, errors.New("x")), nil))
	}
}

// The cost of a permission/request push with a 1 MiB input: its data is
// encoded once, then copied into the frame (before protocol.AppendFrame,
// json.Marshal of the Frame scanned and copied it once more).
func BenchmarkEncodePush(b *testing.B) {
	pr := permissionRequest(1 << 20)
	b.SetBytes(int64(len(pr.Input)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := protocol.EncodePush(protocol.TypePermissionRequest, pr); err != nil {
			b.Fatal(err)
		}
	}
}
