package acp_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/ccproxy/ccproxy/history"
	"github.com/ccproxy/ccproxy/internal/testkit"
	"github.com/ccproxy/ccproxy/protocol"
)

// The sessions captured from the real CLI (testdata/history), as
// testkit.HistoryHome puts them in a project.
const (
	captured329 = "a53a96ea-6d00-48d2-90ad-6cb56a9ff999"
	captured330 = "23408e81-e87c-4691-bd35-68872aa634f4"
)

// listHome is a history home: the two captured sessions in project, and n
// small sessions in other, one a minute from 2026-01-01 on (older than
// the captured ones), with ids other-0000… and titles "other prompt i".
func listHome(t *testing.T, project, other string, n int) *history.Store {
	t.Helper()
	home, ids := testkit.HistoryHome(t, project, nil)
	if ids["2.1.329"] != captured329 || ids["2.1.330"] != captured330 {
		t.Fatalf("captured sessions %v", ids)
	}
	dir := filepath.Join(home, ".claude", "projects", history.ProjectFolder(other))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		id := fmt.Sprintf("other-%04d", i)
		ts := t0.Add(time.Duration(i) * time.Minute).Format(time.RFC3339Nano)
		rec := fmt.Sprintf(`{"type":"user","message":{"role":"user","content":"other prompt %d"},"uuid":"u-%d","timestamp":%q,"cwd":%q,"sessionId":%q}`+"\n", i, i, ts, other, id)
		if err := os.WriteFile(filepath.Join(dir, id+".jsonl"), []byte(rec), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	store, err := history.Open(history.Options{Root: filepath.Join(home, ".claude", "projects")})
	if err != nil {
		t.Fatal(err)
	}
	return store
}

func invalidParams(t *testing.T, what string, err error, want string) {
	t.Helper()
	var re *sdk.RequestError
	if !errors.As(err, &re) || re.Code != -32602 || !strings.Contains(fmt.Sprint(re.Data), want) {
		t.Errorf("%s: %v (data %v), want -32602 with %q", what, err, dataOf(err), want)
	}
}

func dataOf(err error) any {
	var re *sdk.RequestError
	if errors.As(err, &re) {
		return re.Data
	}
	return nil
}

// session/list: offered with a history store; every stored session,
// newest first, in pages joined by nextCursor; filtered by cwd; a
// relative cwd and a bad cursor are invalid params.
func TestAgentListSessions(t *testing.T) {
	project, other := t.TempDir(), t.TempDir()
	const n = 60 // more than a page (history.DefaultListLimit)
	_, conn, _, stop := inProcess(t, listHome(t, project, other, n))
	defer stop()
	bg := context.Background()
	init, err := conn.Initialize(bg, sdk.InitializeRequest{ProtocolVersion: 1})
	if err != nil {
		t.Fatal(err)
	}
	if sc := init.AgentCapabilities.SessionCapabilities; sc.List == nil || sc.Resume == nil || sc.Close == nil {
		t.Errorf("initialize: sessionCapabilities %+v, want list and resume", sc)
	}

	// Everything, page by page.
	var all []sdk.SessionInfo
	var cursor *string
	pages := 0
	for {
		r, err := conn.ListSessions(bg, sdk.ListSessionsRequest{Cursor: cursor})
		if err != nil {
			t.Fatalf("session/list page %d: %v", pages, err)
		}
		pages++
		all = append(all, r.Sessions...)
		if r.NextCursor == nil {
			break
		}
		if pages > n {
			t.Fatal("session/list does not end")
		}
		cursor = r.NextCursor
	}
	if pages != 2 || len(all) != n+2 {
		t.Fatalf("session/list: %d sessions in %d pages, want %d in 2", len(all), pages, n+2)
	}
	seen := map[sdk.SessionId]bool{}
	var prev time.Time
	for i, s := range all {
		if seen[s.SessionId] {
			t.Errorf("session %s listed twice", s.SessionId)
		}
		seen[s.SessionId] = true
		if s.UpdatedAt == nil {
			t.Fatalf("session %s without updatedAt", s.SessionId)
		}
		at, err := time.Parse(time.RFC3339, *s.UpdatedAt)
		if err != nil {
			t.Errorf("session %s: updatedAt %q is not RFC 3339: %v", s.SessionId, *s.UpdatedAt, err)
		}
		if i > 0 && at.After(prev) {
			t.Errorf("session %d (%s, %s) is newer than the one before it", i, s.SessionId, *s.UpdatedAt)
		}
		prev = at
	}
	// The captured sessions are the newest; then the others, newest first.
	if all[0].SessionId != captured330 || all[1].SessionId != captured329 {
		t.Errorf("newest sessions %s, %s; want %s, %s", all[0].SessionId, all[1].SessionId, captured330, captured329)
	}
	for i, s := range all[2:] {
		j := n - 1 - i
		want := sdk.SessionInfo{SessionId: sdk.SessionId(fmt.Sprintf("other-%04d", j)), Cwd: other,
			Title: sdk.Ptr(fmt.Sprintf("other prompt %d", j)), UpdatedAt: sdk.Ptr(fmt.Sprintf("2026-01-01T%02d:%02d:00.000Z", j/60, j%60))}
		if fmt.Sprint(s.SessionId, s.Cwd, *s.Title, *s.UpdatedAt) != fmt.Sprint(want.SessionId, want.Cwd, *want.Title, *want.UpdatedAt) {
			t.Errorf("session %d: %s %s %q %s, want %s %s %q %s", i+2, s.SessionId, s.Cwd, deref(s.Title), deref(s.UpdatedAt),
				want.SessionId, want.Cwd, *want.Title, *want.UpdatedAt)
		}
	}

	// Only project's: the two captured ones, with their first prompt as
	// title and project as cwd.
	r, err := conn.ListSessions(bg, sdk.ListSessionsRequest{Cwd: sdk.Ptr(project)})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Sessions) != 2 || r.NextCursor != nil {
		t.Fatalf("session/list of %s: %+v, want the 2 captured sessions and no next page", project, r)
	}
	for i, id := range []sdk.SessionId{captured330, captured329} {
		s := r.Sessions[i]
		if s.SessionId != id || s.Cwd != project || deref(s.Title) != "[H-TEXT] Say hello, after some thought." {
			t.Errorf("session/list of the project, %d: %s %s %q; want %s %s and the first prompt", i, s.SessionId, s.Cwd, deref(s.Title), id, project)
		}
	}
	// A folder with nothing stored: no sessions (an empty array).
	if r, err := conn.ListSessions(bg, sdk.ListSessionsRequest{Cwd: sdk.Ptr(t.TempDir())}); err != nil || r.Sessions == nil || len(r.Sessions) != 0 {
		t.Errorf("session/list of an empty project: %+v %v", r, err)
	}

	_, err = conn.ListSessions(bg, sdk.ListSessionsRequest{Cwd: sdk.Ptr("relative/dir")})
	invalidParams(t, "a relative cwd", err, `session/list: cwd "relative/dir" is not an absolute path`)
	_, err = conn.ListSessions(bg, sdk.ListSessionsRequest{Cwd: sdk.Ptr("")})
	invalidParams(t, "an empty cwd", err, `session/list: cwd "" is not an absolute path`)
	_, err = conn.ListSessions(bg, sdk.ListSessionsRequest{Cursor: sdk.Ptr("not-a-cursor!")})
	invalidParams(t, "a bad cursor", err, `session/list: cursor "not-a-cursor!" is not a nextCursor of session/list`)
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// session/resume continues a stored session under its Claude session id
// without replaying it (no update before the answer), and takes a prompt;
// an unknown id is invalid params; the editor's MCP servers are checked
// as session/load's are.
func TestAgentResumeSession(t *testing.T) {
	project := t.TempDir()
	store := listHome(t, project, t.TempDir(), 0)
	cl, conn, _, stop := inProcess(t, store)
	defer stop()
	bg := context.Background()
	initialize(t, conn)
	_, err := conn.ResumeSession(bg, sdk.ResumeSessionRequest{SessionId: "no-such-session", Cwd: project})
	invalidParams(t, "resuming an unknown session", err, `session/resume: sessionId: no stored Claude Code session "no-such-session"`)
	_, err = conn.ResumeSession(bg, sdk.ResumeSessionRequest{SessionId: "../escape", Cwd: project})
	invalidParams(t, "resuming a malformed id", err, `session/resume: sessionId: no stored Claude Code session "../escape"`)
	_, err = conn.ResumeSession(bg, sdk.ResumeSessionRequest{SessionId: captured329, Cwd: project,
		McpServers: []sdk.McpServer{{Stdio: &sdk.McpServerStdio{Name: "rel", Command: "bin/x", Args: []string{}, Env: []sdk.EnvVariable{}}}}})
	invalidParams(t, "resuming with a bad MCP server", err, `session/resume: mcpServers[0] ("rel"): command "bin/x" is a relative path`)
	// A stored session with nothing readable in it (empty, garbage) cannot
	// be continued: refused, not opened for claude to fail on.
	folder := filepath.Join(filepath.Dir(store.Root()), "projects", history.ProjectFolder(project))
	for name, content := range map[string]string{"empty-session": "", "garbage-session": "\x00\x01 not json\n{\"half\":"} {
		if err := os.WriteFile(filepath.Join(folder, name+".jsonl"), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err = conn.ResumeSession(bg, sdk.ResumeSessionRequest{SessionId: sdk.SessionId(name), Cwd: project})
		invalidParams(t, "resuming "+name, err, `session/resume: sessionId: stored session "`+name+`" has no conversation to continue`)
		_, err = conn.LoadSession(bg, sdk.LoadSessionRequest{SessionId: sdk.SessionId(name), Cwd: project, McpServers: []sdk.McpServer{}})
		invalidParams(t, "loading "+name, err, `session/load: sessionId: stored session "`+name+`" has no conversation to continue`)
	}

	r, err := conn.ResumeSession(bg, sdk.ResumeSessionRequest{SessionId: captured329, Cwd: project})
	if err != nil {
		t.Fatal(err)
	}
	if r.Modes == nil || r.Modes.CurrentModeId != "default" {
		t.Errorf("session/resume: modes %+v", r.Modes)
	}
	cl.mu.Lock()
	replayed := len(cl.updates)
	cl.mu.Unlock()
	if replayed != 0 {
		t.Errorf("session/resume sent %d updates before its answer, want none (no replay)", replayed)
	}
	p, err := conn.Prompt(bg, sdk.PromptRequest{SessionId: captured329, Prompt: []sdk.ContentBlock{sdk.TextBlock("Hi")}})
	if err != nil || p.StopReason != sdk.StopReasonEndTurn {
		t.Errorf("a prompt of the resumed session: %+v %v", p, err)
	}
	cl.mu.Lock()
	var text bool
	for _, u := range cl.updates {
		text = text || u.AgentMessageChunk != nil
	}
	cl.mu.Unlock()
	if !text {
		t.Error("the resumed session's prompt streamed no text")
	}
}

// Without a history store neither session/list nor session/resume is
// offered, and both are -32601.
func TestAgentNoHistoryNoListOrResume(t *testing.T) {
	_, conn, _, stop := inProcess(t, nil)
	defer stop()
	bg := context.Background()
	init, err := conn.Initialize(bg, sdk.InitializeRequest{ProtocolVersion: 1})
	if err != nil {
		t.Fatal(err)
	}
	if sc := init.AgentCapabilities.SessionCapabilities; sc.List != nil || sc.Resume != nil || sc.Close == nil {
		t.Errorf("initialize without history: sessionCapabilities %+v", sc)
	}
	var re *sdk.RequestError
	if _, err := conn.ListSessions(bg, sdk.ListSessionsRequest{}); !errors.As(err, &re) || re.Code != -32601 {
		t.Errorf("session/list without history: %v, want -32601", err)
	}
	if _, err := conn.ResumeSession(bg, sdk.ResumeSessionRequest{SessionId: captured329, Cwd: t.TempDir()}); !errors.As(err, &re) || re.Code != -32601 {
		t.Errorf("session/resume without history: %v, want -32601", err)
	}
}

// A session of this agent (session/new) is listed under its Claude session
// id once stored, marked _meta.ccproxy.openAs with its ACP id; resuming it
// closes the session/new one (one claude per stored session) and the
// conversation goes on under the Claude session id.
func TestAgentResumeOpenSession(t *testing.T) {
	t.Parallel()
	project := t.TempDir()
	store := listHome(t, project, t.TempDir(), 0)
	_, conn, b, stop := inProcess(t, store)
	defer stop()
	bg := context.Background()
	initialize(t, conn)
	ns, err := conn.NewSession(bg, sdk.NewSessionRequest{Cwd: project, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := conn.Prompt(bg, sdk.PromptRequest{SessionId: ns.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("Hi")}}); err != nil || r.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt: %+v %v", r, err)
	}
	proxySessions := func() []protocol.SessionInfo {
		var l protocol.SessionListResult
		if err := b.Request(bg, protocol.TypeSessionList, &protocol.SessionList{}, &l); err != nil {
			t.Fatal(err)
		}
		return l.Sessions
	}
	ps := proxySessions()
	if len(ps) != 1 || ps[0].Session != string(ns.SessionId) || ps[0].ClaudeSessionID == "" {
		t.Fatalf("the proxy's sessions: %+v", ps)
	}
	claudeID := ps[0].ClaudeSessionID
	// What claude writes (the demo's claude writes nothing).
	rec := fmt.Sprintf(`{"type":"user","message":{"role":"user","content":"Hi"},"uuid":"u-1","timestamp":%q,"cwd":%q,"sessionId":%q}`+"\n",
		time.Now().UTC().Format(time.RFC3339Nano), project, claudeID)
	if err := os.WriteFile(filepath.Join(store.Root(), history.ProjectFolder(project), claudeID+".jsonl"), []byte(rec), 0o600); err != nil {
		t.Fatal(err)
	}

	l, err := conn.ListSessions(bg, sdk.ListSessionsRequest{Cwd: sdk.Ptr(project)})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Sessions) != 3 || l.Sessions[0].SessionId != sdk.SessionId(claudeID) {
		t.Fatalf("session/list: %+v, want %s first of 3", l.Sessions, claudeID)
	}
	if got := fmt.Sprint(l.Sessions[0].Meta["ccproxy"]); got != fmt.Sprintf("map[openAs:%s]", ns.SessionId) {
		t.Errorf("the open session's _meta.ccproxy: %s, want openAs %s", got, ns.SessionId)
	}
	for _, s := range l.Sessions[1:] {
		if s.Meta != nil {
			t.Errorf("a session not open (%s) has _meta %v", s.SessionId, s.Meta)
		}
	}

	if _, err := conn.ResumeSession(bg, sdk.ResumeSessionRequest{SessionId: sdk.SessionId(claudeID), Cwd: project}); err != nil {
		t.Fatal(err)
	}
	if ps := proxySessions(); len(ps) != 1 || ps[0].Session == string(ns.SessionId) {
		t.Errorf("after resuming the Claude session of a session/new: the proxy's sessions %+v, want only the resumed one", ps)
	}
	_, err = conn.Prompt(bg, sdk.PromptRequest{SessionId: ns.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("Hi")}})
	invalidParams(t, "a prompt of the session/new session resumed elsewhere", err, "no session")
	if r, err := conn.Prompt(bg, sdk.PromptRequest{SessionId: sdk.SessionId(claudeID), Prompt: []sdk.ContentBlock{sdk.TextBlock("Hi")}}); err != nil || r.StopReason != sdk.StopReasonEndTurn {
		t.Errorf("a prompt of the resumed session: %+v %v", r, err)
	}
}

// A relative cwd in session/new, session/load and session/resume is
// invalid params naming the method and the cwd.
func TestAgentRelativeCwd(t *testing.T) {
	project := t.TempDir()
	store := listHome(t, project, t.TempDir(), 1)
	_, conn, b, stop := inProcess(t, store)
	defer stop()
	bg := context.Background()
	initialize(t, conn)
	l, err := conn.ListSessions(bg, sdk.ListSessionsRequest{})
	if err != nil || len(l.Sessions) == 0 {
		t.Fatalf("session/list: %+v %v", l, err)
	}
	id := l.Sessions[0].SessionId
	_, err = conn.NewSession(bg, sdk.NewSessionRequest{Cwd: "rel/dir", McpServers: []sdk.McpServer{}})
	invalidParams(t, "session/new with a relative cwd", err, `session/new: cwd "rel/dir" is not an absolute path`)
	_, err = conn.LoadSession(bg, sdk.LoadSessionRequest{SessionId: id, Cwd: "rel/dir", McpServers: []sdk.McpServer{}})
	invalidParams(t, "session/load with a relative cwd", err, `session/load: cwd "rel/dir" is not an absolute path`)
	_, err = conn.ResumeSession(bg, sdk.ResumeSessionRequest{SessionId: id, Cwd: "rel/dir"})
	invalidParams(t, "session/resume with a relative cwd", err, `session/resume: cwd "rel/dir" is not an absolute path`)
	var list protocol.SessionListResult
	if err := b.Request(bg, protocol.TypeSessionList, &protocol.SessionList{}, &list); err != nil {
		t.Fatal(err)
	}
	for _, s := range list.Sessions {
		t.Errorf("session %s (%s) created for a relative cwd", s.Session, s.State)
	}
}
