package proxy

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/ccproxy/ccproxy/internal/testkit"
	"github.com/ccproxy/ccproxy/protocol"
)

// With the real CLI: history/rename of a live session goes through its
// claude (rename_session writes the custom-title record), and
// history/list shows the title; history/delete of the live session is
// refused (conflict). Once it is closed, history/rename appends the record
// itself, and the CLI finds the session by that title: `claude -p
// --resume "<title>"` continues the same session id. Then the session can
// be deleted and restored.
func TestE2EHistoryRename(t *testing.T) {
	t.Parallel()
	e := startE2E(t, Options{})
	c := e.dial(t)
	s := c.create(nil)
	if r := resultOf(t, c.turn(s, "say PING-1 please")); r["result"] != "pong one" {
		t.Fatalf("first result: %v", r)
	}
	var l protocol.HistoryListResult
	mustUnmarshal(t, c.do(protocol.TypeHistoryList, map[string]any{}), &l)
	if len(l.Sessions) != 1 {
		t.Fatalf("history/list: %+v", l)
	}
	id := l.Sessions[0].ID
	file := filepath.Join(e.env.Home, ".claude", "projects", l.Sessions[0].Folder, id+".jsonl")

	var rn protocol.HistoryRenameResult
	from := c.count()
	mustUnmarshal(t, c.do(protocol.TypeHistoryRename, map[string]any{"id": id, "title": "Live Title"}), &rn)
	if !rn.Live || rn.Title != "Live Title" {
		t.Errorf("history/rename of a live session: %+v", rn)
	}
	// The live session shows it: a session/state push, session/list, a
	// new subscriber's reply.
	var st protocol.SessionState
	c.waitPush(from, protocol.TypeSessionState, &st, func(raw json.RawMessage) bool {
		var x protocol.SessionState
		return json.Unmarshal(raw, &x) == nil && x.Title == "Live Title"
	})
	var sl protocol.SessionListResult
	mustUnmarshal(t, c.do(protocol.TypeSessionList, map[string]any{}), &sl)
	if len(sl.Sessions) != 1 || sl.Sessions[0].Title != "Live Title" {
		t.Errorf("session/list after the live rename: %+v", sl.Sessions)
	}
	var sub protocol.SessionSubscribeResult
	mustUnmarshal(t, e.dial(t).do(protocol.TypeSessionSubscribe, map[string]any{"session": s}), &sub)
	if sub.Title != "Live Title" {
		t.Errorf("session/subscribe reply after the live rename: title %q", sub.Title)
	}
	if b, _ := os.ReadFile(file); !bytes.Contains(b, []byte(`{"type":"custom-title","customTitle":"Live Title","sessionId":"`+id+`"}`)) {
		t.Errorf("claude's rename_session did not write the custom-title record")
	}
	mustUnmarshal(t, c.do(protocol.TypeHistoryList, map[string]any{}), &l)
	if l.Sessions[0].Title != "Live Title" || l.Sessions[0].TitleFrom != "custom" {
		t.Errorf("history/list after the live rename: %+v", l.Sessions[0])
	}
	if er := c.doErr(protocol.TypeHistoryDelete, map[string]any{"id": id}); er.Code != protocol.CodeConflict || !strings.Contains(er.Message, s) {
		t.Errorf("history/delete of a live session: %+v", er)
	}
	closeSession(t, c, s)

	var off protocol.HistoryRenameResult
	mustUnmarshal(t, c.do(protocol.TypeHistoryRename, map[string]any{"id": id, "title": "Offline Title"}), &off)
	if off.Live || off.Title != "Offline Title" {
		t.Errorf("history/rename of a closed session: %+v", off)
	}
	init, result := resumeByTitle(t, e, "Offline Title", "again PING-2")
	if init != id || result != "pong two" {
		t.Errorf("claude -p --resume \"Offline Title\": session %q (want %s), result %q", init, id, result)
	}

	var del protocol.HistoryDeleteResult
	mustUnmarshal(t, c.do(protocol.TypeHistoryDelete, map[string]any{"id": id}), &del)
	if _, err := os.Stat(file); err == nil {
		t.Error("the session file is still there after history/delete")
	}
	var rs protocol.HistoryRestoreResult
	mustUnmarshal(t, c.do(protocol.TypeHistoryRestore, map[string]any{"id": id}), &rs)
	if _, err := os.Stat(file); err != nil {
		t.Errorf("not restored: %v", err)
	}
}

// resumeByTitle runs `claude -p --resume title` with prompt in the e2e
// project and returns the session id of its system/init and its result.
func resumeByTitle(t *testing.T, e *e2e, title, prompt string) (session, result string) {
	t.Helper()
	out, stderr, err := testkit.ClaudePrint(t, e.env.Project, e.api.Env(e.env.Home), prompt, "--resume", title)
	if err != nil {
		t.Logf("claude --resume %q: %v; stderr: %s", title, err, stderr)
	}
	for _, line := range strings.Split(out, "\n") {
		ev := gjson.Parse(line)
		switch {
		case ev.Get("type").Str == "system" && ev.Get("subtype").Str == "init":
			session = ev.Get("session_id").Str
		case ev.Get("type").Str == "result":
			result = ev.Get("result").Str
		}
	}
	return session, result
}
