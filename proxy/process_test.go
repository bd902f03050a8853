package proxy

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ccproxy/ccproxy/protocol"
)

// fakePID asks the fake claude of session for its pid.
func fakePID(t *testing.T, c *wsClient, session string) int {
	t.Helper()
	evs := c.turn(session, "pid")
	for _, ev := range evs {
		if txt := textOf(ev); strings.HasPrefix(txt, "pid ") {
			pid, err := strconv.Atoi(strings.TrimPrefix(txt, "pid "))
			if err != nil {
				t.Fatal(err)
			}
			return pid
		}
	}
	t.Fatal("the fake did not report its pid")
	return 0
}

func alive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(stat), ')')
	return i > 0 && len(stat) > i+2 && stat[i+2] != 'Z' && stat[i+2] != 'X'
}

// closeSession closes s and returns the session/exited and session/state
// pushes that came before the reply.
func closeSession(t *testing.T, c *wsClient, s string) (protocol.SessionExited, protocol.SessionState) {
	t.Helper()
	from := c.count()
	id := c.send(protocol.TypeSessionClose, map[string]any{"session": s})
	reply := c.reply(id)
	if !*reply.OK {
		t.Fatalf("session/close: %s", reply.raw)
	}
	var ex protocol.SessionExited
	var st protocol.SessionState
	ei := c.waitPush(from, protocol.TypeSessionExited, &ex, nil)
	si := c.waitPush(from, protocol.TypeSessionState, &st, func(raw json.RawMessage) bool {
		return strings.Contains(string(raw), `"state":"closed"`)
	})
	_, ri := c.waitFor(from, "reply", func(f rawFrame) bool { return string(f.ID) == string(id) })
	if !(ei < si && si < ri) {
		t.Errorf("order: session/exited at %d, session/state closed at %d, reply at %d; want exited < state < reply", ei, si, ri)
	}
	return ex, st
}

// Close is stdin EOF: the fake exits 0 by itself, and the session is forgotten.
func TestCloseGraceful(t *testing.T) {
	ts := startServer(t, Options{})
	c := ts.dial(t)
	s := c.create(nil)
	pid := fakePID(t, c, s)
	ex, _ := closeSession(t, c, s)
	if ex.Code == nil || *ex.Code != 0 || ex.Signal != nil || ex.Reason != protocol.ExitClosed {
		t.Errorf("exited = %+v, want code 0, reason closed", ex)
	}
	if alive(pid) {
		t.Errorf("claude (pid %d) still alive after session/close", pid)
	}
	if e := c.doErr(protocol.TypeSessionSend, map[string]any{"session": s, "text": "hi"}); e.Code != protocol.CodeUnknownSession {
		t.Errorf("send after close: %v, want unknown_session", e)
	}
	if e := c.doErr(protocol.TypeSessionSubscribe, map[string]any{"session": s}); e.Code != protocol.CodeUnknownSession {
		t.Errorf("subscribe after close: %v", e)
	}
}

// A claude that ignores stdin EOF gets SIGTERM; one that also ignores
// SIGTERM gets SIGKILL. The process it started dies with it.
func TestCloseEscalates(t *testing.T) {
	for _, tc := range []struct {
		name, env, signal string
	}{
		{"term", "FAKE_IGNORE_EOF=1", "SIGTERM"},
		{"kill", "FAKE_IGNORE_EOF=1\x00FAKE_IGNORE_TERM=1", "SIGKILL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := startServer(t, Options{CLIOptions: CLIOptions{CloseGrace: 100 * time.Millisecond, TermGrace: 200 * time.Millisecond}}, strings.Split(tc.env, "\x00")...)
			c := ts.dial(t)
			s := c.create(nil)
			child := 0
			for _, ev := range c.turn(s, "child") {
				fmt.Sscanf(textOf(ev), "child %d", &child)
			}
			if child == 0 || !alive(child) {
				t.Fatalf("the fake's child is not running (pid %d)", child)
			}
			start := time.Now()
			ex, _ := closeSession(t, c, s)
			if ex.Signal == nil || *ex.Signal != tc.signal || ex.Code != nil {
				t.Errorf("exited = code %v signal %v, want signal %s", deref(ex.Code), deref(ex.Signal), tc.signal)
			}
			if d := time.Since(start); d < 100*time.Millisecond {
				t.Errorf("closed in %v, before the grace period", d)
			}
			waitNoLeftovers(t, ts.marker) // the child of claude died with it
		})
	}
}

// kill -9 of claude from outside is reported with its stderr tail; the
// processes of its group die with it; the log can still be replayed.
func TestKilledFromOutside(t *testing.T) {
	ts := startServer(t, Options{}, "FAKE_STARTUP_STDERR=starting up, all good")
	c := ts.dial(t)
	s := c.create(nil)
	child := 0
	for _, ev := range c.turn(s, "child") {
		fmt.Sscanf(textOf(ev), "child %d", &child)
	}
	pid := fakePID(t, c, s)
	from := c.count()
	if err := killPID(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var ex protocol.SessionExited
	i := c.waitPush(from, protocol.TypeSessionExited, &ex, nil)
	if ex.Signal == nil || *ex.Signal != "SIGKILL" || ex.Code != nil || ex.Reason != protocol.ExitExited {
		t.Errorf("exited = %+v", ex)
	}
	if !strings.Contains(ex.StderrTail, "starting up, all good") {
		t.Errorf("stderr tail %q lacks the fake's stderr", ex.StderrTail)
	}
	var st protocol.SessionState
	c.waitPush(i, protocol.TypeSessionState, &st, nil)
	if st.State != protocol.StateExited {
		t.Errorf("state after kill = %q", st.State)
	}
	waitNoLeftovers(t, ts.marker) // the child was killed with the group
	if e := c.doErr(protocol.TypeSessionSend, map[string]any{"session": s, "text": "hi"}); e.Code != protocol.CodeSessionExited {
		t.Errorf("send to an exited session: %v, want session_exited", e)
	}
	if e := c.doErr(protocol.TypeSessionInterrupt, map[string]any{"session": s}); e.Code != protocol.CodeSessionExited {
		t.Errorf("interrupt of an exited session: %v", e)
	}
	// A new subscriber replays everything, then gets the exit report.
	c2 := ts.dial(t)
	c2.do(protocol.TypeSessionSubscribe, map[string]any{"session": s})
	c2.waitPush(0, protocol.TypeSessionExited, nil, nil)
	checkSeqs(t, c2.events(s), 1)
	if len(c2.events(s)) != len(c.events(s)) {
		t.Errorf("replay: %d events, the first client saw %d", len(c2.events(s)), len(c.events(s)))
	}
	// Closing an exited session forgets it.
	from = c.count()
	c.do(protocol.TypeSessionClose, map[string]any{"session": s})
	c.waitPush(from, protocol.TypeSessionState, &st, nil)
	if st.State != protocol.StateClosed {
		t.Errorf("state after closing an exited session = %q", st.State)
	}
}

// A claude that exits by itself reports its code and the end of its stderr,
// bounded.
func TestExitStderrTail(t *testing.T) {
	ts := startServer(t, Options{CLIOptions: CLIOptions{StderrTailBytes: 1024}})
	c := ts.dial(t)
	s := c.create(nil)
	c.turn(s, "stderr 3000")
	from := c.count()
	c.do(protocol.TypeSessionSend, map[string]any{"session": s, "text": "exit 3"})
	var ex protocol.SessionExited
	c.waitPush(from, protocol.TypeSessionExited, &ex, nil)
	if ex.Code == nil || *ex.Code != 3 || ex.Signal != nil {
		t.Errorf("exit = code %v signal %v, want code 3", deref(ex.Code), deref(ex.Signal))
	}
	if !strings.HasSuffix(ex.StderrTail, "fatal: the fake was told to exit\n") || !strings.Contains(ex.StderrTail, "stderr line 3000\n") {
		t.Errorf("stderr tail does not end with the last lines: %q", lastBytes(ex.StderrTail, 200))
	}
	if len(ex.StderrTail) > 1024+64 || strings.Contains(ex.StderrTail, "stderr line 1\n") {
		t.Errorf("stderr tail not bounded: %d bytes", len(ex.StderrTail))
	}
	if !strings.Contains(ts.logBuf.String(), "more lines are not logged") {
		t.Error("the log does not say that stderr lines stopped being logged")
	}
}

// Output that is not JSON, and lines over the cap, become ccproxy events;
// the session goes on.
func TestMalformedOutput(t *testing.T) {
	ts := startServer(t, Options{CLIOptions: CLIOptions{MaxLineBytes: 64 << 10}})
	c := ts.dial(t)
	s := c.create(nil)
	var types []string
	for _, ev := range c.turn(s, "noise") {
		types = append(types, eventType(ev))
	}
	if !slices.Contains(types, "ccproxy/noise") {
		t.Errorf("no ccproxy/noise event in %v", types)
	}
	evs := c.turn(s, "big 200000")
	var over map[string]any
	for _, ev := range evs {
		if eventType(ev) == "ccproxy/oversized_line" {
			json.Unmarshal(ev.Event, &over)
		}
	}
	if over == nil || over["limit"] != float64(64<<10) {
		t.Errorf("no oversized_line event with limit 65536: %v", over)
	}
	c.turn(s, "still alive")
	checkSeqs(t, c.events(s), 1)
}

// The command line: fixed flags, then model, permission mode, resume, and
// the MCP flags last (they are variadic). The token is not in claude's
// environment.
func TestClaudeCommandLine(t *testing.T) {
	argsFile := filepath.Join(t.TempDir(), "args.json")
	src := newTestSource(t, map[string]string{"alpha": `{"command":"x","args":[]}`})
	t.Setenv("CCPROXY_TOKEN", testToken)
	ts := startServer(t, Options{CLIOptions: CLIOptions{ClaudeEnv: append(os.Environ(), "FAKE_ARGS_FILE="+argsFile)}, MCPOptions: MCPOptions{MCP: src}})
	c := ts.dial(t)
	s := c.create(map[string]any{"model": "claude-x-1", "permissionMode": "plan", "resume": "abc-123"})
	evs := c.turn(s, "hi")
	var args []string
	b, err := os.ReadFile(argsFile)
	if err != nil {
		t.Fatal(err)
	}
	json.Unmarshal(b, &args)
	want := append([]string{"-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose",
		"--include-partial-messages", "--replay-user-messages", "--permission-prompt-tool", "stdio", "--model", "claude-x-1",
		"--permission-mode", "plan", "--resume", "abc-123"}, src.args()...)
	if !slices.Equal(args, want) {
		t.Errorf("args =\n  %q\nwant\n  %q", args, want)
	}
	// The fake took its session id from --resume.
	if !strings.Contains(string(evs[0].Event), `"session_id":"abc-123"`) {
		t.Errorf("init = %s", evs[0].Event)
	}
	var list protocol.SessionListResult
	mustUnmarshal(t, c.do(protocol.TypeSessionList, map[string]any{}), &list)
	if len(list.Sessions) != 1 || list.Sessions[0].ClaudeSessionID != "abc-123" || list.Sessions[0].Model != "claude-x-1" || list.Sessions[0].Subscribers != 1 {
		t.Errorf("session/list = %+v", list)
	}
	for _, p := range leftovers(ts.marker) {
		env, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", p.pid))
		if strings.Contains(string(env), testToken) {
			t.Errorf("claude's environment holds the proxy's token")
		}
	}
}

// A missing or too old CLI: session/create says so and how to fix it.
func TestClaudeUnavailable(t *testing.T) {
	for _, tc := range []struct {
		name, path, want string
	}{
		{"missing", "/nonexistent/claude", "does not exist"},
		{"old", oldClaudePath, "is Claude Code 2.0.14, ccproxy needs 2.1.329 or newer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := startServer(t, Options{CLIOptions: CLIOptions{ClaudePath: tc.path}})
			c := ts.dial(t)
			var hello protocol.Hello
			c.waitPush(0, protocol.TypeHello, &hello, nil)
			if hello.Claude != nil {
				t.Errorf("hello names a claude: %+v", hello.Claude)
			}
			e := c.doErr(protocol.TypeSessionCreate, map[string]any{})
			if e.Code != protocol.CodeClaudeUnavailable || !strings.Contains(e.Message, tc.want) {
				t.Errorf("create: %v, want claude_unavailable mentioning %q", e, tc.want)
			}
		})
	}
}
