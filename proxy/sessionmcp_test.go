package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/ccproxy/ccproxy/protocol"
)

// claudeMCPStatus asks the session's claude for mcp_status and returns
// each server's status by name.
func claudeMCPStatus(t *testing.T, ts *testServer, session string) map[string]string {
	t.Helper()
	sess, err := ts.srv.session(session)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), ts.srv.opts.ControlTimeout)
	defer cancel()
	resp, err := sess.controlWait(ctx, "mcp_status", nil)
	if err != nil {
		t.Fatalf("mcp_status: %v", err)
	}
	out := map[string]string{}
	for _, s := range gjson.GetBytes(resp, "mcpServers").Array() {
		out[s.Get("name").String()] = s.Get("status").String()
	}
	return out
}

// TestMCPRemovedLaunchedServerRestarts: the fake claude, like the real
// CLI, never removes a --mcp-config server on mcp_set_servers. A server
// that came only through mcp_set_servers is added and removed live; one
// the process was launched with and that leaves the configuration (here
// rejected) restarts the session between turns with the new
// configuration, after which it is gone; approved again, it is added back
// live.
func TestMCPRemovedLaunchedServerRestarts(t *testing.T) {
	dir := t.TempDir()
	argsFile := filepath.Join(dir, "args.json")
	src := newTestSource(t, nil)
	src.set(map[string]string{"alpha": `{"command":"a","args":[]}`, "beta": `{"command":"b","args":[]}`},
		map[string]string{"beta": protocol.ApprovalApproved})
	ts := startServer(t, Options{MCPOptions: MCPOptions{MCP: src}}, "FAKE_ARGS_FILE="+argsFile)
	c := ts.dial(t)
	c.do(protocol.TypeMCPSubscribe, map[string]any{})
	s := c.create(nil)
	before := c.count()
	c.turn(s, "first")
	ri := c.waitPush(before, protocol.TypeSessionState, nil, func(raw json.RawMessage) bool { return strings.Contains(string(raw), `"running"`) })
	c.waitPush(ri+1, protocol.TypeSessionState, nil, func(raw json.RawMessage) bool { return strings.Contains(string(raw), `"idle"`) })
	sess, err := ts.srv.session(s)
	if err != nil {
		t.Fatal(err)
	}
	names := func() []string {
		t.Helper()
		return slices.Sorted(func(yield func(string) bool) {
			for n := range claudeMCPStatus(t, ts, s) {
				if !yield(n) {
					return
				}
			}
		})
	}
	// apply waits (from frame index from) for the mcp/config push whose
	// active servers are want, then until that configuration has been
	// applied: the proxy's own call is serialized with this one, which
	// sends the same configuration.
	apply := func(from int, want ...string) {
		t.Helper()
		c.waitPush(from, protocol.TypeMCPConfig, nil, func(raw json.RawMessage) bool {
			var v protocol.MCPConfig
			if json.Unmarshal(raw, &v) != nil {
				return false
			}
			var active []string
			for _, srv := range v.Servers {
				if srv.Active {
					active = append(active, srv.Name)
				}
			}
			slices.Sort(active)
			return slices.Equal(active, want)
		})
		sess.mcp.Apply()
	}

	from := c.count()
	src.set(map[string]string{"alpha": `{"command":"a","args":[]}`, "beta": `{"command":"b","args":[]}`, "gamma": `{"command":"c","args":[]}`}, nil)
	apply(from, "alpha", "beta", "gamma")
	if got := names(); !slices.Equal(got, []string{"alpha", "beta", "gamma"}) {
		t.Errorf("after adding gamma, claude has %v", got)
	}
	n := c.count()
	src.set(map[string]string{"alpha": `{"command":"a","args":[]}`, "beta": `{"command":"b","args":[]}`}, nil)
	apply(n, "alpha", "beta")
	if got := names(); !slices.Equal(got, []string{"alpha", "beta"}) {
		t.Errorf("after removing gamma (added live), claude has %v", got)
	}
	if st := statesOf(c, from, s); len(st) != 0 {
		t.Errorf("adding and removing a server added live changed the state: %v", st)
	}

	// beta came with --mcp-config: rejecting it restarts the session. It
	// was toggled off in the session: that is forgotten with it.
	var tr protocol.MCPLiveResult
	mustUnmarshal(t, c.do(protocol.TypeMCPToggle, map[string]any{"name": "beta", "enabled": false, "session": s}), &tr)
	if len(tr.Sessions) != 1 || !tr.Sessions[0].OK {
		t.Fatalf("toggle reply %+v", tr)
	}
	from = c.count()
	if _, err := src.Reject("beta"); err != nil {
		t.Fatal(err)
	}
	apply(from, "alpha") // asks for the restart, if anything does
	if !strings.Contains(ts.logBuf.String(), `msg="MCP servers claude was launched with left the configuration; mcp_set_servers cannot remove them, so the session restarts between turns" session=`+s+` servers=[beta]`) {
		t.Fatalf("no restart for beta, which the process was launched with (claude has %v)", names())
	}
	c.waitPush(from, protocol.TypeSessionState, nil, func(raw json.RawMessage) bool { return strings.Contains(string(raw), `"restarting"`) })
	c.waitPush(from, protocol.TypeSessionState, nil, func(raw json.RawMessage) bool { return strings.Contains(string(raw), `"idle"`) })
	if st := statesOf(c, from, s); !slices.Equal(st, []string{"restarting", "starting", "idle"}) {
		t.Errorf("states %v, want restarting, starting, idle", st)
	}
	var args []string
	b, _ := os.ReadFile(argsFile)
	json.Unmarshal(b, &args)
	i, cur := slices.Index(args, "--resume"), src.args()
	if i < 0 || args[i+1] != "fake-session-1" || len(args) < len(cur) || !slices.Equal(args[len(args)-len(cur):], cur) {
		t.Errorf("restart args %q, want --resume and %q", args, cur)
	}
	if got := names(); !slices.Equal(got, []string{"alpha"}) {
		t.Errorf("after rejecting beta, claude has %v", got)
	}

	// Approved again, beta comes back live (mcp_set_servers), no restart.
	from = c.count()
	if _, err := src.Approve("beta"); err != nil {
		t.Fatal(err)
	}
	apply(from, "alpha", "beta")
	if got := claudeMCPStatus(t, ts, s); len(got) != 2 || got["alpha"] != "connected" || got["beta"] != "connected" {
		t.Errorf("after approving beta again, claude has %v", got)
	}
	if log := ts.logBuf.String(); !strings.Contains(log, `msg="MCP server toggled off in this session is no longer configured; forgotten" session=`+s+` server=beta`) ||
		strings.Contains(log, "could not be disabled in the new process") {
		t.Errorf("the toggle of the removed beta was not forgotten quietly")
	}
	c.turn(s, "second")
	if st := statesOf(c, from, s); slices.Contains(st, protocol.StateRestarting) {
		t.Errorf("adding beta back restarted the session: %v", st)
	}
	checkSeqs(t, c.events(s), 1)
}

// TestApplyMCPOneApplierPerSession: configuration changes reach a live
// session through its pending-apply slot (Session.markApply). Twenty
// changes in a row while mcpMu is held (a live mcp/toggle whose record
// waits for the test: the session's MCP control requests are serialized
// under it) leave at most one goroutine waiting to apply, and once the
// hold ends the newest configuration is applied (not each of the twenty).
func TestApplyMCPOneApplierPerSession(t *testing.T) {
	src := newTestSource(t, map[string]string{"alpha": `{"command":"a","args":[]}`})
	ts := startServer(t, Options{MCPOptions: MCPOptions{MCP: src}})
	c := ts.dial(t)
	c.do(protocol.TypeMCPSubscribe, map[string]any{})
	from := c.count()
	s := c.create(nil)
	c.waitState(from, protocol.StateIdle)
	sess, err := ts.srv.session(s)
	if err != nil {
		t.Fatal(err)
	}

	entered, release, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		done <- sess.mcp.Toggle(context.Background(), "alpha", true, func(_ string, _ bool, toggle func() error) error {
			close(entered) // mcpMu is held from here until toggle has been answered
			<-release
			return toggle()
		})
	}()
	<-entered

	const changes = 20
	for i := 1; i <= changes; i++ {
		src.set(map[string]string{"alpha": `{"command":"a","args":[]}`, fmt.Sprintf("s%02d", i): `{"command":"s","args":[]}`}, nil)
		ts.srv.applyMCP() // marks the session (the MCP loop may do it first: the same configuration is then no change)
	}
	newest := fmt.Sprintf("s%02d", changes)
	if n := appliers(); n > 1 {
		t.Errorf("%d goroutines wait to apply the MCP configuration to one session, want at most 1", n)
	}

	from = c.count()
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("toggle: %v", err)
	}
	c.waitPush(from, protocol.TypeMCPStatus, nil, func(raw json.RawMessage) bool {
		var st protocol.MCPStatus
		if json.Unmarshal(raw, &st) != nil {
			return false
		}
		return slices.ContainsFunc(st.Servers, func(srv protocol.MCPServerStatus) bool {
			return srv.Name == newest && srv.Status == "connected"
		})
	})
	if got := slices.Sorted(maps.Keys(claudeMCPStatus(t, ts, s))); !slices.Equal(got, []string{"alpha", newest}) {
		t.Errorf("claude has %v, want alpha and %s (the newest configuration)", got, newest)
	}
	// Once, for the newest configuration; a second time at most when the
	// MCP loop's applyMCP of a change installed before marked the session
	// after the applier had taken the mark (the loop is one goroutine, so
	// one such mark at most), applying the same newest configuration again.
	if n := strings.Count(ts.logBuf.String(), `msg="MCP servers applied" session=`+s); n < 1 || n > 2 {
		t.Errorf("the configuration was applied %d times after %d changes, want once (twice at most)", n, changes)
	}
}

// appliers counts the goroutines that apply (or wait to apply) the MCP
// configuration to a session: mcpsession.Part.Apply in their stack,
// or started for it by Server.applyMCP or Session.markApply.
func appliers() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	count := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "mcpsession.(*Part).Apply(") || strings.Contains(g, "(*Session).applyPending(") ||
			strings.Contains(g, "created by github.com/ccproxy/ccproxy/proxy.(*Server).applyMCP") {
			count++
		}
	}
	return count
}
