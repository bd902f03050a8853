package proxy

import (
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ccproxy/ccproxy/internal/testkit/fakeclaude"
	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/proxy/held"
	"github.com/ccproxy/ccproxy/stream"
)

// textOf returns the text of an assistant event ("" for others).
func textOf(ev protocol.SessionEvent) string {
	var e struct {
		Type    string `json:"type"`
		Message struct {
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		} `json:"message"`
	}
	json.Unmarshal(ev.Event, &e)
	if e.Type != "assistant" {
		return ""
	}
	var b strings.Builder
	for _, c := range e.Message.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

// turn sends text and waits for the turn's result; it returns the events
// of the turn.
func (c *wsClient) turn(session, text string) []protocol.SessionEvent {
	c.t.Helper()
	from := c.count()
	c.do(protocol.TypeSessionSend, map[string]any{"session": session, "text": text})
	c.waitEvent(from, session, "result of "+text, isResult)
	var out []protocol.SessionEvent
	for _, f := range c.snapshot()[from:] {
		if f.ev != nil && f.ev.Session == session {
			out = append(out, *f.ev)
		}
	}
	return out
}

func TestMultiTurnChat(t *testing.T) {
	ts := startServer(t, Options{})
	c := ts.dial(t)
	var hello protocol.Hello
	c.waitPush(0, protocol.TypeHello, &hello, nil)
	if hello.Protocol != "1" || hello.Claude == nil || hello.Claude.Version != "2.1.329" {
		t.Errorf("hello = %+v", hello)
	}
	s := c.create(nil)
	evs := c.turn(s, "hello there")
	if got := textOf(evs[len(evs)-2]); got != "echo: hello there" {
		t.Errorf("assistant text = %q", got)
	}
	c.turn(s, "second turn")
	all := c.events(s)
	checkSeqs(t, all, 1)
	if len(all) != 8 {
		t.Errorf("%d events, want 8 (init, delta, assistant, result per turn)", len(all))
	}
}

// While a session restarts, at most held.MaxTurns turns are held; one more
// is refused with limit_exceeded, and the held ones are written afterwards.
func TestHeldTurnsBounded(t *testing.T) {
	ts := startServer(t, Options{CLIOptions: CLIOptions{CloseGrace: waitTimeout}}, "FAKE_EXIT_ON_USR1=1")
	c := ts.dial(t)
	s := c.create(nil)
	pid := fakePID(t, c, s)
	_, from := restartSession(t, ts, c, s)
	ids := make([]json.RawMessage, held.MaxTurns)
	for i := range ids {
		ids[i] = c.send(protocol.TypeSessionSend, map[string]any{"session": s, "text": "held " + strconv.Itoa(i)})
	}
	if e := c.doErr(protocol.TypeSessionSend, map[string]any{"session": s, "text": "one too many"}); e.Code != protocol.CodeLimitExceeded || !strings.Contains(e.Message, "restarting") {
		t.Errorf("turn %d during the restart: %v, want limit_exceeded", held.MaxTurns+1, e)
	}
	if err := killPID(pid, fakeclaude.ExitSignal); err != nil {
		t.Fatal(err)
	}
	for i, id := range ids {
		if rep := c.reply(id); !*rep.OK {
			t.Fatalf("held turn %d: %s", i, rep.raw)
		}
	}
	want := "echo: held " + strconv.Itoa(held.MaxTurns-1)
	_, i := c.waitEvent(from, s, "the last held turn", func(ev protocol.SessionEvent) bool { return textOf(ev) == want })
	// Its result, before the next turn: fakePID's turn takes the first
	// result after it is sent as its own.
	c.waitEvent(i+1, s, "the held turns' result", isResult)
	killPID(fakePID(t, c, s), fakeclaude.ExitSignal) // the new fake waits for it too
}

// A control request claude never answers is forgotten after ControlTimeout:
// the interrupt is answered with timeout and leaves nothing pending.
func TestControlTimeoutForgotten(t *testing.T) {
	ts := startServer(t, Options{CLIOptions: CLIOptions{ControlTimeout: 500 * time.Millisecond}}, "FAKE_IGNORE_CONTROL=interrupt")
	c := ts.dial(t)
	s := c.create(nil)
	c.turn(s, "hello")
	e := c.doErr(protocol.TypeSessionInterrupt, map[string]any{"session": s})
	if e.Code != protocol.CodeTimeout || !strings.Contains(e.Message, "did not acknowledge the interrupt") {
		t.Errorf("unanswered interrupt: %v, want timeout", e)
	}
	sess, err := ts.srv.session(s)
	if err != nil {
		t.Fatal(err)
	}
	sess.mu.Lock()
	p := sess.proc.cur
	sess.mu.Unlock()
	if n := p.cli.Pending(); n != 0 {
		t.Errorf("%d control requests still pending after the unanswered interrupt timed out", n)
	}
	if !strings.Contains(ts.logBuf.String(), `msg="claude did not answer a control request in time; it is forgotten" session=`+s+` subtype=interrupt`) {
		t.Error("the timeout is not in the log")
	}
	c.turn(s, "still there")
}

// An mcp_status claude does not answer does not stop the status from
// being refreshed: after ControlTimeout it is forgotten, and the next
// refresh asks again.
func TestMCPStatusRefreshedAfterTimeout(t *testing.T) {
	src := newTestSource(t, map[string]string{"alpha": `{"command":"a","args":[]}`})
	ts := startServer(t, Options{CLIOptions: CLIOptions{ControlTimeout: 500 * time.Millisecond}, MCPOptions: MCPOptions{MCP: src, MCPRefresh: 20 * time.Millisecond}}, "FAKE_IGNORE_CONTROL=mcp_status:1")
	c := ts.dial(t)
	from := c.count()
	c.do(protocol.TypeMCPSubscribe, map[string]any{})
	c.create(nil) // no turn: only mcp_status tells the status
	waitStatus(c, from, "alpha connected", func(st protocol.MCPStatus) bool {
		a := statusOf(st, "alpha")
		return a != nil && a.Status == protocol.MCPConnected
	})
	if !strings.Contains(ts.logBuf.String(), "subtype=mcp_status") {
		t.Error("the unanswered mcp_status is not in the log")
	}
}

// A session created to resume a conversation, restarted before its first
// turn, resumes that conversation again: claude has not reported it yet.
func TestRestartBeforeFirstTurnKeepsResume(t *testing.T) {
	argsFile := filepath.Join(t.TempDir(), "args.json")
	ts := startServer(t, Options{}, "FAKE_ARGS_FILE="+argsFile)
	c := ts.dial(t)
	const resume = "0badc0de-0000-4000-8000-000000000002"
	s := c.create(map[string]any{"resume": resume})
	c.waitState(0, protocol.StateIdle)
	restartSession(t, ts, c, s)
	c.turn(s, "hello") // a turn of the new process: it has written its arguments
	if args := fakeArgs(t, argsFile); argValue(args, "--resume") != resume {
		t.Errorf("the restarted claude's arguments %v, want --resume %s", args, resume)
	}
}

// A permission request the replaced process sent as it was being closed
// (a turn it started on its own) is cancelled when it ends: nobody can
// answer it any more, and it must not stay pending in the new process's
// session.
func TestRestartCancelsTheOldProcessRequests(t *testing.T) {
	ts := startServer(t, Options{}, "FAKE_ASK_ON_EOF=1")
	c := ts.dial(t)
	s := c.create(nil)
	c.waitState(0, protocol.StateIdle)
	sess, from := restartSession(t, ts, c, s)
	var req protocol.PermissionRequest
	c.waitPush(from, protocol.TypePermissionRequest, &req, nil)
	var res protocol.PermissionResolved
	c.waitPush(from, protocol.TypePermissionResolved, &res, func(raw json.RawMessage) bool { return strings.Contains(string(raw), req.RequestID) })
	if res.Behavior != protocol.BehaviorCancelled || res.Reason != protocol.ResolvedSessionExited {
		t.Errorf("the old process's request was resolved %+v, want cancelled (session_exited)", res)
	}
	c.turn(s, "hello") // the new process works
	sess.mu.Lock()
	n := sess.broker.Pending()
	sess.mu.Unlock()
	if n != 0 {
		t.Errorf("%d permission requests still pending after the restart", n)
	}
}

// Turns held during a restart go only to a process that has initialized
// and is not being replaced: not to one whose initialize answer arrives
// while a second restart replaces it; and a flush to a process since
// replaced hands the rest to the current one.
func TestHeldTurnsGoToTheCurrentProcess(t *testing.T) {
	ts := startServer(t, Options{})
	c := ts.dial(t)
	s := c.create(nil)
	c.waitState(0, protocol.StateIdle)
	sess, err := ts.srv.session(s)
	if err != nil {
		t.Fatal(err)
	}
	line, err := stream.UserTurn("held", nil)
	if err != nil {
		t.Fatal(err)
	}
	replies := make(chan error, 1)
	from := c.count()
	sess.mu.Lock()
	p := sess.proc.cur
	sess.restarts.active = true // as a second restart leaves it while p is replaced
	sess.restarts.held.Add(line, func(err error) { replies <- err })
	sess.mu.Unlock()

	sess.onInitialized(p) // p's initialize answer, arriving during that restart
	sess.mu.Lock()
	flushing, held := sess.restarts.flushing, sess.restarts.held.Len()
	sess.restarts.active = false // p stays the session's process after all
	sess.mu.Unlock()
	if flushing || held != 1 {
		t.Fatalf("an initialize answer during a restart started writing the held turns to the process being replaced (flushing %v, %d held)", flushing, held)
	}

	// A flush writing to a process that has been replaced since (stale)
	// stops, and the held turn goes to the current process, p.
	sess.mu.Lock()
	sess.restarts.flushing = true
	sess.mu.Unlock()
	sess.flushHeld(&claudeProc{}) // it must not write to this one: it has no claude
	select {
	case err := <-replies:
		if err != nil {
			t.Fatalf("the held turn: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the held turn was not written to the current process within 30 s")
	}
	c.waitEvent(from, s, "the held turn's answer", func(ev protocol.SessionEvent) bool {
		return textOf(ev) == "echo: held"
	})
}
