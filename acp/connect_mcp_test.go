package acp_test

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/ccproxy/ccproxy/internal/testkit"
	"github.com/ccproxy/ccproxy/internal/testkit/fakeapi"
	"github.com/ccproxy/ccproxy/internal/testkit/mcptest"
	"github.com/ccproxy/ccproxy/mcpconfig"
	"github.com/ccproxy/ccproxy/proxy"
	"github.com/ccproxy/ccproxy/proxy/mcphub"
)

// `ccproxy acp --connect` carries the editor's MCP servers to the running
// proxy in session/create, and that proxy's policy decides: here it trusts
// client servers (mcpconfig.Options.TrustClient), so the stdio server
// starts under the real CLI, its tool use is a permission request to the
// editor (the Go SDK's client), answered allow, and its image comes back.
func TestACPConnectClientMCPServers(t *testing.T) {
	t.Parallel()
	claude := testkit.Claude(t)
	bin, err := testkit.BuildCommand("github.com/ccproxy/ccproxy/cmd/ccproxy")
	if err != nil {
		t.Fatal(err)
	}
	testmcp := mcptest.Command(t)
	api := fakeapi.Start(t, fakeapi.First(
		fakeapi.OnText("IMAGE", fakeapi.CallTool("mcp__edtools__image", nil)),
		fakeapi.OnToolResults(fakeapi.Summarize),
	))
	home, project := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(home, "tmp"), 0o755)
	marker := "acp-connect-mcp-" + strings.ReplaceAll(time.Now().Format("150405.000000000"), ".", "")

	logw := &syncWriter{}
	log := slog.New(slog.NewTextHandler(logw, nil))
	src, err := mcphub.NewConfigSource(mcpconfig.Options{HomeDir: home, ProjectDir: project, ManagedPath: filepath.Join(home, "no-managed.json"), TrustClient: true}, t.TempDir(), log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	const token = "acp-connect-mcp-token-0123456789"
	srv, err := proxy.New(proxy.Options{
		Token:         token,
		Project:       project,
		Logger:        log,
		CLIOptions:    proxy.CLIOptions{ClaudePath: claude, ClaudeEnv: append(api.Env(home), "CCPROXY_TEST_MARKER="+marker)},
		ReplayOptions: proxy.ReplayOptions{SpoolDir: t.TempDir()},
		MCPOptions:    proxy.MCPOptions{MCP: src},
	})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() { defer close(served); srv.Serve(ctx, ln) }()
	t.Cleanup(func() { cancel(); <-served })

	agent := exec.Command(bin, "acp", "--connect", "http://"+ln.Addr().String())
	testkit.DieWithTest(agent)
	agent.Env = append(os.Environ(), "CCPROXY_TOKEN="+token)
	var agentLog bytes.Buffer
	agent.Stderr = &agentLog
	ain, _ := agent.StdinPipe()
	aout, _ := agent.StdoutPipe()
	if err := agent.Start(); err != nil {
		t.Fatal(err)
	}
	cl := &goClient{asked: make(chan sdk.RequestPermissionRequest, 1), withdrawn: make(chan struct{}), answer: "allow"}
	conn := sdk.NewClientSideConnection(cl, ain, aout)
	bg := context.Background()
	init, err := conn.Initialize(bg, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber})
	if err != nil {
		t.Fatal(err)
	}
	if mc := init.AgentCapabilities.McpCapabilities; !mc.Http || !mc.Sse || mc.Acp {
		t.Errorf("mcpCapabilities %+v, want http and sse", mc)
	}
	const secret = "connect-env-secret-0123456789"
	ns, err := conn.NewSession(bg, sdk.NewSessionRequest{Cwd: project, McpServers: []sdk.McpServer{
		{Stdio: &sdk.McpServerStdio{Name: "edtools", Command: testmcp, Args: []string{}, Env: []sdk.EnvVariable{{Name: "EDTOOLS_TOKEN", Value: secret}}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if st := ns.Meta["ccproxy"].(map[string]any)["mcpServers"].([]any); len(st) != 1 || st[0].(map[string]any)["active"] != true {
		t.Errorf("session/new _meta: %v", ns.Meta)
	}
	r, err := conn.Prompt(bg, sdk.PromptRequest{SessionId: ns.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("Show an IMAGE")}})
	if err != nil || r.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt: %v %v", r, err)
	}
	ain.Close()
	if err := agent.Wait(); err != nil {
		t.Errorf("acp --connect: %v", err)
	}
	cl.mu.Lock()
	var image bool
	for _, u := range cl.updates {
		if tu := u.ToolCallUpdate; tu != nil {
			for _, c := range tu.Content {
				if c.Content != nil && c.Content.Content.Image != nil {
					image = true
				}
			}
		}
	}
	titles := strings.Join(cl.titles, ",")
	cl.mu.Unlock()
	if titles != "edtools · image" || !image {
		t.Errorf("permission requests %q (want edtools · image), image block %v", titles, image)
	}
	cancel()
	<-served
	for _, l := range []string{logw.String(), agentLog.String()} {
		if strings.Contains(l, secret) {
			t.Error("a log holds the secret of the editor's server")
		}
	}
	if left := testkit.WaitGone("CCPROXY_TEST_MARKER="+marker, 5*time.Second); len(left) > 0 {
		t.Errorf("processes left running: %v", left)
	}
	if t.Failed() {
		t.Logf("proxy log:\n%s\nagent log:\n%s", logw.String(), agentLog.String())
	}
}

// syncWriter is a log sink safe for concurrent use.
type syncWriter struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
