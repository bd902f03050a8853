package proxy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ccproxy/ccproxy/internal/testkit"
	"github.com/ccproxy/ccproxy/internal/testkit/fakeapi"
	"github.com/ccproxy/ccproxy/protocol"
)

// The real CLI: a session with a model and a mode chosen, suspended after
// a turn, has no claude left; its next turn resumes it: the API request
// carries the first turn (the conversation kept), with the model chosen,
// in the mode chosen; the seqs continue, and the first turn's events are
// logged once (the resumed claude replays nothing).
func TestE2ESuspendResume(t *testing.T) {
	t.Parallel()
	claude := testkit.Claude(t)
	api := fakeapi.Start(t, fakeapi.First(
		fakeapi.OnText("FIRST", fakeapi.Say("The first answer, to remember.")),
		fakeapi.OnText("SECOND", fakeapi.Say("The second answer.")),
	))
	home := t.TempDir()
	for _, d := range []string{"tmp", ".claude/projects"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ts, clock := suspendServer(t, Options{CLIOptions: CLIOptions{ClaudePath: claude, ClaudeEnv: api.Env(home)}})
	c := ts.dial(t)
	s := c.create(map[string]any{"permissionMode": protocol.PermissionModeAcceptEdits})
	c.turn(s, "Say FIRST")
	c.do(protocol.TypeSessionSetModel, map[string]any{"session": s, "model": "haiku"}) // after a turn, as TestE2ESetModel

	sess := suspendIdle(t, ts, clock, c, s)
	sess.mu.Lock()
	pid := sess.proc.cur.cli.PID()
	sess.mu.Unlock()
	if alive(pid) {
		t.Errorf("claude (pid %d) still runs in the suspended session", pid)
	}
	if st := listState(t, c, s); st != protocol.StateSuspended {
		t.Errorf("session/list: %q, want suspended", st)
	}

	sent := time.Now()
	from := c.count()
	c.do(protocol.TypeSessionSend, map[string]any{"session": s, "text": "Say SECOND"})
	c.waitEvent(from, s, "the resumed claude's first event", func(protocol.SessionEvent) bool { return true })
	t.Logf("a suspended session's send → its first event: %v", time.Since(sent).Round(time.Millisecond))
	c.waitEvent(from, s, "result", isResult)

	req, err := api.LastRequestWith("SECOND")
	if err != nil {
		t.Fatal(err)
	}
	if !req.Has("Say FIRST") || !req.Has("The first answer, to remember.") {
		t.Errorf("the API request after the resume does not carry the first turn: %d messages", len(req.Messages))
	}
	if !strings.Contains(req.Model, "haiku") {
		t.Errorf("the API request after the resume: model %q, want the haiku chosen", req.Model)
	}
	var l protocol.SessionListResult
	mustUnmarshal(t, c.do(protocol.TypeSessionList, map[string]any{}), &l)
	if len(l.Sessions) != 1 || l.Sessions[0].PermissionMode != protocol.PermissionModeAcceptEdits || l.Sessions[0].Model != "haiku" {
		t.Errorf("the resumed session %+v, want model haiku in acceptEdits mode", l.Sessions)
	}
	evs := c.events(s)
	checkSeqs(t, evs, 1)
	firsts, inits := 0, 0
	for _, ev := range evs {
		if strings.Contains(textOf(ev), "The first answer") {
			firsts++
		}
		if eventType(ev) == "system/init" {
			inits++
		}
	}
	if firsts != 1 || inits != 2 {
		t.Errorf("the log holds the first answer %d times and %d system/init, want 1 and 2 (one per turn)", firsts, inits)
	}
}
