package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ccproxy/ccproxy/internal/testkit"
	"github.com/ccproxy/ccproxy/mcpconfig"
	"github.com/ccproxy/ccproxy/protocol"
)

// TestE2EMCPToggleReconnect: with the real CLI, mcp/toggle disables a
// server mid-session through mcp_toggle (its tools are gone from the next
// turn's API request, mcp/status says disabled) and enables it again;
// mcp/reconnect goes through mcp_reconnect.
func TestE2EMCPToggleReconnect(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
	e := startE2E(t, Options{})
	c := e.dial(t)
	c.do(protocol.TypeMCPSubscribe, map[string]any{})
	s := c.create(nil)
	c.turn(s, "PING-1")

	bin := filepath.Join(e.env.Home, "tmp", "hot-server")
	from := c.count()
	e.env.WriteMCPJSON(t, map[string]any{
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

// statesOf returns the session/state states of session in frames[from:].
func statesOf(c *wsClient, from int, session string) []string {
	var out []string
	for _, f := range c.snapshot()[from:] {
		if f.Type != protocol.TypeSessionState {
			continue
		}
		var st struct{ Session, State string }
		if json.Unmarshal(f.Data, &st) == nil && st.Session == session {
			out = append(out, st.State)
		}
	}
	return out
}

// unchanged checks that a live toggle (what) left ~/.claude.json as it
// was: byte-identical, but for keys outside "projects" that the CLI
// writes on its own time (its pluginUsage after a process starts): those
// are logged, "projects" must still be byte-identical.
func unchanged(t *testing.T, path string, before []byte, what string) {
	t.Helper()
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(after, before) {
		return
	}
	var b, a map[string]json.RawMessage
	if json.Unmarshal(before, &b) != nil || json.Unmarshal(after, &a) != nil || !bytes.Equal(b["projects"], a["projects"]) {
		t.Errorf("%s changed ~/.claude.json:\nbefore %s\nafter  %s", what, before, after)
		return
	}
	t.Logf("%s: the CLI changed ~/.claude.json outside projects on its own:\nbefore %s\nafter  %s", what, before, after)
}

// TestE2EMCPToggleSessionOnly: with the real CLI (which records every
// mcp_toggle in ~/.claude.json), a live mcp/toggle in session A leaves
// ~/.claude.json byte-identical, disables the server in A only (mcp/status:
// disabled, origin session; a new session B still has it), does not
// restart A, and A keeps it disabled through a later configuration change
// (its mcp_set_servers leaves the server out).
func TestE2EMCPToggleSessionOnly(t *testing.T) {
	t.Parallel()
	e := startE2E(t, Options{})
	c := e.dial(t)
	c.do(protocol.TypeMCPSubscribe, map[string]any{})
	imageCall := func(s string) bool {
		t.Helper()
		trs := toolResults(t, c.turn(s, "IMAGE"))
		if len(trs) != 1 {
			t.Fatalf("tool results %+v", trs)
		}
		return !trs[0].IsError
	}
	a := c.create(nil)
	if !imageCall(a) {
		t.Fatal("mcp__testmcp__image failed in A before anything was toggled")
	}
	home := filepath.Join(e.env.Home, ".claude.json")
	before, err := os.ReadFile(home)
	if err != nil {
		t.Fatal(err)
	}

	from := c.count()
	var r protocol.MCPLiveResult
	mustUnmarshal(t, c.do(protocol.TypeMCPToggle, map[string]any{"name": "testmcp", "enabled": false, "session": a}), &r)
	if len(r.Sessions) != 1 || r.Sessions[0].Session != a || !r.Sessions[0].OK {
		t.Fatalf("toggle reply %+v", r)
	}
	unchanged(t, home, before, "disabling testmcp in A")
	waitStatus(c, from, "testmcp disabled by session A", func(st protocol.MCPStatus) bool {
		x := statusOf(st, "testmcp")
		return x != nil && x.Status == protocol.MCPDisabled && x.Origin == protocol.OriginSession
	})
	if imageCall(a) {
		t.Errorf("mcp__testmcp__image still ran in A after testmcp was disabled there")
	}
	b := c.create(nil)
	if !imageCall(b) {
		t.Errorf("mcp__testmcp__image failed in a new session B: A's toggle leaked")
	}

	// A configuration change sends A mcp_set_servers: testmcp stays off in A.
	// Local scope (~/.claude.json), while B's claude, started for the
	// first time in this HOME, may still be saving the file: ccproxy's
	// write takes the CLI's lock, so it is not lost (mcpconfig
	// TestCLISaveKeepsServerWrite).
	mustUnmarshal(t, c.do(protocol.TypeMCPAdd, map[string]any{"name": "unrelated", "scope": "local", "definition": map[string]any{"command": e.testmcp}}), new(protocol.MCPManageResult))
	waitStatus(c, from, "unrelated connected", func(st protocol.MCPStatus) bool {
		x := statusOf(st, "unrelated")
		return x != nil && x.Status == protocol.MCPConnected
	})
	if imageCall(a) {
		t.Errorf("mcp__testmcp__image ran in A again after an unrelated mcp/add")
	}
	if st := statesOf(c, from, a); slices.Contains(st, protocol.StateRestarting) {
		t.Errorf("session A restarted: states %v", st)
	}
	if cfg := e.src.Current(); cfg != nil {
		for _, v := range cfg.View.Servers {
			if v.Name == "testmcp" && !v.Active {
				t.Errorf("mcp/config: testmcp inactive after a session toggle: %+v", v)
			}
		}
	}

	// Enabling it again in A writes nothing either.
	before, _ = os.ReadFile(home)
	mustUnmarshal(t, c.do(protocol.TypeMCPToggle, map[string]any{"name": "testmcp", "enabled": true, "session": a}), &r)
	if len(r.Sessions) != 1 || !r.Sessions[0].OK {
		t.Fatalf("enable reply %+v", r)
	}
	unchanged(t, home, before, "enabling testmcp again in A")
	if !imageCall(a) {
		t.Errorf("mcp__testmcp__image failed in A after testmcp was enabled again")
	}
}

// TestE2EMCPDownServerNoRestart: while a configured server cannot connect
// (connection refused), an unrelated mcp/add reaches a live session with
// mcp_set_servers, whose answer lists the down server under errors; that is
// not claude refusing the change, so the session does not restart.
func TestE2EMCPDownServerNoRestart(t *testing.T) {
	t.Parallel()
	// The project's .mcp.json gets a third server, "remote", before the
	// proxy reads it.
	e := startE2EWith(t, Options{}, func(o *mcpconfig.Options) {
		o.AllowServerTools = true
		path := filepath.Join(o.ProjectDir, ".mcp.json")
		var doc map[string]map[string]any
		if data, err := os.ReadFile(path); err != nil || json.Unmarshal(data, &doc) != nil {
			t.Fatalf("reading %s: %v", path, err)
		}
		doc["mcpServers"]["remote"] = map[string]any{"type": "http", "url": "http://127.0.0.1:1/mcp"}
		data, _ := json.Marshal(doc)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	})
	c := e.dial(t)
	c.do(protocol.TypeMCPSubscribe, map[string]any{})
	// From before the create: claude can report remote failed (the
	// connection is refused at once) as soon as it starts, before the
	// first turn.
	from := c.count()
	a := c.create(nil)
	c.turn(a, "PING-1")
	waitStatus(c, from, "remote failed", func(st protocol.MCPStatus) bool {
		x := statusOf(st, "remote")
		return x != nil && x.Status == protocol.MCPFailed && x.Origin == protocol.OriginSession
	})
	for i, name := range []string{"unrelated1", "unrelated2"} {
		from := c.count()
		// Local scope, as in TestE2EMCPToggleSessionOnly.
		mustUnmarshal(t, c.do(protocol.TypeMCPAdd, map[string]any{"name": name, "scope": "local", "definition": map[string]any{"command": e.testmcp}}), new(protocol.MCPManageResult))
		waitStatus(c, from, name+" connected", func(st protocol.MCPStatus) bool {
			x := statusOf(st, name)
			return x != nil && x.Status == protocol.MCPConnected && x.Origin == protocol.OriginSession
		})
		c.turn(a, fmt.Sprintf("PING-%d", i+2)) // a restart wanted would have happened before this turn
		if st := statesOf(c, from, a); slices.Contains(st, protocol.StateRestarting) {
			t.Errorf("session A restarted after mcp/add %s while remote is down: states %v", name, st)
		}
	}
}
