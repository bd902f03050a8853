package proxy

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ccproxy/ccproxy/internal/testkit"
	"github.com/ccproxy/ccproxy/internal/testkit/fakeapi"
	"github.com/ccproxy/ccproxy/protocol"
)

// The real CLI starts a turn by itself when a background task ends
// (docs/CLI-NOTES.md): the session shows running during that turn, in order
// with its events; a user turn sent meanwhile waits behind it, and idle
// comes only after that turn's own result.
func TestE2EStateFollowsSelfStartedTurn(t *testing.T) {
	t.Parallel()
	claude := testkit.Claude(t)
	hold := make(chan struct{}) // the answer to the background task's notification waits for it
	release := sync.OnceFunc(func() { close(hold) })
	t.Cleanup(release)
	// The background task ends when the test creates go, after the first
	// turn's result: a task that ended on a timer could end during that
	// turn on a loaded machine.
	goFile := filepath.Join(t.TempDir(), "go")
	api := fakeapi.NewServer(fakeapi.First(
		fakeapi.OnText("BG-TASK", fakeapi.CallTool("Bash", map[string]any{
			"command":           "for i in $(seq 6000); do [ -e '" + goFile + "' ] && break; sleep 0.1; done; echo done",
			"run_in_background": true, "description": "background wait"})),
		fakeapi.OnText("USER-TWO", fakeapi.Say("user two answered")),
		fakeapi.OnToolResults(fakeapi.Summarize),
		fakeapi.Match(func(r *fakeapi.Request) bool {
			return r.HasTools() && strings.Contains(r.Prompt(), "background-task event")
		},
			&fakeapi.Reply{Blocks: []fakeapi.Block{fakeapi.Text("noticed the background task")}, Wait: hold}),
	), nil)
	t.Cleanup(api.Close)
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, Options{Project: t.TempDir(), CLIOptions: CLIOptions{ClaudePath: claude, ClaudeEnv: api.Env(home)}, SessionLimits: SessionLimits{PermissionTimeout: -1}})
	c := ts.dial(t)
	s := c.create(nil)
	from := c.count()
	c.do(protocol.TypeSessionSend, map[string]any{"session": s, "text": "BG-TASK please"})
	var req protocol.PermissionRequest // the loop is not a read-only command: the CLI asks
	c.waitPush(from, protocol.TypePermissionRequest, &req, nil)
	c.do(protocol.TypePermissionRespond, map[string]any{"session": s, "requestId": req.RequestID, "behavior": "allow"})
	_, ri := c.waitEvent(from, s, "the first turn's result", isResult)
	if err := os.WriteFile(goFile, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, ni := c.waitEvent(ri, s, "the background task's notification", func(ev protocol.SessionEvent) bool {
		return eventType(ev) == "system/task_notification"
	})
	c.waitEvent(ni, s, "the self-started turn's system/init", func(ev protocol.SessionEvent) bool { return eventType(ev) == "system/init" })
	// That turn waits for the fake API now; a user turn is sent during it.
	c.do(protocol.TypeSessionSend, map[string]any{"session": s, "text": "USER-TWO now"})
	release()
	_, ai := c.waitEvent(ni, s, "the answer to the user turn", func(ev protocol.SessionEvent) bool { return textOf(ev) == "user two answered" })
	c.waitEvent(ai, s, "the result of the user turn", isResult)
	c.do(protocol.TypeSessionList, map[string]any{}) // a push that follows the result was queued before this reply

	tl := timeline(c, from, s)
	t.Logf("timeline: %q", tl)
	first := index(tl, 0, "result/success")
	notif := index(tl, 0, "system/task_notification")
	self := index(tl, notif, "system/init")
	selfResult := index(tl, index(tl, self, "assistant:noticed the background task"), "result/success")
	userResult := index(tl, index(tl, selfResult, "assistant:user two answered"), "result/success")
	if first < 0 || notif < first || self < 0 || selfResult < 0 || userResult < 0 {
		t.Fatalf("unexpected timeline %q", tl)
	}
	if tl[first+1] != "state:idle" {
		t.Errorf("no idle right after the first turn's result: %q", tl)
	}
	if tl[self+1] != "state:running" {
		t.Errorf("the self-started turn's system/init is not followed by state running: %q", tl)
	}
	if i := index(tl, self, "state:idle"); i != userResult+1 {
		t.Errorf("idle at %d, want right after the result of the user turn sent during the self-started one (%d): %q", i, userResult+1, tl)
	}
}

// A slash command the real CLI runs itself (/cost) is a turn with no echo
// of the user message: it still ends idle.
func TestE2EStateAfterSlashCommand(t *testing.T) {
	t.Parallel()
	claude := testkit.Claude(t)
	api := fakeapi.NewServer(fakeapi.Match(func(r *fakeapi.Request) bool { return r.HasTools() }, fakeapi.Say("pong")), nil)
	t.Cleanup(api.Close)
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, Options{Project: t.TempDir(), CLIOptions: CLIOptions{ClaudePath: claude, ClaudeEnv: api.Env(home)}, SessionLimits: SessionLimits{PermissionTimeout: -1}})
	c := ts.dial(t)
	s := c.create(nil)
	c.turn(s, "ping")
	from := c.count() // the idle after ping may come after this: only /cost's result is looked at
	c.turn(s, "/cost")
	c.do(protocol.TypeSessionList, map[string]any{}) // a push that follows the result was queued before this reply
	tl := timeline(c, from, s)
	t.Logf("timeline: %q", tl)
	if cost := index(tl, 0, "result/success"); cost < 0 || cost+1 >= len(tl) || tl[cost+1] != "state:idle" {
		t.Errorf("no idle right after the result of /cost: %q", tl)
	}
}
