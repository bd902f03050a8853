package acp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/ccproxy/ccproxy/acp"
	"github.com/ccproxy/ccproxy/history"
	"github.com/ccproxy/ccproxy/internal/testkit"
	"github.com/ccproxy/ccproxy/internal/testkit/fakeapi"
	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/protocol/client"
	"github.com/ccproxy/ccproxy/proxy"
)

// fakeAgent is an in-process agent over the fake claude (opts adds to
// ClaudePath), set up by setup before it serves, initialized.
func fakeAgent(t *testing.T, opts proxy.Options, log *slog.Logger, setup func(*acp.Agent)) (*goClient, *sdk.ClientSideConnection, *client.Client, *acp.Agent, func()) {
	t.Helper()
	opts.ClaudePath = fakeClaudePath
	cl, conn, b, agent, stop := inProcessWith(t, nil, opts, log, setup)
	initialize(t, conn)
	return cl, conn, b, agent, stop
}

// newSession opens a session (session/new) in a new directory.
func newSession(t *testing.T, conn *sdk.ClientSideConnection) sdk.SessionId {
	t.Helper()
	ns, err := conn.NewSession(context.Background(), sdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	return ns.SessionId
}

// promptOK sends a text prompt and wants it to end its turn.
func promptOK(t *testing.T, conn *sdk.ClientSideConnection, id sdk.SessionId, text string) {
	t.Helper()
	r, err := conn.Prompt(context.Background(), sdk.PromptRequest{SessionId: id, Prompt: []sdk.ContentBlock{sdk.TextBlock(text)}})
	if err != nil || r.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt %q of %s: %+v %v, want end_turn", text, id, r, err)
	}
}

// proxySessions lists the proxy's sessions (ids), asked over b.
func proxySessions(t *testing.T, b *client.Client) []string {
	t.Helper()
	var list protocol.SessionListResult
	if err := b.Request(context.Background(), protocol.TypeSessionList, &protocol.SessionList{}, &list); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range list.Sessions {
		ids = append(ids, s.Session)
	}
	return ids
}

// lastArgs is the command line of the fake claude started last (its
// FAKE_ARGS_FILE).
func lastArgs(t *testing.T, file string) []string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var args []string
	if err := json.Unmarshal(b, &args); err != nil {
		t.Fatal(err)
	}
	return args
}

// resumes reports whether args resume Claude session id.
func resumes(args []string, id string) bool {
	i := slices.Index(args, "--resume")
	return i >= 0 && i+1 < len(args) && args[i+1] == id
}

// errText is an ACP error's message with its data.
func errText(err error) string {
	var re *sdk.RequestError
	if errors.As(err, &re) {
		return fmt.Sprint(re.Message, " ", re.Data)
	}
	return fmt.Sprint(err)
}

// idleProxy puts the in-process proxy's idle timers on a test clock.
func idleProxy(opts proxy.Options) (proxy.Options, *testkit.IdleClock) {
	clock := testkit.NewIdleClock()
	opts.IdleClock = clock.After
	return opts, clock
}

// proxyState is the proxy's state of its session id (session/list).
func proxyState(t *testing.T, b *client.Client, id sdk.SessionId) string {
	t.Helper()
	var list protocol.SessionListResult
	if err := b.Request(context.Background(), protocol.TypeSessionList, &protocol.SessionList{}, &list); err != nil {
		t.Fatal(err)
	}
	for _, s := range list.Sessions {
		if s.Session == string(id) {
			return s.State
		}
	}
	return "(none)"
}

// suspendIdle fires the proxy's idle timers until the sessions ids are
// suspended (a timer that finds its session not quiet, such as claude
// answering a control request, is armed again and fired again).
func suspendIdle(t *testing.T, clock *testkit.IdleClock, b *client.Client, ids ...sdk.SessionId) {
	t.Helper()
	for _, id := range ids {
		for proxyState(t, b, id) != protocol.StateSuspended {
			clock.Fire(t)
		}
	}
}

// An idle session is suspended by the proxy's idle timer: its claude
// stops, the ACP session and its ccproxy session stay, and its next prompt
// resumes it: a new claude with --resume of its Claude session answers it.
func TestAgentIdleSuspendResume(t *testing.T) {
	t.Parallel()
	argsFile := filepath.Join(t.TempDir(), "args.json")
	opts, clock := idleProxy(proxy.Options{CLIOptions: proxy.CLIOptions{ClaudeEnv: append(os.Environ(), "FAKE_ARGS_FILE="+argsFile)}})
	cl, conn, b, _, stop := fakeAgent(t, opts, slog.New(slog.DiscardHandler), nil)
	defer stop()
	id := newSession(t, conn)
	promptOK(t, conn, id, "hello")
	if resumes(lastArgs(t, argsFile), "fake-session-1") {
		t.Fatal("the first claude of a session/new resumes a session")
	}
	suspendIdle(t, clock, b, id)
	cl.mu.Lock()
	cl.updates = nil
	cl.mu.Unlock()
	promptOK(t, conn, id, "again")
	cl.mu.Lock()
	text := cl.agentText()
	cl.mu.Unlock()
	if !strings.Contains(text, "echo: again") {
		t.Errorf("the suspended session's next prompt: text %q, want the fake's echo", text)
	}
	if strings.Contains(text, "echo: hello") {
		t.Errorf("the resumed session sent the editor the earlier turn again: %q", text)
	}
	if args := lastArgs(t, argsFile); !resumes(args, "fake-session-1") {
		t.Errorf("the claude that answered after the suspend: args %q, want --resume fake-session-1", args)
	}
	if ids := proxySessions(t, b); len(ids) != 1 || ids[0] != string(id) {
		t.Errorf("proxy sessions %v, want the one session, resumed in place", ids)
	}
}

// Suspended sessions do not count against the proxy's limit of sessions
// (2): with two suspended, two more session/new open, a third is refused
// (limit_exceeded, saying why); a prompt of a suspended session resumes
// it; session/close of a suspended session forgets it.
func TestAgentIdleMakesRoom(t *testing.T) {
	t.Parallel()
	argsFile := filepath.Join(t.TempDir(), "args.json")
	opts, clock := idleProxy(proxy.Options{CLIOptions: proxy.CLIOptions{ClaudeEnv: append(os.Environ(), "FAKE_ARGS_FILE="+argsFile)}, SessionLimits: proxy.SessionLimits{MaxSessions: 2}})
	_, conn, b, _, stop := fakeAgent(t, opts, slog.New(slog.DiscardHandler), nil)
	defer stop()
	bg := context.Background()
	a := newSession(t, conn)
	promptOK(t, conn, a, "one")
	bs := newSession(t, conn)
	promptOK(t, conn, bs, "two")
	suspendIdle(t, clock, b, a, bs)
	c := newSession(t, conn) // a and b suspended: room for two
	d := newSession(t, conn)
	if _, err := conn.NewSession(bg, sdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []sdk.McpServer{}}); err == nil || !strings.Contains(errText(err), "maxSessions") {
		t.Errorf("session/new with two live sessions at the limit: %v, want limit_exceeded naming maxSessions", errText(err))
	}
	promptOK(t, conn, c, "three")
	promptOK(t, conn, a, "four") // resumes a
	if args := lastArgs(t, argsFile); !resumes(args, "fake-session-1") {
		t.Errorf("the claude of the resumed session: args %q, want --resume", args)
	}
	if st := proxyState(t, b, bs); st != protocol.StateSuspended {
		t.Errorf("b after a resumed: %q, want still suspended", st)
	}
	if _, err := conn.CloseSession(bg, sdk.CloseSessionRequest{SessionId: bs}); err != nil {
		t.Errorf("session/close of a suspended session: %v", err)
	}
	if _, err := conn.Prompt(bg, sdk.PromptRequest{SessionId: bs, Prompt: []sdk.ContentBlock{sdk.TextBlock("six")}}); err == nil {
		t.Error("a prompt of a closed suspended session succeeded")
	}
	if ids := proxySessions(t, b); len(ids) != 3 || slices.Contains(ids, string(bs)) || !slices.Contains(ids, string(d)) {
		t.Errorf("proxy sessions after closing the suspended one: %v, want a, c, d", ids)
	}
}

// A prompt racing the suspend of its session (the idle timer fired at the
// same time) never runs against a half-stopped claude: it ends its turn
// with the fake's answer, whichever came first.
func TestAgentIdlePromptRacesSuspend(t *testing.T) {
	t.Parallel()
	opts, clock := idleProxy(proxy.Options{})
	cl, conn, _, _, stop := fakeAgent(t, opts, slog.New(slog.DiscardHandler), nil)
	defer stop()
	id := newSession(t, conn)
	promptOK(t, conn, id, "hello")
	tm := clock.Live(t)
	cl.mu.Lock()
	cl.updates = nil
	cl.mu.Unlock()
	fired := make(chan struct{})
	go func() { defer close(fired); tm.Fire() }()
	promptOK(t, conn, id, "again")
	<-fired
	cl.mu.Lock()
	text := cl.agentText()
	cl.mu.Unlock()
	if !strings.Contains(text, "echo: again") {
		t.Errorf("the prompt that raced a suspend: text %q", text)
	}
}

// A session is not suspended while a turn runs or a permission is asked
// of the editor; once idle again it is.
func TestAgentIdleNotWhileBusy(t *testing.T) {
	working := make(chan struct{}, 1)
	opts, clock := idleProxy(proxy.Options{})
	cl, conn, b, _, stop := fakeAgent(t, opts, slog.New(slog.DiscardHandler), nil)
	defer stop()
	cl.mu.Lock()
	cl.onSend = func(msg []byte) {
		if strings.Contains(string(msg), "working on it") {
			select {
			case working <- struct{}{}:
			default:
			}
		}
	}
	cl.mu.Unlock()
	bg := context.Background()
	id := newSession(t, conn)
	promptOK(t, conn, id, "hello")
	h := promptAsync(conn, id, "hang")
	<-working
	clock.FireArmed()
	if st := proxyState(t, b, id); st != protocol.StateRunning {
		t.Errorf("the idle timers fired while a turn runs: state %q, want running", st)
	}
	if err := conn.Cancel(bg, sdk.CancelNotification{SessionId: id}); err != nil {
		t.Fatal(err)
	}
	if r := <-h; r.err != nil || r.r.StopReason != sdk.StopReasonCancelled {
		t.Fatalf("the cancelled turn: %+v %v", r.r, r.err)
	}
	hold := make(chan struct{})
	cl.mu.Lock()
	cl.answer, cl.hold = "allow", hold
	cl.mu.Unlock()
	h = promptAsync(conn, id, "perm")
	<-cl.asked
	clock.FireArmed()
	if st := proxyState(t, b, id); st == protocol.StateSuspended {
		t.Error("suspended while a permission is asked")
	}
	close(hold)
	if r := <-h; r.err != nil || r.r.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("the turn with a permission: %+v %v", r.r, r.err)
	}
	suspendIdle(t, clock, b, id) // idle: suspended
}

// With the real CLI: a session suspended after one turn (in plan mode) is
// still listed open by session/list, and is resumed by its next prompt,
// which continues the same Claude session: the fake API's request carries
// the first turn, and the new claude runs in plan mode.
func TestAgentIdleRealCLI(t *testing.T) {
	t.Parallel()
	claude := testkit.Claude(t)
	api := fakeapi.Start(t, fakeapi.First(
		fakeapi.OnText("FIRST", fakeapi.Say("The first answer, to remember.")),
		fakeapi.OnText("SECOND", fakeapi.Say("The second answer.")),
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
	marker := "acp-idle-" + strings.ReplaceAll(time.Now().Format("150405.000000000"), ".", "")
	env := append(api.Env(home), "CCPROXY_TEST_MARKER="+marker)
	opts, clock := idleProxy(proxy.Options{CLIOptions: proxy.CLIOptions{ClaudePath: claude, ClaudeEnv: env}})
	cl, conn, b, _, stop := inProcessWith(t, store, opts, slog.New(slog.DiscardHandler), nil)
	initialize(t, conn)
	bg := context.Background()
	ns, err := conn.NewSession(bg, sdk.NewSessionRequest{Cwd: project, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	id := ns.SessionId
	promptOK(t, conn, id, "Say FIRST")
	if _, err := conn.SetSessionMode(bg, sdk.SetSessionModeRequest{SessionId: id, ModeId: "plan"}); err != nil {
		t.Fatal(err)
	}
	suspendIdle(t, clock, b, id)
	l, err := conn.ListSessions(bg, sdk.ListSessionsRequest{Cwd: &project})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Sessions) != 1 || fmt.Sprint(l.Sessions[0].Meta["ccproxy"]) != "map[openAs:"+string(id)+"]" {
		t.Errorf("session/list of the suspended session's project: %+v, want it, open as %s", l.Sessions, id)
	}
	cl.mu.Lock()
	cl.updates = nil
	cl.mu.Unlock()
	promptOK(t, conn, id, "Say SECOND")
	cl.mu.Lock()
	text := cl.agentText()
	cl.mu.Unlock()
	if !strings.Contains(text, "The second answer.") {
		t.Errorf("the resumed session's answer: %q", text)
	}
	req, err := api.LastRequestWith("SECOND")
	if err != nil {
		t.Fatal(err)
	}
	if !req.Has("Say FIRST") || !req.Has("The first answer, to remember.") {
		t.Errorf("the request after the resume does not carry the first turn: %d messages", len(req.Messages))
	}
	var list protocol.SessionListResult
	if err := b.Request(bg, protocol.TypeSessionList, &protocol.SessionList{}, &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Sessions) != 1 || list.Sessions[0].PermissionMode != "plan" {
		t.Errorf("proxy sessions after the resume: %+v, want one, in plan mode", list.Sessions)
	}
	stop()
	if left := testkit.WaitGone("CCPROXY_TEST_MARKER="+marker, 5*time.Second); len(left) > 0 {
		t.Errorf("processes left running: %v", left)
	}
}
