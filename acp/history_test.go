package acp_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/ccproxy/ccproxy/history"
	"github.com/ccproxy/ccproxy/internal/testkit"
	"github.com/ccproxy/ccproxy/mcpconfig"
	"github.com/ccproxy/ccproxy/proxy"
	"github.com/ccproxy/ccproxy/proxy/mcphub"
)

// toolTexts is the text of every tool_call_update the client got.
func toolTexts(cl *goClient) string {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	var b strings.Builder
	for _, u := range cl.updates {
		if u.ToolCallUpdate == nil {
			continue
		}
		for _, c := range u.ToolCallUpdate.Content {
			if c.Content != nil && c.Content.Content.Text != nil {
				b.WriteString(c.Content.Content.Text.Text + "\n")
			}
		}
		if raw, err := json.Marshal(u.ToolCallUpdate.RawOutput); err == nil {
			b.Write(raw)
		}
	}
	return b.String()
}

// session/load replays what the proxy's history/read gives, so a stored
// tool result holding a secret of the MCP configuration in force reaches
// the editor masked, as in the web UI's history (proxy's
// TestHistoryToolResultSecretMasked): the captured sessions' echo tool
// printed "hello history", here the env value of a configured server.
func TestAgentLoadSessionToolSecretMasked(t *testing.T) {
	const secret = "hello history"
	project, root := t.TempDir(), t.TempDir()
	home, ids := testkit.HistoryHome(t, project, nil)
	mcpJSON, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"srv": map[string]any{"command": "/bin/true", "env": map[string]any{"SRV_KEY": secret}}}})
	if err := os.WriteFile(filepath.Join(project, ".mcp.json"), mcpJSON, 0o644); err != nil {
		t.Fatal(err)
	}
	files := filepath.Join(root, "files")
	if err := os.MkdirAll(files, 0o755); err != nil {
		t.Fatal(err)
	}
	src, err := mcphub.NewConfigSource(mcpconfig.Options{HomeDir: home, ProjectDir: project, ManagedPath: filepath.Join(root, "no-managed.json")}, files, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	store, err := history.Open(history.Options{Root: filepath.Join(home, ".claude", "projects")})
	if err != nil {
		t.Fatal(err)
	}
	bin, err := testkit.BuildCommand("github.com/ccproxy/ccproxy/cmd/ccproxy")
	if err != nil {
		t.Fatal(err)
	}
	cl, conn, _, _, stop := inProcessWith(t, store, proxy.Options{Project: project, CLIOptions: proxy.CLIOptions{ClaudePath: bin, ClaudePrefixArgs: []string{"replay-claude", "--speed", "0"}}, MCPOptions: proxy.MCPOptions{MCP: src}},
		slog.New(slog.DiscardHandler), nil)
	defer stop()
	initialize(t, conn)
	var masked bool
	for v, id := range ids {
		if _, err := conn.LoadSession(context.Background(), sdk.LoadSessionRequest{SessionId: sdk.SessionId(id), Cwd: project, McpServers: []sdk.McpServer{}}); err != nil {
			t.Fatalf("session/load of %s (%s): %v", id, v, err)
		}
		got := toolTexts(cl)
		if strings.Contains(got, secret) {
			t.Errorf("session/load of %s (%s): a tool result holds the configured secret: %.300s", id, v, got)
		}
		masked = masked || strings.Contains(got, "Echo: ***")
	}
	if !masked {
		t.Error(`no loaded tool result reads "Echo: ***": the captured echo of the secret was not found`)
	}
}

// Under `ccproxy acp --connect`, session/list and session/load read the
// running serve's history (history/list, history/read), not the disk of
// the agent's own process: here serve's HOME holds the captured session,
// the agent's HOME another, and only serve's is listed and loaded.
func TestACPConnectHistoryIsTheProxys(t *testing.T) {
	const token = "acp-connect-history-token-0123456789"
	serveHome, agentHome := t.TempDir(), t.TempDir()
	if err := os.CopyFS(filepath.Join(serveHome, ".claude", "projects"), os.DirFS("../testdata/history/2.1.329/projects")); err != nil {
		t.Fatal(err)
	}
	const other = "0b0b0b0b-1111-4222-8333-444455556666"
	cwd := t.TempDir()
	dir := filepath.Join(agentHome, ".claude", "projects", history.ProjectFolder(cwd))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	rec := `{"type":"user","message":{"role":"user","content":"Hi from the agent's home"},"uuid":"u-1","timestamp":"2026-01-02T03:04:05.000Z","cwd":` + strconv.Quote(cwd) + `,"sessionId":"` + other + `"}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, other+".jsonl"), []byte(rec), 0o600); err != nil {
		t.Fatal(err)
	}
	d := startConnectedHomes(t, token, "allow", serveHome, agentHome)
	ctx := context.Background()
	l, err := d.conn.ListSessions(ctx, sdk.ListSessionsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, s := range l.Sessions {
		listed = append(listed, string(s.SessionId))
	}
	if !slices.Contains(listed, captured329) || slices.Contains(listed, other) {
		t.Errorf("session/list under --connect: %v, want serve's %s and not the agent's own %s", listed, captured329, other)
	}
	d.cl.mu.Lock()
	d.cl.updates = nil
	d.cl.mu.Unlock()
	if _, err := d.conn.LoadSession(ctx, sdk.LoadSessionRequest{SessionId: captured329, Cwd: t.TempDir(), McpServers: []sdk.McpServer{}}); err != nil {
		t.Fatalf("session/load of serve's session: %v", err)
	}
	d.cl.mu.Lock()
	var user bool
	for _, u := range d.cl.updates {
		user = user || u.UserMessageChunk != nil
	}
	d.cl.mu.Unlock()
	if !user {
		t.Error("session/load of serve's session replayed no user prompt")
	}
	_, err = d.conn.LoadSession(ctx, sdk.LoadSessionRequest{SessionId: other, Cwd: cwd, McpServers: []sdk.McpServer{}})
	invalidParams(t, "loading the agent's own session under --connect", err, `session/load: sessionId: no stored Claude Code session "`+other+`"`)
}
