package capture

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/ccproxy/ccproxy/internal/testkit/fakeapi"
)

// XSSPayload holds markup that a renderer must show as text. If a page put
// it into the DOM as HTML, an <img> with src "x" would appear and its
// onerror would call alert.
const XSSPayload = `<img src=x onerror=alert(1)> <script>alert(2)</script> <b>bold?</b> &amp; <a href="javascript:alert(3)">link</a>`

// XSS is a session whose model text, thinking, tool input and MCP tool
// result all carry XSSPayload, for the browser tests of the web UI
// (replayed with serve --replay).
func XSS() Scenario {
	echo := everything("echo")
	return Scenario{
		Name:               "xss",
		About:              "markup in the model's text, thinking, a tool input and an MCP tool result (everything echo), for the UI's XSS tests",
		Initialize:         true,
		PartialMessages:    true,
		ReplayUserMessages: true,
		AllowedTools:       []string{echo},
		Turns:              []string{"Render this: " + XSSPayload},
		Script: fakeapi.OnText("Render this",
			&fakeapi.Reply{Blocks: []fakeapi.Block{
				fakeapi.Thinking("Thinking about " + XSSPayload),
				fakeapi.Text("Echoing " + XSSPayload),
				fakeapi.ToolUse(echo, map[string]any{"message": XSSPayload}),
			}},
			&fakeapi.Reply{Blocks: []fakeapi.Block{fakeapi.Text("Done: " + XSSPayload)}},
		),
		Tools:  []string{echo},
		Expect: map[string]func(*ToolCall) error{echo: all(ok, textIs("Echo: "+XSSPayload))},
		Check: func(t *Transcript) error {
			var errs []error
			texts := 0
			for _, e := range t.Events {
				if e.Type == "assistant" && strings.Contains(gjson.GetBytes(e.Raw, "message.content.0.text").String(), XSSPayload) {
					texts++
				}
			}
			if texts != 2 {
				errs = append(errs, fmt.Errorf("%d assistant texts carry the payload, want 2", texts))
			}
			return errors.Join(errs...)
		},
	}
}
