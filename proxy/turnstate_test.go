package proxy

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/proxy/turnstate"
)

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

// At most turnstate.MaxQueued user turns wait for claude to start them; one
// more gets limit_exceeded, and the session goes on.
func TestQueuedTurnsBounded(t *testing.T) {
	ts := startServer(t, Options{CLIOptions: CLIOptions{CloseGrace: 50 * time.Millisecond}}, "FAKE_REPLAY=1") // at the end, the fake still hangs: SIGTERM it soon
	c := ts.dial(t)
	s := c.create(nil)
	from := c.count()
	c.do(protocol.TypeSessionSend, map[string]any{"session": s, "text": "hang"})
	c.waitEvent(from, s, "the hanging turn", func(ev protocol.SessionEvent) bool { return textOf(ev) == "working on it" })
	ids := make([]json.RawMessage, turnstate.MaxQueued)
	for i := range ids {
		ids[i] = c.send(protocol.TypeSessionSend, map[string]any{"session": s, "text": "queued"})
	}
	for i, id := range ids {
		if rep := c.reply(id); !*rep.OK {
			t.Fatalf("queued turn %d: %s", i, rep.raw)
		}
	}
	if e := c.doErr(protocol.TypeSessionSend, map[string]any{"session": s, "text": "one too many"}); e.Code != protocol.CodeLimitExceeded || !strings.Contains(e.Message, "has not started") {
		t.Errorf("turn %d: %v, want limit_exceeded", turnstate.MaxQueued+1, e)
	}
	if info := c.do(protocol.TypeSessionList, map[string]any{}); !strings.Contains(string(info), `"state":"running"`) {
		t.Errorf("session/list: %s, want the session running", info)
	}
}
