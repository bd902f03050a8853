package stream

import (
	"encoding/json"
	"fmt"

	"github.com/tidwall/gjson"
)

// NormalizeToolResult normalizes the content of an MCP tools/call result
// (its "content" member: an array of MCP content blocks) exactly as a
// Normalizer normalizes the content of a tool_result in a session: the text
// parts joined with "\n", and every other part replaced by a placeholder in
// the text and described in the returned attachments (with data, url or
// error according to opts). null or absent content gives "".
//
// It runs the content through a Normalizer inside a synthetic user event,
// so direct calls and session tool results can never drift apart. It fails
// only when content is not valid JSON.
func NormalizeToolResult(content []byte, opts Options) (text string, atts []Attachment, err error) {
	if len(content) == 0 {
		content = []byte("null")
	}
	if !gjson.ValidBytes(content) {
		return "", nil, fmt.Errorf("stream: tool result content is not valid JSON")
	}
	line := make([]byte, 0, len(content)+128)
	line = append(line, `{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"ccproxy_direct","content":`...)
	line = append(line, content...)
	line = append(line, `}]}}`...)
	ev := NewNormalizer(opts).Normalize(line)
	block := gjson.GetBytes(ev.JSON, "message.content.0")
	text = block.Get("content").String()
	if a := block.Get("attachments"); a.IsArray() {
		if err := json.Unmarshal([]byte(a.Raw), &atts); err != nil {
			return "", nil, fmt.Errorf("stream: reading normalized attachments: %w", err)
		}
	}
	return text, atts, nil
}
