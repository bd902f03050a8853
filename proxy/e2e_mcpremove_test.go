package proxy

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/ccproxy/ccproxy/internal/testkit"
	"github.com/ccproxy/ccproxy/protocol"
)

// TestE2EMCPRemovedServerStops: a server the running claude was launched
// with (--mcp-config) and that then leaves the configuration (.mcp.json
// edited, or mcp/remove) is gone from the live session: claude's own
// mcp_status no longer lists it and the next turn cannot call its tool,
// while the server that stayed still works. The real CLI's mcp_set_servers
// never removes a --mcp-config server (docs/CLI-NOTES.md), so the session
// restarts between turns with the new configuration. Added back, the
// server reaches the session live again (no restart).
func TestE2EMCPRemovedServerStops(t *testing.T) {
	t.Parallel()
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
				e.env.WriteMCPJSON(t, map[string]any{
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
			sess.mcp.Apply()

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

			// Added back: it reaches the restarted process live.
			from = c.count()
			e.env.WriteMCPJSON(t, map[string]any{
				"everything": map[string]any{"command": testkit.NodeBin(t, "mcp-server-everything")},
				"testmcp":    map[string]any{"command": e.testmcp, "args": []any{}},
			})
			c.waitPush(from, protocol.TypeMCPConfig, &cfg, func(raw json.RawMessage) bool {
				var v protocol.MCPConfig
				return json.Unmarshal(raw, &v) == nil && viewServer(v, "testmcp") != nil
			})
			sess.mcp.Apply()
			if trs := toolResults(t, c.turn(s, "IMAGE")); len(trs) != 1 || trs[0].IsError {
				t.Errorf("mcp__testmcp__image after testmcp was added back (%s): %+v", how, trs)
			}
			if st := claudeMCPStatus(t, e.testServer, s); st["testmcp"] != "connected" {
				t.Errorf("claude's mcp_status after testmcp was added back: %v", st)
			}
			if st := statesOf(c, from, s); slices.Contains(st, protocol.StateRestarting) {
				t.Errorf("adding testmcp back restarted the session: states %v", st)
			}
		})
	}
}

// TestE2EMCPSetServersOnLaunchedServer measures, on the real CLI, what
// mcp_set_servers does to a server of the process's --mcp-config that it
// lists with another definition (docs/CLI-NOTES.md): the new definition is
// taken (connected, its tool runs); but in a process where mcp_toggle
// disabled the server (its record in ~/.claude.json taken back, as
// mcp/toggle does), it may stay disabled ("Server status: disabled" in
// errors, its tool fails) or be enabled again, depending on when the CLI
// reads the file again. That is why a removed server is not toggled off
// instead of restarting: added back, it might stay off.
func TestE2EMCPSetServersOnLaunchedServer(t *testing.T) {
	t.Parallel()
	e := startE2E(t, Options{})
	c := e.dial(t)
	bin := filepath.Join(e.env.Home, "tmp", "testmcp2")
	data, err := os.ReadFile(e.testmcp)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, toggled := range []bool{false, true} {
		s := c.create(nil)
		c.turn(s, "PING-1")
		sess, err := e.srv.session(s)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), e.srv.opts.ControlTimeout)
		defer cancel()
		if toggled {
			if err := sess.mcp.Toggle(ctx, "testmcp", false, e.src.UnrecordedToggle); err != nil {
				t.Fatal(err)
			}
		}
		servers := maps.Clone(sess.mcp.Config().Servers)
		servers["testmcp"] = json.RawMessage(`{"type":"stdio","command":` + strconv.Quote(bin) + `,"args":[]}`)
		resp, err := sess.controlWait(ctx, "mcp_set_servers", map[string]any{"servers": servers})
		if err != nil {
			t.Fatal(err)
		}
		status, _ := sess.controlWait(ctx, "mcp_status", nil)
		var srv gjson.Result
		for _, x := range gjson.GetBytes(status, "mcpServers").Array() {
			if x.Get("name").String() == "testmcp" {
				srv = x
			}
		}
		trs := toolResults(t, c.turn(s, "IMAGE"))
		ran := len(trs) == 1 && !trs[0].IsError
		t.Logf("toggled=%v: mcp_set_servers %s; testmcp %s %s; tool ran %v", toggled, resp, srv.Get("status"), srv.Get("config.command"), ran)
		if srv.Get("config.command").String() != bin {
			t.Errorf("toggled=%v: the new definition was not taken: %s", toggled, srv.Raw)
		}
		want, wantErr, wantRan := "connected", "", true
		if toggled && srv.Get("status").String() != "connected" {
			// In a process where mcp_toggle disabled the server, the
			// answer depends on when the CLI reads ~/.claude.json
			// again (the record was taken back): kept disabled when it
			// has not (measured on a quiet machine), enabled again when
			// it has (seen on a loaded one). Either way the outcome is
			// consistent, and ccproxy restarts instead of relying on it.
			want, wantErr, wantRan = "disabled", "Server status: disabled", false
		}
		if srv.Get("status").String() != want || gjson.GetBytes(resp, "errors.testmcp").String() != wantErr || ran != wantRan {
			t.Errorf("toggled=%v: want %s (errors %q, tool ran %v); got %s, answer %s, tool ran %v", toggled, want, wantErr, wantRan, srv.Raw, resp, ran)
		}
	}
}
