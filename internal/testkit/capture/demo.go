package capture

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/ccproxy/ccproxy/internal/testkit/fakeapi"
)

// Extras returns the scenarios that are not standard captures: they are
// made on demand (capture -only NAME) for a purpose of their own and are
// not part of Scenarios, so TestCaptureRealCLI does not run them.
func Extras() []Scenario { return []Scenario{Demo(), XSS()} }

// The demo's user turns and the words the fake API recognizes them by.
var demoTurns = []struct{ text, keyword string }{
	{"Hi! What does this proxy do, and what am I looking at?", "what am I looking at"},
	{"Show me an image from one of the MCP servers.", "Show me an image"},
	{"Now echo a greeting through the everything server.", "echo a greeting"},
	{"Thanks! Summarize what we just did.", "Summarize what we just did"},
}

// DemoEchoMessage is what the demo's permission-prompted echo call sends.
const DemoEchoMessage = "Hello from the ccproxy demo!"

const demoIntro = `Hello! You are looking at ccproxy's reference web UI, talking to a Claude Code session through the proxy.

ccproxy is a small Go daemon that sits between chat interfaces and the Claude Code CLI. For every chat session it starts one long-lived ` + "`claude`" + ` process in stream-json mode, merges your MCP server configuration the way Claude Code itself does, and serves the session to any number of webviews over a single websocket.

Everything the CLI prints goes through ccproxy's normalizer first: tool results become plain text, images and other binary parts are set aside as attachments that the proxy serves by URL, and every event gets a sequence number. That is why this page can lose its connection, reconnect, and carry on exactly where it left off.

This session is a replay of a real Claude Code run, so it works without an API key. Ask me for an image next, and I will call an MCP tool that returns one.`

const demoImageAfter = `Here it is: the MCP logo, twenty pixels square. The tool answered with a text block and a base64 image block. ccproxy kept the text, left a short placeholder where the image was, and serves the bytes from /v1/blobs/ under their SHA-256, so the page shows a real image without a single byte of base64 reaching the chat.

Next, try something that needs your permission: ask me to echo a greeting.`

const demoEchoAfter = `That request travelled as a can_use_tool control request from the CLI to ccproxy's permission broker, which showed it to every open view of this session. The first answer won and went straight back to the CLI, which then ran the tool or recorded the refusal and carried on.

Pending prompts survive a reconnect, too: a view that subscribes later is shown the same question and can answer it.`

const demoSummary = `Here is what this session showed:

- Streaming: my replies arrived as partial-message deltas and were rendered as they came in.
- Thinking: answers began with a thinking block, shown collapsed.
- An MCP image: everything · get-tiny-image returned a PNG, which ccproxy turned into an attachment served by URL.
- A permission prompt: everything · echo was not on the allow list, so you were asked before it ran.

To chat for real, install the Claude Code CLI and run ccproxy serve without --demo.`

// Demo is the session that `ccproxy serve --demo` replays: four turns with
// partial messages, thinking, an MCP tool that returns an image (allowed up
// front) and one that is not on the allow list, so the CLI asks for
// permission (the capture allows it). User turns are echoed
// (--replay-user-messages), and an mcp_status answer is recorded at the
// end.
func Demo() Scenario {
	const delay = 2 * time.Millisecond
	tinyImage, echo := everything("get-tiny-image"), everything("echo")
	turns := make([]string, len(demoTurns))
	for i, t := range demoTurns {
		turns[i] = t.text
	}
	reply := func(blocks ...fakeapi.Block) *fakeapi.Reply {
		return &fakeapi.Reply{ChunkDelay: delay, Blocks: blocks}
	}
	return Scenario{
		Name: "demo",
		About: "the demo session: streamed prose with thinking, an MCP image tool, a permission-prompted MCP tool " +
			"(allowed), a summary; --replay-user-messages, an mcp_status answer",
		Initialize:         true,
		Controls:           []string{"mcp_status"},
		PartialMessages:    true,
		PermissionPrompts:  true,
		ReplayUserMessages: true,
		AllowedTools:       []string{"mcp__testmcp", tinyImage},
		Turns:              turns,
		Script: fakeapi.First(
			fakeapi.OnText(demoTurns[0].keyword, reply(
				fakeapi.Thinking("The user has just opened the demo. Explain what ccproxy does, how events travel from the CLI to the page, and what the demo will show next, in a few short paragraphs."),
				fakeapi.Text(demoIntro),
			)),
			fakeapi.OnText(demoTurns[1].keyword,
				reply(
					fakeapi.Thinking("The everything server's get-tiny-image tool returns a small PNG, and it is on the allow list, so no prompt is needed."),
					fakeapi.Text("Sure: the everything MCP server has a tool that returns a tiny PNG. Calling it now."),
					fakeapi.ToolUse(tinyImage, nil),
				),
				reply(fakeapi.Text(demoImageAfter)),
			),
			fakeapi.OnText(demoTurns[2].keyword,
				reply(
					fakeapi.Text("The echo tool is not on this session's allow list, so Claude Code will ask you before it runs. You should see a permission dialog now."),
					fakeapi.ToolUse(echo, map[string]any{"message": DemoEchoMessage}),
				),
				reply(fakeapi.Text(demoEchoAfter)),
			),
			fakeapi.OnText(demoTurns[3].keyword, reply(
				fakeapi.Thinking("Recap the four things the demo showed, one line each, and say how to leave the demo."),
				fakeapi.Text(demoSummary),
			)),
		),
		Tools: []string{tinyImage, echo},
		Expect: map[string]func(*ToolCall) error{
			tinyImage: all(ok, imageOf("image/png", 100)),
			echo:      all(ok, textIs("Echo: "+DemoEchoMessage)),
		},
		Check: func(t *Transcript) error {
			return errors.Join(checkPartials(t), checkDemo(t))
		},
	}
}

// checkDemo: every turn echoed, one permission prompt and only for echo,
// an mcp_status answer, and a first reply of several paragraphs.
func checkDemo(t *Transcript) error {
	var errs []error
	replays, prompts := 0, 0
	status := false
	for _, e := range t.Events {
		switch e.Type {
		case "user":
			if gjson.GetBytes(e.Raw, "isReplay").Bool() {
				replays++
			}
		case "control_request":
			if gjson.GetBytes(e.Raw, "request.subtype").String() == "can_use_tool" {
				prompts++
				if tool := gjson.GetBytes(e.Raw, "request.tool_name").String(); tool != everything("echo") {
					errs = append(errs, fmt.Errorf("a permission prompt for %s, want only %s", tool, everything("echo")))
				}
			}
		case "control_response":
			if gjson.GetBytes(e.Raw, "response.response.mcpServers").IsArray() {
				status = true
			}
		}
	}
	if replays != len(demoTurns) {
		errs = append(errs, fmt.Errorf("%d user turns echoed with isReplay, want %d", replays, len(demoTurns)))
	}
	if prompts != 1 {
		errs = append(errs, fmt.Errorf("%d can_use_tool requests, want 1", prompts))
	}
	if !status {
		errs = append(errs, errors.New("no mcp_status control_response"))
	}
	first := ""
	for _, e := range t.Events {
		if e.Type == "assistant" {
			if s := gjson.GetBytes(e.Raw, `message.content.#(type=="text").text`).String(); s != "" {
				first = s
				break
			}
		}
	}
	if n := strings.Count(first, "\n\n") + 1; n < 3 {
		errs = append(errs, fmt.Errorf("the first reply has %d paragraph(s), want several", n))
	}
	return errors.Join(errs...)
}
