package proxy

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/ccproxy/ccproxy/history"
	"github.com/ccproxy/ccproxy/protocol"
)

// With the real CLI: a session it wrote is listed by history/list (HOME
// taken from ClaudeEnv), read by history/read, and continued by
// session/create {resume}; so is a session captured from the real CLI
// (testdata/history) put into the project's folder.
func TestE2EHistoryResume(t *testing.T) {
	t.Parallel()
	e := startE2E(t, Options{})
	// A captured 2.1.329 session, moved to this test's project.
	captured := historyHome(t, e.env.Project)
	src := filepath.Join(captured, ".claude", "projects", history.ProjectFolder(e.env.Project))
	dst := filepath.Join(e.env.Home, ".claude", "projects", history.ProjectFolder(e.env.Project))
	if err := os.MkdirAll(dst, 0o700); err != nil {
		t.Fatal(err)
	}
	const capturedID = "a53a96ea-6d00-48d2-90ad-6cb56a9ff999"
	b, err := os.ReadFile(filepath.Join(src, capturedID+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dst, capturedID+".jsonl"), b, 0o600); err != nil {
		t.Fatal(err)
	}

	c := e.dial(t)
	s := c.create(nil)
	if r := resultOf(t, c.turn(s, "say PING-1 please")); r["result"] != "pong one" {
		t.Fatalf("first result: %v", r)
	}
	closeSession(t, c, s)

	var l protocol.HistoryListResult
	mustUnmarshal(t, c.do(protocol.TypeHistoryList, map[string]any{}), &l)
	var live string
	for _, hs := range l.Sessions {
		if hs.Title == "say PING-1 please" {
			live = hs.ID
		}
	}
	if live == "" || l.Total != 2 {
		t.Fatalf("history/list does not show the CLI's session and the captured one: %+v", l)
	}
	events, _ := readHistory(t, c, map[string]any{"id": live})
	var answered bool
	for _, ev := range events {
		answered = answered || evField(t, ev.Event, "type") == "assistant" && bytes.Contains(ev.Event, []byte("pong one"))
	}
	if !answered {
		t.Errorf("history/read of the CLI's session lacks its answer (%d events)", len(events))
	}

	for _, id := range []string{live, capturedID} {
		s2 := c.create(map[string]any{"resume": id})
		if r := resultOf(t, c.turn(s2, "again PING-2")); r["result"] != "pong two" {
			t.Errorf("resumed %s: result %v", id, r)
		}
		req, err := e.api.LastRequestWith("again PING-2")
		if err != nil {
			t.Fatal(err)
		}
		want := "pong one"
		if id == capturedID {
			want = "[H-TEXT] Say hello"
		}
		if !req.Has(want) {
			t.Errorf("the request after resuming %s does not carry its conversation (%q)", id, want)
		}
		closeSession(t, c, s2)
	}
}
