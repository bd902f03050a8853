package acp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/gorilla/websocket"

	"github.com/ccproxy/ccproxy/internal/testkit"
	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/protocol/client"
)

// goClient is the ACP client side of the Go SDK, recording what it gets.
// Its permission handler waits: the prompt is answered elsewhere, and the
// request must be withdrawn ($/cancel_request).
type goClient struct {
	mu        sync.Mutex
	updates   []sdk.SessionUpdate
	asked     chan sdk.RequestPermissionRequest
	withdrawn chan struct{}
	answer    string                    // "": wait to be withdrawn; an option id; "error": a JSON-RPC error; or "cancel": session/cancel, then cancelled
	conn      *sdk.ClientSideConnection // for "cancel"
	titles    []string                  // of every permission request
	hold      chan struct{}             // when set, an answer is given only after the request is sent on asked and hold is closed
	proxy     string                    // in-process only: the proxy's URL and token
	token     string
	raw       io.Writer        // in-process only: the agent's stdin, for lines the SDK client would not write
	onSend    func(msg []byte) // in-process only: when set, called (without mu) with each message the agent writes, before the client can read it
}

// sendHook is the agent's end of an in-process connection: the agent's
// write of a message waits for cl.onSend, so onSend sees the state the
// agent wrote the message in.
type sendHook struct {
	w  io.Writer
	cl *goClient
}

func (h sendHook) Write(p []byte) (int, error) {
	h.cl.mu.Lock()
	f := h.cl.onSend
	h.cl.mu.Unlock()
	if f != nil {
		f(p)
	}
	return h.w.Write(p)
}

func (c *goClient) RequestPermission(ctx context.Context, p sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	c.mu.Lock()
	answer, hold := c.answer, c.hold
	if p.ToolCall.Title != nil {
		c.titles = append(c.titles, *p.ToolCall.Title)
	}
	c.mu.Unlock()
	if hold != nil && answer != "" {
		c.asked <- p
		<-hold
	}
	switch answer {
	case "":
	case "error":
		return sdk.RequestPermissionResponse{}, sdk.NewInternalError(map[string]any{"error": "the editor failed"})
	case "cancel":
		c.conn.Cancel(ctx, sdk.CancelNotification{SessionId: p.SessionId})
		return sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{Cancelled: &sdk.RequestPermissionOutcomeCancelled{}}}, nil
	default:
		return sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{Selected: &sdk.RequestPermissionOutcomeSelected{OptionId: sdk.PermissionOptionId(answer)}}}, nil
	}
	c.asked <- p
	<-ctx.Done()
	close(c.withdrawn)
	return sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{Cancelled: &sdk.RequestPermissionOutcomeCancelled{}}}, nil
}

func (c *goClient) SessionUpdate(_ context.Context, p sdk.SessionNotification) error {
	c.mu.Lock()
	c.updates = append(c.updates, p.Update)
	c.mu.Unlock()
	return nil
}

func (c *goClient) ReadTextFile(context.Context, sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	return sdk.ReadTextFileResponse{}, sdk.NewMethodNotFound("fs/read_text_file")
}
func (c *goClient) WriteTextFile(context.Context, sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	return sdk.WriteTextFileResponse{}, sdk.NewMethodNotFound("fs/write_text_file")
}
func (c *goClient) CreateTerminal(context.Context, sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	return sdk.CreateTerminalResponse{}, sdk.NewMethodNotFound("terminal/create")
}
func (c *goClient) KillTerminal(context.Context, sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	return sdk.KillTerminalResponse{}, sdk.NewMethodNotFound("terminal/kill")
}
func (c *goClient) TerminalOutput(context.Context, sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	return sdk.TerminalOutputResponse{}, sdk.NewMethodNotFound("terminal/output")
}
func (c *goClient) ReleaseTerminal(context.Context, sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	return sdk.ReleaseTerminalResponse{}, sdk.NewMethodNotFound("terminal/release")
}
func (c *goClient) WaitForTerminalExit(context.Context, sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	return sdk.WaitForTerminalExitResponse{}, sdk.NewMethodNotFound("terminal/wait_for_exit")
}

// `ccproxy acp --connect` attaches to a running `ccproxy serve --demo`: a
// websocket client subscribed to the session the editor opened sees the
// same turns; the permission request reaches both, the websocket client
// answers it, the editor's request is withdrawn and its prompt completes
// with the tool's result. Closing the agent's stdin closes the session.
func TestACPConnect(t *testing.T) {
	const token = "acp-connect-test-token-0123456789"
	d := startConnected(t, token, "")
	cl, conn, ns, agent, ain, ctx := d.cl, d.conn, d.ns, d.agent, d.ain, context.Background()

	ws, _, err := websocket.DefaultDialer.Dial(strings.Replace(d.url, "http", "ws", 1)+"/v1/ws", http.Header{"Authorization": {"Bearer " + token}})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	frames := make(chan map[string]any, 1024)
	go func() {
		defer close(frames)
		for {
			var f map[string]any
			if ws.ReadJSON(&f) != nil {
				return
			}
			frames <- f
		}
	}()
	ws.WriteJSON(map[string]any{"type": "session/subscribe", "id": 1, "data": map[string]any{"session": string(ns.SessionId)}})

	for _, text := range []string{"Hi", "Show me an image"} {
		r, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: ns.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock(text)}})
		if err != nil || r.StopReason != sdk.StopReasonEndTurn {
			t.Fatalf("prompt %q: %v %v", text, r, err)
		}
	}
	done := make(chan error, 1)
	go func() {
		r, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: ns.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("Echo a greeting")}})
		if err == nil && r.StopReason != sdk.StopReasonEndTurn {
			err = fmt.Errorf("stop reason %s", r.StopReason)
		}
		done <- err
	}()
	asked := <-cl.asked
	if asked.ToolCall.Title == nil || *asked.ToolCall.Title != "demo · echo" {
		t.Errorf("editor asked about %+v", asked.ToolCall)
	}
	results, resolved := 0, false
	for f := range frames {
		d, _ := f["data"].(map[string]any)
		switch f["type"] {
		case "session/event":
			if d["event"].(map[string]any)["type"] == "result" {
				results++
			}
		case "permission/request":
			ws.WriteJSON(map[string]any{"type": "permission/respond", "id": 2, "data": map[string]any{"session": d["session"], "requestId": d["requestId"], "behavior": "allow"}})
		case "permission/resolved":
			resolved = d["reason"] == "answered" && d["behavior"] == "allow"
		}
		if results == 3 {
			break
		}
	}
	if !resolved || results != 3 {
		t.Errorf("websocket client: resolved %v, %d results (want 3: the editor's turns)", resolved, results)
	}
	<-cl.withdrawn // the editor's request was withdrawn once answered elsewhere
	if err := <-done; err != nil {
		t.Fatalf("the editor's prompt: %v", err)
	}
	cl.mu.Lock()
	var echoed bool
	for _, u := range cl.updates {
		if tu := u.ToolCallUpdate; tu != nil && tu.Status != nil && *tu.Status == sdk.ToolCallStatusCompleted {
			for _, c := range tu.Content {
				echoed = echoed || c.Content != nil && c.Content.Content.Text != nil && strings.Contains(c.Content.Content.Text.Text, "Echo: Hello from the ccproxy demo!")
			}
		}
	}
	cl.mu.Unlock()
	if !echoed {
		t.Error("the editor did not get the echo tool's result")
	}

	ain.Close() // the editor goes: its session is closed, the daemon lives on
	if err := agent.Wait(); err != nil {
		t.Errorf("acp --connect: %v", err)
	}
	for f := range frames {
		if f["type"] == "session/exited" {
			if d := f["data"].(map[string]any); d["reason"] != "closed" {
				t.Errorf("session/exited %v, want reason closed", d)
			}
			break
		}
	}
}

// SIGTERM of `ccproxy acp --connect` closes the sessions it opened on the
// daemon before it drops its connection: none is left running.
func TestACPConnectSIGTERMClosesSessions(t *testing.T) {
	const token = "acp-connect-sigterm-token-0123456789"
	d := startConnected(t, token, "allow")
	conn, ns, agent, ctx := d.conn, d.ns, d.agent, context.Background()
	if r, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: ns.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("Hi")}}); err != nil || r.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt: %v %v", r, err)
	}
	if err := agent.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	agent.Wait() // its exit status after a signal is not the point
	b, err := client.Dial(ctx, d.url, token)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var list protocol.SessionListResult
	if err := b.Request(ctx, protocol.TypeSessionList, &protocol.SessionList{}, &list); err != nil {
		t.Fatal(err)
	}
	for _, s := range list.Sessions {
		t.Errorf("session %s (%s) left on the daemon after SIGTERM of acp --connect", s.Session, s.State)
	}
}

// When the daemon dies under `ccproxy acp --connect`, the agent exits with
// status 1 (a failure), not 0 as if the editor had closed it.
func TestACPConnectDaemonDies(t *testing.T) {
	d := startConnected(t, "acp-connect-dies-token-0123456789ab", "allow")
	if err := d.serve.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	err := d.agent.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Errorf("acp --connect after its daemon was killed: %v, want exit status 1", err)
	}
}

// connected is `ccproxy serve --demo` with `ccproxy acp --connect` to it
// (the token in a file) and an ACP client on the agent's stdio,
// initialized, with a session open.
type connected struct {
	url   string    // the daemon's
	serve *exec.Cmd // the daemon
	agent *exec.Cmd
	ain   io.WriteCloser // the agent's stdin: closing it is the editor going
	cl    *goClient
	conn  *sdk.ClientSideConnection
	ns    sdk.NewSessionResponse
}

// startConnected starts a connected set-up; answer is the client's answer
// to permission requests (see goClient). The daemon is stopped and the
// agent's stdin closed when the test ends.
func startConnected(t *testing.T, token, answer string) *connected {
	t.Helper()
	return startConnectedHomes(t, token, answer, "", "")
}

// startConnectedHomes is startConnected with serve's and the agent's HOME
// (each when not "": the test's otherwise).
func startConnectedHomes(t *testing.T, token, answer, serveHome, agentHome string) *connected {
	t.Helper()
	bin, err := testkit.BuildCommand("github.com/ccproxy/ccproxy/cmd/ccproxy")
	if err != nil {
		t.Fatal(err)
	}
	tokenFile := filepath.Join(t.TempDir(), "token")
	os.WriteFile(tokenFile, []byte(token+"\n"), 0o600)
	env := append(os.Environ(), "CCPROXY_TOKEN=")

	serve := exec.Command(bin, "serve", "--demo", "--demo-speed", "0", "--no-ui", "--token-file", tokenFile, "--spool-dir", t.TempDir())
	testkit.DieWithTest(serve)
	serve.Env = env
	if serveHome != "" {
		serve.Env = append(slices.Clip(env), "HOME="+serveHome)
	}
	serve.Stderr = os.Stderr
	sout, _ := serve.StdoutPipe()
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { serve.Process.Signal(os.Interrupt); serve.Wait() })
	var first struct{ URL string }
	line, err := bufio.NewReader(sout).ReadBytes('\n')
	if err != nil || json.Unmarshal(line, &first) != nil {
		t.Fatalf("serve's first line %q: %v", line, err)
	}

	d := &connected{url: first.URL, serve: serve, agent: exec.Command(bin, "acp", "--connect", first.URL, "--token-file", tokenFile)}
	d.agent.Env = env
	if agentHome != "" {
		d.agent.Env = append(slices.Clip(env), "HOME="+agentHome)
	}
	testkit.DieWithTest(d.agent)
	d.agent.Stderr = os.Stderr
	d.ain, _ = d.agent.StdinPipe()
	t.Cleanup(func() { d.ain.Close() })
	aout, _ := d.agent.StdoutPipe()
	if err := d.agent.Start(); err != nil {
		t.Fatal(err)
	}
	d.cl = &goClient{asked: make(chan sdk.RequestPermissionRequest, 1), withdrawn: make(chan struct{}), answer: answer}
	d.conn = sdk.NewClientSideConnection(d.cl, d.ain, aout)
	ctx := context.Background()
	if _, err := d.conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber}); err != nil {
		t.Fatal(err)
	}
	if d.ns, err = d.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []sdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	return d
}
