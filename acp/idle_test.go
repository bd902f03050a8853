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
	"sync"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/tidwall/gjson"

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

const suspendedMsg = "suspended an idle session: claude stopped; its next prompt resumes it"

// An idle session is suspended by its idle timer: its ccproxy session
// (and claude) is gone, the ACP session stays, and its next prompt resumes
// it: a new claude with --resume of its Claude session answers it.
func TestAgentIdleSuspendResume(t *testing.T) {
	argsFile := filepath.Join(t.TempDir(), "args.json")
	suspended := &msgSignal{msg: suspendedMsg, ch: make(chan struct{})}
	cl, conn, b, _, stop := fakeAgent(t, proxy.Options{CLIOptions: proxy.CLIOptions{ClaudeEnv: append(os.Environ(), "FAKE_ARGS_FILE="+argsFile)}}, slog.New(suspended),
		func(a *acp.Agent) { a.IdleTimeout = time.Millisecond })
	defer stop()
	id := newSession(t, conn)
	promptOK(t, conn, id, "hello")
	if resumes(lastArgs(t, argsFile), "fake-session-1") {
		t.Fatal("the first claude of a session/new resumes a session")
	}
	<-suspended.ch // the idle timer fired and suspended it
	if ids := proxySessions(t, b); len(ids) != 0 {
		t.Errorf("proxy sessions after the suspend: %v, want none (claude stopped)", ids)
	}
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
	if args := lastArgs(t, argsFile); !resumes(args, "fake-session-1") {
		t.Errorf("the claude that answered after the suspend: args %q, want --resume fake-session-1", args)
	}
}

// At the proxy's limit of sessions (2), session/new suspends the least
// recently used idle session of the agent and opens; with every session
// busy, it fails saying so, and so does a prompt of a suspended session
// (naming it); once one is idle again the suspended session resumes.
// session/close of a suspended session forgets it.
func TestAgentIdleMakesRoom(t *testing.T) {
	argsFile := filepath.Join(t.TempDir(), "args.json")
	working := make(chan string, 8)
	cl, conn, b, agent, stop := fakeAgent(t, proxy.Options{CLIOptions: proxy.CLIOptions{ClaudeEnv: append(os.Environ(), "FAKE_ARGS_FILE="+argsFile)}, SessionLimits: proxy.SessionLimits{MaxSessions: 2}}, slog.New(slog.DiscardHandler),
		func(a *acp.Agent) { a.IdleTimeout = 0 })
	defer stop()
	cl.mu.Lock()
	cl.onSend = func(msg []byte) {
		if strings.Contains(string(msg), "working on it") {
			working <- gjson.GetBytes(msg, "params.sessionId").Str
		}
	}
	cl.mu.Unlock()
	bg := context.Background()
	a := newSession(t, conn)
	promptOK(t, conn, a, "one")
	bs := newSession(t, conn)
	promptOK(t, conn, bs, "two")
	c := newSession(t, conn) // the limit: a, least recently used, makes room
	if !agent.Suspended(a) || agent.Suspended(bs) {
		t.Errorf("after a third session/new at the limit: a suspended %v, b suspended %v; want a only", agent.Suspended(a), agent.Suspended(bs))
	}
	if ids := proxySessions(t, b); len(ids) != 2 || slices.Contains(ids, string(a)) || !slices.Contains(ids, string(bs)) || !slices.Contains(ids, string(c)) {
		t.Errorf("proxy sessions %v, want b %s and c %s", ids, bs, c)
	}
	promptOK(t, conn, c, "three")

	// Both live sessions busy: nothing can make room.
	hb, hc := promptAsync(conn, bs, "hang"), promptAsync(conn, c, "hang")
	<-working
	<-working
	if _, err := conn.NewSession(bg, sdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []sdk.McpServer{}}); err == nil || !strings.Contains(errText(err), "all 2 sessions of this agent are busy") {
		t.Errorf("session/new at the limit with every session busy: %v, want an error saying all 2 sessions are busy", errText(err))
	}
	_, err := conn.Prompt(bg, sdk.PromptRequest{SessionId: a, Prompt: []sdk.ContentBlock{sdk.TextBlock("four")}})
	if msg := errText(err); err == nil || !strings.Contains(msg, string(a)) || !strings.Contains(msg, "are busy") {
		t.Errorf("a prompt of the suspended session with every other busy: %v, want an error naming %s and saying why", msg, a)
	}
	for _, id := range []sdk.SessionId{bs, c} {
		if err := conn.Cancel(bg, sdk.CancelNotification{SessionId: id}); err != nil {
			t.Fatal(err)
		}
	}
	for _, h := range []<-chan promptAnswer{hb, hc} {
		if r := <-h; r.err != nil || r.r.StopReason != sdk.StopReasonCancelled {
			t.Errorf("a cancelled hang: %+v %v", r.r, r.err)
		}
	}
	promptOK(t, conn, a, "five") // resumes a: an idle one makes room
	if args := lastArgs(t, argsFile); !resumes(args, "fake-session-1") {
		t.Errorf("the claude of the resumed session: args %q, want --resume", args)
	}
	var gone sdk.SessionId
	for _, id := range []sdk.SessionId{bs, c} {
		if agent.Suspended(id) {
			gone = id
		}
	}
	if gone == "" || agent.Suspended(a) {
		t.Fatalf("after a resumed at the limit: b suspended %v, c %v, a %v; want one of b, c suspended", agent.Suspended(bs), agent.Suspended(c), agent.Suspended(a))
	}
	if _, err := conn.CloseSession(bg, sdk.CloseSessionRequest{SessionId: gone}); err != nil {
		t.Errorf("session/close of a suspended session: %v", err)
	}
	if _, err := conn.Prompt(bg, sdk.PromptRequest{SessionId: gone, Prompt: []sdk.ContentBlock{sdk.TextBlock("six")}}); err == nil {
		t.Error("a prompt of a closed suspended session succeeded")
	}
	if ids := proxySessions(t, b); len(ids) != 2 {
		t.Errorf("proxy sessions after closing the suspended one: %v, want the 2 live ones", ids)
	}
}

// A prompt arriving while its session is being suspended never runs
// against the half-closed session. Before the suspend's last check (hook
// "suspend") it ends the suspend: the prompt runs on the same claude.
// After it (hook "close") the prompt waits for the suspend to end, then
// resumes the session and runs.
func TestAgentIdlePromptRacesSuspend(t *testing.T) {
	for _, at := range []string{"suspend", "close"} {
		t.Run(at, func(t *testing.T) {
			argsFile := filepath.Join(t.TempDir(), "args.json")
			began, release, waiting := make(chan struct{}), make(chan struct{}), make(chan struct{})
			var onceBegan, onceWait sync.Once
			cl, conn, b, agent, stop := fakeAgent(t, proxy.Options{CLIOptions: proxy.CLIOptions{ClaudeEnv: append(os.Environ(), "FAKE_ARGS_FILE="+argsFile)}}, slog.New(slog.DiscardHandler),
				func(a *acp.Agent) {
					a.IdleTimeout = 0
					a.SetHook(func(ev string, _ sdk.SessionId) {
						switch ev {
						case at: // held here: claude still runs
							onceBegan.Do(func() { close(began) })
							<-release
						case "wait":
							onceWait.Do(func() { close(waiting) })
						}
					})
				})
			defer stop()
			free := sync.OnceFunc(func() { close(release) })
			defer free() // before stop: Close waits for the suspend
			id := newSession(t, conn)
			promptOK(t, conn, id, "hello")
			first := proxySessions(t, b)
			suspendedOK := make(chan bool, 1)
			go func() { suspendedOK <- agent.SuspendIdle(id) }()
			<-began
			cl.mu.Lock()
			cl.updates = nil
			cl.mu.Unlock()
			p := promptAsync(conn, id, "again")
			select {
			case <-waiting: // the prompt waits for the suspend
			case r := <-p:
				t.Fatalf("the prompt answered %+v %v while the suspend of its session was held: it ran against the session being closed", r.r, r.err)
			}
			free()
			if got := <-suspendedOK; got != (at == "close") {
				t.Errorf("suspended %v, want %v", got, at == "close")
			}
			if r := <-p; r.err != nil || r.r.StopReason != sdk.StopReasonEndTurn {
				t.Fatalf("the prompt that raced a suspend: %+v %v, want end_turn", r.r, r.err)
			}
			cl.mu.Lock()
			text := cl.agentText()
			cl.mu.Unlock()
			if !strings.Contains(text, "echo: again") {
				t.Errorf("the prompt that raced a suspend: text %q", text)
			}
			ids := proxySessions(t, b)
			if at == "suspend" {
				if resumes(lastArgs(t, argsFile), "fake-session-1") || !slices.Equal(ids, first) {
					t.Errorf("a suspend ended by the prompt: proxy sessions %v (first %v), args %q: want the first claude only", ids, first, lastArgs(t, argsFile))
				}
				return
			}
			if args := lastArgs(t, argsFile); !resumes(args, "fake-session-1") {
				t.Errorf("the claude after the suspend: args %q, want --resume", args)
			}
			if len(ids) != 1 || ids[0] == string(id) || agent.Suspended(id) {
				t.Errorf("proxy sessions %v (suspended %v), want the resumed one only", ids, agent.Suspended(id))
			}
		})
	}
}

// A session is not suspended while a turn runs or a permission is asked
// of the editor; once idle again it is.
func TestAgentIdleNotWhileBusy(t *testing.T) {
	working := make(chan struct{}, 1)
	cl, conn, b, agent, stop := fakeAgent(t, proxy.Options{}, slog.New(slog.DiscardHandler), func(a *acp.Agent) { a.IdleTimeout = 0 })
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
	if agent.SuspendIdle(id) {
		t.Error("suspended while a turn runs")
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
	if agent.SuspendIdle(id) {
		t.Error("suspended while a permission is asked")
	}
	close(hold)
	if r := <-h; r.err != nil || r.r.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("the turn with a permission: %+v %v", r.r, r.err)
	}
	if !agent.SuspendIdle(id) {
		t.Error("an idle session was not suspended")
	}
	if ids := proxySessions(t, b); len(ids) != 0 {
		t.Errorf("proxy sessions after the suspend: %v, want none", ids)
	}
}

// With the real CLI: a session suspended after one turn (in plan mode) is
// still listed open by session/list, and is resumed by its next prompt,
// which continues the same Claude session: the fake API's request carries
// the first turn, and the new claude runs in plan mode.
func TestAgentIdleRealCLI(t *testing.T) {
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
	cl, conn, b, agent, stop := inProcessWith(t, store, proxy.Options{CLIOptions: proxy.CLIOptions{ClaudePath: claude, ClaudeEnv: env}}, slog.New(slog.DiscardHandler),
		func(a *acp.Agent) { a.IdleTimeout = 0 })
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
	if !agent.SuspendIdle(id) {
		t.Fatal("the idle session was not suspended")
	}
	if ids := proxySessions(t, b); len(ids) != 0 {
		t.Errorf("proxy sessions after the suspend: %v, want none", ids)
	}
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
