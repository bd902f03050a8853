package main

import (
	"fmt"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ccproxy/ccproxy/internal/testkit"
)

// TestDemoRewindRefused: in `serve --demo` a session/rewind to a user
// message of the demo's conversation is refused in plain words (the demo
// cannot rewind), with no file path of this machine in the error (once it
// showed the session file's path under the home directory).
func TestDemoRewindRefused(t *testing.T) {
	srv := testkit.StartServe(t, testkit.CCProxyBinary(t), "--demo", "--demo-speed", "0")
	c := dialProxy(t, srv.First.URL, http.Header{"Authorization": {"Bearer " + srv.First.Token}})
	s := c.do("session/create", map[string]any{})["session"].(string)
	c.do("session/subscribe", map[string]any{"session": s})
	c.do("session/send", map[string]any{"session": s, "text": "Hi! What does this proxy do, and what am I looking at?"})
	// With --demo-speed 0 the whole turn may come before the send's reply
	// (c.do keeps what it read meanwhile in c.seen).
	if !slices.ContainsFunc(c.seen, isResultOf(s)) {
		c.next("result", isResultOf(s))
	}
	var uuid string
	for _, f := range c.seen {
		if f["type"] != "session/event" {
			continue
		}
		ev := f["data"].(map[string]any)["event"].(map[string]any)
		if ev["type"] == "user" && uuid == "" {
			uuid, _ = ev["uuid"].(string)
		}
	}
	if uuid == "" {
		t.Fatal("no user message with a uuid in the demo's turn")
	}
	home, _ := os.UserHomeDir()
	for _, dry := range []bool{true, false} {
		c.n++
		id := float64(c.n)
		if err := c.conn.WriteJSON(map[string]any{"type": "session/rewind", "id": id, "data": map[string]any{"session": s, "to": uuid, "dryRun": dry}}); err != nil {
			t.Fatal(err)
		}
		rep := c.next("the rewind's reply", func(f map[string]any) bool { return f["type"] == "reply" && f["id"] == id })
		msg := fmt.Sprint(rep["error"])
		if rep["ok"] == true || !strings.Contains(msg, "the demo cannot rewind") {
			t.Errorf("rewind (dry run %v): %v; want an error saying the demo cannot rewind", dry, rep)
		}
		if absPath.MatchString(msg) || strings.Contains(msg, ".claude") || (home != "" && strings.Contains(msg, home)) {
			t.Errorf("rewind (dry run %v): the error shows a path: %s", dry, msg)
		}
	}
}

// absPath matches an absolute file path in a message.
var absPath = regexp.MustCompile(`(^|[\s(:="'])/[A-Za-z0-9._-]`)
