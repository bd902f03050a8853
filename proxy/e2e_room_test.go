package proxy

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/ccproxy/ccproxy/internal/testkit"
	"github.com/ccproxy/ccproxy/internal/testkit/fakeapi"
	"github.com/ccproxy/ccproxy/protocol"
)

// startRealCLI serves a proxy with opts running the real CLI against a
// fake API that answers PING-1 "pong one" and PING-2 "pong two", in a
// HOME of its own (where the CLI stores its sessions), without MCP
// servers.
func startRealCLI(t *testing.T, opts Options) (*testServer, *fakeapi.Server) {
	t.Helper()
	claude := testkit.Claude(t)
	api := fakeapi.NewServer(fakeapi.First(
		fakeapi.OnText("PING-1", fakeapi.Say("pong one")),
		fakeapi.OnText("PING-2", fakeapi.Say("pong two")),
	), nil)
	t.Cleanup(api.Close)
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	opts.ClaudePath, opts.ClaudeEnv = claude, api.Env(home)
	opts.PermissionTimeout = -1
	return startServer(t, opts), api
}

// claudeSessionOf returns the Claude session id session/list shows for s.
func claudeSessionOf(t *testing.T, c *wsClient, s string) string {
	t.Helper()
	var list protocol.SessionListResult
	mustUnmarshal(t, c.do(protocol.TypeSessionList, map[string]any{}), &list)
	for _, info := range list.Sessions {
		if info.Session == s && info.ClaudeSessionID != "" {
			return info.ClaudeSessionID
		}
	}
	t.Fatalf("no claudeSessionId for %s in %+v", s, list.Sessions)
	return ""
}

// With the real CLI, at maxSessions 2: a session whose claude was killed
// is evicted by the create that needs its room (its subscriber gets
// session/state closed, reason evicted); with both sessions live, a
// create is refused; once one is closed, a session resuming the evicted
// one's conversation carries its turns (eviction forgets the proxy's
// session, not the conversation claude stored).
func TestE2EEvictExited(t *testing.T) {
	t.Parallel()
	ts, api := startRealCLI(t, Options{SessionLimits: SessionLimits{MaxSessions: 2, SessionTTL: waitTimeout}})
	c := ts.dial(t)
	a := c.create(nil)
	if r := resultOf(t, c.turn(a, "say PING-1 please")); r["result"] != "pong one" {
		t.Fatalf("first result: %v", r)
	}
	claudeA := claudeSessionOf(t, c, a)
	sess, err := ts.srv.session(a)
	if err != nil {
		t.Fatal(err)
	}
	sess.mu.Lock()
	pid := sess.proc.cur.cli.PID()
	sess.mu.Unlock()
	// On Linux the pid is childproc's guard; claude is its only child.
	if kids := testkit.Children(pid); len(kids) == 1 {
		pid = kids[0].PID
	}
	from := c.count()
	killPID(pid, syscall.SIGKILL)
	c.waitPush(from, protocol.TypeSessionExited, nil, nil)

	b := c.create(nil)
	from = c.count()
	c.create(nil) // evicts a
	if r := waitForgotten(t, c, from, a); r != protocol.ReasonEvicted {
		t.Errorf("the killed session's state: reason %q, want evicted", r)
	}
	if e := c.doErr(protocol.TypeSessionCreate, map[string]any{"resume": claudeA}); e.Code != protocol.CodeLimitExceeded {
		t.Errorf("create with two live sessions: %v, want limit_exceeded", e)
	}
	closeSession(t, c, b)
	d := c.create(map[string]any{"resume": claudeA})
	if r := resultOf(t, c.turn(d, "again PING-2")); r["result"] != "pong two" {
		t.Errorf("resumed result: %v", r)
	}
	req, err := api.LastRequestWith("again PING-2")
	if err != nil {
		t.Fatal(err)
	}
	if !req.Has("pong one") {
		t.Error("the evicted session's conversation is not carried by its resume")
	}
}

// With the real CLI: session/create {resume, fork} of a live session's
// conversation starts a new Claude session (a new claudeSessionId) whose
// first API request carries the original's turns; the original is left
// as it was: resumed afterwards, its request does not hold the fork's
// turn. A stored (closed) conversation forks the same way. Also run with
// CCPROXY_CLAUDE_VERSION=2.1.332 (docs/CLI-NOTES.md).
func TestE2EFork(t *testing.T) {
	t.Parallel()
	ts, api := startRealCLI(t, Options{})
	c := ts.dial(t)
	orig := c.create(nil)
	if r := resultOf(t, c.turn(orig, "say PING-1 please")); r["result"] != "pong one" {
		t.Fatalf("first result: %v", r)
	}
	claudeOrig := claudeSessionOf(t, c, orig)

	// A fork of the live session.
	fork := c.create(map[string]any{"resume": claudeOrig, "fork": true})
	if r := resultOf(t, c.turn(fork, "fork PING-2 now")); r["result"] != "pong two" {
		t.Fatalf("the fork's result: %v", r)
	}
	req, err := api.LastRequestWith("fork PING-2 now")
	if err != nil {
		t.Fatal(err)
	}
	if !req.Has("say PING-1 please") || !req.Has("pong one") {
		t.Error("the fork's first request does not carry the original's turns")
	}
	if claudeFork := claudeSessionOf(t, c, fork); claudeFork == claudeOrig {
		t.Errorf("the fork runs in the original's Claude session %s", claudeOrig)
	}
	closeSession(t, c, fork)
	closeSession(t, c, orig)

	// The original, resumed, does not see the fork's turn.
	back := c.create(map[string]any{"resume": claudeOrig})
	c.turn(back, "back PING-1 again")
	req, err = api.LastRequestWith("back PING-1 again")
	if err != nil {
		t.Fatal(err)
	}
	if !req.Has("say PING-1 please") {
		t.Error("the resumed original lost its own turn")
	}
	if req.Has("fork PING-2 now") || req.Has("pong two") {
		t.Error("the resumed original carries the fork's turn")
	}
	if claudeSessionOf(t, c, back) != claudeOrig {
		t.Error("resuming the original (no fork) changed its Claude session id")
	}
	closeSession(t, c, back)

	// A fork of the stored conversation.
	stored := c.create(map[string]any{"resume": claudeOrig, "fork": true})
	c.turn(stored, "stored PING-2 fork")
	req, err = api.LastRequestWith("stored PING-2 fork")
	if err != nil {
		t.Fatal(err)
	}
	if !req.Has("back PING-1 again") || req.Has("fork PING-2 now") {
		t.Error("the fork of the stored conversation does not carry exactly its turns")
	}
	if id := claudeSessionOf(t, c, stored); id == claudeOrig {
		t.Error("the fork of the stored conversation runs in its Claude session")
	}

	if e := c.doErr(protocol.TypeSessionCreate, map[string]any{"fork": true}); e.Code != protocol.CodeBadRequest || !strings.Contains(e.Message, "data.fork") || !strings.Contains(e.Message, "resume") {
		t.Errorf("fork without resume: %v, want bad_request naming data.fork", e)
	}
}
