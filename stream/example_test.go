package stream_test

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/ccproxy/ccproxy/stream"
)

func Example() {
	out := strings.Join([]string{
		`{"type":"system","subtype":"init","session_id":"s1","mcp_servers":[{"name":"everything","status":"connected"}]}`,
		`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"mcp__everything__get-tiny-image","input":{}}]},"session_id":"s1"}`,
		`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"Here it is:"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}}]}]},"session_id":"s1"}`,
		`[DEBUG] not JSON`,
	}, "\n")

	r := stream.NewReader(strings.NewReader(out), 0)
	n := stream.NewNormalizer(stream.Options{Attachments: stream.AttachStrip})
	for {
		line, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		ev := n.Normalize(line)
		fmt.Printf("%s/%s rewritten=%v\n%s\n", ev.Type, ev.Subtype, ev.Rewritten, ev.JSON)
	}
	// Output:
	// system/init rewritten=false
	// {"type":"system","subtype":"init","session_id":"s1","mcp_servers":[{"name":"everything","status":"connected"}]}
	// assistant/ rewritten=true
	// {"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"mcp__everything__get-tiny-image","input":{},"mcp":{"server":"everything","tool":"get-tiny-image"}}]},"session_id":"s1"}
	// user/ rewritten=true
	// {"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"Here it is:\n[image image/png 8 B]","attachments":[{"kind":"image","mediaType":"image/png","size":8,"sha256":"4c4b6a3be1314ab86138bef4314dde022e600960d8689a2c8f8631802d20dab6"}],"mcp":{"server":"everything","tool":"get-tiny-image"}}]},"session_id":"s1"}
	// ccproxy/noise rewritten=true
	// {"type":"ccproxy","subtype":"noise","text":"[DEBUG] not JSON"}
}
