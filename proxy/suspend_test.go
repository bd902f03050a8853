package proxy

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ccproxy/ccproxy/internal/testkit"
	"github.com/ccproxy/ccproxy/internal/testkit/fakeclaude"
	"github.com/ccproxy/ccproxy/protocol"
)

// suspendServer serves the fake claude with the idle timers on clock.
func suspendServer(t *testing.T, opts Options, env ...string) (*testServer, *testkit.IdleClock) {
	clock := testkit.NewIdleClock()
	opts.IdleClock = clock.After
	return startServer(t, opts, env...), clock
}

// suspendIdle fires s's idle timer and waits until its claude (process p)
// has stopped and c was told the session is suspended.
func suspendIdle(t *testing.T, ts *testServer, clock *testkit.IdleClock, c *wsClient, s string) *Session {
	t.Helper()
	sess, err := ts.srv.session(s)
	if err != nil {
		t.Fatal(err)
	}
	sess.mu.Lock()
	p := sess.proc.cur
	sess.mu.Unlock()
	from := c.count()
	for suspended := false; !suspended; {
		// An idle session with a control request pending (claude's
		// mcp_status after a turn) is not suspended: its timer is armed
		// again, and fired again here.
		clock.Fire(t)
		sess.mu.Lock()
		suspended = sess.suspend.SuspendedLocked()
		sess.mu.Unlock()
	}
	c.waitState(from, protocol.StateSuspended)
	select {
	case <-p.finished:
	case <-time.After(waitTimeout):
		t.Fatal("the suspended session's claude did not stop")
	}
	return sess
}

func listState(t *testing.T, c *wsClient, s string) string {
	t.Helper()
	var l protocol.SessionListResult
	mustUnmarshal(t, c.do(protocol.TypeSessionList, map[string]any{}), &l)
	for _, si := range l.Sessions {
		if si.Session == s {
			return si.State
		}
	}
	return "(not listed)"
}

// An idle session is suspended when its idle timer fires: subscribers see
// session/state suspended, its claude is gone, session/list says
// suspended, and it counts in the metrics. Its next turn resumes it: a new
// claude with --resume of its Claude session answers, the seqs continue
// with no hole and no duplicate, and nothing of the first claude is
// logged again.
func TestSuspendResume(t *testing.T) {
	argsFile := filepath.Join(t.TempDir(), "args.json")
	ts, clock := suspendServer(t, Options{}, "FAKE_ARGS_FILE="+argsFile)
	c := ts.dial(t)
	s := c.create(nil)
	pid := fakePID(t, c, s)
	sess := suspendIdle(t, ts, clock, c, s)
	if alive(pid) {
		t.Errorf("claude (pid %d) still runs in a suspended session", pid)
	}
	if st := listState(t, c, s); st != protocol.StateSuspended {
		t.Errorf("session/list state %q, want suspended", st)
	}
	if sess.countsAgainstLimit() {
		t.Error("a suspended session counts against maxSessions")
	}
	before := len(c.events(s))
	evs := c.turn(s, "again")
	if got := textOf(evs[len(evs)-2]); got != "echo: again" {
		t.Errorf("the resumed session's answer %q", got)
	}
	if args := fakeArgs(t, argsFile); argValue(args, "--resume") != "fake-session-1" {
		t.Errorf("the resumed claude's arguments %v, want --resume fake-session-1", args)
	}
	all := c.events(s)
	checkSeqs(t, all, 1)
	if n := len(all) - before; n != len(evs) {
		t.Errorf("%d events logged after the resume, want the turn's %d", n, len(evs))
	}
	m, _ := scrape(t, ts)
	if m["ccproxy_sessions_suspended_total"] != 1 || m["ccproxy_sessions_resumed_total"] != 1 {
		t.Errorf("suspends %v, resumes %v; want 1 and 1", m["ccproxy_sessions_suspended_total"], m["ccproxy_sessions_resumed_total"])
	}
	// Idle again: suspended again, and the gauge says so.
	suspendIdle(t, ts, clock, c, s)
	m, _ = scrape(t, ts)
	if g := m[`ccproxy_sessions{state="suspended"}`]; g != 1 {
		t.Errorf(`ccproxy_sessions{state="suspended"} = %v, want 1`, g)
	}
}

// A turn sent while the suspended session's claude is still stopping is
// held, and once claude has stopped the session resumes and runs it.
func TestSuspendSendWhileStopping(t *testing.T) {
	argsFile := filepath.Join(t.TempDir(), "args.json")
	ts, clock := suspendServer(t, Options{CLIOptions: CLIOptions{CloseGrace: time.Minute}}, "FAKE_EXIT_ON_USR1=1", "FAKE_ARGS_FILE="+argsFile)
	c := ts.dial(t)
	s := c.create(nil)
	pid := fakePID(t, c, s)
	sess, err := ts.srv.session(s)
	if err != nil {
		t.Fatal(err)
	}
	from := c.count()
	for suspended := false; !suspended; { // as suspendIdle, without waiting for claude to end
		clock.Fire(t)
		sess.mu.Lock()
		suspended = sess.suspend.SuspendedLocked()
		sess.mu.Unlock()
	}
	c.waitState(from, protocol.StateSuspended) // claude has stdin EOF and lives on until SIGUSR1
	id := c.send(protocol.TypeSessionSend, map[string]any{"session": s, "text": "held"})
	c.do(protocol.TypeSessionList, map[string]any{}) // handled after the send: the turn is held
	if !alive(pid) {
		t.Fatal("the fake ended before the test let it")
	}
	if err := killPID(pid, fakeclaude.ExitSignal); err != nil {
		t.Fatal(err)
	}
	if r := c.reply(id); !*r.OK {
		t.Fatalf("the held turn: %s", r.raw)
	}
	c.waitEvent(from, s, "echo: held", func(ev protocol.SessionEvent) bool { return textOf(ev) == "echo: held" })
	c.waitEvent(from, s, "the held turn's result", isResult) // before the next turn: its result is not the next one's
	if args := fakeArgs(t, argsFile); argValue(args, "--resume") != "fake-session-1" {
		t.Errorf("the claude that ran the held turn: %v, want --resume", args)
	}
	checkSeqs(t, c.events(s), 1)
	pid2 := fakePID(t, c, s)
	if err := killPID(pid2, fakeclaude.ExitSignal); err != nil { // lets the shutdown end it at once
		t.Fatal(err)
	}
}

// setModel and setPermissionMode of a suspended session answer at once,
// as while it restarts, and resume it: the new claude is launched with
// the model and in the mode chosen.
func TestSuspendSetModelAndMode(t *testing.T) {
	argsFile := filepath.Join(t.TempDir(), "args.json")
	ts, clock := suspendServer(t, Options{}, "FAKE_ARGS_FILE="+argsFile)
	c := ts.dial(t)
	s := c.create(nil)
	c.turn(s, "hello")
	suspendIdle(t, ts, clock, c, s)
	from := c.count()
	var r protocol.SessionSetModelResult
	mustUnmarshal(t, c.do(protocol.TypeSessionSetModel, map[string]any{"session": s, "model": "sonnet"}), &r)
	if r.Model != "sonnet" {
		t.Errorf("setModel of a suspended session: %+v", r)
	}
	c.do(protocol.TypeSessionSetMode, map[string]any{"session": s, "mode": protocol.PermissionModePlan})
	c.waitState(from, protocol.StateIdle) // resumed
	c.turn(s, "next")
	args := fakeArgs(t, argsFile)
	if argValue(args, "--resume") != "fake-session-1" || argValue(args, "--model") != "sonnet" {
		t.Errorf("the resumed claude's arguments %v, want --resume fake-session-1 --model sonnet", args)
	}
	var info protocol.SessionListResult
	mustUnmarshal(t, c.do(protocol.TypeSessionList, map[string]any{}), &info)
	if len(info.Sessions) != 1 || info.Sessions[0].PermissionMode != protocol.PermissionModePlan || info.Sessions[0].Model != "sonnet" {
		t.Errorf("the resumed session: %+v, want model sonnet in plan mode", info.Sessions)
	}
}

// A permission asked keeps a session from being suspended: the timer of a
// session whose turn waits for an answer does nothing. A request claude
// sends as it is being stopped (after the suspend began) is cancelled
// when it ends, and the session resumes for its next turn.
func TestSuspendMeetsPermission(t *testing.T) {
	ts, clock := suspendServer(t, Options{}, "FAKE_ASK_ON_EOF=1")
	c := ts.dial(t)
	s := c.create(nil)
	c.turn(s, "hello")
	sess, err := ts.srv.session(s)
	if err != nil {
		t.Fatal(err)
	}
	from := c.count()
	c.send(protocol.TypeSessionSend, map[string]any{"session": s, "text": "perm"})
	var req protocol.PermissionRequest
	c.waitPush(from, protocol.TypePermissionRequest, &req, nil)
	sess.mu.Lock()
	g := sess.suspend.GenLocked()
	sess.mu.Unlock()
	sess.suspend.Fired(g) // a timer of the current generation fires now
	sess.mu.Lock()
	suspended := sess.suspend.SuspendedLocked()
	sess.mu.Unlock()
	if suspended {
		t.Fatal("suspended while a permission is asked")
	}
	c.do(protocol.TypePermissionRespond, map[string]any{"session": s, "requestId": req.RequestID, "behavior": "allow"})
	c.waitEvent(from, s, "result of perm", isResult)

	from = c.count()
	suspendIdle(t, ts, clock, c, s)
	var eof protocol.PermissionRequest // the fake asks at stdin EOF
	c.waitPush(from, protocol.TypePermissionRequest, &eof, nil)
	var res protocol.PermissionResolved
	c.waitPush(from, protocol.TypePermissionResolved, &res, func(raw json.RawMessage) bool { return strings.Contains(string(raw), eof.RequestID) })
	if res.Behavior != protocol.BehaviorCancelled {
		t.Errorf("the request of the claude being stopped was resolved %+v, want cancelled", res)
	}
	c.turn(s, "after")
	sess.mu.Lock()
	n := sess.broker.Pending()
	sess.mu.Unlock()
	if n != 0 {
		t.Errorf("%d permission requests pending after the resume", n)
	}
}

// A suspended session does not count against maxSessions and is never
// evicted: with maxSessions 1, a second session starts beside it, and the
// suspended one resumes for its next turn.
func TestSuspendedDoesNotCount(t *testing.T) {
	ts, clock := suspendServer(t, Options{SessionLimits: SessionLimits{MaxSessions: 1}})
	c := ts.dial(t)
	a := c.create(nil)
	c.turn(a, "one")
	suspendIdle(t, ts, clock, c, a)
	b := c.create(nil)
	c.turn(b, "two")
	if st := listState(t, c, a); st != protocol.StateSuspended {
		t.Errorf("the suspended session after another was created: %q", st)
	}
	evs := c.turn(a, "three")
	if got := textOf(evs[len(evs)-2]); got != "echo: three" {
		t.Errorf("the resumed session's answer %q", got)
	}
}

// The idle timer racing session/close, and a resume racing the shutdown:
// whichever comes first, the close answers, the shutdown ends, and no
// claude is left running (startServer's cleanup checks).
func TestSuspendRacesCloseAndShutdown(t *testing.T) {
	t.Run("close", func(t *testing.T) {
		ts, clock := suspendServer(t, Options{})
		c := ts.dial(t)
		s := c.create(nil)
		c.turn(s, "hello")
		tm := clock.Live(t)
		fired := make(chan struct{})
		go func() { defer close(fired); tm.Fire() }()
		c.do(protocol.TypeSessionClose, map[string]any{"session": s})
		<-fired
		if _, err := ts.srv.session(s); err == nil {
			t.Error("the closed session is still known")
		}
	})
	t.Run("closeSuspended", func(t *testing.T) {
		ts, clock := suspendServer(t, Options{})
		c := ts.dial(t)
		s := c.create(nil)
		c.turn(s, "hello")
		suspendIdle(t, ts, clock, c, s)
		ex, _ := closeSession(t, c, s)
		if ex.Reason != protocol.ExitClosed {
			t.Errorf("session/exited of a closed suspended session: %+v", ex)
		}
	})
	t.Run("shutdownDuringResume", func(t *testing.T) {
		ts, clock := suspendServer(t, Options{})
		c := ts.dial(t)
		s := c.create(nil)
		c.turn(s, "hello")
		suspendIdle(t, ts, clock, c, s)
		c.send(protocol.TypeSessionSend, map[string]any{"session": s, "text": "resume"})
		if err := ts.stop(); err != nil {
			t.Fatal(err)
		}
	})
}

// An IdleTimeout under a second is refused, naming it.
func TestIdleTimeoutOption(t *testing.T) {
	o := Options{Token: testToken, SessionLimits: SessionLimits{IdleTimeout: 500 * time.Millisecond}}
	if _, err := New(o); err == nil || !strings.Contains(err.Error(), "idle timeout") {
		t.Errorf("New with IdleTimeout 500ms: %v, want an error naming the idle timeout", err)
	}
}
