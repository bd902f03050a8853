package acp_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/ccproxy/ccproxy/history"
	"github.com/ccproxy/ccproxy/internal/testkit"
	"github.com/ccproxy/ccproxy/internal/testkit/fakeapi"
	"github.com/ccproxy/ccproxy/proxy"
)

// session/fork with the real CLI, over the in-process proxy: initialize
// offers it; a fork of a live session of this agent is a new session
// whose first request carries the original's turns, while the original
// goes on without the fork's turn; a fork of a stored Claude session
// (found in the proxy's history) carries its turns too. A session with no
// conversation yet, or an unknown id, is invalid params naming sessionId.
func TestAgentForkRealCLI(t *testing.T) {
	t.Parallel()
	claude := testkit.Claude(t)
	api := fakeapi.Start(t, fakeapi.First(
		fakeapi.OnText("FIRST", fakeapi.Say("The first answer, to remember.")),
		fakeapi.OnText("SECOND", fakeapi.Say("The fork's answer.")),
		fakeapi.OnText("THIRD", fakeapi.Say("The original goes on.")),
		fakeapi.OnText("FOURTH", fakeapi.Say("The stored fork's answer.")),
	))
	home, project := t.TempDir(), t.TempDir()
	for _, d := range []string{"tmp", ".claude/projects"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	store, err := history.Open(history.Options{Root: filepath.Join(home, ".claude", "projects")})
	if err != nil {
		t.Fatal(err)
	}
	marker := "acp-fork-" + strings.ReplaceAll(time.Now().Format("150405.000000000"), ".", "")
	env := append(api.Env(home), "CCPROXY_TEST_MARKER="+marker)
	_, conn, b, _, stop := inProcessWith(t, store, proxy.Options{CLIOptions: proxy.CLIOptions{ClaudePath: claude, ClaudeEnv: env}}, slog.New(slog.DiscardHandler), nil)
	bg := context.Background()
	init, err := conn.Initialize(bg, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber})
	if err != nil {
		t.Fatal(err)
	}
	if init.AgentCapabilities.SessionCapabilities.Fork == nil {
		t.Errorf("initialize: sessionCapabilities %+v, want fork", init.AgentCapabilities.SessionCapabilities)
	}
	ns, err := conn.NewSession(bg, sdk.NewSessionRequest{Cwd: project, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	orig := ns.SessionId
	_, err = conn.UnstableForkSession(bg, sdk.UnstableForkSessionRequest{SessionId: orig, Cwd: project})
	invalidParams(t, "session/fork of a session without a conversation", err, "sessionId: session "+string(orig)+" has no conversation to fork yet")
	_, err = conn.UnstableForkSession(bg, sdk.UnstableForkSessionRequest{SessionId: "0b6f8c1e-4d2a-4f0e-9a51-3c7d2e8b9f10", Cwd: project})
	invalidParams(t, "session/fork of an unknown session", err, "sessionId")

	promptOK(t, conn, orig, "Say FIRST")
	fork, err := conn.UnstableForkSession(bg, sdk.UnstableForkSessionRequest{SessionId: orig, Cwd: project})
	if err != nil {
		t.Fatal(err)
	}
	if fork.SessionId == orig || fork.Modes == nil {
		t.Fatalf("session/fork: %+v, want a new session with its modes", fork)
	}
	promptOK(t, conn, fork.SessionId, "Say SECOND in the fork")
	req, err := api.LastRequestWith("SECOND")
	if err != nil {
		t.Fatal(err)
	}
	if !req.Has("Say FIRST") || !req.Has("The first answer, to remember.") {
		t.Errorf("the fork's first request does not carry the original's turn: %d messages", len(req.Messages))
	}
	promptOK(t, conn, orig, "Say THIRD in the original")
	req, err = api.LastRequestWith("THIRD")
	if err != nil {
		t.Fatal(err)
	}
	if !req.Has("Say FIRST") || req.Has("SECOND") || req.Has("The fork's answer.") {
		t.Errorf("the original's next request: want its own turn and not the fork's (%d messages)", len(req.Messages))
	}
	if ids := proxySessions(t, b); len(ids) != 2 {
		t.Errorf("proxy sessions: %v, want the original and the fork", ids)
	}

	// The original's Claude session, as stored: listed with openAs.
	l, err := conn.ListSessions(bg, sdk.ListSessionsRequest{Cwd: &project})
	if err != nil {
		t.Fatal(err)
	}
	var claudeOrig sdk.SessionId
	for _, s := range l.Sessions {
		if fmt.Sprint(s.Meta["ccproxy"]) == "map[openAs:"+string(orig)+"]" {
			claudeOrig = s.SessionId
		}
	}
	if claudeOrig == "" {
		t.Fatalf("session/list: %+v, want the original open as %s", l.Sessions, orig)
	}
	stored, err := conn.UnstableForkSession(bg, sdk.UnstableForkSessionRequest{SessionId: claudeOrig, Cwd: project})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains([]sdk.SessionId{orig, fork.SessionId, claudeOrig}, stored.SessionId) {
		t.Errorf("the fork of the stored session has id %s, already in use", stored.SessionId)
	}
	promptOK(t, conn, stored.SessionId, "Say FOURTH")
	req, err = api.LastRequestWith("FOURTH")
	if err != nil {
		t.Fatal(err)
	}
	if !req.Has("The original goes on.") || req.Has("The fork's answer.") {
		t.Errorf("the stored fork's request: want the original's turns only (%d messages)", len(req.Messages))
	}
	if ids := proxySessions(t, b); len(ids) != 3 {
		t.Errorf("proxy sessions: %v, want 3 (a fork closes nothing)", ids)
	}
	stop()
	if left := testkit.WaitGone("CCPROXY_TEST_MARKER="+marker, 5*time.Second); len(left) > 0 {
		t.Errorf("processes left running: %v", left)
	}
}

// session/fork is offered without the proxy's history too (a session of
// this agent forks from its live Claude session), but an id that is not
// one of this agent's sessions is then invalid params, saying why; so is
// a relative cwd.
func TestAgentForkWithoutHistory(t *testing.T) {
	_, conn, _, stop := inProcess(t, nil)
	defer stop()
	bg := context.Background()
	init, err := conn.Initialize(bg, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber})
	if err != nil {
		t.Fatal(err)
	}
	if sc := init.AgentCapabilities.SessionCapabilities; sc.Fork == nil || sc.Resume != nil {
		t.Errorf("initialize without history: sessionCapabilities %+v, want fork and no resume", sc)
	}
	_, err = conn.UnstableForkSession(bg, sdk.UnstableForkSessionRequest{SessionId: "0b6f8c1e-4d2a-4f0e-9a51-3c7d2e8b9f10", Cwd: t.TempDir()})
	invalidParams(t, "session/fork of a stored session without history", err, "is not a session of this agent (and the proxy serves no history")
	_, err = conn.UnstableForkSession(bg, sdk.UnstableForkSessionRequest{SessionId: "x", Cwd: "rel/dir"})
	invalidParams(t, "session/fork with a relative cwd", err, `session/fork: cwd "rel/dir" is not an absolute path`)
}
