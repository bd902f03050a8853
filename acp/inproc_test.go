package acp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/tidwall/gjson"

	"github.com/ccproxy/ccproxy/acp"
	"github.com/ccproxy/ccproxy/history"
	"github.com/ccproxy/ccproxy/internal/testkit"
	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/protocol/client"
	"github.com/ccproxy/ccproxy/proxy"
)

// The agent in this process (so that -race sees it) over an in-process
// proxy replaying the demo, driven by the Go SDK's client: prompts, a
// permission allowed, set_mode, a cancel at a permission prompt, an
// unknown session, and the end of stdin closing the sessions.
func TestAgentInProcess(t *testing.T) {
	t.Parallel()
	cl, conn, b, stop := inProcess(t, nil)
	bg := context.Background()
	initialize(t, conn)
	if _, err := conn.Prompt(bg, sdk.PromptRequest{SessionId: "nope", Prompt: []sdk.ContentBlock{sdk.TextBlock("x")}}); err == nil {
		t.Error("a prompt of an unknown session succeeded")
	}
	// The demo proxy has no MCP configuration: nothing to merge the
	// client's servers into, nor a policy to approve them.
	_, err := conn.NewSession(bg, sdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []sdk.McpServer{{Stdio: &sdk.McpServerStdio{Name: "x", Command: "/bin/true", Args: []string{}, Env: []sdk.EnvVariable{}}}}})
	var re *sdk.RequestError
	if !errors.As(err, &re) || re.Code != -32602 || !strings.Contains(fmt.Sprint(re.Data), "takes no MCP servers from clients") {
		t.Errorf("client MCP servers on a proxy without an MCP configuration: %v, want -32602", err)
	}
	if _, err := conn.LoadSession(bg, sdk.LoadSessionRequest{SessionId: "x", Cwd: t.TempDir(), McpServers: []sdk.McpServer{}}); err == nil {
		t.Error("session/load without a history store succeeded")
	}
	// initialize offers no auth method: authenticate with any is refused,
	// not a success that would tell the editor it signed in.
	_, err = conn.Authenticate(bg, sdk.AuthenticateRequest{MethodId: "oauth"})
	invalidParams(t, "authenticate", err, `authenticate: methodId "oauth" is not one of the authMethods initialize offered`)
	for _, answer := range []string{"allow", "cancel"} {
		cl.mu.Lock()
		cl.answer = answer
		cl.mu.Unlock()
		ns, err := conn.NewSession(bg, sdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []sdk.McpServer{}})
		if err != nil {
			t.Fatal(err)
		}
		var stops []sdk.StopReason
		for _, text := range []string{"Hi", "image", "echo"} {
			r, err := conn.Prompt(bg, sdk.PromptRequest{SessionId: ns.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock(text)}})
			if err != nil {
				t.Fatalf("%s: prompt %q: %v", answer, text, err)
			}
			stops = append(stops, r.StopReason)
		}
		want := sdk.StopReasonEndTurn
		if answer == "cancel" {
			want = sdk.StopReasonCancelled
		}
		if stops[0] != sdk.StopReasonEndTurn || stops[1] != sdk.StopReasonEndTurn || stops[2] != want {
			t.Errorf("%s: stop reasons %v", answer, stops)
		}
		if answer == "allow" {
			if _, err := conn.SetSessionMode(bg, sdk.SetSessionModeRequest{SessionId: ns.SessionId, ModeId: "plan"}); err != nil {
				t.Errorf("set_mode plan: %v", err)
			}
		}
	}
	stop() // the editor goes
	cl.mu.Lock()
	defer cl.mu.Unlock()
	var modes []string
	for _, u := range cl.updates {
		if u.CurrentModeUpdate != nil {
			modes = append(modes, string(u.CurrentModeUpdate.CurrentModeId))
		}
	}
	if len(modes) == 0 || modes[len(modes)-1] != "plan" {
		t.Errorf("current_mode_update: %v, want the last to be plan", modes)
	}
	var list protocol.SessionListResult
	if err := b.Request(bg, protocol.TypeSessionList, &protocol.SessionList{}, &list); err != nil {
		t.Fatal(err)
	}
	for _, s := range list.Sessions {
		t.Errorf("session %s (%s) still there after the editor left", s.Session, s.State)
	}
}

// inProcess starts a proxy replaying the demo (whose history is store's:
// its HistoryHome is the home of store's .claude/projects) and an Agent
// in this process, and a Go SDK client on it; stop closes the
// client's side and waits for the agent to close its sessions.
func inProcess(t *testing.T, store *history.Store) (*goClient, *sdk.ClientSideConnection, *client.Client, func()) {
	cl, conn, b, _, stop := inProcessAgent(t, store)
	return cl, conn, b, stop
}

// inProcessAgent is inProcess, with the Agent.
func inProcessAgent(t *testing.T, store *history.Store) (*goClient, *sdk.ClientSideConnection, *client.Client, *acp.Agent, func()) {
	bin, err := testkit.BuildCommand("github.com/ccproxy/ccproxy/cmd/ccproxy")
	if err != nil {
		t.Fatal(err)
	}
	return inProcessWith(t, store, proxy.Options{CLIOptions: proxy.CLIOptions{ClaudePath: bin, ClaudePrefixArgs: []string{"replay-claude", "--speed", "0"}}}, slog.New(slog.DiscardHandler), nil)
}

// inProcessWith is inProcessAgent with the proxy's claude options in opts,
// the agent's logger, and setup (when not nil) run on the agent before it
// serves.
func inProcessWith(t testing.TB, store *history.Store, opts proxy.Options, log *slog.Logger, setup func(*acp.Agent)) (*goClient, *sdk.ClientSideConnection, *client.Client, *acp.Agent, func()) {
	token := "in-process-acp-test-token-012345"
	opts.Token, opts.SpoolDir, opts.Logger = token, t.TempDir(), slog.New(slog.DiscardHandler)
	// The agent reads the proxy's history (history/list, history/read):
	// the proxy's home is the one whose .claude/projects store is; none
	// without a store.
	if opts.HistoryHome == "" {
		opts.HistoryHome = "-"
		if store != nil {
			opts.HistoryHome = filepath.Dir(filepath.Dir(store.Root()))
		}
	}
	srv, err := proxy.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() { cancel(); <-served })

	b, err := client.Dial(ctx, "http://"+ln.Addr().String(), token)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	agent := acp.NewAgent(b, log)
	if setup != nil {
		setup(agent)
	}
	cl := &goClient{asked: make(chan sdk.RequestPermissionRequest, 1), withdrawn: make(chan struct{}), answer: "allow", proxy: "http://" + ln.Addr().String(), token: token}
	cr, aw := io.Pipe() // agent → client
	ar, cw := io.Pipe() // client → agent
	served2 := make(chan struct{})
	go func() { defer close(served2); agent.Serve(sendHook{aw, cl}, ar); aw.Close() }()

	cl.raw = cw
	conn := sdk.NewClientSideConnection(cl, cw, cr)
	cl.conn = conn
	return cl, conn, b, agent, func() { cw.Close(); <-served2 }
}

// session/load replays a real stored session (testdata/history) as
// updates before answering, then continues it live with resume.
func TestAgentLoadSession(t *testing.T) {
	t.Parallel()
	root := filepath.Join(t.TempDir(), ".claude", "projects")
	if err := os.CopyFS(root, os.DirFS("../testdata/history/2.1.329/projects")); err != nil {
		t.Fatal(err)
	}
	store, err := history.Open(history.Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	cl, conn, _, stop := inProcess(t, store)
	defer stop()
	bg := context.Background()
	init, err := conn.Initialize(bg, sdk.InitializeRequest{ProtocolVersion: 1})
	if err != nil || !init.AgentCapabilities.LoadSession {
		t.Fatalf("initialize: loadSession %v, %v", init.AgentCapabilities.LoadSession, err)
	}
	if _, err := conn.LoadSession(bg, sdk.LoadSessionRequest{SessionId: "no-such-session", Cwd: t.TempDir(), McpServers: []sdk.McpServer{}}); err == nil {
		t.Error("loading an unknown session succeeded")
	}
	const id = "a53a96ea-6d00-48d2-90ad-6cb56a9ff999"
	// session/load sends the editor's MCP servers to the proxy too: checked
	// first (-32602 naming the server), then the proxy's policy (the demo
	// proxy has no MCP configuration: -32602).
	for _, tc := range []struct {
		srv  sdk.McpServer
		want string
	}{
		{sdk.McpServer{Stdio: &sdk.McpServerStdio{Name: "rel", Command: "bin/x", Args: []string{}, Env: []sdk.EnvVariable{}}}, `session/load: mcpServers[0] ("rel"): command "bin/x" is a relative path`},
		{sdk.McpServer{Stdio: &sdk.McpServerStdio{Name: "x", Command: "/bin/true", Args: []string{}, Env: []sdk.EnvVariable{}}}, "takes no MCP servers from clients"},
	} {
		_, err := conn.LoadSession(bg, sdk.LoadSessionRequest{SessionId: id, Cwd: t.TempDir(), McpServers: []sdk.McpServer{tc.srv}})
		var re *sdk.RequestError
		if !errors.As(err, &re) || re.Code != -32602 || !strings.Contains(fmt.Sprint(re.Data), tc.want) {
			t.Errorf("session/load with mcpServers: %v, want -32602 with %q", err, tc.want)
		}
	}
	cl.mu.Lock()
	cl.updates = nil // what the refused loads replayed
	cl.mu.Unlock()
	if _, err := conn.LoadSession(bg, sdk.LoadSessionRequest{SessionId: id, Cwd: t.TempDir(), McpServers: []sdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	cl.mu.Lock()
	var user, agentText, diff, image bool
	var prompts []string
	for _, u := range cl.updates {
		switch {
		case u.UserMessageChunk != nil:
			user = true
			if c := u.UserMessageChunk.Content; c.Text != nil {
				prompts = append(prompts, c.Text.Text)
			}
		case u.AgentMessageChunk != nil:
			agentText = true
		case u.ToolCallUpdate != nil:
			for _, c := range u.ToolCallUpdate.Content {
				diff = diff || c.Diff != nil
				image = image || c.Content != nil && c.Content.Content.Image != nil && c.Content.Content.Image.Data != ""
			}
		}
	}
	n := len(cl.updates)
	cl.mu.Unlock()
	if !user || !agentText || !diff || !image {
		t.Errorf("replayed %d updates: user prompt %v, agent text %v, diff %v, image %v: want all", n, user, agentText, diff, image)
	}
	// The user's prompts, not the background task's notice the CLI stored
	// as a user message between [H-TASK] and [H-RESUME].
	var heads []string
	for _, p := range prompts {
		heads = append(heads, strings.SplitN(p, " ", 2)[0])
	}
	if want := "[H-TEXT] [H-FILES] [H-MCP] [H-TASK]"; !strings.HasPrefix(strings.Join(heads, " "), want) || slices.ContainsFunc(prompts, func(p string) bool { return strings.Contains(p, "<task-notification>") }) {
		t.Errorf("replayed prompts %q: want %s…, and no notice of the CLI's", heads, want)
	}
	r, err := conn.Prompt(bg, sdk.PromptRequest{SessionId: id, Prompt: []sdk.ContentBlock{sdk.TextBlock("and now?")}})
	if err != nil || r.StopReason != sdk.StopReasonEndTurn {
		t.Errorf("a prompt of the loaded session: %v %v", r, err)
	}
}

// A second session/prompt while a turn runs replaces it, as an editor that
// sends a message mid-turn expects (the SDK cancels the first prompt's
// context when the second arrives): the turn is interrupted, its prompt
// answers cancelled, and the second prompt runs to its own end.
func TestAgentSecondPromptReplacesTurn(t *testing.T) {
	cl, conn, _, stop := inProcess(t, nil)
	defer stop()
	bg := context.Background()
	initialize(t, conn)
	ns := beforeAsk(t, conn)
	hold := make(chan struct{})
	defer close(hold)
	cl.mu.Lock()
	cl.answer, cl.hold = "allow", hold
	cl.mu.Unlock()
	first := promptAsync(conn, ns.SessionId, "echo")
	<-cl.asked // the turn runs, waiting for the permission
	r, err := conn.Prompt(bg, sdk.PromptRequest{SessionId: ns.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("Hi")}})
	if err != nil || r.StopReason != sdk.StopReasonEndTurn {
		t.Errorf("a second prompt during a turn: %+v %v, want its own turn to end_turn", r, err)
	}
	if res := <-first; res.err != nil || res.r.StopReason != sdk.StopReasonCancelled {
		t.Errorf("the turn a second prompt replaced: %+v %v, want cancelled", res.r, res.err)
	}
}

// A session opened once Agent.Close has run (a session/new finishing
// during shutdown) is closed at once, not left on the proxy.
func TestAgentOpenAfterClose(t *testing.T) {
	_, conn, b, agent, stop := inProcessAgent(t, nil)
	defer stop()
	bg := context.Background()
	initialize(t, conn)
	agent.Close()
	if _, err := conn.NewSession(bg, sdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []sdk.McpServer{}}); err == nil {
		t.Error("session/new after Close succeeded")
	}
	var list protocol.SessionListResult
	if err := b.Request(bg, protocol.TypeSessionList, &protocol.SessionList{}, &list); err != nil {
		t.Fatal(err)
	}
	for _, s := range list.Sessions {
		t.Errorf("session %s (%s) opened after Close is left on the proxy", s.Session, s.State)
	}
}

// session/load of a session this agent has open closes the open one
// before the replay starts (no live update of it mixed in, no two claudes
// on one session file), and session/list shows the loaded session open
// before its first prompt.
func TestAgentLoadOpenSessionAgain(t *testing.T) {
	t.Parallel()
	root := filepath.Join(t.TempDir(), ".claude", "projects")
	if err := os.CopyFS(root, os.DirFS("../testdata/history/2.1.329/projects")); err != nil {
		t.Fatal(err)
	}
	store, err := history.Open(history.Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	cl, conn, _, stop := inProcess(t, store)
	defer stop()
	bg := context.Background()
	initialize(t, conn)
	const id = "a53a96ea-6d00-48d2-90ad-6cb56a9ff999"
	if _, err := conn.LoadSession(bg, sdk.LoadSessionRequest{SessionId: id, Cwd: t.TempDir(), McpServers: []sdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	l, err := conn.ListSessions(bg, sdk.ListSessionsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var openAs string
	for _, s := range l.Sessions {
		if s.SessionId == id {
			openAs = fmt.Sprint(s.Meta["ccproxy"])
		}
	}
	if openAs != "map[openAs:"+id+"]" {
		t.Errorf("session/list right after session/load: _meta.ccproxy of %s is %q, want openAs %s", id, openAs, id)
	}
	// The proxy's sessions when the agent writes each replayed user
	// prompt: the agent waits for onSend, which asks on a websocket of its
	// own (the agent's may be busy delivering a live update).
	b2, err := client.Dial(bg, cl.proxy, cl.token)
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Close()
	var during []int // written by onSend only, read after LoadSession returned
	cl.mu.Lock()
	cl.onSend = func(msg []byte) {
		if gjson.GetBytes(msg, "method").String() != "session/update" || gjson.GetBytes(msg, "params.update.sessionUpdate").String() != "user_message_chunk" {
			return
		}
		var list protocol.SessionListResult
		if err := b2.Request(bg, protocol.TypeSessionList, &protocol.SessionList{}, &list); err != nil {
			t.Error(err)
			return
		}
		during = append(during, len(list.Sessions))
	}
	cl.mu.Unlock()
	if _, err := conn.LoadSession(bg, sdk.LoadSessionRequest{SessionId: id, Cwd: t.TempDir(), McpServers: []sdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	cl.mu.Lock()
	cl.onSend = nil
	cl.mu.Unlock()
	if len(during) == 0 || slices.ContainsFunc(during, func(n int) bool { return n != 0 }) {
		t.Errorf("proxy sessions when the second load's replayed prompts were sent: %v, want the first session closed (0) before the replay", during)
	}
}

// session/close withdraws the editor's pending permission prompts of the
// session ($/cancel_request): its permission/resolved will not come; the
// running prompt answers cancelled.
func TestAgentCloseWithdrawsAsks(t *testing.T) {
	cl, conn, _, stop := inProcess(t, nil)
	defer stop()
	bg := context.Background()
	initialize(t, conn)
	ns := beforeAsk(t, conn)
	cl.mu.Lock()
	cl.answer = "" // wait to be withdrawn
	cl.mu.Unlock()
	first := promptAsync(conn, ns.SessionId, "echo")
	<-cl.asked
	if _, err := conn.CloseSession(bg, sdk.CloseSessionRequest{SessionId: ns.SessionId}); err != nil {
		t.Fatal(err)
	}
	// ACP: closing a session cancels its work, as session/cancel would.
	if res := <-first; res.err != nil || res.r.StopReason != sdk.StopReasonCancelled {
		t.Errorf("the prompt of a session closed during its turn: %+v %v, want cancelled", res.r, res.err)
	}
	<-cl.withdrawn // hangs (the test times out) if the ask stays open
}

// initialize sends initialize (protocol version 1) on conn.
func initialize(t *testing.T, conn *sdk.ClientSideConnection) {
	t.Helper()
	if _, err := conn.Initialize(context.Background(), sdk.InitializeRequest{ProtocolVersion: 1}); err != nil {
		t.Fatal(err)
	}
}

// beforeAsk opens a session of the demo and plays its first two turns:
// the next prompt's turn asks for a permission.
func beforeAsk(t *testing.T, conn *sdk.ClientSideConnection) sdk.NewSessionResponse {
	t.Helper()
	bg := context.Background()
	ns, err := conn.NewSession(bg, sdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"Hi", "image"} {
		if _, err := conn.Prompt(bg, sdk.PromptRequest{SessionId: ns.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock(text)}}); err != nil {
			t.Fatal(err)
		}
	}
	return ns
}

// A permission prompt the editor answers with an error (or with what the
// SDK cannot read) is denied at once: the turn goes on and ends, instead
// of waiting for the proxy's permission timeout (5 minutes).
func TestAgentPermissionErrorDenies(t *testing.T) {
	cl, conn, _, stop := inProcess(t, nil)
	defer stop()
	bg := context.Background()
	initialize(t, conn)
	ns := beforeAsk(t, conn)
	cl.mu.Lock()
	cl.answer = "error"
	cl.mu.Unlock()
	r, err := conn.Prompt(bg, sdk.PromptRequest{SessionId: ns.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("echo")}})
	if err != nil || r.StopReason != sdk.StopReasonEndTurn {
		t.Errorf("the turn whose permission prompt failed: %+v %v, want it to end (denied)", r, err)
	}
}

// session/load masks in the tool results it replays the secret-named
// environment values of ccproxy, as the proxy masks live ones (it reads
// them with history/read, which the proxy masks: SPEC §10): the stored
// session's echo tool printed "hello history", here the value of a
// *_TOKEN variable.
func TestAgentLoadSessionMasksEnvSecrets(t *testing.T) {
	const secret = "hello history"
	t.Setenv("CCPROXY_TEST_HISTORY_TOKEN", secret)
	root := filepath.Join(t.TempDir(), ".claude", "projects")
	if err := os.CopyFS(root, os.DirFS("../testdata/history/2.1.329/projects")); err != nil {
		t.Fatal(err)
	}
	store, err := history.Open(history.Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	cl, conn, _, stop := inProcess(t, store)
	defer stop()
	bg := context.Background()
	if _, err := conn.Initialize(bg, sdk.InitializeRequest{ProtocolVersion: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.LoadSession(bg, sdk.LoadSessionRequest{SessionId: "a53a96ea-6d00-48d2-90ad-6cb56a9ff999", Cwd: t.TempDir(), McpServers: []sdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	cl.mu.Lock()
	defer cl.mu.Unlock()
	masked := 0
	for _, u := range cl.updates {
		if u.ToolCallUpdate == nil { // the result (a tool_call holds the model's input, not a tool's output)
			continue
		}
		b, err := json.Marshal([]any{u.ToolCallUpdate.Content, u.ToolCallUpdate.RawOutput})
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(secret)) {
			t.Errorf("a replayed tool update holds the secret: %.300s", b)
		}
		if bytes.Contains(b, []byte("Echo: ***")) {
			masked++
		}
	}
	if masked == 0 {
		t.Errorf(`no replayed tool update (of %d updates) reads "Echo: ***"`, len(cl.updates))
	}
}
