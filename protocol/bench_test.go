package protocol

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// BenchmarkDecode measures ParseFrame+DecodeRequest/DecodePush of typical
// frames: a small request, a turn with a 1 MiB image, an mcp/status push.
func BenchmarkDecode(b *testing.B) {
	img := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("\x89PNG\r\n", 1<<20/6)))
	var servers []string
	for i := range 20 {
		servers = append(servers, fmt.Sprintf(`{"name":"srv-%02d","status":"connected","scope":"user","approval":"not-needed","tools":["a","b","c"],"toolCount":3,"transport":"stdio","origin":"session","observedAt":"2026-11-21T00:36:12.204Z"}`, i))
	}
	frames := []struct {
		name string
		raw  string
	}{
		{"subscribe", `{"type":"session/subscribe","id":8,"data":{"session":"s-1","afterSeq":41}}`},
		{"send-1MiB-image", `{"type":"session/send","id":9,"data":{"session":"s-1","text":"look","images":[{"mediaType":"image/png","data":"` + img + `"}]}}`},
		{"mcp-status-20", `{"type":"mcp/status","data":{"servers":[` + strings.Join(servers, ",") + `]}}`},
	}
	for _, fr := range frames {
		b.Run(fr.name, func(b *testing.B) {
			raw := []byte(fr.raw)
			b.SetBytes(int64(len(raw)))
			b.ReportAllocs()
			for b.Loop() {
				f, err := ParseFrame(raw)
				if err != nil {
					b.Fatal(err)
				}
				if f.ID != nil {
					_, err = DecodeRequest(f)
				} else {
					_, err = DecodePush(f)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkNewPush measures building an mcp/status push of 20 servers:
// validation and encoding.
func BenchmarkNewPush(b *testing.B) {
	var st MCPStatus
	for i := range 20 {
		st.Servers = append(st.Servers, MCPServerStatus{Name: fmt.Sprintf("srv-%02d", i), Status: MCPConnected, Scope: ScopeUser, Approval: ApprovalNotNeeded, Tools: []string{"a", "b", "c"}, ToolCount: Ptr(int64(3)), Transport: "stdio", Origin: OriginSession})
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := NewPush(TypeMCPStatus, st); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNewReplyHistory measures a history/read reply of 500 events of
// about 1 KiB each: validation and encoding.
func BenchmarkNewReplyHistory(b *testing.B) {
	ev := json.RawMessage(`{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"` + strings.Repeat("lorem ipsum ", 80) + `"}]},"session_id":"abc"}`)
	r := HistoryReadResult{ID: "abc", Next: "123456"}
	for i := range 500 {
		r.Events = append(r.Events, HistoryEvent{Offset: int64(i * 1100), Event: ev})
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := NewReply(IntID(1), r); err != nil {
			b.Fatal(err)
		}
	}
}
