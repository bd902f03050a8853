package proxy

import (
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/stream"
)

// The session's state follows claude's events: scripts of what the real
// CLI prints (docs/CLI-NOTES.md) and what the session sends, with the state
// wanted after each step.
func TestTurnStateScript(t *testing.T) {
	const (
		initEv      = `{"type":"system","subtype":"init","session_id":"x"}`
		notif       = `{"type":"system","subtype":"task_notification","task_id":"t","status":"completed"}`
		assistant   = `{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"hi"}]}}`
		toolResult  = `{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}}`
		result      = `{"type":"result","subtype":"success"}`
		interrupted = `{"type":"result","subtype":"error_during_execution"}`
		modelResult = `{"type":"result","subtype":"success","num_turns":1}`
		localResult = `{"type":"result","subtype":"success","num_turns":0}`
		run, idle   = protocol.StateRunning, protocol.StateIdle
	)
	replay := func(text string) string {
		b, _ := json.Marshal(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": text}, "isReplay": true})
		return string(b)
	}
	type step struct {
		send  string // a user turn written
		event string // or an event of claude
		want  string
	}
	send := func(text, want string) step { return step{send: text, want: want} }
	ev := func(e, want string) step { return step{event: e, want: want} }
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"user turn", []step{send("a", run), ev(initEv, run), ev(replay("a"), run), ev(assistant, run), ev(result, idle)}},
		{"self-started turn", []step{ev(notif, idle), ev(initEv, run), ev(assistant, run), ev(result, idle)}},
		{"turn started without init", []step{ev(assistant, run), ev(result, idle)}},
		{"user turn behind a self-started one", []step{
			send("a", run), ev(initEv, run), ev(replay("a"), run), ev(result, idle),
			ev(notif, idle), ev(initEv, run), send("b", run), ev(assistant, run), ev(result, run),
			ev(initEv, run), ev(replay("b"), run), ev(assistant, run), ev(result, idle)}},
		{"queued turns merged into one", []step{
			send("a", run), ev(initEv, run), ev(replay("a"), run), send("b", run), send("c", run), ev(result, run),
			ev(initEv, run), ev(replay("b\nc"), run), ev(result, idle)}},
		{"turn fed into the running turn", []step{
			send("a", run), ev(initEv, run), ev(replay("a"), run), send("b", run), ev(toolResult, run),
			ev(replay("b"), run), ev(assistant, run), ev(result, idle)}},
		{"interrupt keeps the queued turn", []step{
			send("a", run), ev(initEv, run), ev(replay("a"), run), send("b", run), ev(interrupted, run),
			ev(initEv, run), ev(replay("b"), run), ev(result, idle)}},
		{"a replay matching nothing takes every queued turn", []step{
			send("a", run), send("b", run), ev(initEv, run), ev(replay("something else"), run), ev(result, idle)}},
		{"command output is not a turn", []step{
			send("a", run), send("b", run), ev(initEv, run), ev(replay("<local-command-stdout>Set model</local-command-stdout>"), run),
			ev(replay("a"), run), ev(result, run), ev(initEv, run), ev(replay("b"), run), ev(result, idle)}},
		{"slash command run by claude itself", []step{
			send("a", run), ev(initEv, run), ev(replay("a"), run), ev(result, idle),
			send("/cost", run), ev(initEv, run), ev(assistant, run), ev(localResult, idle)}},
		{"compact", []step{
			send("a", run), ev(initEv, run), ev(replay("a"), run), ev(result, idle),
			send("/compact", run), ev(initEv, run), ev(`{"type":"system","subtype":"compact_boundary"}`, run),
			ev(replay("<local-command-stdout>Compacted </local-command-stdout>"), run), ev(localResult, idle)}},
		{"slash command behind a self-started turn", []step{
			send("a", run), ev(initEv, run), ev(replay("a"), run), ev(result, idle),
			ev(notif, idle), ev(initEv, run), send("/cost", run), ev(assistant, run), ev(modelResult, run),
			ev(initEv, run), ev(assistant, run), ev(localResult, idle)}},
		{"a claude that echoes nothing: one result per turn", []step{
			send("a", run), send("b", run), ev(initEv, run), ev(result, run), ev(initEv, run), ev(result, idle)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &Session{id: "s-test", log: slog.New(slog.DiscardHandler), state: idle, hub: newHub("s-test", slog.New(slog.DiscardHandler), nil, 1<<20, 0, nil)}
			norm := stream.NewNormalizer(stream.Options{})
			for i, st := range tc.steps {
				s.mu.Lock()
				what := st.event
				if st.send != "" {
					line, err := stream.UserTurn(st.send, nil)
					if err != nil {
						t.Fatal(err)
					}
					s.turns.queue(line)
					s.settleStateLocked()
					what = "send " + st.send
				} else {
					e := norm.Normalize([]byte(st.event))
					if s.turns.event(&e, s.log) {
						s.settleStateLocked()
					}
				}
				got := s.state
				s.mu.Unlock()
				if got != st.want {
					t.Fatalf("step %d (%s): state %s, want %s", i, what, got, st.want)
				}
			}
		})
	}
}

// timeline lists, from frame index from, the events of session (type, and
// the text of assistant events) and the states pushed, in arrival order.
func timeline(c *wsClient, from int, session string) []string {
	var out []string
	for _, f := range c.snapshot()[from:] {
		switch {
		case f.ev != nil && f.ev.Session == session:
			typ := eventType(*f.ev)
			if typ == "stream_event" {
				continue
			}
			if txt := textOf(*f.ev); txt != "" {
				typ += ":" + txt
			}
			out = append(out, typ)
		case f.Type == protocol.TypeSessionState:
			var st protocol.SessionState
			json.Unmarshal(f.Data, &st)
			if st.Session == session {
				out = append(out, "state:"+st.State)
			}
		}
	}
	return out
}

func index(tl []string, from int, entry string) int {
	for i := max(from, 0); i < len(tl); i++ {
		if tl[i] == entry {
			return i
		}
	}
	return -1
}

// A turn claude starts by itself (after a background task) shows running,
// in order with its events; a user turn sent meanwhile waits behind it,
// and idle comes only after that turn's own result.
func TestStateFollowsSelfStartedTurn(t *testing.T) {
	ts := startServer(t, Options{}, "FAKE_REPLAY=1")
	c := ts.dial(t)
	s := c.create(nil)
	from := c.count()
	c.do(protocol.TypeSessionSend, map[string]any{"session": s, "text": "bg hold"})
	c.waitEvent(from, s, "the self-started turn", func(ev protocol.SessionEvent) bool { return textOf(ev) == "background task done" })
	c.do(protocol.TypeSessionSend, map[string]any{"session": s, "text": "after"})
	_, ei := c.waitEvent(from, s, "the answer to after", func(ev protocol.SessionEvent) bool { return textOf(ev) == "echo: after" })
	c.waitEvent(ei, s, "the result of after", isResult)
	// A push that follows the result was queued before this reply.
	c.do(protocol.TypeSessionList, map[string]any{})

	tl := timeline(c, from, s)
	self := index(tl, index(tl, 0, "system/task_notification"), "system/init")
	done := index(tl, self, "assistant:background task done")
	selfResult := index(tl, done, "result/success")
	afterResult := index(tl, index(tl, selfResult, "assistant:echo: after"), "result/success")
	if self < 0 || done < 0 || selfResult < 0 || afterResult < 0 {
		t.Fatalf("timeline %q", tl)
	}
	// The first turn ends idle; the self-started one turns it running right
	// after its system/init.
	if i := index(tl, 0, "result/success"); index(tl, i, "state:idle") != i+1 {
		t.Errorf("no idle right after the first turn's result: %q", tl)
	}
	if tl[self+1] != "state:running" {
		t.Errorf("the self-started turn's system/init is not followed by state running: %q", tl)
	}
	if i := index(tl, self, "state:idle"); i != afterResult+1 {
		t.Errorf("idle at %d, want right after the result of the queued user turn (%d): %q", i, afterResult+1, tl)
	}
	if i := index(tl, selfResult, "state:running"); i >= 0 && i < afterResult {
		t.Errorf("state pushed again between the two results (it never left running): %q", tl)
	}
}

// A restart claude's refusal of an MCP change asks for waits while claude
// runs a turn it started by itself, and while a user turn sent meanwhile
// waits behind it: it begins only after that turn's result.
func TestDeferredRestartWaitsForSelfStartedTurn(t *testing.T) {
	src := newTestSource(t, map[string]string{"alpha": `{"command":"a","args":[]}`})
	ts := startServer(t, Options{MCPOptions: MCPOptions{MCP: src}}, "FAKE_REFUSE_SET=1", "FAKE_REPLAY=1")
	c := ts.dial(t)
	s := c.create(nil)
	from := c.count()
	c.do(protocol.TypeSessionSend, map[string]any{"session": s, "text": "bg hold"})
	c.waitEvent(from, s, "the self-started turn", func(ev protocol.SessionEvent) bool { return textOf(ev) == "background task done" })

	src.set(map[string]string{"alpha": `{"command":"a","args":[]}`, "beta": `{"command":"b","args":[]}`}, nil)
	waitLog(t, ts, `msg="restarting claude between turns" session=`+s)
	c.do(protocol.TypeSessionSend, map[string]any{"session": s, "text": "after"})
	c.waitPush(from, protocol.TypeSessionState, nil, func(raw json.RawMessage) bool { return strings.Contains(string(raw), `"restarting"`) })

	tl := timeline(c, from, s)
	restarting := index(tl, 0, "state:restarting")
	afterResult := -1
	if echo := index(tl, 0, "assistant:echo: after"); echo >= 0 {
		afterResult = index(tl, echo, "result/success")
	}
	if afterResult < 0 || restarting < afterResult {
		t.Errorf("restarting at %d, before the result of the turn sent during the self-started one (%d): %q", restarting, afterResult, tl)
	}
	c.waitPush(from, protocol.TypeSessionState, nil, func(raw json.RawMessage) bool { return strings.Contains(string(raw), `"starting"`) })
	c.turn(s, "resumed")
}

// waitLog waits until the proxy's log holds want.
func waitLog(t *testing.T, ts *testServer, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(ts.logBuf.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("the log never showed %q", want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// At most maxQueuedTurns user turns wait for claude to start them; one
// more gets limit_exceeded, and the session goes on.
func TestQueuedTurnsBounded(t *testing.T) {
	ts := startServer(t, Options{CLIOptions: CLIOptions{CloseGrace: 50 * time.Millisecond}}, "FAKE_REPLAY=1") // at the end, the fake still hangs: SIGTERM it soon
	c := ts.dial(t)
	s := c.create(nil)
	from := c.count()
	c.do(protocol.TypeSessionSend, map[string]any{"session": s, "text": "hang"})
	c.waitEvent(from, s, "the hanging turn", func(ev protocol.SessionEvent) bool { return textOf(ev) == "working on it" })
	ids := make([]json.RawMessage, maxQueuedTurns)
	for i := range ids {
		ids[i] = c.send(protocol.TypeSessionSend, map[string]any{"session": s, "text": "queued"})
	}
	for i, id := range ids {
		if rep := c.reply(id); !*rep.OK {
			t.Fatalf("queued turn %d: %s", i, rep.raw)
		}
	}
	if e := c.doErr(protocol.TypeSessionSend, map[string]any{"session": s, "text": "one too many"}); e.Code != protocol.CodeLimitExceeded || !strings.Contains(e.Message, "has not started") {
		t.Errorf("turn %d: %v, want limit_exceeded", maxQueuedTurns+1, e)
	}
	if info := c.do(protocol.TypeSessionList, map[string]any{}); !strings.Contains(string(info), `"state":"running"`) {
		t.Errorf("session/list: %s, want the session running", info)
	}
}
