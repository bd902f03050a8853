package proxy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccproxy/ccproxy/protocol"
)

// TestMCPOptionNameRefused: a configured server whose name starts with
// "-" (the CLI itself accepts `claude mcp add -- -h …`) is refused by
// every request that names a configured server, before any claude runs:
// `claude mcp login -h --no-browser` printed the usage, exited 0 and was
// reported as a completed sign-in. A configured name that breaks the rule
// of new names ("a.b", written by hand) is still served, and its name
// goes after "--" on claude's command line.
func TestMCPOptionNameRefused(t *testing.T) {
	argsFile := filepath.Join(t.TempDir(), "args")
	src := newTestSource(t, map[string]string{
		"-h":  `{"type":"http","url":"http://127.0.0.1:1/mcp"}`,
		"a.b": `{"type":"http","url":"http://127.0.0.1:1/mcp"}`,
	})
	src.set(src.servers, map[string]string{"-h": protocol.ApprovalAwaiting, "a.b": protocol.ApprovalApproved})
	_, c := startAuthServer(t, Options{MCPOptions: MCPOptions{MCP: src}}, "FAKE_ARGS_FILE="+argsFile, "FAKE_LOGIN=early")
	for _, tc := range []struct {
		typ  string
		data map[string]any
	}{
		{protocol.TypeMCPLogin, map[string]any{"name": "-h"}},
		{protocol.TypeMCPLogout, map[string]any{"name": "-h"}},
		{protocol.TypeMCPApprove, map[string]any{"name": "-h"}},
		{protocol.TypeMCPReject, map[string]any{"name": "-h"}},
		{protocol.TypeMCPToggle, map[string]any{"name": "-h", "enabled": false}},
		{protocol.TypeMCPReconnect, map[string]any{"name": "--version"}},
	} {
		perr := c.doErr(tc.typ, tc.data)
		if perr.Code != protocol.CodeBadRequest || !strings.HasPrefix(perr.Message, tc.typ+": name: Invalid name "+tc.data["name"].(string)+`. A server name must not start with "-"`) {
			t.Errorf("%s %v: %s %q, want bad_request naming the field", tc.typ, tc.data, perr.Code, perr.Message)
		}
	}
	if _, err := os.Stat(argsFile); err == nil {
		b, _ := os.ReadFile(argsFile)
		t.Fatalf("claude ran for a refused name: %s", b)
	}

	// FAKE_LOGIN=early: the login fails before its URL, after the fake
	// recorded its arguments.
	if perr := c.doErr(protocol.TypeMCPLogin, map[string]any{"name": "a.b"}); perr.Code != protocol.CodeCLIError {
		t.Errorf("login of a.b: %v", perr)
	}
	if b, _ := os.ReadFile(argsFile); string(b) != `["mcp","login","--no-browser","--","a.b"]` {
		t.Errorf("login ran claude with %s", b)
	}
	c.do(protocol.TypeMCPLogout, map[string]any{"name": "a.b"})
	if b, _ := os.ReadFile(argsFile); string(b) != `["mcp","logout","--","a.b"]` {
		t.Errorf("logout ran claude with %s", b)
	}
}
