package proxy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ccproxy/ccproxy/internal/testkit"
	"github.com/ccproxy/ccproxy/internal/testkit/fakeapi"
	"github.com/ccproxy/ccproxy/protocol"
)

// With the real CLI and serve --warm 2 (one spare claimed ahead of need
// for the project directory, one parked): a session/create in another
// directory takes the parked spare (claim_session); its first turn runs
// there (system/init cwd), answers, and is stored under that project
// (history/list of it); the session has the models the claim's initialize
// carried; its permission requests reach clients and its tools run in
// that directory. A create with no cwd then takes the spare claimed ahead:
// its turn runs in the server's project, in the default mode. New spares
// are parked in the background. The time from each create to its first
// assistant event is logged (a rough figure).
func TestE2EWarmSpare(t *testing.T) {
	t.Parallel() // its own fake API, HOME, project and server
	claude := testkit.Claude(t)
	api := fakeapi.NewServer(fakeapi.First(
		fakeapi.OnText("PING-1", fakeapi.Say("pong one")),
		fakeapi.OnText("BASH-ALLOW", fakeapi.CallTool("Bash", map[string]any{"command": "touch ccproxy-spare.txt", "description": "create a file"})),
		fakeapi.OnToolResults(fakeapi.Summarize),
	), nil)
	t.Cleanup(api.Close)
	home := t.TempDir()
	opts := warm(2)
	opts.ClaudePath = claude
	opts.ClaudeEnv = api.Env(home)
	ts := startServer(t, opts)
	waitSpares(t, ts, 2)

	project, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	c := ts.dial(t)
	t0 := time.Now()
	var r protocol.SessionCreateResult
	mustUnmarshal(t, c.do(protocol.TypeSessionCreate, map[string]any{"cwd": project, "permissionMode": "acceptEdits"}), &r)
	s := r.Session
	created := time.Since(t0)
	from := c.count()
	c.do(protocol.TypeSessionSubscribe, map[string]any{"session": s})
	c.do(protocol.TypeSessionSend, map[string]any{"session": s, "text": "say PING-1 please"})
	c.waitEvent(from, s, "the first assistant event", func(ev protocol.SessionEvent) bool { return eventType(ev) == "assistant" })
	t.Logf("rough: session/create → first assistant event with a warm spare: %v (the create, with the claim: %v)", time.Since(t0).Round(time.Millisecond), created.Round(time.Millisecond))
	ev, _ := c.waitEvent(from, s, "the result", isResult)
	var evs []protocol.SessionEvent
	for _, f := range c.snapshot()[from:] {
		if f.ev != nil && f.ev.Session == s {
			evs = append(evs, *f.ev)
		}
	}
	if res := resultOf(t, []protocol.SessionEvent{ev}); res["result"] != "pong one" {
		t.Errorf("result %v", res)
	}
	if cwd, mode := initOf(t, evs); cwd != project || mode != "acceptEdits" {
		t.Errorf("the first turn ran in %q, mode %q; want %q, acceptEdits", cwd, mode, project)
	}
	c.waitPush(from, protocol.TypeSessionState, nil, func(raw json.RawMessage) bool { return strings.Contains(string(raw), `"models"`) })
	// The claimed claude asks permissions through ccproxy, and its tools
	// run in the project.
	c.do(protocol.TypeSessionSetMode, map[string]any{"session": s, "mode": "default"})
	from = c.count()
	c.do(protocol.TypeSessionSend, map[string]any{"session": s, "text": "BASH-ALLOW now"})
	var req protocol.PermissionRequest
	c.waitPush(from, protocol.TypePermissionRequest, &req, nil)
	c.do(protocol.TypePermissionRespond, map[string]any{"session": s, "requestId": req.RequestID, "behavior": "allow"})
	c.waitEvent(from, s, "the result of the Bash turn", isResult)
	if _, err := os.Stat(filepath.Join(project, "ccproxy-spare.txt")); err != nil {
		t.Errorf("the allowed Bash did not run in the project: %v", err)
	}

	var l protocol.HistoryListResult
	mustUnmarshal(t, c.do(protocol.TypeHistoryList, map[string]any{"project": project}), &l)
	if len(l.Sessions) != 1 || l.Sessions[0].Project != project {
		t.Errorf("history of %s: %+v, want the session", project, l.Sessions)
	}
	if _, err := os.Stat(filepath.Join(home, ".claude", "projects")); err != nil {
		t.Error(err)
	}
	// A session in the project takes the spare claimed ahead for it.
	t0 = time.Now()
	mustUnmarshal(t, c.do(protocol.TypeSessionCreate, map[string]any{}), &r)
	from = c.count()
	c.do(protocol.TypeSessionSubscribe, map[string]any{"session": r.Session})
	c.do(protocol.TypeSessionSend, map[string]any{"session": r.Session, "text": "say PING-1 please"})
	c.waitEvent(from, r.Session, "the first assistant event", func(ev protocol.SessionEvent) bool { return eventType(ev) == "assistant" })
	t.Logf("rough: session/create → first assistant event with the spare claimed ahead: %v", time.Since(t0).Round(time.Millisecond))
	ev, _ = c.waitEvent(from, r.Session, "the result", isResult)
	if res := resultOf(t, []protocol.SessionEvent{ev}); res["result"] != "pong one" {
		t.Errorf("result on the spare claimed ahead: %v", res)
	}
	evs = nil
	for _, f := range c.snapshot()[from:] {
		if f.ev != nil && f.ev.Session == r.Session {
			evs = append(evs, *f.ev)
		}
	}
	if cwd, mode := initOf(t, evs); cwd != ts.srv.opts.Project || mode != "default" {
		t.Errorf("the turn on the spare claimed ahead ran in %q, mode %q; want %q, default", cwd, mode, ts.srv.opts.Project)
	}
	waitSpares(t, ts, 2)
	m, _ := scrape(t, ts)
	wantMetrics(t, "after the creates", m, map[string]float64{
		`ccproxy_spare_takes_total{result="taken"}`:       1,
		`ccproxy_spare_takes_total{result="taken_ahead"}`: 1,
		`ccproxy_spare_launches_total`:                    4,
		`ccproxy_spares`:                                  2,
	})
}
