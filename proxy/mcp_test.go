package proxy

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ccproxy/ccproxy/internal/testkit/fakeclaude"
	"github.com/ccproxy/ccproxy/protocol"
)

// statusOf finds server name in an MCP status.
func statusOf(st protocol.MCPStatus, name string) *protocol.MCPServerStatus {
	for i := range st.Servers {
		if st.Servers[i].Name == name {
			return &st.Servers[i]
		}
	}
	return nil
}

// waitStatus waits for an mcp/status push (from frame index from) in which
// pred holds.
func waitStatus(c *wsClient, from int, what string, pred func(st protocol.MCPStatus) bool) (protocol.MCPStatus, int) {
	c.t.Helper()
	var st protocol.MCPStatus
	i := c.waitPush(from, protocol.TypeMCPStatus, &st, func(raw json.RawMessage) bool {
		var s protocol.MCPStatus
		return json.Unmarshal(raw, &s) == nil && pred(s)
	})
	return st, i
}

// The status indicator: config first (pending), then what sessions report
// (mcp_status); a config change reaches live sessions through
// mcp_set_servers without a restart.
func TestMCPStatusAndHotReload(t *testing.T) {
	src := newTestSource(t, map[string]string{"alpha": `{"command":"a","args":[]}`})
	ts := startServer(t, Options{MCPOptions: MCPOptions{MCP: src, MCPRefresh: 20 * time.Millisecond}})
	c := ts.dial(t)
	var hello protocol.Hello
	c.waitPush(0, protocol.TypeHello, &hello, nil)
	if !slices.Contains(hello.Capabilities, protocol.CapMCPApproval) || !slices.Contains(hello.Capabilities, protocol.CapMCPStatus) {
		t.Errorf("capabilities %v", hello.Capabilities)
	}
	from := c.count()
	c.do(protocol.TypeMCPSubscribe, map[string]any{})
	var cfg protocol.MCPConfig
	ci := c.waitPush(from, protocol.TypeMCPConfig, &cfg, nil)
	st, si := waitStatus(c, from, "status", func(protocol.MCPStatus) bool { return true })
	if len(cfg.Servers) != 1 || cfg.Servers[0].Name != "alpha" || ci > si {
		t.Errorf("mcp/config %+v (at %d, status at %d)", cfg, ci, si)
	}
	if a := statusOf(st, "alpha"); a == nil || a.Status != protocol.MCPPending || a.Origin != protocol.OriginConfig {
		t.Errorf("before any session: %+v", st)
	}

	s := c.create(nil)
	st, _ = waitStatus(c, from, "alpha connected", func(st protocol.MCPStatus) bool {
		a := statusOf(st, "alpha")
		return a != nil && a.Status == protocol.MCPConnected
	})
	a := statusOf(st, "alpha")
	if a.Origin != protocol.OriginSession || a.ToolCount == nil || *a.ToolCount != 2 || !slices.Equal(a.Tools, []string{"echo", "image"}) ||
		a.ServerInfo == nil || a.ServerInfo.Name != "alpha-server" || a.Scope != protocol.ScopeExtra || a.Approval != protocol.ApprovalNotNeeded || a.ObservedAt.IsZero() {
		t.Errorf("alpha = %+v", a)
	}
	resp, body := httpGet(t, "GET", ts.url+"/v1/mcp/status", http.Header{"Authorization": {"Bearer " + testToken}})
	var hst protocol.MCPStatus
	mustUnmarshal(t, body, &hst)
	if resp.StatusCode != 200 || statusOf(hst, "alpha") == nil || statusOf(hst, "alpha").Status != protocol.MCPConnected || hst.UpdatedAt.IsZero() {
		t.Errorf("GET /v1/mcp/status = %s", body)
	}

	// Add beta: mcp/config, then beta connected through mcp_set_servers.
	from = c.count()
	src.set(map[string]string{"alpha": `{"command":"a","args":[]}`, "beta": `{"command":"b","args":[]}`}, nil)
	c.waitPush(from, protocol.TypeMCPConfig, &cfg, nil)
	if len(cfg.Servers) != 2 {
		t.Errorf("config after the change: %+v", cfg)
	}
	waitStatus(c, from, "beta connected", func(st protocol.MCPStatus) bool {
		b := statusOf(st, "beta")
		return b != nil && b.Status == protocol.MCPConnected && b.ToolCount != nil
	})
	// No restart was needed.
	for _, f := range c.snapshot() {
		if f.Type == protocol.TypeSessionState && strings.Contains(string(f.raw), "restarting") {
			t.Errorf("the session restarted: %s", f.raw)
		}
	}
	c.turn(s, "still fine")
	checkSeqs(t, c.events(s), 1)
	// The first mcp_set_servers lists the --mcp-config servers it repeats
	// as added, as the real CLI does (docs/CLI-NOTES.md).
	if !strings.Contains(ts.logBuf.String(), `msg="MCP servers applied" session=`+s+` added="[\"alpha\",\"beta\"]"`) {
		t.Errorf("the log does not show beta added by mcp_set_servers")
	}
}

// When claude refuses the change, the session restarts between turns with
// --resume; the conversation and its seqs go on.
func TestMCPRefusedRestarts(t *testing.T) {
	dir := t.TempDir()
	src := newTestSource(t, map[string]string{"alpha": `{"command":"a","args":[]}`})
	ts := startServer(t, Options{MCPOptions: MCPOptions{MCP: src}}, "FAKE_REFUSE_SET=1", "FAKE_ARGS_FILE="+filepath.Join(dir, "args.json"))
	c := ts.dial(t)
	s := c.create(nil)
	before := c.count()
	c.turn(s, "first")
	// The idle state follows the result: wait for it, so that it is not
	// taken for the state after the restart.
	ri := c.waitPush(before, protocol.TypeSessionState, nil, func(raw json.RawMessage) bool { return strings.Contains(string(raw), `"running"`) })
	c.waitPush(ri+1, protocol.TypeSessionState, nil, func(raw json.RawMessage) bool { return strings.Contains(string(raw), `"idle"`) })

	from := c.count()
	src.set(map[string]string{"alpha": `{"command":"a","args":[]}`, "beta": `{"command":"b","args":[]}`}, nil)
	var states []string
	c.waitPush(from, protocol.TypeSessionState, nil, func(raw json.RawMessage) bool { return strings.Contains(string(raw), `"restarting"`) })
	c.waitPush(from, protocol.TypeSessionState, nil, func(raw json.RawMessage) bool { return strings.Contains(string(raw), `"idle"`) })
	for _, f := range c.snapshot()[from:] {
		if f.Type == protocol.TypeSessionState {
			var st protocol.SessionState
			mustUnmarshal(t, f.Data, &st)
			states = append(states, st.State)
		}
	}
	if !slices.Equal(states, []string{"restarting", "starting", "idle"}) {
		t.Errorf("states %v, want restarting, starting, idle", states)
	}
	var args []string
	b, _ := os.ReadFile(filepath.Join(dir, "args.json"))
	json.Unmarshal(b, &args)
	i, cur := slices.Index(args, "--resume"), src.args()
	if i < 0 || args[i+1] != "fake-session-1" || len(args) < len(cur) || !slices.Equal(args[len(args)-len(cur):], cur) {
		t.Errorf("restart args %q", args)
	}
	evs := c.turn(s, "second")
	if !strings.Contains(string(evs[0].Event), `"session_id":"fake-session-1"`) {
		t.Errorf("the resumed session has another id: %s", evs[0].Event)
	}
	checkSeqs(t, c.events(s), 1)
	n := 0
	for _, p := range leftovers(ts.marker) {
		if !strings.HasPrefix(p.cmd, "ccproxy-guard ") { // childproc's guard (Linux) is not a claude
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d claude processes alive, want 1 (the old one must be gone): %v", n, leftovers(ts.marker))
	}
}

// When claude takes the change but reports servers that cannot start
// (mcp_set_servers' errors: a server down, a missing command), that is not
// a refusal: the session does not restart, however often it happens.
func TestMCPServerErrorsNoRestart(t *testing.T) {
	src := newTestSource(t, map[string]string{"alpha": `{"command":"a","args":[]}`})
	ts := startServer(t, Options{MCPOptions: MCPOptions{MCP: src}}, "FAKE_SET_ERRORS=1")
	c := ts.dial(t)
	s := c.create(nil)
	c.turn(s, "first")
	from := c.count()
	servers := map[string]string{"alpha": `{"command":"a","args":[]}`}
	for i, name := range []string{"beta", "gamma", "delta"} {
		servers[name] = `{"command":"b","args":[]}`
		src.set(maps.Clone(servers), nil)
		waitLog(t, ts, `msg="MCP server failed to start" session=`+s+` server=`+name)
		added := `\"` + name + `\"`
		if i == 0 { // the first call lists the --mcp-config server it repeats too, as the real CLI does
			added = `\"alpha\",` + added
		}
		waitLog(t, ts, `msg="MCP servers applied" session=`+s+` added="[`+added+`]" removed=[] failed=1`)
		c.turn(s, fmt.Sprintf("turn %d", i)) // a restart asked for would begin before this turn
	}
	if st := statesOf(c, from, s); slices.Contains(st, protocol.StateRestarting) {
		t.Errorf("the session restarted on servers that failed to connect: states %v", st)
	}
	if strings.Contains(ts.logBuf.String(), "restarting claude between turns") {
		t.Error("the log shows a restart")
	}
}

// A server mcp/toggle disabled in a session stays disabled when claude
// refuses a later change and the session restarts: the new process starts
// every configured server, and the proxy disables it there again.
func TestMCPToggleSurvivesRestart(t *testing.T) {
	src := newTestSource(t, map[string]string{"alpha": `{"command":"a","args":[]}`, "gamma": `{"command":"c","args":[]}`})
	ts := startServer(t, Options{MCPOptions: MCPOptions{MCP: src}}, "FAKE_REFUSE_SET=1")
	c := ts.dial(t)
	c.do(protocol.TypeMCPSubscribe, map[string]any{})
	s := c.create(nil)
	c.turn(s, "first")
	var r protocol.MCPLiveResult
	mustUnmarshal(t, c.do(protocol.TypeMCPToggle, map[string]any{"name": "alpha", "enabled": false, "session": s}), &r)
	if len(r.Sessions) != 1 || !r.Sessions[0].OK {
		t.Fatalf("toggle reply %+v", r)
	}

	from := c.count()
	src.set(map[string]string{"alpha": `{"command":"a","args":[]}`, "gamma": `{"command":"c","args":[]}`, "beta": `{"command":"b","args":[]}`}, nil)
	c.waitPush(from, protocol.TypeSessionState, nil, func(raw json.RawMessage) bool { return strings.Contains(string(raw), `"restarting"`) })
	waitLog(t, ts, `msg="MCP server disabled again in the new process" session=`+s+` server=alpha`)
	evs := c.turn(s, "second")
	for _, ev := range evs {
		if strings.Contains(string(ev.Event), `"subtype":"init"`) && !strings.Contains(string(ev.Event), `"alpha"`) {
			t.Errorf("the new process's init does not list alpha: %s", ev.Event)
		}
	}
	// The new process's own report says alpha is disabled, gamma is not.
	waitStatus(c, from, "alpha disabled in the new process", func(st protocol.MCPStatus) bool {
		a, g := statusOf(st, "alpha"), statusOf(st, "gamma")
		return a != nil && a.Status == protocol.MCPDisabled && a.Origin == protocol.OriginSession &&
			g != nil && g.Status == protocol.MCPConnected
	})
}

// When the restart cannot prepare the MCP configuration, subscribers are
// told so as session/create would tell them, without the details (paths,
// the system's words), which go to the log.
func TestRestartFailureHidesDetails(t *testing.T) {
	src := newTestSource(t, map[string]string{"alpha": `{"command":"a","args":[]}`})
	ts := startServer(t, Options{MCPOptions: MCPOptions{MCP: src}}, "FAKE_REFUSE_SET=1")
	c := ts.dial(t)
	s := c.create(nil)
	c.turn(s, "first")
	src.failSpawn(errors.New("writing /very/secret/dir/mcp.json: permission denied"))
	from := c.count()
	src.set(map[string]string{"alpha": `{"command":"a","args":[]}`, "beta": `{"command":"b","args":[]}`}, nil)
	var ex protocol.SessionExited
	c.waitPush(from, protocol.TypeSessionExited, &ex, nil)
	if strings.Contains(ex.StderrTail, "secret") || ex.StderrTail != "ccproxy could not restart claude: the MCP configuration could not be prepared; see the proxy's log" {
		t.Errorf("session/exited stderrTail %q", ex.StderrTail)
	}
	if !strings.Contains(ts.logBuf.String(), "/very/secret/dir/mcp.json: permission denied") {
		t.Error("the log does not have the details")
	}
}

// A turn sent while the session restarts is held and written afterwards.
// The old fake exits only on SIGUSR1, so the restart is surely in progress
// when the turn is sent.
func TestTurnHeldDuringRestart(t *testing.T) {
	ts := startServer(t, Options{CLIOptions: CLIOptions{CloseGrace: waitTimeout}}, "FAKE_EXIT_ON_USR1=1")
	c := ts.dial(t)
	s := c.create(nil)
	pid := fakePID(t, c, s)
	_, from := restartSession(t, ts, c, s)
	id := c.send(protocol.TypeSessionSend, map[string]any{"session": s, "text": "during the restart"})
	var list protocol.SessionListResult
	mustUnmarshal(t, c.do(protocol.TypeSessionList, map[string]any{}), &list)
	if list.Sessions[0].State != protocol.StateRestarting {
		t.Fatalf("state %q, want restarting", list.Sessions[0].State)
	}
	if err := killPID(pid, fakeclaude.ExitSignal); err != nil {
		t.Fatal(err)
	}
	if rep := c.reply(id); !*rep.OK {
		t.Fatalf("held send: %s", rep.raw)
	}
	ev, _ := c.waitEvent(from, s, "echo", func(ev protocol.SessionEvent) bool { return strings.HasPrefix(textOf(ev), "echo:") })
	if textOf(ev) != "echo: during the restart" {
		t.Errorf("the held turn got %q", textOf(ev))
	}
	c.waitEvent(from, s, "result", isResult)
	checkSeqs(t, c.events(s), 1)
	// The new fake, too, waits for SIGUSR1 (before stdin EOF it dies of it).
	killPID(fakePID(t, c, s), fakeclaude.ExitSignal)
}

// Approving or rejecting a project server: pushes reach MCP subscribers
// before the reply; live sessions get the server.
func TestMCPApproval(t *testing.T) {
	src := newTestSource(t, map[string]string{"alpha": `{"command":"a","args":[]}`, "proj": `{"command":"p","args":[]}`})
	src.set(src.servers, map[string]string{"proj": protocol.ApprovalAwaiting})
	<-src.Changes()
	ts := startServer(t, Options{MCPOptions: MCPOptions{MCP: src, MCPRefresh: 20 * time.Millisecond}})
	c := ts.dial(t)
	c.do(protocol.TypeMCPSubscribe, map[string]any{})
	st, _ := waitStatus(c, 0, "status", func(protocol.MCPStatus) bool { return true })
	if p := statusOf(st, "proj"); p == nil || p.Status != protocol.MCPAwaitingApproval || p.Approval != protocol.ApprovalAwaiting || p.Scope != protocol.ScopeProject {
		t.Errorf("proj before approval: %+v", p)
	}
	c.create(nil)

	from := c.count()
	id := c.send(protocol.TypeMCPApprove, map[string]any{"name": "proj"})
	rep := c.reply(id)
	var res protocol.MCPApprovalResult
	mustUnmarshal(t, rep.Data, &res)
	if res.Approval != protocol.ApprovalApproved || res.Name != "proj" {
		t.Errorf("approve reply %s", rep.raw)
	}
	_, ri := c.waitFor(from, "reply", func(f rawFrame) bool { return string(f.ID) == string(id) })
	ci := c.waitPush(from, protocol.TypeMCPConfig, nil, nil)
	_, si := waitStatus(c, from, "proj approved", func(st protocol.MCPStatus) bool {
		p := statusOf(st, "proj")
		return p != nil && p.Approval == protocol.ApprovalApproved
	})
	if ci > ri || si > ri {
		t.Errorf("pushes at %d and %d, reply at %d: the reply must come after them", ci, si, ri)
	}
	waitStatus(c, from, "proj connected", func(st protocol.MCPStatus) bool {
		p := statusOf(st, "proj")
		return p != nil && p.Status == protocol.MCPConnected
	})

	mustUnmarshal(t, c.do(protocol.TypeMCPReject, map[string]any{"name": "proj"}), &res)
	if res.Approval != protocol.ApprovalRejected {
		t.Errorf("reject: %+v", res)
	}
	waitStatus(c, from, "proj rejected", func(st protocol.MCPStatus) bool {
		p := statusOf(st, "proj")
		return p != nil && p.Status == protocol.MCPRejected
	})
	if e := c.doErr(protocol.TypeMCPApprove, map[string]any{"name": "nope"}); e.Code != protocol.CodeMCPServerNotFound {
		t.Errorf("approve unknown: %v", e)
	}
	if e := c.doErr(protocol.TypeMCPApprove, map[string]any{"name": "alpha"}); e.Code != protocol.CodeBadRequest {
		t.Errorf("approve a server that needs no approval: %v", e)
	}
	// Unsubscribed: no more pushes.
	c.do(protocol.TypeMCPUnsubscribe, map[string]any{})
	n := c.count()
	src.set(map[string]string{"alpha": `{"command":"a","args":[]}`}, map[string]string{})
	c.do(protocol.TypeSessionList, map[string]any{})
	for _, f := range c.snapshot()[n:] {
		if f.Type == protocol.TypeMCPConfig || f.Type == protocol.TypeMCPStatus {
			t.Errorf("push after mcp/unsubscribe: %s", f.Type)
		}
	}
}
