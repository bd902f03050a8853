package proxy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ccproxy/ccproxy/internal/testkit/mcptest"
	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/proxy/mcphub"
)

func viewServer(cfg protocol.MCPConfig, name string) *protocol.MCPConfigServer {
	for i := range cfg.Servers {
		if cfg.Servers[i].Name == name {
			return &cfg.Servers[i]
		}
	}
	return nil
}

// TestMCPManageProtocol: mcp/add, mcp/update and mcp/remove write the
// files as `claude mcp add-json` does and answer with the resulting
// configuration, which subscribers got first; bad input gets the file
// errors and leaves the files unchanged; mcp/test probes an unsaved
// definition without touching mcp/status.
func TestMCPManageProtocol(t *testing.T) {
	testmcp := mcptest.Command(t)
	e := newMCPEnv(t)
	src, err := mcphub.NewConfigSource(e.Opts, e.FilesDir, nil)
	if err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, Options{Project: e.Project, MCPOptions: MCPOptions{MCP: src}})
	t.Cleanup(func() { src.Close() })
	c := ts.dial(t)
	if caps := helloCaps(t, c); !slices.Contains(caps, protocol.CapMCPManage) {
		t.Fatalf("hello capabilities %v lack %s", caps, protocol.CapMCPManage)
	}
	c.do(protocol.TypeMCPSubscribe, map[string]any{})
	claudeJSON := filepath.Join(e.Home, ".claude.json")

	// mcp/add: written, applied, answered with the configuration.
	from := c.count()
	var res protocol.MCPManageResult
	mustUnmarshal(t, c.do(protocol.TypeMCPAdd, map[string]any{
		"name": "srv", "scope": "user",
		"definition": map[string]any{"command": testmcp, "env": map[string]any{"API_TOKEN": "s3cret-value"}, "junk": 1},
	}), &res)
	if res.Name != "srv" || res.Scope != "user" || res.File != claudeJSON {
		t.Errorf("reply %+v", res)
	}
	if s := viewServer(res.Config, "srv"); s == nil || !s.Active || s.Scope != "user" {
		t.Errorf("srv in the reply's config: %+v", s)
	}
	if raw, _ := json.Marshal(res.Config); strings.Contains(string(raw), "s3cret") {
		t.Errorf("the reply shows a secret: %s", raw)
	}
	var file struct {
		MCPServers map[string]map[string]any `json:"mcpServers"`
	}
	data, _ := os.ReadFile(claudeJSON)
	mustUnmarshal(t, data, &file)
	if got := file.MCPServers["srv"]; got["command"] != testmcp || got["junk"] != nil || got["args"] == nil {
		t.Errorf("written definition %v", got)
	}
	// mcp/config with srv reached the subscriber before the reply.
	pushAt := -1
	for i, f := range c.snapshot()[from:] {
		if f.Type == protocol.TypeMCPConfig && strings.Contains(string(f.Data), `"srv"`) && pushAt < 0 {
			pushAt = i
		}
		if f.Type == protocol.TypeReply && pushAt < 0 {
			t.Errorf("the reply came before mcp/config with the new server")
			break
		}
	}

	before, _ := os.ReadFile(claudeJSON)
	for _, tc := range []struct {
		typ  string
		data map[string]any
		code protocol.Code
		want string
	}{
		{protocol.TypeMCPAdd, map[string]any{"name": "srv", "scope": "user", "definition": map[string]any{"command": "node"}}, protocol.CodeMCPServerExists, "MCP server srv already exists in user config"},
		{protocol.TypeMCPAdd, map[string]any{"name": "web", "definition": map[string]any{"url": "https://x.example"}}, protocol.CodeBadRequest, `definition:1:1: server "web": has "url" but no "type"`},
		{protocol.TypeMCPAdd, map[string]any{"name": "web", "definition": map[string]any{"type": "http", "url": 5}}, protocol.CodeBadRequest, `"url" must be a string, not a number`},
		{protocol.TypeMCPAdd, map[string]any{"name": "web", "definition": map[string]any{"type": "grpc", "url": "x"}}, protocol.CodeBadRequest, `unknown "type" "grpc"`},
		{protocol.TypeMCPAdd, map[string]any{"name": "rel", "definition": map[string]any{"command": "./srv.js"}}, protocol.CodeBadRequest, "is a relative path"},
		{protocol.TypeMCPAdd, map[string]any{"name": "a b", "definition": map[string]any{"command": "node"}}, protocol.CodeBadRequest, "Invalid name a b."},
		{protocol.TypeMCPAdd, map[string]any{"name": "x", "scope": "global", "definition": map[string]any{"command": "node"}}, protocol.CodeBadRequest, "data.scope"},
		{protocol.TypeMCPAdd, map[string]any{"name": "x", "definition": []any{1}}, protocol.CodeBadRequest, "data.definition"},
		{protocol.TypeMCPUpdate, map[string]any{"name": "srv", "scope": "local", "definition": map[string]any{"command": "node"}}, protocol.CodeMCPServerNotFound, `No MCP server named "srv" in local scope`},
		{protocol.TypeMCPRemove, map[string]any{"name": "nope"}, protocol.CodeMCPServerNotFound, `No MCP server named "nope"`},
	} {
		perr := c.doErr(tc.typ, tc.data)
		if perr.Code != tc.code || !strings.Contains(perr.Message, tc.want) {
			t.Errorf("%s %v: %s %q, want %s containing %q", tc.typ, tc.data, perr.Code, perr.Message, tc.code, tc.want)
		}
		if after, _ := os.ReadFile(claudeJSON); string(after) != string(before) {
			t.Errorf("%s %v changed ~/.claude.json", tc.typ, tc.data)
		}
		if _, err := os.Stat(filepath.Join(e.Project, ".mcp.json")); err == nil {
			t.Errorf("%s %v created .mcp.json", tc.typ, tc.data)
		}
	}

	// mcp/update replaces it.
	mustUnmarshal(t, c.do(protocol.TypeMCPUpdate, map[string]any{
		"name": "srv", "scope": "user", "definition": map[string]any{"command": testmcp, "args": []string{"--flag"}},
	}), &res)
	if s := viewServer(res.Config, "srv"); s == nil || !strings.Contains(string(s.Config), "--flag") {
		t.Errorf("after update: %+v", s)
	}

	// mcp/toggle with persist records the choice in ~/.claude.json and
	// applies it through the configuration.
	var lr protocol.MCPLiveResult
	mustUnmarshal(t, c.do(protocol.TypeMCPToggle, map[string]any{"name": "srv", "enabled": false, "persist": true}), &lr)
	if lr.Name != "srv" || len(lr.Sessions) != 0 {
		t.Errorf("persist reply %+v", lr)
	}
	if v := viewServer(src.Current().View, "srv"); v == nil || v.Active {
		t.Errorf("srv after a persisted disable: %+v", v)
	}
	data, _ = os.ReadFile(claudeJSON)
	if !strings.Contains(string(data), `"disabledMcpServers": [`) || !strings.Contains(string(data), `"srv"`) {
		t.Errorf("not recorded: %s", data)
	}
	mustUnmarshal(t, c.do(protocol.TypeMCPToggle, map[string]any{"name": "srv", "enabled": true, "persist": true}), &lr)
	if v := viewServer(src.Current().View, "srv"); v == nil || !v.Active {
		t.Errorf("srv after a persisted enable: %+v", v)
	}

	// mcp/test: an unsaved definition is probed; status is untouched.
	var pr protocol.MCPProbeResult
	mustUnmarshal(t, c.do(protocol.TypeMCPTest, map[string]any{"name": "trial", "definition": map[string]any{"command": testmcp}}), &pr)
	if len(pr.Results) != 1 || !pr.Results[0].OK || pr.Results[0].Name != "trial" || pr.Results[0].ToolCount == 0 {
		t.Errorf("mcp/test of a working server: %+v", pr.Results)
	}
	mustUnmarshal(t, c.do(protocol.TypeMCPTest, map[string]any{"definition": map[string]any{"command": "/nonexistent/ccproxy-mcp-server"}}), &pr)
	if len(pr.Results) != 1 || pr.Results[0].OK || pr.Results[0].Error == nil || pr.Results[0].Error.Code != protocol.ProbeCommandNotFound || pr.Results[0].Name != "test" {
		t.Errorf("mcp/test of a missing command: %+v", pr.Results)
	}
	if perr := c.doErr(protocol.TypeMCPTest, map[string]any{"definition": map[string]any{"type": "sse"}}); perr.Code != protocol.CodeBadRequest || !strings.Contains(perr.Message, `"url" is missing`) {
		t.Errorf("mcp/test of an invalid definition: %v", perr)
	}
	if cfg := src.Current(); viewServer(cfg.View, "trial") != nil || viewServer(cfg.View, "test") != nil {
		t.Errorf("mcp/test added to the configuration: %+v", cfg.View.Servers)
	}

	// mcp/remove without scope: the one scope that has it.
	mustUnmarshal(t, c.do(protocol.TypeMCPRemove, map[string]any{"name": "srv"}), &res)
	if res.Scope != "user" || viewServer(res.Config, "srv") != nil {
		t.Errorf("after remove: %+v", res)
	}
}

// TestMCPTrustAndKeepUnchanged: a project server approved in the project's
// settings.local.json of an untrusted workspace is shown needsTrust with
// its reason; mcp/trust records the trust in ~/.claude.json, pushes the
// configuration first and names the server it enabled. mcp/update with the
// redacted definition sent back keeps the stored secret; a changed value
// replaces it.
func TestMCPTrustAndKeepUnchanged(t *testing.T) {
	testmcp := mcptest.Command(t)
	e := newMCPEnv(t)
	e.WriteMCPJSON(t, map[string]any{"p": map[string]any{"command": testmcp}})
	if err := os.MkdirAll(filepath.Join(e.Project, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.Project, ".claude", "settings.local.json"), []byte(`{"enabledMcpjsonServers":["p"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := mcphub.NewConfigSource(e.Opts, e.FilesDir, nil)
	if err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, Options{Project: e.Project, MCPOptions: MCPOptions{MCP: src}})
	t.Cleanup(func() { src.Close() })
	c := ts.dial(t)
	helloCaps(t, c)
	c.do(protocol.TypeMCPSubscribe, map[string]any{})
	if v := viewServer(src.Current().View, "p"); v == nil || v.Active || !v.NeedsTrust || !strings.Contains(v.Reason, "trusted workspace") || src.Current().View.Trusted {
		t.Fatalf("p before trust: %+v", v)
	}

	from := c.count()
	var tr protocol.MCPTrustResult
	mustUnmarshal(t, c.do(protocol.TypeMCPTrust, map[string]any{}), &tr)
	claudeJSON := filepath.Join(e.Home, ".claude.json")
	if tr.File != claudeJSON || !slices.Equal(tr.Enabled, []string{"p"}) || !tr.Config.Trusted {
		t.Errorf("mcp/trust reply: %+v", tr)
	}
	if v := viewServer(tr.Config, "p"); v == nil || !v.Active || v.NeedsTrust {
		t.Errorf("p after trust: %+v", v)
	}
	data, _ := os.ReadFile(claudeJSON)
	if !strings.Contains(string(data), `"hasTrustDialogAccepted": true`) {
		t.Errorf("trust not recorded: %s", data)
	}
	pushed := false
	for _, f := range c.snapshot()[from:] {
		if f.Type == protocol.TypeMCPConfig && strings.Contains(string(f.Data), `"trusted":true`) {
			pushed = true
		}
		if f.Type == protocol.TypeReply && !pushed {
			t.Errorf("the reply came before mcp/config with the trust")
			break
		}
	}

	// Keep unchanged.
	var res protocol.MCPManageResult
	mustUnmarshal(t, c.do(protocol.TypeMCPAdd, map[string]any{
		"name": "srv", "scope": "user",
		"definition": map[string]any{"command": testmcp, "env": map[string]any{"API_TOKEN": "s3cret-value-1", "MODE": "a"}},
	}), &res)
	shown := viewServer(res.Config, "srv").Config
	var def map[string]any
	mustUnmarshal(t, shown, &def)
	def["env"].(map[string]any)["MODE"] = "b"
	mustUnmarshal(t, c.do(protocol.TypeMCPUpdate, map[string]any{"name": "srv", "scope": "user", "definition": def}), &res)
	var file struct {
		MCPServers map[string]struct {
			Env map[string]string `json:"env"`
		} `json:"mcpServers"`
	}
	data, _ = os.ReadFile(claudeJSON)
	mustUnmarshal(t, data, &file)
	if env := file.MCPServers["srv"].Env; env["API_TOKEN"] != "s3cret-value-1" || env["MODE"] != "b" {
		t.Errorf("after an update with the masked token: env %v", env)
	}
	def["env"].(map[string]any)["API_TOKEN"] = "s3cret-value-2"
	c.do(protocol.TypeMCPUpdate, map[string]any{"name": "srv", "scope": "user", "definition": def})
	data, _ = os.ReadFile(claudeJSON)
	mustUnmarshal(t, data, &file)
	if env := file.MCPServers["srv"].Env; env["API_TOKEN"] != "s3cret-value-2" {
		t.Errorf("a changed token was not written: env %v", env)
	}
	// mcp/test of a configured name probes with the values the masked
	// placeholders stand for: this server starts only with its secret.
	gate := map[string]any{"command": "/bin/sh", "args": []string{"-c", `test "$GATE_SECRET" = gate-secret-value-7 && exec "$0" || { echo "wrong secret" >&2; exit 1; }`, testmcp},
		"env": map[string]any{"GATE_SECRET": "gate-secret-value-7"}}
	mustUnmarshal(t, c.do(protocol.TypeMCPAdd, map[string]any{"name": "gate", "scope": "user", "definition": gate}), &res)
	var gateShown map[string]any
	mustUnmarshal(t, viewServer(res.Config, "gate").Config, &gateShown)
	if gateShown["env"].(map[string]any)["GATE_SECRET"] != "***" {
		t.Fatalf("gate shown %v", gateShown)
	}
	var pr protocol.MCPProbeResult
	mustUnmarshal(t, c.do(protocol.TypeMCPTest, map[string]any{"name": "gate", "definition": gateShown}), &pr)
	if len(pr.Results) != 1 || !pr.Results[0].OK {
		t.Errorf("mcp/test of the shown definition of gate: %+v", pr.Results)
	}

	def["env"].(map[string]any)["OTHER"] = "***"
	if perr := c.doErr(protocol.TypeMCPUpdate, map[string]any{"name": "srv", "scope": "user", "definition": def}); perr.Code != protocol.CodeBadRequest || !strings.Contains(perr.Message, "env.OTHER holds the masked placeholder") {
		t.Errorf("a placeholder with nothing behind it: %v", perr)
	}
}

// A configuration file mcp/add must change but cannot (not the shape the
// CLI writes) is bad_request naming the file,
// line and column (mcpconfig's *FileError), not internal; the file is left
// alone.
func TestMCPManageBadFile(t *testing.T) {
	e := newMCPEnv(t)
	src, err := mcphub.NewConfigSource(e.Opts, e.FilesDir, nil)
	if err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, Options{Project: e.Project, MCPOptions: MCPOptions{MCP: src}})
	t.Cleanup(func() { src.Close() })
	c := ts.dial(t)
	claudeJSON := filepath.Join(e.Home, ".claude.json")
	text := "{\n  \"mcpServers\": [],\n  \"projects\": 1\n}\n"
	if err := os.WriteFile(claudeJSON, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		typ  string
		data map[string]any
		want string
	}{
		{protocol.TypeMCPAdd, map[string]any{"name": "x", "scope": "user", "definition": map[string]any{"command": "node"}}, claudeJSON + ":2:17: mcpServers must be an object, not an array"},
		{protocol.TypeMCPAdd, map[string]any{"name": "x", "scope": "local", "definition": map[string]any{"command": "node"}}, claudeJSON + ":3:15: projects must be an object, not a number"},
	} {
		perr := c.doErr(tc.typ, tc.data)
		if perr.Code != protocol.CodeBadRequest || !strings.Contains(perr.Message, tc.want) {
			t.Errorf("%s %v: %s %q, want bad_request containing %q", tc.typ, tc.data, perr.Code, perr.Message, tc.want)
		}
		if after, _ := os.ReadFile(claudeJSON); string(after) != text {
			t.Errorf("%s %v changed ~/.claude.json:\n%s", tc.typ, tc.data, after)
		}
	}
}
