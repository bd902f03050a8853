package proxy

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/ccproxy/ccproxy/internal/testkit"
	protocol "github.com/ccproxy/ccproxy/webview-protocol"
)

// TestE2EMCPRemovedServerStops: a server the running claude was launched
// with (--mcp-config) and that then leaves the configuration (.mcp.json
// edited, or mcp/remove) is gone from the live session: claude's own
// mcp_status no longer lists it and the next turn cannot call its tool,
// while the server that stayed still works. The real CLI's mcp_set_servers
// never removes a --mcp-config server (docs/CLI-NOTES.md), so the session
// restarts between turns with the new configuration.
func TestE2EMCPRemovedServerStops(t *testing.T) {
	for _, how := range []string{"edit", "mcp/remove"} {
		t.Run(how, func(t *testing.T) {
			e := startE2E(t, Options{})
			c := e.dial(t)
			c.do(protocol.TypeMCPSubscribe, map[string]any{})
			s := c.create(nil)
			if trs := toolResults(t, c.turn(s, "IMAGE")); len(trs) != 1 || trs[0].IsError {
				t.Fatalf("mcp__testmcp__image before the removal: %+v", trs)
			}

			from := c.count()
			switch how {
			case "edit":
				e.env.writeMCPJSON(t, map[string]any{
					"everything": map[string]any{"command": testkit.NodeBin(t, "mcp-server-everything")},
				})
			case "mcp/remove":
				var res protocol.MCPManageResult
				mustUnmarshal(t, c.do(protocol.TypeMCPRemove, map[string]any{"name": "testmcp"}), &res)
				if res.Scope != "project" {
					t.Fatalf("mcp/remove reply %+v", res)
				}
			}
			var cfg protocol.MCPConfig
			c.waitPush(from, protocol.TypeMCPConfig, &cfg, func(raw json.RawMessage) bool {
				var v protocol.MCPConfig
				return json.Unmarshal(raw, &v) == nil && viewServer(v, "testmcp") == nil && viewServer(v, "everything") != nil
			})
			// The proxy applies the change in a goroutine of its own; this
			// call is serialized with it and sends the same (newest)
			// configuration, so once it returns the change has reached
			// claude (or a restart between turns was asked for).
			sess, err := e.srv.session(s)
			if err != nil {
				t.Fatal(err)
			}
			sess.applyCurrentServers()

			trs := toolResults(t, c.turn(s, "IMAGE"))
			if len(trs) != 1 || !trs[0].IsError {
				t.Errorf("mcp__testmcp__image still ran after testmcp was removed (%s): %+v", how, trs)
			}
			st := claudeMCPStatus(t, e.testServer, s)
			if x, ok := st["testmcp"]; ok {
				t.Errorf("claude's mcp_status still lists testmcp (%s) after it was removed: %v", x, st)
			}
			if st["everything"] != "connected" {
				t.Errorf("claude's mcp_status: everything is not connected: %v", st)
			}
			if trs := toolResults(t, c.turn(s, "SUM")); len(trs) != 1 || trs[0].IsError {
				t.Errorf("mcp__everything__get-sum after the removal: %+v", trs)
			}
			if st := statesOf(c, from, s); !slices.Contains(st, protocol.StateRestarting) {
				t.Errorf("the session did not restart: states %v", st)
			}
		})
	}
}
