package acp_test

import (
	"bytes"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ccproxy/ccproxy/internal/testkit"
	"github.com/ccproxy/ccproxy/internal/testkit/fakeapi"
	"github.com/ccproxy/ccproxy/internal/testkit/mcptest"
)

// countingMCP serves the test MCP server over streamable HTTP and counts
// the requests it gets.
func countingMCP(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var n atomic.Int64
	srv := mcptest.NewServer()
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts, &n
}

// The editor's own MCP servers (ACP session/new mcpServers: a stdio one
// and an http one, with secrets in env and headers), through the official
// TypeScript SDK's client, the real CLI and the fake API. Trusted
// (--trust-client-mcp): both start, each tool use is a permission request
// to the editor, answered allow, and the results come back (the stdio
// server's image as an image block). Not trusted: session/new still
// succeeds, its _meta says why the servers did not start, nothing reaches
// the http server and the tool use fails without a prompt. Bad definitions
// are -32602 naming the server. No secret reaches the agent's log.
func TestACPClientMCPServersRealCLI(t *testing.T) {
	t.Parallel()
	claude := testkit.Claude(t)
	testmcp := mcptest.Command(t)
	httpSrv, hits := countingMCP(t)
	api := fakeapi.Start(t, fakeapi.First(
		fakeapi.OnText("IMAGE", fakeapi.CallTool("mcp__edtools__image", nil)),
		fakeapi.OnText("HTTPTEXT", fakeapi.CallTool("mcp__edhttp__text", nil)),
		fakeapi.OnToolResults(fakeapi.Summarize),
	))
	const envSecret, headerSecret = "stdio-secret-0123456789", "header-secret-9876543210"
	servers := []map[string]any{
		{"name": "edtools", "command": testmcp, "args": []string{}, "env": []map[string]any{{"name": "EDTOOLS_TOKEN", "value": envSecret}}},
		{"type": "http", "name": "edhttp", "url": httpSrv.URL, "headers": []map[string]any{{"name": "Authorization", "value": "Bearer " + headerSecret}}},
	}
	badNew := [][]map[string]any{
		{{"name": "rel", "command": "./bin/srv", "args": []string{}, "env": []any{}}},
		{{"type": "ws", "name": "sock", "url": "ws://127.0.0.1:1/mcp", "headers": []any{}}},
		{{"name": "", "command": "/bin/true", "args": []string{}, "env": []any{}}},
		{{"name": "twice", "command": "/bin/true", "args": []string{}, "env": []any{}}, {"name": "twice", "command": "/bin/false", "args": []string{}, "env": []any{}}},
	}
	wantBad := []string{`mcpServers[0] ("rel"): command "./bin/srv" is a relative path`, `mcpServers[0] ("sock"): unknown transport "ws"`,
		`mcpServers[0]: name: must not be empty`, `mcpServers[1] ("twice"): the name is also given to mcpServers[0]`}

	for _, trust := range []bool{true, false} {
		t.Run(map[bool]string{true: "trusted", false: "untrusted"}[trust], func(t *testing.T) {
			hits.Store(0) // the trusted run's claude is gone
			home, project := t.TempDir(), t.TempDir()
			os.MkdirAll(filepath.Join(home, "tmp"), 0o755)
			marker := "acp-mcp-" + strings.ReplaceAll(time.Now().Format("150405.000000000"), ".", "")
			env := append(api.Env(home), "CCPROXY_TEST_MARKER="+marker)
			args := []string{"--claude", claude, "--project", project}
			if trust {
				args = append(args, "--trust-client-mcp")
			}
			turns := []map[string]any{{"text": "Show an IMAGE", "onPermission": "allow"}, {"text": "Get HTTPTEXT", "onPermission": "allow"}}
			got, stderr := runClientWith(t, args, env, project, map[string]any{"mcpServers": servers, "badNew": badNew}, [][]map[string]any{turns})

			var bad []string
			var meta []any
			var titles, stops []string
			var sawImage, sawText, sawFailed bool
			for _, o := range got {
				switch o["ev"] {
				case "error":
					if o.str("method") == "session/new" {
						if o["code"] != float64(-32602) {
							t.Errorf("bad session/new: code %v, want -32602: %v", o["code"], o)
						}
						bad = append(bad, o.str("data", "error"))
					} else if o.str("method") != "no/such_method" {
						t.Errorf("error: %v", o)
					}
				case "new":
					if o["unexpected"] == true {
						t.Errorf("a bad session/new succeeded: %v", o)
					}
					m, _ := o["result"].(map[string]any)["_meta"].(map[string]any)
					c, _ := m["ccproxy"].(map[string]any)
					meta, _ = c["mcpServers"].([]any)
				case "permission":
					titles = append(titles, o["params"].(map[string]any)["toolCall"].(map[string]any)["title"].(string))
				case "stop":
					stops = append(stops, o.str("result", "stopReason"))
				case "update":
					u := o["update"].(map[string]any)
					if u["sessionUpdate"] != "tool_call_update" {
						continue
					}
					if u["status"] == "failed" {
						sawFailed = true
					}
					for _, c := range u["content"].([]any) {
						b, _ := c.(map[string]any)["content"].(map[string]any)
						switch b["type"] {
						case "image":
							data, _ := base64.StdEncoding.DecodeString(b["data"].(string))
							sawImage = bytes.Equal(data, mcptest.SmallPNG())
						case "text":
							sawText = sawText || strings.Contains(b["text"].(string), mcptest.OneText)
						}
					}
				case "exit":
					if o["code"] != float64(0) {
						t.Errorf("ccproxy acp exited with %v %v", o["code"], o["signal"])
					}
				}
			}
			if len(bad) != len(wantBad) {
				t.Errorf("bad session/new errors %q, want %d", bad, len(wantBad))
			}
			for i := range min(len(bad), len(wantBad)) {
				if !strings.Contains(bad[i], wantBad[i]) {
					t.Errorf("bad session/new %d: %q, want %q", i, bad[i], wantBad[i])
				}
			}
			if len(meta) != 2 {
				t.Fatalf("session/new _meta.ccproxy.mcpServers %v", meta)
			}
			for _, m := range meta {
				st := m.(map[string]any)
				if trust && (st["active"] != true || st["approval"] != "approved") {
					t.Errorf("trusted: %v", st)
				}
				if !trust && (st["active"] != false || st["approval"] != "awaiting" || !strings.Contains(st["reason"].(string), "--trust-client-mcp")) {
					t.Errorf("untrusted: %v", st)
				}
			}
			if strings.Join(stops, ",") != "end_turn,end_turn" {
				t.Errorf("stop reasons %v", stops)
			}
			if trust {
				if strings.Join(titles, ",") != "edtools · image,edhttp · text" {
					t.Errorf("permission requests %q, want edtools · image, edhttp · text", titles)
				}
				if !sawImage || !sawText {
					t.Errorf("image from the stdio server %v, text from the http server %v: want both", sawImage, sawText)
				}
			} else {
				if len(titles) > 0 || sawImage || sawText || !sawFailed {
					t.Errorf("untrusted: permission requests %q, image %v, text %v, a failed tool call %v", titles, sawImage, sawText, sawFailed)
				}
				if n := hits.Load(); n > 0 {
					t.Errorf("the untrusted http server got %d requests", n)
				}
				if !strings.Contains(stderr, "an MCP server of the client is not started") {
					t.Error("the agent's log does not say the servers were not started")
				}
			}
			for _, secret := range []string{envSecret, headerSecret} {
				if strings.Contains(stderr, secret) {
					t.Errorf("the agent's log holds a secret of the editor's servers")
				}
			}
			if left := testkit.WaitGone("CCPROXY_TEST_MARKER="+marker, 5*time.Second); len(left) > 0 {
				t.Errorf("processes left running: %v", left)
			}
		})
	}
}
