package mcphub

import (
	"encoding/json"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/ccproxy/ccproxy/protocol"
)

func (h *Hub) currentStatus() protocol.MCPStatus {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.status
}

// statusOf finds server name in an MCP status.
func statusOf(st protocol.MCPStatus, name string) *protocol.MCPServerStatus {
	for i := range st.Servers {
		if st.Servers[i].Name == name {
			return &st.Servers[i]
		}
	}
	return nil
}

// Without an MCP source the status shows what sessions report, and there
// is no approval.
func TestMCPStatusWithoutSource(t *testing.T) {
	h := NewHub(slog.New(slog.NewTextHandler(io.Discard, nil)))
	h.Observe([]Report{{Name: "b", Status: "connected", Scope: "project"}, {Name: "a", Status: "weird"}}, time.Now())
	st := h.currentStatus()
	if len(st.Servers) != 2 || st.Servers[0].Name != "a" || st.Servers[0].Status != protocol.MCPFailed || st.Servers[1].Scope != protocol.ScopeProject {
		t.Errorf("status = %+v", st.Servers)
	}
	if err := st.Validate(); err != nil {
		t.Error(err)
	}
	// A pending report never hides a definitive one.
	h.Observe([]Report{{Name: "b", Status: "pending"}}, time.Now())
	if got := statusOf(h.currentStatus(), "b").Status; got != protocol.MCPConnected {
		t.Errorf("b = %s after a later pending report", got)
	}
}

// The precedence of SPEC §8 between session reports and probe results.
func TestMCPStatusProbePrecedence(t *testing.T) {
	h := NewHub(slog.New(slog.DiscardHandler))
	view := func(name, def string) protocol.MCPConfigServer {
		return protocol.MCPConfigServer{Name: name, Scope: protocol.ScopeUser, Type: "stdio", Active: true, Approval: protocol.ApprovalNotNeeded, Config: json.RawMessage(def)}
	}
	cfg := func(aDef string) *Config {
		w := protocol.MCPConfigServer{Name: "w", Scope: protocol.ScopeProject, Type: "stdio", Approval: protocol.ApprovalAwaiting, Config: json.RawMessage(`{"command":"w"}`)}
		return &Config{Servers: map[string]json.RawMessage{"a": json.RawMessage(aDef)},
			View: protocol.MCPConfig{Servers: []protocol.MCPConfigServer{view("a", aDef), w}}}
	}
	h.SetConfig(cfg(`{"command":"a","args":[]}`))
	_, defs := h.ProbeTarget()
	t0 := time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	probeOK := func(name string, s int, tools ...string) protocol.ProbeResult {
		r := protocol.ProbeResult{Name: name, OK: true, Status: protocol.MCPConnected, Transport: "stdio", ProbedAt: at(s),
			ServerInfo: &protocol.MCPServerInfo{Name: name + "-probed", Version: "1"}, Tools: []protocol.ToolSummary{}}
		for _, tn := range tools {
			r.Tools = append(r.Tools, protocol.ToolSummary{Name: tn})
		}
		r.ToolCount = int64(len(r.Tools))
		return r
	}
	probeFail := func(name string, s int, code, msg string) protocol.ProbeResult {
		return protocol.ProbeResult{Name: name, Status: protocol.MCPFailed, ProbedAt: at(s), Error: &protocol.ProbeError{Code: code, Message: msg}}
	}
	type want struct {
		status, origin, err, code string
		tools                     []string
		observed                  int // seconds after t0; -1: none
	}
	check := func(step, name string, w want) {
		t.Helper()
		e := statusOf(h.currentStatus(), name)
		if e == nil {
			t.Fatalf("%s: no status for %s", step, name)
		}
		obs := time.Time{}
		if w.observed >= 0 {
			obs = at(w.observed)
		}
		if e.Status != w.status || e.Origin != w.origin || e.Error != w.err || e.ErrorCode != w.code || !slices.Equal(e.Tools, w.tools) || !e.ObservedAt.Equal(obs) {
			t.Errorf("%s: %s = %+v, want %+v", step, name, *e, w)
		}
	}
	check("nothing observed", "a", want{protocol.MCPPending, protocol.OriginConfig, "", "", nil, -1})

	h.ObserveProbes([]protocol.ProbeResult{probeOK("a", 1, "x", "y")}, defs)
	check("a probe", "a", want{protocol.MCPConnected, protocol.OriginProbe, "", "", []string{"x", "y"}, 1})
	if e := statusOf(h.currentStatus(), "a"); e.ServerInfo == nil || e.ServerInfo.Name != "a-probed" || e.ToolCount == nil || *e.ToolCount != 2 || e.Transport != "stdio" {
		t.Errorf("a probe: %+v", e)
	}

	h.Observe([]Report{{Name: "a", Status: protocol.MCPFailed, Err: "boom"}}, at(2))
	check("a newer session report", "a", want{protocol.MCPFailed, protocol.OriginSession, "boom", "", nil, 2})

	h.ObserveProbes([]protocol.ProbeResult{probeOK("a", 3, "x")}, defs)
	check("a newer probe", "a", want{protocol.MCPConnected, protocol.OriginProbe, "", "", []string{"x"}, 3})

	h.Observe([]Report{{Name: "a", Status: protocol.MCPFailed, Err: "boom again"}}, at(3))
	check("a session report at the probe's time", "a", want{protocol.MCPFailed, protocol.OriginSession, "boom again", "", nil, 3})

	h.ObserveProbes([]protocol.ProbeResult{probeOK("a", 3, "x")}, defs)
	check("a probe at the session report's time", "a", want{protocol.MCPFailed, protocol.OriginSession, "boom again", "", nil, 3})

	h.Observe([]Report{{Name: "a", Status: protocol.MCPPending}}, at(4))
	check("a newer pending report", "a", want{protocol.MCPFailed, protocol.OriginSession, "boom again", "", nil, 3})

	h.ObserveProbes([]protocol.ProbeResult{probeFail("a", 5, protocol.ProbeTimeout, "no answer within 5s")}, defs)
	check("a failed probe", "a", want{protocol.MCPFailed, protocol.OriginProbe, "no answer within 5s", protocol.ProbeTimeout, nil, 5})

	// A system/init report has no tools: they come from the newest
	// observation of the same status that has them (the probe at 3).
	h.Observe([]Report{{Name: "a", Status: protocol.MCPConnected}}, at(6))
	check("a init report", "a", want{protocol.MCPConnected, protocol.OriginSession, "", "", []string{"x"}, 6})

	// NOT_ACTIVE and SERVER_NOT_FOUND results are not observations.
	h.ObserveProbes([]protocol.ProbeResult{probeFail("a", 7, protocol.ProbeNotActive, "not started"), probeFail("a", 7, protocol.ProbeServerNotFound, "gone")}, defs)
	check("a not-active result", "a", want{protocol.MCPConnected, protocol.OriginSession, "", "", []string{"x"}, 6})

	// Configuration first: a server awaiting approval stays so.
	h.ObserveProbes([]protocol.ProbeResult{probeOK("w", 8, "t")}, defs)
	h.Observe([]Report{{Name: "w", Status: protocol.MCPConnected, Tools: []string{"t"}}}, at(8))
	check("w awaiting approval", "w", want{protocol.MCPAwaitingApproval, protocol.OriginConfig, "", "", nil, -1})

	// A new definition of a: what was observed is forgotten, and a probe
	// of the old definition that ends afterwards is discarded.
	h.SetConfig(cfg(`{"command":"a2","args":[]}`))
	check("a redefined", "a", want{protocol.MCPPending, protocol.OriginConfig, "", "", nil, -1})
	h.ObserveProbes([]protocol.ProbeResult{probeOK("a", 9, "x")}, defs)
	check("a probe of the old definition", "a", want{protocol.MCPPending, protocol.OriginConfig, "", "", nil, -1})
	_, defs2 := h.ProbeTarget()
	h.ObserveProbes([]protocol.ProbeResult{probeOK("a", 10, "z")}, defs2)
	check("a probe of the new definition", "a", want{protocol.MCPConnected, protocol.OriginProbe, "", "", []string{"z"}, 10})
}

// What a new resolved configuration changes decides what is sent: only a
// change of the active servers goes to live sessions (mcp_set_servers);
// any other change (an inactive server, the error list) is pushed to MCP
// subscribers as mcp/config only; nothing at all when nothing changed.
func TestMCPConfigChangesApplied(t *testing.T) {
	usr := map[string]any{"usr": map[string]any{"command": "u"}}
	src := newResolvedSource(t, usr, map[string]any{"proj": map[string]any{"command": "p"}}) // proj awaits approval
	h := NewHub(slog.New(slog.DiscardHandler))
	for _, step := range []struct {
		what          string
		user, project map[string]any
		pushed        bool
		active        bool
	}{
		{"first configuration", nil, nil, true, false},
		{"the same files resolved again", usr, map[string]any{"proj": map[string]any{"command": "p"}}, false, false},
		{"the inactive project server edited", usr, map[string]any{"proj": map[string]any{"command": "p2"}}, true, false},
		{"an error added", usr, map[string]any{"proj": map[string]any{"command": "p2"}, "bad": map[string]any{"command": 5}}, true, false},
		{"the active server edited", map[string]any{"usr": map[string]any{"command": "u2"}}, map[string]any{"proj": map[string]any{"command": "p2"}}, true, true},
		{"an active server added", map[string]any{"usr": map[string]any{"command": "u2"}, "usr2": map[string]any{"command": "v"}}, map[string]any{"proj": map[string]any{"command": "p2"}}, true, true},
	} {
		if step.user != nil {
			src.set(step.user, step.project)
		}
		cfg := src.Current()
		pushed, active := h.SetConfig(cfg)
		if pushed != step.pushed || active != step.active {
			t.Errorf("%s: pushed %v, active %v; want %v, %v (config errors %+v)", step.what, pushed, active, step.pushed, step.active, cfg.View.Errors)
		}
		if h.Config() != cfg {
			t.Errorf("%s: the new configuration is not the one in force", step.what)
		}
		if _, bad := step.project["bad"]; bad && len(cfg.View.Errors) == 0 {
			t.Errorf("%s: no errors", step.what)
		}
	}
}

// Secrets of the configuration of TestMCPStatusScrubsSessionErrors.
const (
	secEnv    = "env-secret-9876543"
	secAPIKey = "sk-ant-api03-leaky-4242"
)

// TestMCPStatusScrubsSessionErrors: the error claude reports for a server
// (mcp_status) reaches mcp/status without the configured secrets or the
// secret-looking environment values it quotes.
func TestMCPStatusScrubsSessionErrors(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", secAPIKey)
	src := newResolvedSource(t, map[string]any{
		"db": map[string]any{"command": "true", "args": []string{}, "env": map[string]string{"DB_PASSWORD": secEnv}}}, nil)
	h := NewHub(slog.New(slog.DiscardHandler))
	h.SetConfig(src.Current())
	h.Observe(ParseMCPStatus([]byte(`{"mcpServers":[{"name":"db","status":"failed","error":"login with `+secEnv+` failed (key `+secAPIKey+`)"}]}`)), time.Now())
	if e := statusOf(h.currentStatus(), "db"); e == nil || e.Error != "login with *** failed (key ***)" {
		t.Errorf("mcp/status of db: %+v", e)
	}
}

// What a configuration says is known of its servers (serve --demo: the
// recording's mcp_status) is the status from the start; a newer session
// report wins.
func TestMCPStatusKnownWithConfig(t *testing.T) {
	h := NewHub(slog.New(slog.DiscardHandler))
	t0 := time.Now()
	h.now = func() time.Time { return t0 }
	h.SetConfig(&Config{
		View:  protocol.MCPConfig{Servers: []protocol.MCPConfigServer{{Name: "demo", Scope: protocol.ScopeExtra, Type: "stdio", Active: true, Approval: protocol.ApprovalNotNeeded}}},
		Known: []Report{{Name: "demo", Status: "connected", Tools: []string{"echo", "get-tiny-image"}, Scope: "dynamic", Transport: "stdio"}},
	})
	st := h.currentStatus()
	d := statusOf(st, "demo")
	if len(st.Servers) != 1 || d == nil || d.Status != protocol.MCPConnected || d.ToolCount == nil || *d.ToolCount != 2 || d.Origin != protocol.OriginSession {
		t.Fatalf("status = %+v", st.Servers)
	}
	if err := st.Validate(); err != nil {
		t.Error(err)
	}
	h.Observe([]Report{{Name: "demo", Status: "failed", Err: "gone"}}, t0.Add(time.Second))
	if d := statusOf(h.currentStatus(), "demo"); d.Status != protocol.MCPFailed {
		t.Errorf("after a newer report: %+v", d)
	}
}
