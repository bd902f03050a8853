package capture

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/ccproxy/ccproxy/internal/testkit/fakeapi"
	"github.com/ccproxy/ccproxy/internal/testkit/mcptest"
)

// Scenario is one scripted session with the real CLI.
type Scenario struct {
	Name  string // file name stem of the capture
	About string // one line on what it shows

	Turns           []string // the user turns, sent one by one, each awaited
	Initialize      bool     // send an initialize control_request first, and await its response
	PartialMessages bool     // run with --include-partial-messages
	Gzip            bool     // store stdout gzip-compressed (<name>.jsonl.gz)

	Script fakeapi.Responder // the fake API's script

	// AllowedTools replaces the default --allowedTools (mcp__everything
	// mcp__testmcp: every tool of both servers) when not nil, so that a
	// scenario can leave tools to the permission prompt.
	AllowedTools []string
	// PermissionPrompts runs with --permission-prompt-tool stdio: the CLI
	// asks (a can_use_tool control_request) before a tool the allow rules
	// do not cover, and the capture answers with Permit's decision.
	PermissionPrompts bool
	// Permit decides a can_use_tool request (its "request" object); nil
	// allows everything, with the input unchanged.
	Permit func(request []byte) (allow bool, denyMessage string)
	// ReplayUserMessages runs with --replay-user-messages (user turns are
	// echoed with isReplay:true).
	ReplayUserMessages bool
	// Args are extra CLI flags (e.g. --resume ID), put before
	// --mcp-config.
	Args []string
	// Setup, when set, runs once HOME and the project directory exist,
	// before the CLI starts (to put files there, or to learn their paths).
	Setup func(home, proj string) error
	// Controls are control_request subtypes (with no other fields) sent
	// after the last turn's result, each awaited, e.g. "mcp_status" (by
	// then every server has connected).
	Controls []string

	// Tools are the full tool names the script calls; each must be called
	// and answered. Expect holds a check per tool name, run on every call of
	// it. Check, if set, looks at the whole transcript.
	Tools  []string
	Expect map[string]func(c *ToolCall) error
	Check  func(t *Transcript) error
}

// Tool name helpers: the config names the servers "testmcp" and
// "everything".
func testmcp(tool string) string    { return "mcp__testmcp__" + tool }
func everything(tool string) string { return "mcp__everything__" + tool }

// Scenarios returns the standard captures, freshly built (scripts hold
// state, so a Scenario value serves one run).
func Scenarios() []Scenario {
	return []Scenario{TestMCPTools(), TestMCPLarge(), EverythingTools(), PartialMessagesMCP()}
}

// ScenarioNamed returns the standard or extra scenario called name.
func ScenarioNamed(name string) (Scenario, bool) {
	for _, sc := range append(Scenarios(), Extras()...) {
		if sc.Name == name {
			return sc, true
		}
	}
	return Scenario{}, false
}

// TestMCPTools is a four-turn session calling every test-server tool except
// the two huge ones: in parallel (several tool_use blocks in one message),
// chained (one after the other), with failures and odd content, and with a
// thinking block.
func TestMCPTools() Scenario {
	echoIn := map[string]any{"message": "héllo wörld", "mode": "upper", "repeat": 2,
		"options": map[string]any{"prefix": "> ", "tags": []string{"a", "b"}}, "numbers": []float64{1, 2.5}}
	return Scenario{
		Name:       "testmcp_tools",
		About:      "every ccproxy-testmcp tool but the huge ones, over four turns (parallel, chained, failures, echo+slow)",
		Initialize: true,
		Turns: []string{
			"Turn one [PARALLEL]: call text, texts, image and audio at once.",
			"Turn two [CHAIN]: fetch the resources one after the other.",
			"Turn three [ODD]: the failures and the odd content.",
			"Turn four [ECHO]: echo something, then wait a little.",
		},
		Script: fakeapi.First(
			fakeapi.OnText("[PARALLEL]", fakeapi.CallTools(
				fakeapi.ToolUse(testmcp(mcptest.ToolText), nil),
				fakeapi.ToolUse(testmcp(mcptest.ToolTexts), map[string]any{"count": 3}),
				fakeapi.ToolUse(testmcp(mcptest.ToolImage), nil),
				fakeapi.ToolUse(testmcp(mcptest.ToolAudio), nil),
			)),
			fakeapi.OnText("[CHAIN]",
				&fakeapi.Reply{Blocks: []fakeapi.Block{fakeapi.Text("First the text resource."), fakeapi.ToolUse(testmcp(mcptest.ToolResourceText), nil)}},
				fakeapi.CallTool(testmcp(mcptest.ToolResourceBlob), nil),
				fakeapi.CallTool(testmcp(mcptest.ToolResourceLink), nil),
			),
			fakeapi.OnText("[ODD]", &fakeapi.Reply{Blocks: []fakeapi.Block{
				fakeapi.Thinking("Some of these will fail on purpose."),
				fakeapi.ToolUse(testmcp(mcptest.ToolIsError), nil),
				fakeapi.ToolUse(testmcp(mcptest.ToolFail), map[string]any{"mode": "protocol"}),
				fakeapi.ToolUse(testmcp(mcptest.ToolEmpty), nil),
				fakeapi.ToolUse(testmcp(mcptest.ToolStructured), map[string]any{"city": "Paris"}),
				fakeapi.ToolUse(testmcp(mcptest.ToolUnicode), nil),
			}}),
			fakeapi.OnText("[ECHO]",
				fakeapi.CallTool(testmcp(mcptest.ToolEcho), echoIn),
				fakeapi.CallTool(testmcp(mcptest.ToolSlow), map[string]any{"ms": 50}),
			),
			fakeapi.OnToolResults(fakeapi.Summarize),
		),
		Tools: []string{
			testmcp(mcptest.ToolText), testmcp(mcptest.ToolTexts), testmcp(mcptest.ToolImage), testmcp(mcptest.ToolAudio),
			testmcp(mcptest.ToolResourceText), testmcp(mcptest.ToolResourceBlob), testmcp(mcptest.ToolResourceLink),
			testmcp(mcptest.ToolIsError), testmcp(mcptest.ToolFail), testmcp(mcptest.ToolEmpty),
			testmcp(mcptest.ToolStructured), testmcp(mcptest.ToolUnicode), testmcp(mcptest.ToolEcho), testmcp(mcptest.ToolSlow),
		},
		Expect: map[string]func(*ToolCall) error{
			testmcp(mcptest.ToolText):  all(ok, textIs(mcptest.OneText)),
			testmcp(mcptest.ToolTexts): all(ok, typesAre("text", "text", "text"), textIs("part 1 of 3\npart 2 of 3\npart 3 of 3")),
			testmcp(mcptest.ToolImage): all(ok, imageOf("image/png", len(mcptest.SmallPNG()))),
			// The CLI saves audio and blobs to files and leaves a note.
			testmcp(mcptest.ToolAudio):        all(ok, textHas("audio/wav")),
			testmcp(mcptest.ToolResourceText): all(ok, textHas(mcptest.ResourceTextURI), textHas(mcptest.ResourceTextBody)),
			testmcp(mcptest.ToolResourceBlob): all(ok, textHas(mcptest.ResourceBlobURI), textHas("application/octet-stream")),
			testmcp(mcptest.ToolResourceLink): all(ok, textHas(mcptest.ResourceTextURI), turIs("resourceLinks.0.uri", mcptest.ResourceTextURI)),
			testmcp(mcptest.ToolIsError):      all(failed, textHas(mcptest.IsErrorText)),
			testmcp(mcptest.ToolFail):         all(failed, textHas(mcptest.FailProtocolText)),
			testmcp(mcptest.ToolEmpty):        all(ok, turIs("content", "[]")),
			testmcp(mcptest.ToolStructured): all(ok, turIs("structuredContent.city", "Paris"),
				turIs("structuredContent.temperature_c", "21.5"), turIs("structuredContent.forecast.#", "2")),
			testmcp(mcptest.ToolUnicode): all(ok, textIs(mcptest.UnicodeText)),
			testmcp(mcptest.ToolEcho):    all(ok, textHas("> HÉLLO WÖRLD\n> HÉLLO WÖRLD"), textHas(`received: {"message":"héllo wörld"`)),
			testmcp(mcptest.ToolSlow):    all(ok, textIs("slept 50 ms")),
		},
		Check: func(t *Transcript) error {
			if t.Count("control_response", "") == 0 {
				return errors.New("no control_response to initialize")
			}
			if t.Count("system", "init") < 4 {
				return fmt.Errorf("%d system/init events, want one per turn (4)", t.Count("system", "init"))
			}
			return nil
		},
	}
}

// TestMCPLarge calls the 5 MB text and the 3 MB image tools in one turn.
func TestMCPLarge() Scenario {
	return Scenario{
		Name:  "testmcp_large",
		About: "the 5 MB text and the 3 MB noise PNG of ccproxy-testmcp in one turn (gzip-compressed)",
		Gzip:  true,
		Turns: []string{"Fetch the [LARGE] things."},
		Script: fakeapi.First(
			fakeapi.OnText("[LARGE]", fakeapi.CallTools(
				fakeapi.ToolUse(testmcp(mcptest.ToolLargeText), nil),
				fakeapi.ToolUse(testmcp(mcptest.ToolLargeImage), nil),
			)),
			fakeapi.OnToolResults(fakeapi.Summarize),
		),
		Tools: []string{testmcp(mcptest.ToolLargeText), testmcp(mcptest.ToolLargeImage)},
		Expect: map[string]func(*ToolCall) error{
			// The CLI does not pass 5 MB of text on: it saves it to a file
			// and answers with a note; either way the result must say so.
			testmcp(mcptest.ToolLargeText): func(c *ToolCall) error {
				if len(c.Text) >= mcptest.LargeTextBytes || strings.Contains(c.Text, "5,000,000 characters") {
					return nil
				}
				return fmt.Errorf("result is neither the 5,000,000-byte text nor a note about it: %q", clip(c.Text, 200))
			},
			// The CLI re-encodes big images (as JPEG, it turns out); what
			// arrives must still be a real image of some size.
			testmcp(mcptest.ToolLargeImage): all(ok, imageOf("", 100<<10)),
		},
	}
}

// EverythingTools calls tools of the npm server-everything over two turns.
func EverythingTools() Scenario {
	return Scenario{
		Name:  "everything_tools",
		About: "server-everything: echo, get-tiny-image, get-resource-links, get-resource-reference, get-structured-content, get-annotated-message, get-sum",
		Turns: []string{
			"Turn one [EVERY-PARALLEL]: echo, tiny image, resource links and a reference.",
			"Turn two [EVERY-CHAIN]: structured content, an annotated message, a sum.",
		},
		Script: fakeapi.First(
			fakeapi.OnText("[EVERY-PARALLEL]", fakeapi.CallTools(
				fakeapi.ToolUse(everything("echo"), map[string]any{"message": "hello mcp"}),
				fakeapi.ToolUse(everything("get-tiny-image"), nil),
				fakeapi.ToolUse(everything("get-resource-links"), map[string]any{"count": 2}),
				fakeapi.ToolUse(everything("get-resource-reference"), map[string]any{"resourceType": "Text", "resourceId": 1}),
			)),
			fakeapi.OnText("[EVERY-CHAIN]",
				fakeapi.CallTool(everything("get-structured-content"), map[string]any{"location": "New York"}),
				fakeapi.CallTool(everything("get-annotated-message"), map[string]any{"messageType": "error", "includeImage": true}),
				fakeapi.CallTool(everything("get-sum"), map[string]any{"a": 2, "b": 3}),
			),
			fakeapi.OnToolResults(fakeapi.Summarize),
		),
		Tools: []string{everything("echo"), everything("get-tiny-image"), everything("get-resource-links"),
			everything("get-resource-reference"), everything("get-structured-content"),
			everything("get-annotated-message"), everything("get-sum")},
		Expect: map[string]func(*ToolCall) error{
			everything("echo"):                   all(ok, textIs("Echo: hello mcp")),
			everything("get-tiny-image"):         all(ok, imageOf("image/png", 100)),
			everything("get-resource-links"):     all(ok, turIs("resourceLinks.#", "2")),
			everything("get-resource-reference"): all(ok, textHas("demo://resource/dynamic/text/1")),
			everything("get-structured-content"): all(ok, turIs("structuredContent.conditions", "@exists")),
			everything("get-annotated-message"):  all(ok, imageOf("image/png", 100)),
			everything("get-sum"):                all(ok, textHas("5")),
		},
	}
}

// PartialMessagesMCP runs with --include-partial-messages: a thinking block,
// a text and an MCP image tool call, then a text streamed in small deltas.
func PartialMessagesMCP() Scenario {
	const delay = 2 * time.Millisecond
	return Scenario{
		Name:            "partial_messages_mcp",
		About:           "--include-partial-messages: thinking, text and an MCP image call, then streamed text",
		PartialMessages: true,
		Turns:           []string{"Show me the [PARTIAL] image and describe it."},
		Script: fakeapi.First(
			fakeapi.OnText("[PARTIAL]", &fakeapi.Reply{ChunkDelay: delay, Blocks: []fakeapi.Block{
				fakeapi.Thinking("The user wants the image; I will call the image tool."),
				fakeapi.Text("Let me fetch the image first."),
				fakeapi.ToolUse(testmcp(mcptest.ToolImage), nil),
			}}),
			fakeapi.OnToolResults(func(req *fakeapi.Request, results []fakeapi.ToolResult) *fakeapi.Reply {
				r := *fakeapi.Summarize(req, results)
				r.Blocks = append(r.Blocks[:len(r.Blocks):len(r.Blocks)],
					fakeapi.Text("It is a small 16 by 16 gradient, red growing to the right and green growing downwards, on a blue base."))
				r.ChunkDelay = delay
				return &r
			}),
		),
		Tools:  []string{testmcp(mcptest.ToolImage)},
		Expect: map[string]func(*ToolCall) error{testmcp(mcptest.ToolImage): all(ok, imageOf("image/png", len(mcptest.SmallPNG())))},
		Check:  checkPartials,
	}
}

// checkPartials checks that the stream_events rebuild every assistant text
// and thinking block, that long texts came in several deltas, and that a
// thinking_delta was streamed.
func checkPartials(t *Transcript) error {
	type acc struct {
		kind   string
		text   strings.Builder
		deltas int
	}
	var open map[int64]*acc
	streamed := map[string]int{} // text -> deltas
	thinking := 0
	for _, e := range t.Events {
		if e.Type != "stream_event" {
			continue
		}
		ev := gjson.GetBytes(e.Raw, "event")
		idx := ev.Get("index").Int()
		switch ev.Get("type").String() {
		case "message_start":
			open = map[int64]*acc{}
		case "content_block_start":
			if open != nil {
				open[idx] = &acc{kind: ev.Get("content_block.type").String()}
			}
		case "content_block_delta":
			a := open[idx]
			if a == nil {
				return fmt.Errorf("a delta for block %d that never started", idx)
			}
			switch ev.Get("delta.type").String() {
			case "text_delta":
				a.text.WriteString(ev.Get("delta.text").String())
				a.deltas++
			case "thinking_delta":
				a.text.WriteString(ev.Get("delta.thinking").String())
				a.deltas++
				thinking++
			}
		case "content_block_stop":
			if a := open[idx]; a != nil && (a.kind == "text" || a.kind == "thinking") {
				streamed[a.text.String()] = a.deltas
			}
		}
	}
	if len(streamed) == 0 {
		return errors.New("no text was streamed as stream_event deltas")
	}
	if thinking == 0 {
		return errors.New("no thinking_delta was streamed")
	}
	for _, e := range t.Events {
		if e.Type != "assistant" {
			continue
		}
		for _, b := range gjson.GetBytes(e.Raw, "message.content").Array() {
			var text string
			switch b.Get("type").String() {
			case "text":
				text = b.Get("text").String()
			case "thinking":
				text = b.Get("thinking").String()
			default:
				continue
			}
			n, ok := streamed[text]
			if !ok {
				return fmt.Errorf("assistant block %q was not rebuilt from the stream_events", clip(text, 60))
			}
			if len([]rune(text)) >= 48 && n < 3 {
				return fmt.Errorf("assistant block %q came in %d delta(s), want several", clip(text, 60), n)
			}
		}
	}
	return nil
}

// Expectation helpers.

func all(checks ...func(*ToolCall) error) func(*ToolCall) error {
	return func(c *ToolCall) error {
		var errs []error
		for _, ch := range checks {
			if err := ch(c); err != nil {
				errs = append(errs, err)
			}
		}
		return errors.Join(errs...)
	}
}

func ok(c *ToolCall) error {
	if c.IsError {
		return fmt.Errorf("is_error is true: %q", clip(c.Text, 200))
	}
	return nil
}

func failed(c *ToolCall) error {
	if !c.IsError {
		return fmt.Errorf("is_error is false, want true (content %s)", clip(string(c.Content), 200))
	}
	return nil
}

func textIs(want string) func(*ToolCall) error {
	return func(c *ToolCall) error {
		if c.Text != want {
			return fmt.Errorf("text is %q, want %q", clip(c.Text, 300), want)
		}
		return nil
	}
}

func textHas(want string) func(*ToolCall) error {
	return func(c *ToolCall) error {
		if !strings.Contains(c.Text, want) {
			return fmt.Errorf("text %q does not contain %q", clip(c.Text, 300), want)
		}
		return nil
	}
}

func typesAre(want ...string) func(*ToolCall) error {
	return func(c *ToolCall) error {
		if strings.Join(c.ContentTypes, ",") != strings.Join(want, ",") {
			return fmt.Errorf("content block types are %v, want %v", c.ContentTypes, want)
		}
		return nil
	}
}

// imageOf wants an image block in the content, of media type mediaType
// (any if ""), whose base64 data decodes to at least minBytes bytes.
func imageOf(mediaType string, minBytes int) func(*ToolCall) error {
	return func(c *ToolCall) error {
		for _, b := range c.Blocks() {
			if b["type"] != "image" {
				continue
			}
			src, _ := b["source"].(map[string]any)
			mt, _ := src["media_type"].(string)
			data, _ := src["data"].(string)
			if mediaType != "" && mt != mediaType {
				return fmt.Errorf("image media_type is %q, want %q", mt, mediaType)
			}
			raw, err := base64.StdEncoding.DecodeString(data)
			if err != nil {
				return fmt.Errorf("image data is not base64: %v", err)
			}
			if len(raw) < minBytes {
				return fmt.Errorf("image is %d bytes, want at least %d", len(raw), minBytes)
			}
			return nil
		}
		return fmt.Errorf("no image block in the content (types %v)", c.ContentTypes)
	}
}

// turIs checks a gjson path of tool_use_result: want "@exists" only needs
// it to be there; otherwise its raw JSON (for arrays and objects) or its
// string value must equal want.
func turIs(path, want string) func(*ToolCall) error {
	return func(c *ToolCall) error {
		v := gjson.GetBytes(c.ToolUseResult, path)
		if !v.Exists() {
			return fmt.Errorf("tool_use_result has no %s (tool_use_result %s)", path, clip(string(c.ToolUseResult), 300))
		}
		if want == "@exists" {
			return nil
		}
		got := v.String()
		if v.IsArray() || v.IsObject() {
			var compact bytes.Buffer
			if err := json.Compact(&compact, []byte(v.Raw)); err == nil {
				got = compact.String()
			}
		}
		if got != want {
			return fmt.Errorf("tool_use_result %s is %s, want %s", path, clip(got, 200), want)
		}
		return nil
	}
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
