package proxy

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ccproxy/ccproxy/mcpconfig/calllog"
	"github.com/ccproxy/ccproxy/protocol"
)

// Secrets of TestMCPHidesSecrets' configuration, none of which a client or
// the log may see.
const (
	secHeader   = "sk-header-0123456789"   // after --header, in "Authorization: Bearer …"
	secPath     = "path-token-abcdef42"    // $PATH_TOKEN, used as ${PATH_TOKEN}, and a URL path segment
	secEnv      = "env-secret-9876543"     // an env value, also a URL path segment of another server
	secLeaky    = "leaky-token-0123456789" // $LEAKY_SRC: leaky-server.sh's LEAKY_TOKEN
	secAPIKey   = "sk-ant-api03-leaky-4242"
	leakyScript = "../testdata/mcp/leaky-server.sh"
)

// TestMCPHidesSecrets: mcp/config and mcp/status show no header value and
// no path segment that is a configured secret or a ${VAR} value; mcp/probe
// and mcp/call against a real stdio server that echoes its env secret and
// ANTHROPIC_API_KEY on stderr and in its errors show neither (nor does the
// proxy's log).
func TestMCPHidesSecrets(t *testing.T) {
	script, err := filepath.Abs(leakyScript)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH_TOKEN", secPath)
	t.Setenv("LEAKY_SRC", secLeaky)
	t.Setenv("ANTHROPIC_API_KEY", secAPIKey)
	leaky := func(mode string) map[string]any {
		return map[string]any{"command": script, "args": []string{}, "env": map[string]string{"LEAKY_TOKEN": "${LEAKY_SRC}", "LEAKY_MODE": mode}}
	}
	src := newProbeSource(t, map[string]any{
		"remote": map[string]any{"command": "true", "args": []string{"mcp-remote", "https://h.invalid/mcp/${PATH_TOKEN}/sse",
			"--header", "Authorization: Bearer " + secHeader, "-H", "X-Api-Key:${PATH_TOKEN}"}},
		"web": map[string]any{"type": "http", "url": refusedURL(t) + "/u/" + secEnv + "/mcp"},
		"db": map[string]any{"command": "true", "args": []string{"--url", "https://h.invalid/" + secPath},
			"env": map[string]string{"DB_PASSWORD": secEnv}},
		"leakyfail": leaky("fail"),
		"leaky":     leaky("serve"),
	}, nil)
	ts := startServer(t, Options{Project: src.env.Project, MCPOptions: MCPOptions{MCP: src, MCPProbe: probeOpts()}})
	c := ts.dial(t)

	c.do(protocol.TypeMCPSubscribe, map[string]any{})
	var cfg protocol.MCPConfig
	c.waitPush(0, protocol.TypeMCPConfig, &cfg, nil)
	view, _ := json.Marshal(cfg)
	for _, want := range []string{"Authorization: ***", "X-Api-Key:${PATH_TOKEN}", "/u/***/mcp", "https://h.invalid/***"} {
		if !strings.Contains(string(view), want) {
			t.Errorf("mcp/config lacks %q: %s", want, view)
		}
	}

	var pr protocol.MCPProbeResult
	mustUnmarshal(t, c.do(protocol.TypeMCPProbe, map[string]any{"name": "leakyfail"}), &pr)
	if len(pr.Results) != 1 || pr.Results[0].Error == nil || !strings.Contains(pr.Results[0].Error.StderrTail, "token=*** apikey=***") {
		t.Errorf("mcp/probe leakyfail: %+v", pr)
	}
	waitStatus(c, 0, "leakyfail's probe failure in mcp/status", func(st protocol.MCPStatus) bool {
		s := statusOf(st, "leakyfail")
		return s != nil && s.Error != ""
	})

	var cr protocol.MCPCallResult
	for _, tool := range []string{"leak", "leak_result"} {
		mustUnmarshal(t, c.do(protocol.TypeMCPCall, map[string]any{"name": "leaky", "tool": tool, "arguments": map[string]any{}}), &cr)
		if !cr.IsError || !strings.Contains(cr.Content, "refused token=*** apikey=***") {
			t.Errorf("mcp/call %s: %+v", tool, cr)
		}
	}
	e := c.doErr(protocol.TypeMCPCall, map[string]any{"name": "leaky", "tool": "crash", "arguments": map[string]any{}})
	if e.Details == nil || !strings.Contains(e.Details.StderrTail, "crashing with token=*** apikey=***") {
		t.Errorf("mcp/call crash: %+v", e)
	}

	// Nothing any frame or the log holds shows a secret.
	for _, f := range c.snapshot() {
		for _, s := range []string{secHeader, secPath, secEnv, secLeaky, secAPIKey} {
			if strings.Contains(string(f.raw), s) {
				t.Errorf("a frame shows %q: %s", s, f.raw)
			}
		}
	}
	for _, s := range []string{secHeader, secPath, secEnv, secLeaky, secAPIKey} {
		if strings.Contains(ts.logBuf.String(), s) {
			t.Errorf("the proxy's log shows %q", s)
		}
	}
}

// TestCallLogScrubsErrorOutputs: the output of a failed MCP call (a
// session's, paired from claude's events, or a direct one) is written to
// the call log without the secrets it quotes.
func TestCallLogScrubsErrorOutputs(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", secAPIKey)
	src := newProbeSource(t, map[string]any{
		"db": map[string]any{"command": "true", "args": []string{}, "env": map[string]string{"DB_PASSWORD": secEnv}}}, nil)
	ts := startServer(t, Options{Project: src.env.Project, MCPOptions: MCPOptions{MCP: src, MCPProbe: probeOpts(), CallLogDir: t.TempDir(), CallLogIO: true}})
	c := ts.dial(t)
	c.do(protocol.TypeMCPSubscribe, map[string]any{})
	c.waitPush(0, protocol.TypeMCPConfig, nil, nil) // the configuration is in force
	out := "MCP error -32603: login with " + secEnv + " failed (key " + secAPIKey + ")"
	ts.srv.calls.LogEntry(calllog.Entry{Time: time.Now(), Kind: "session", Session: "s-1", Server: "db", Tool: "q", IsError: true, Output: &out})
	var lr protocol.MCPLogResult
	mustUnmarshal(t, c.do(protocol.TypeMCPLog, map[string]any{}), &lr)
	if len(lr.Entries) != 1 || lr.Entries[0].Output == nil || *lr.Entries[0].Output != "MCP error -32603: login with *** failed (key ***)" {
		b, _ := json.Marshal(lr)
		t.Errorf("the call log holds %s", b)
	}
}
