package replay

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"
)

// The demo's user turns are answered in order; what the user typed is
// echoed; the first turn streams several paragraphs and a thinking block.
func TestDemoTurns(t *testing.T) {
	h := start(t, demo(t), proxyOptions())
	h.control("req_init", "initialize", map[string]any{"hooks": nil})
	init := h.next()
	if init.typ != "control_response" || init.norm.Get("response.request_id").Str != "req_init" ||
		!init.norm.Get("response.response.commands").IsArray() {
		t.Fatalf("initialize answered with %.300s", init.raw)
	}
	if v := init.norm.Get("response.response.claude_code_version").Str; v != CLIVersion {
		t.Errorf("initialize reports version %q", v)
	}
	if ev := h.next(); ev.typ != "system" || ev.sub != "commands_changed" {
		t.Errorf("after initialize: %s/%s, want the recorded system/commands_changed", ev.typ, ev.sub)
	}

	h.user("tell me about <this> proxy")
	evs := h.turn()
	if evs[0].typ != "system" || evs[0].sub != "init" {
		t.Fatalf("the turn starts with %s/%s, want system/init", evs[0].typ, evs[0].sub)
	}
	// As recorded: init, status, then the echo of what the user typed.
	if echo := evs[2]; echo.typ != "user" || !echo.norm.Get("isReplay").Bool() || echo.norm.Get("message.content").Str != "tell me about <this> proxy" {
		t.Errorf("third event is not the echo of the user's message: %.300s", echo.raw)
	}
	if n := count(evs, func(e event) bool { return e.norm.Get("isReplay").Bool() }); n != 1 {
		t.Errorf("%d echoes in the turn, want 1", n)
	}
	res := evs[len(evs)-1]
	if res.sub != "success" || res.norm.Get("is_error").Bool() {
		t.Errorf("result: %.300s", res.raw)
	}
	if n := strings.Count(res.norm.Get("result").Str, "\n\n") + 1; n < 3 {
		t.Errorf("the first reply has %d paragraphs, want several", n)
	}
	deltas := count(evs, func(e event) bool { return e.norm.Get("event.delta.type").Str == "text_delta" })
	thinking := count(evs, func(e event) bool { return e.norm.Get("event.delta.type").Str == "thinking_delta" })
	if deltas < 10 || thinking == 0 {
		t.Errorf("%d text deltas and %d thinking deltas, want many and some", deltas, thinking)
	}
	if n := count(evs, func(e event) bool {
		return e.norm.Get("message.content.0.type").Str == "thinking" && e.typ == "assistant"
	}); n != 1 {
		t.Errorf("%d assistant thinking blocks, want 1", n)
	}

	// Turn two: an MCP tool returns an image; it comes out as an attachment.
	h.user("an image please")
	evs = h.turn()
	var att gjson.Result
	for _, e := range evs {
		e.norm.Get("message.content").ForEach(func(_, b gjson.Result) bool {
			if b.Get("type").Str == "tool_result" {
				att = b.Get("attachments.0")
				if mcp := b.Get("mcp"); mcp.Get("server").Str != "demo" || mcp.Get("tool").Str != "get-tiny-image" {
					t.Errorf("tool_result mcp annotation %s", mcp.Raw)
				}
			}
			return true
		})
	}
	if att.Get("kind").Str != "image" || att.Get("mediaType").Str != "image/png" || att.Get("size").Int() < 100 {
		t.Errorf("image attachment %s", att.Raw)
	}
	if err := h.end(); err != nil {
		t.Errorf("Run after EOF: %v", err)
	}
}

// skipTo plays the demo's first n turns.
func skipTo(h *host, n int) {
	h.t.Helper()
	for i := 0; i < n; i++ {
		h.user("turn")
		h.turn()
	}
}

// The permission prompt holds the turn until it is answered; allow lets the
// recorded result through.
func TestPermissionAllow(t *testing.T) {
	h := start(t, demo(t), proxyOptions())
	skipTo(h, 2)
	h.user("echo something")
	prompt := h.until("can_use_tool", isType("control_request", ""))[0:]
	req := prompt[len(prompt)-1].norm
	if req.Get("request.subtype").Str != "can_use_tool" || req.Get("request.tool_name").Str != "mcp__demo__echo" {
		t.Fatalf("control_request %s", req.Raw)
	}
	if req.Get("request.mcp.server").Str != "demo" {
		t.Errorf("the normalizer did not annotate the prompt: %s", req.Get("request").Raw)
	}
	id := req.Get("request_id").Str
	// The streamed message ends while the prompt waits, as with the CLI.
	h.until("message_stop", func(e event) bool { return e.norm.Get("event.type").Str == "message_stop" })

	// The turn waits: a control request sent now is answered before
	// anything else of the turn, however long it takes.
	h.control("st", "mcp_status", nil)
	evs := h.until("the mcp_status response", isType("control_response", ""))
	for _, e := range evs {
		if e.typ == "user" || e.typ == "result" {
			t.Fatalf("the turn went on before the prompt was answered: %.200s", e.raw)
		}
	}
	st := evs[len(evs)-1].norm
	if st.Get("response.request_id").Str != "st" || st.Get(`response.response.mcpServers.#(name=="demo").status`).Str != "connected" {
		t.Errorf("mcp_status answered %.300s", st.Raw)
	}

	h.answer(id, map[string]any{"behavior": "allow", "updatedInput": map[string]any{"message": "Hello from the ccproxy demo!"}})
	evs = h.turn()
	if e := evs[0]; e.typ != "control_response" || e.norm.Get("response.request_id").Str != id {
		t.Errorf("the answer is not echoed first (--replay-user-messages): %.200s", e.raw)
	}
	found := false
	for _, e := range evs {
		e.norm.Get("message.content").ForEach(func(_, b gjson.Result) bool {
			if b.Get("type").Str == "tool_result" {
				found = true
				if b.Get("is_error").Bool() || b.Get("content").Str != "Echo: Hello from the ccproxy demo!" {
					t.Errorf("allowed tool_result %s", b.Raw)
				}
			}
			return true
		})
	}
	if !found {
		t.Error("no tool_result after the prompt was allowed")
	}
	res := evs[len(evs)-1].norm
	if res.Get("subtype").Str != "success" || res.Get("permission_denials.#").Int() != 0 {
		t.Errorf("result %s", res.Raw)
	}
}

// Denied: the tool_result is the CLI's denial and the result lists it.
func TestPermissionDeny(t *testing.T) {
	h := start(t, demo(t), proxyOptions())
	skipTo(h, 2)
	h.user("echo something")
	evs := h.until("can_use_tool", isType("control_request", ""))
	id := evs[len(evs)-1].norm.Get("request_id").Str
	toolUseID := evs[len(evs)-1].norm.Get("request.tool_use_id").Str
	h.answer(id, map[string]any{"behavior": "deny", "message": "Not today"})
	evs = h.turn()
	var result gjson.Result
	for _, e := range evs {
		if e.typ == "user" && e.norm.Get("message.content.0.type").Str == "tool_result" {
			result = e.norm
		}
	}
	if b := result.Get("message.content.0"); b.Get("content").Str != "Not today" || !b.Get("is_error").Bool() || b.Get("tool_use_id").Str != toolUseID {
		t.Errorf("denied tool_result %s", b.Raw)
	}
	if tur := result.Get("tool_use_result").Str; tur != "Error: Not today" {
		t.Errorf("tool_use_result %q", tur)
	}
	if d := result.Get("tool_result_meta.0.permission_decision.decision").Str; d != "reject" {
		t.Errorf("tool_result_meta %s", result.Get("tool_result_meta").Raw)
	}
	res := evs[len(evs)-1].norm
	if res.Get("subtype").Str != "success" || res.Get("permission_denials.0.tool_name").Str != "mcp__demo__echo" ||
		res.Get("permission_denials.0.tool_use_id").Str != toolUseID || res.Get("permission_denials.0.tool_input.message").Str == "" {
		t.Errorf("result %s", res.Raw)
	}
}

// An error reply to the prompt counts as a denial.
func TestPermissionErrorReply(t *testing.T) {
	h := start(t, demo(t), proxyOptions())
	skipTo(h, 2)
	h.user("echo")
	evs := h.until("can_use_tool", isType("control_request", ""))
	id := evs[len(evs)-1].norm.Get("request_id").Str
	h.answerError(id, "no one is there")
	evs = h.turn()
	if n := evs[len(evs)-1].norm.Get("permission_denials.#").Int(); n != 1 {
		t.Errorf("%d permission denials after an error reply, want 1", n)
	}
}

// Interrupt while the prompt waits (as measured on the real CLI): the
// prompt is withdrawn, then the interrupt answered; the call is rejected
// and counted as a denial; the turn ends with error_during_execution; the
// session goes on with the next recorded turn.
func TestInterruptAtPrompt(t *testing.T) {
	h := start(t, demo(t), proxyOptions())
	skipTo(h, 2)
	h.user("echo")
	evs := h.until("can_use_tool", isType("control_request", ""))
	id := evs[len(evs)-1].norm.Get("request_id").Str
	toolUseID := evs[len(evs)-1].norm.Get("request.tool_use_id").Str
	h.control("int1", "interrupt", nil)
	evs = h.turn()
	for len(evs) > 0 && evs[0].typ == "stream_event" { // the message's end, streamed while the prompt waits
		evs = evs[1:]
	}
	want := []func(event) bool{
		func(e event) bool { return e.typ == "control_cancel_request" && e.norm.Get("request_id").Str == id },
		func(e event) bool {
			return e.typ == "control_response" && e.norm.Get("response.request_id").Str == "int1"
		},
		func(e event) bool {
			b := e.norm.Get("message.content.0")
			return e.typ == "user" && b.Get("tool_use_id").Str == toolUseID && b.Get("is_error").Bool() &&
				b.Get("content").Str == interruptedToolText && e.norm.Get("tool_use_result").Str == "User rejected tool use" &&
				e.norm.Get("tool_result_meta.0.non_execution_kind").Str == "user-rejected"
		},
		func(e event) bool {
			return e.typ == "user" && e.norm.Get("message.content.0.text").Str == "[Request interrupted by user for tool use]"
		},
		func(e event) bool {
			return e.typ == "result" && e.sub == "error_during_execution" && e.norm.Get("is_error").Bool() &&
				e.norm.Get("terminal_reason").Str == "aborted_tools" && !e.norm.Get("result").Exists() &&
				e.norm.Get("permission_denials.0.tool_use_id").Str == toolUseID
		},
	}
	if len(evs) != len(want) {
		t.Fatalf("%d events after the interrupt, want %d:\n%s", len(evs), len(want), strings.Join(tail(h.all, len(evs)), "\n"))
	}
	for i, ok := range want {
		if !ok(evs[i]) {
			t.Errorf("event %d after the interrupt: %.400s", i+1, evs[i].raw)
		}
	}
	// An answer to the withdrawn prompt is ignored; the next turn plays.
	h.answer(id, map[string]any{"behavior": "allow", "updatedInput": map[string]any{}})
	h.user("summary")
	evs = h.turn()
	if res := evs[len(evs)-1]; res.sub != "success" || !strings.Contains(res.norm.Get("result").Str, "Here is what this session showed") {
		t.Errorf("the turn after the interrupt: %.300s", res.raw)
	}
	// Interrupt with no turn playing: only the response.
	h.control("int2", "interrupt", nil)
	if e := h.next(); e.typ != "control_response" || e.norm.Get("response.subtype").Str != "success" {
		t.Errorf("idle interrupt answered %.200s", e.raw)
	}
	if err := h.end(); err != nil {
		t.Error(err)
	}
}

// Interrupt while an MCP tool runs (its result is held back for days):
// the call is reported stopped while running, not refused.
func TestInterruptRunningTool(t *testing.T) {
	r, err := New(demo(t), proxyOptions())
	if err != nil {
		t.Fatal(err)
	}
	r.opts.Speed = 1
	r.pace = func(k kind) time.Duration {
		if k == kindToolResult {
			return 1000 * time.Hour
		}
		return 0
	}
	h := startReplayer(t, r)
	skipTo(h, 1)
	h.user("image")
	evs := h.until("the tool_use", func(e event) bool {
		return e.typ == "assistant" && e.norm.Get("message.content.0.type").Str == "tool_use"
	})
	toolUseID := evs[len(evs)-1].norm.Get("message.content.0.id").Str
	h.control("int", "interrupt", nil)
	// The rest of the streamed message may come first (it has no delay).
	h.until("the interrupt response", isType("control_response", ""))
	evs = append([]event{{typ: "control_response"}}, h.turn()...)
	if len(evs) != 4 ||
		evs[1].norm.Get("message.content.0.tool_use_id").Str != toolUseID ||
		evs[1].norm.Get("message.content.0.content").Str != interruptedToolText+interruptedRunningText ||
		evs[2].norm.Get("message.content.0.text").Str != "[Request interrupted by user for tool use]" ||
		evs[3].sub != "error_during_execution" || evs[3].norm.Get("permission_denials.#").Int() != 0 {
		t.Fatalf("after the interrupt:\n%s", strings.Join(tail(h.all, len(evs)), "\n"))
	}
}

// Interrupt while text streams (the pace is slowed so far down that the
// turn cannot end by itself): the turn ends at once, the CLI's way.
func TestInterruptMidStream(t *testing.T) {
	opts := proxyOptions()
	opts.Speed = 1e-6 // every delay becomes days
	h := start(t, demo(t), opts)
	h.user("hello")
	if e := h.next(); e.sub != "init" {
		t.Fatalf("first event %s/%s", e.typ, e.sub)
	}
	h.control("int", "interrupt", nil)
	evs := h.turn()
	if len(evs) != 3 || evs[0].typ != "control_response" ||
		evs[1].norm.Get("message.content.0.text").Str != "[Request interrupted by user]" ||
		evs[2].sub != "error_during_execution" || evs[2].norm.Get("terminal_reason").Str != "aborted_streaming" {
		t.Fatalf("after the interrupt:\n%s", strings.Join(tail(h.all, len(evs)), "\n"))
	}
	if sid := evs[2].norm.Get("session_id").Str; sid == "" || sid == demo(t).SessionID {
		t.Errorf("result session_id %q", sid)
	}
}

// After the recorded turns, every turn gets the canned reply, complete.
func TestCannedReply(t *testing.T) {
	h := start(t, demo(t), proxyOptions())
	skipTo(h, 2)
	h.user("echo")
	evs := h.until("can_use_tool", isType("control_request", ""))
	h.answer(evs[len(evs)-1].norm.Get("request_id").Str, map[string]any{"behavior": "allow", "updatedInput": map[string]any{}})
	h.turn()
	skipTo(h, 1)
	for i := 0; i < 2; i++ {
		h.user("anything else?")
		evs := h.turn()
		if evs[0].sub != "init" || !evs[1].norm.Get("isReplay").Bool() || evs[1].norm.Get("message.content").Str != "anything else?" {
			t.Errorf("canned turn starts %s/%s, %.200s", evs[0].typ, evs[0].sub, evs[1].raw)
		}
		var text strings.Builder
		for _, e := range evs {
			if e.norm.Get("event.delta.type").Str == "text_delta" {
				text.WriteString(e.norm.Get("event.delta.text").Str)
			}
		}
		if text.String() != CannedReply {
			t.Errorf("streamed text %q", text.String())
		}
		if n := count(evs, func(e event) bool {
			return e.typ == "assistant" && e.norm.Get("message.content.0.text").Str == CannedReply
		}); n != 1 {
			t.Errorf("%d assistant events with the canned reply", n)
		}
		res := evs[len(evs)-1].norm
		if res.Get("subtype").Str != "success" || res.Get("result").Str != CannedReply || res.Get("is_error").Bool() || res.Get("errors").Exists() {
			t.Errorf("canned result %.400s", res.Raw)
		}
	}
}

// Without the flags, the CLI prints no stream_events and no echoes.
func TestFlagsOff(t *testing.T) {
	h := start(t, demo(t), Options{})
	h.user("hi")
	evs := h.turn()
	if n := count(evs, func(e event) bool {
		return e.typ == "stream_event" || e.sub == "thinking_tokens" || e.norm.Get("isReplay").Bool()
	}); n != 0 {
		t.Errorf("%d stream_event / thinking_tokens / echo lines without the flags", n)
	}
	if n := count(evs, isType("assistant", "")); n != 2 {
		t.Errorf("%d assistant events, want the thinking and the text", n)
	}
}

// Control requests are answered as the CLI answers them, and change what
// later system/init events say.
func TestControlRequests(t *testing.T) {
	opts := proxyOptions()
	opts.Model = "claude-demo-1"
	h := start(t, demo(t), opts)
	resp := func(id string) gjson.Result {
		t.Helper()
		evs := h.until("the response to "+id, func(e event) bool {
			return e.typ == "control_response" && e.norm.Get("response.request_id").Str == id
		})
		return evs[len(evs)-1].norm.Get("response")
	}

	h.control("set", "mcp_set_servers", map[string]any{"servers": map[string]any{
		"mine": map[string]any{"type": "stdio", "command": "my-server", "args": []string{}}}})
	r := resp("set")
	if r.Get("subtype").Str != "success" || r.Get("response.added").Raw != `["mine"]` || r.Get("response.removed").Raw != `[]` {
		t.Errorf("mcp_set_servers: %s", r.Raw)
	}
	h.control("st", "mcp_status", nil)
	r = resp("st")
	if r.Get(`response.mcpServers.#(name=="mine").status`).Str != "failed" ||
		!strings.Contains(r.Get(`response.mcpServers.#(name=="mine").error`).Str, "replay") ||
		r.Get(`response.mcpServers.#(name=="demo").status`).Str != "connected" ||
		r.Get(`response.mcpServers.#(name=="demo").tools.#`).Int() == 0 {
		t.Errorf("mcp_status: %s", r.Raw)
	}
	h.control("tog", "mcp_toggle", map[string]any{"serverName": "demo", "enabled": false})
	if r = resp("tog"); r.Get("subtype").Str != "success" {
		t.Errorf("mcp_toggle: %s", r.Raw)
	}
	h.control("pm", "set_permission_mode", map[string]any{"mode": "acceptEdits"})
	if r = resp("pm"); r.Get("response.mode").Str != "acceptEdits" {
		t.Errorf("set_permission_mode: %s", r.Raw)
	}
	if e := h.next(); e.sub != "status" || e.norm.Get("permissionMode").Str != "acceptEdits" {
		t.Errorf("after set_permission_mode: %.200s", e.raw)
	}

	h.user("hi")
	init := h.next()
	if init.norm.Get("model").Str != "claude-demo-1" || init.norm.Get("permissionMode").Str != "acceptEdits" ||
		init.norm.Get(`mcp_servers.#(name=="mine").status`).Str != "failed" ||
		init.norm.Get(`mcp_servers.#(name=="demo").status`).Str != "disabled" {
		t.Errorf("init after the changes: model %s mode %s servers %s", init.norm.Get("model"), init.norm.Get("permissionMode"), init.norm.Get("mcp_servers").Raw)
	}
	h.turn()

	h.control("set2", "mcp_set_servers", map[string]any{"servers": map[string]any{}})
	if r = resp("set2"); r.Get("response.removed").Raw != `["mine"]` || r.Get("response.added").Raw != `[]` {
		t.Errorf("mcp_set_servers {}: %s", r.Raw)
	}
	h.control("model", "set_model", map[string]any{"model": "claude-other"})
	evs := h.until("set_model", isType("control_response", ""))
	if len(evs) != 2 || !strings.Contains(evs[0].norm.Get("message.content").Str, "Set model to `claude-other`") ||
		evs[1].norm.Get("response.response.model").Str != "claude-other" {
		t.Errorf("set_model:\n%s", strings.Join(tail(h.all, 2), "\n"))
	}
	for _, c := range []struct {
		sub    string
		fields any
		err    string
	}{
		{"bogus_subtype", nil, "Unsupported control request subtype: bogus_subtype"},
		{"mcp_reconnect", map[string]any{"serverName": "nope"}, "Server not found: nope"},
		{"set_permission_mode", map[string]any{"mode": "yolo"}, `Invalid permission mode: "yolo"`},
		{"mcp_set_servers", map[string]any{"servers": []string{}}, "mcp_set_servers: servers must be an object"},
	} {
		h.control("e-"+c.sub, c.sub, c.fields)
		r = resp("e-" + c.sub)
		if r.Get("subtype").Str != "error" || r.Get("error").Str != c.err {
			t.Errorf("%s: %s, want error %q", c.sub, r.Raw, c.err)
		}
	}
	h.control("rc", "mcp_reconnect", map[string]any{"serverName": "demo"})
	if r = resp("rc"); r.Get("subtype").Str != "success" || r.Get("response").Exists() {
		t.Errorf("mcp_reconnect: %s", r.Raw)
	}
}

// Malformed stdin ends Run with ErrBadInput, as the CLI dies.
func TestBadInput(t *testing.T) {
	for _, c := range []struct{ name, line, want string }{
		{"not json", "hello", "stdin line 1 is not a JSON object"},
		{"array", `[1,2]`, "is not a JSON object"},
		{"truncated", `{"type":"user","message":`, "is not a JSON object"},
		{"user without message", `{"type":"user"}`, "needs message.content"},
		{"user with number content", `{"type":"user","message":{"role":"user","content":3}}`, "needs message.content"},
		{"control without id", `{"type":"control_request","request":{"subtype":"interrupt"}}`, "needs a request_id"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := start(t, demo(t), proxyOptions())
			h.sendRaw(c.line)
			err := h.result()
			if !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Run: %v, want ErrBadInput with %q", err, c.want)
			}
		})
	}
	// Even in the middle of a turn.
	opts := proxyOptions()
	opts.Speed = 1e-6
	h := start(t, demo(t), opts)
	h.user("hi")
	h.next()
	h.sendRaw("{nope")
	if err := h.result(); !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), "stdin line 2") {
		t.Errorf("Run: %v", err)
	}
}

// The end of stdin: the turns asked for are played, then Run returns nil;
// a prompt after the end fails as a denial.
func TestEOF(t *testing.T) {
	h := start(t, demo(t), proxyOptions())
	if err := h.end(); err != nil {
		t.Errorf("EOF at once: %v", err)
	}

	h = start(t, demo(t), proxyOptions())
	for i := 0; i < 4; i++ {
		h.user("go")
	}
	h.stdin.Close()
	var results []gjson.Result
	for len(results) < 4 {
		if e := h.next(); e.typ == "result" {
			results = append(results, e.norm)
		}
	}
	if err := h.result(); err != nil {
		t.Errorf("Run: %v", err)
	}
	if results[2].Get("permission_denials.#").Int() != 1 {
		t.Errorf("the prompt after EOF did not fail: %s", results[2].Get("permission_denials").Raw)
	}
	for i, r := range results {
		if r.Get("subtype").Str != "success" {
			t.Errorf("result %d: %s", i+1, r.Get("subtype"))
		}
	}
}

// A fixed session id (--resume) replaces the recorded one everywhere.
func TestSessionID(t *testing.T) {
	tr := demo(t)
	opts := proxyOptions()
	opts.SessionID = "11111111-2222-4333-8444-555555555555"
	h := start(t, tr, opts)
	skipTo(h, 2)
	h.end()
	for _, line := range h.all {
		if strings.Contains(line, tr.SessionID) {
			t.Fatalf("recorded session id left in %.200s", line)
		}
		if sid := gjson.Get(line, "session_id"); sid.Exists() && sid.Str != opts.SessionID {
			t.Fatalf("session_id %q in %.200s", sid.Str, line)
		}
	}
}

func TestNewOptions(t *testing.T) {
	for _, speed := range []float64{-1, posInf(), nan()} {
		if _, err := New(demo(t), Options{Speed: speed}); err == nil {
			t.Errorf("speed %v accepted", speed)
		}
	}
	if _, err := New(nil, Options{}); err == nil {
		t.Error("nil transcript accepted")
	}
}

func posInf() float64 { z := 0.0; return 1 / z }
func nan() float64    { z := 0.0; return z / z }

// The pace at speed 1: text deltas 20–40 ms apart, a pause before tool
// results, the first turn a few seconds long (computed, not timed).
func TestPace(t *testing.T) {
	tr := demo(t)
	s := &session{opts: Options{Speed: 1, PartialMessages: true}, jitter: 1}
	for ti, turn := range tr.Turns {
		var total float64
		for i := range turn.lines {
			l := &turn.lines[i]
			d := s.delay(l)
			total += d.Seconds()
			if l.ev == "content_block_delta" && l.delta == "text_delta" && (d.Milliseconds() < 20 || d.Milliseconds() > 40) {
				t.Errorf("text delta after %v", d)
			}
			if l.kind == kindToolResult && d.Milliseconds() < 300 {
				t.Errorf("tool result after only %v", d)
			}
		}
		if total < 1 || total > 15 {
			t.Errorf("turn %d takes %.1f s at speed 1", ti+1, total)
		}
	}
}
