package proxy

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ccproxy/ccproxy/internal/testkit"
	protocol "github.com/ccproxy/ccproxy/webview-protocol"
)

// TestE2EMCPToggleReconnect: with the real CLI, mcp/toggle disables a
// server mid-session through mcp_toggle (its tools are gone from the next
// turn's API request, mcp/status says disabled) and enables it again;
// mcp/reconnect goes through mcp_reconnect.
func TestE2EMCPToggleReconnect(t *testing.T) {
	e := startE2E(t, Options{})
	c := e.dial(t)
	if caps := helloCaps(t, c); !slices.Contains(caps, protocol.CapMCPLive) {
		t.Fatalf("capabilities %v lack %s", caps, protocol.CapMCPLive)
	}
	c.do(protocol.TypeMCPSubscribe, map[string]any{})
	s := c.create(nil)
	// imageCall runs a turn in which the model calls mcp__testmcp__image
	// and returns whether the tool ran (MCP tools are deferred behind
	// ToolSearch, so the API request does not list them; calling one
	// shows whether the CLI has it).
	imageCall := func() bool {
		t.Helper()
		trs := toolResults(t, c.turn(s, "IMAGE"))
		if len(trs) != 1 {
			t.Fatalf("tool results %+v", trs)
		}
		return !trs[0].IsError
	}
	if !imageCall() {
		t.Fatal("mcp__testmcp__image failed before anything was toggled")
	}

	from := c.count()
	var r protocol.MCPLiveResult
	mustUnmarshal(t, c.do(protocol.TypeMCPToggle, map[string]any{"name": "testmcp", "enabled": false}), &r)
	if r.Name != "testmcp" || len(r.Sessions) != 1 || r.Sessions[0].Session != s || !r.Sessions[0].OK {
		t.Fatalf("toggle reply %+v", r)
	}
	waitStatus(c, from, "testmcp disabled", func(st protocol.MCPStatus) bool {
		x := statusOf(st, "testmcp")
		return x != nil && x.Status == protocol.MCPDisabled
	})
	if imageCall() {
		t.Errorf("mcp__testmcp__image still ran after testmcp was disabled")
	}

	from = c.count()
	mustUnmarshal(t, c.do(protocol.TypeMCPToggle, map[string]any{"name": "testmcp", "enabled": true, "session": s}), &r)
	if len(r.Sessions) != 1 || !r.Sessions[0].OK {
		t.Fatalf("enable reply %+v", r)
	}
	waitStatus(c, from, "testmcp connected", func(st protocol.MCPStatus) bool {
		x := statusOf(st, "testmcp")
		return x != nil && x.Status == protocol.MCPConnected
	})
	if !imageCall() {
		t.Errorf("mcp__testmcp__image failed after testmcp was enabled again")
	}

	mustUnmarshal(t, c.do(protocol.TypeMCPReconnect, map[string]any{"name": "everything"}), &r)
	if len(r.Sessions) != 1 || !r.Sessions[0].OK {
		t.Errorf("reconnect reply %+v", r)
	}
	if perr := c.doErr(protocol.TypeMCPToggle, map[string]any{"name": "nope", "enabled": true}); perr.Code != protocol.CodeMCPServerNotFound {
		t.Errorf("toggle of an unknown server: %v", perr)
	}
	if perr := c.doErr(protocol.TypeMCPReconnect, map[string]any{"name": "testmcp", "session": "s_none"}); perr.Code != protocol.CodeUnknownSession {
		t.Errorf("reconnect in an unknown session: %v", perr)
	}
	if perr := c.doErr(protocol.TypeMCPToggle, map[string]any{"name": "testmcp"}); perr.Code != protocol.CodeBadRequest || !strings.Contains(perr.Message, "enabled") {
		t.Errorf("toggle without enabled: %v", perr)
	}
}

// TestE2EMCPReconnectFixedServer: a server added live whose command does
// not exist yet fails; once the command is in place, mcp/reconnect
// connects it in the live session and its tool works.
func TestE2EMCPReconnectFixedServer(t *testing.T) {
	e := startE2E(t, Options{})
	c := e.dial(t)
	c.do(protocol.TypeMCPSubscribe, map[string]any{})
	s := c.create(nil)
	c.turn(s, "PING-1")

	bin := filepath.Join(e.env.home, "tmp", "hot-server")
	from := c.count()
	e.env.writeMCPJSON(t, map[string]any{
		"everything": map[string]any{"command": testkit.NodeBin(t, "mcp-server-everything")},
		"testmcp":    map[string]any{"command": e.testmcp, "args": []any{}},
		"hot":        map[string]any{"command": bin},
	})
	waitStatus(c, from, "hot failed", func(st protocol.MCPStatus) bool {
		h := statusOf(st, "hot")
		return h != nil && h.Status == protocol.MCPFailed && h.Origin == protocol.OriginSession
	})

	// Fix it: the command now exists.
	data, err := os.ReadFile(e.testmcp)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	from = c.count()
	var r protocol.MCPLiveResult
	mustUnmarshal(t, c.do(protocol.TypeMCPReconnect, map[string]any{"name": "hot", "session": s}), &r)
	if len(r.Sessions) != 1 || !r.Sessions[0].OK {
		t.Fatalf("reconnect reply %+v", r)
	}
	waitStatus(c, from, "hot connected", func(st protocol.MCPStatus) bool {
		h := statusOf(st, "hot")
		return h != nil && h.Status == protocol.MCPConnected && h.Origin == protocol.OriginSession
	})
	trs := toolResults(t, c.turn(s, "use the HOT server"))
	if len(trs) != 1 || trs[0].IsError || trs[0].MCP == nil || trs[0].MCP.Server != "hot" {
		t.Errorf("tool results after reconnecting: %+v", trs)
	}
}
