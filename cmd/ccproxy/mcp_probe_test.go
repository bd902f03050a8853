package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccproxy/ccproxy/internal/testkit/mcptest"
	"github.com/ccproxy/ccproxy/mcpconfig/probe"
	"github.com/ccproxy/ccproxy/protocol"
)

// probeSetup writes a configuration with the test MCP server over stdio
// (testmcp) and HTTP (web), a missing command (missing) and an unapproved
// project server (pending), and returns the flags that select it.
func probeSetup(t *testing.T) []string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	proj := filepath.Join(root, "project")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := mcptest.Command(t) // before HOME moves: go build needs its cache
	t.Setenv("HOME", filepath.Join(root, "home"))
	t.Setenv("MCP_TIMEOUT", "")
	servers := map[string]any{"mcpServers": map[string]any{
		"testmcp": map[string]any{"command": bin, "args": []string{}},
		"web":     map[string]any{"type": "http", "url": mcptest.ServeHTTP(t).URL},
		"missing": map[string]any{"command": filepath.Join(root, "no-such-server")},
	}}
	write := func(p string, v any) {
		b, _ := json.Marshal(v)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(root, "extra.json"), servers)
	write(filepath.Join(proj, ".mcp.json"), map[string]any{"mcpServers": map[string]any{
		"pending": map[string]any{"command": "sh", "args": []string{"-c", "touch " + filepath.Join(root, "STARTED")}}}})
	t.Cleanup(func() {
		if _, err := os.Stat(filepath.Join(root, "STARTED")); err == nil {
			t.Error("the unapproved server was started")
		}
	})
	return []string{"--project", proj, "--mcp-config", filepath.Join(root, "extra.json"), "--managed-config", filepath.Join(root, "none")}
}

func runWithStdin(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(context.Background(), append([]string{"mcp"}, args...), strings.NewReader(stdin), &out, &errb)
	code = exitCode(err, &errb)
	return out.String(), errb.String(), code
}

func TestMCPProbeCommand(t *testing.T) {
	flags := probeSetup(t)
	// A probed server failed (missing) and one was not started (pending):
	// exit 1 after the table, naming both.
	out, errOut, code := runMCPCmd(t, append([]string{"probe"}, flags...)...)
	if code != 1 || !strings.HasSuffix(errOut, "ccproxy: mcp probe: 2 of 4 servers not connected: missing (failed), pending (awaiting-approval, not started)\n") {
		t.Fatalf("exit %d: %s; want exit 1 naming missing and pending, and only them", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 5 || !strings.HasPrefix(lines[0], "SERVER") || !strings.Contains(lines[0], "LATENCY") {
		t.Fatalf("table:\n%s", out)
	}
	for _, want := range []struct{ name, row []string }{
		{[]string{"missing"}, []string{"extra", "failed", " ms", "COMMAND_NOT_FOUND", "does not exist"}},
		{[]string{"pending"}, []string{"project", "awaiting-approval", "NOT_ACTIVE"}},
		{[]string{"testmcp"}, []string{"extra", "connected", " ms", " 16 ", mcptest.ServerName, "stdio"}},
		{[]string{"web"}, []string{"extra", "connected", " 16 ", "http"}},
	} {
		var row string
		for _, l := range lines {
			if strings.HasPrefix(l, want.name[0]+" ") {
				row = l
			}
		}
		for _, part := range want.row {
			if !strings.Contains(row, part) {
				t.Errorf("row of %s lacks %q: %q", want.name[0], part, row)
			}
		}
		if strings.Contains(row, probe.MessagePrefix(want.name[0])) {
			t.Errorf("row of %s repeats the name in the detail: %q", want.name[0], row)
		}
	}

	out, errOut, code = runMCPCmd(t, append([]string{"probe", "--json"}, flags...)...)
	if code != 1 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var res protocol.MCPProbeResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if err := res.Validate(); err != nil || len(res.Results) != 4 {
		t.Errorf("--json: %v, %d results", err, len(res.Results))
	}

	// One server: a failure is an exit status.
	if _, errOut, code := runMCPCmd(t, append([]string{"probe", "missing"}, flags...)...); code != 1 || !strings.Contains(errOut, "missing is failed (COMMAND_NOT_FOUND)") {
		t.Errorf("probe missing: exit %d, %s", code, errOut)
	}
	if out, _, code := runMCPCmd(t, append([]string{"probe", "testmcp"}, flags...)...); code != 0 || !strings.Contains(out, "connected") {
		t.Errorf("probe testmcp: exit %d, %s", code, out)
	}
	if _, errOut, code := runMCPCmd(t, append([]string{"probe", "nope"}, flags...)...); code != 1 || !strings.Contains(errOut, `no MCP server named "nope"`) {
		t.Errorf("probe nope: exit %d, %s", code, errOut)
	}
	// A server not started (awaiting approval) is not ok: exit 1, with its
	// result printed, asked for by name or among servers that all
	// connected otherwise.
	if out, errOut, code := runMCPCmd(t, append([]string{"probe", "pending", "--json"}, flags...)...); code != 1 || !strings.Contains(out, `"ok": false`) || !strings.Contains(errOut, "pending is awaiting-approval (NOT_ACTIVE)") {
		t.Errorf("probe pending --json: exit %d\n%s\n%s", code, out, errOut)
	}
	onlyGood := filepath.Join(t.TempDir(), "good.json")
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"web": map[string]any{"type": "http", "url": mcptest.ServeHTTP(t).URL}}})
	if err := os.WriteFile(onlyGood, b, 0o644); err != nil {
		t.Fatal(err)
	}
	good := append([]string(nil), flags...)
	good[3] = onlyGood // --mcp-config
	out, errOut, code = runMCPCmd(t, append([]string{"probe", "--json"}, good...)...)
	if code != 1 || !strings.Contains(out, `"ok": true`) || !strings.Contains(out, `"ok": false`) ||
		!strings.HasSuffix(errOut, "ccproxy: mcp probe: 1 of 2 servers not connected: pending (awaiting-approval, not started)\n") {
		t.Errorf("probe of web and pending: exit %d\n%s\n%s; want exit 1 naming pending", code, out, errOut)
	}
	// The rule of mcp tools and mcp call: a server not started is a failure.
	if _, errOut, code := runMCPCmd(t, append([]string{"call", "pending", "echo", "--args", `{"message":"x"}`}, flags...)...); code != 1 || !strings.Contains(errOut, "NOT_ACTIVE") {
		t.Errorf("call of an unapproved server: exit %d, %s", code, errOut)
	}
}

func TestMCPToolsCommand(t *testing.T) {
	flags := probeSetup(t)
	out, errOut, code := runMCPCmd(t, append([]string{"tools", "testmcp"}, flags...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"echo — Echoes the message", "  message ", "required, length 1..10000", `one of "plain", "upper", "reverse"`,
		"    prefix ", "note: maxItems 5, uniqueItems", "text — ", "(no parameters)"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	out, _, code = runMCPCmd(t, append([]string{"tools", "web", "--json"}, flags...)...)
	var res protocol.MCPToolsResult
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 0 {
		t.Fatalf("exit %d, %v", code, err)
	}
	if err := res.Validate(); err != nil || res.Server != "web" || len(res.Tools) != len(mcptest.ToolNames) {
		t.Errorf("--json: %v, server %q, %d tools", err, res.Server, len(res.Tools))
	}
	if _, errOut, code := runMCPCmd(t, append([]string{"tools", "pending"}, flags...)...); code != 1 || !strings.Contains(errOut, "(NOT_ACTIVE)") {
		t.Errorf("tools of an unapproved server: exit %d, %s", code, errOut)
	}
}

func TestMCPCallCommand(t *testing.T) {
	flags := probeSetup(t)
	call := func(stdin string, args ...string) (string, string, int) {
		return runWithStdin(t, stdin, append(append([]string{"call"}, args...), flags...)...)
	}
	out, errOut, code := call("", "testmcp", "echo", "--args", `{"message":"abc","mode":"reverse"}`)
	if code != 0 || !strings.Contains(out, "cba") || !strings.Contains(errOut, "testmcp.echo took") {
		t.Errorf("echo: exit %d\n%s\n%s", code, out, errOut)
	}
	out, _, code = call(`{"message":"from stdin"}`, "web", "echo", "--args", "-", "--json")
	var res protocol.MCPCallResult
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 0 || !strings.Contains(res.Content, "from stdin") || res.Validate() != nil {
		t.Errorf("echo --json from stdin: exit %d, %v: %s", code, err, out)
	}
	out, _, code = call("", "testmcp", "image")
	if code != 0 || !strings.Contains(out, "[image image/png") || !strings.Contains(out, "[attachment] image image/png") {
		t.Errorf("image: exit %d\n%s", code, out)
	}
	out, _, _ = call("", "testmcp", "image", "--json", "--attachments", "inline")
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Attachments) != 1 || res.Attachments[0].Data == "" {
		t.Errorf("image --attachments inline: %v %+v", err, res.Attachments)
	}
	out, errOut, code = call("", "testmcp", "is_error")
	if code != 1 || !strings.Contains(out, mcptest.IsErrorText) || !strings.Contains(errOut, "reported an error") {
		t.Errorf("is_error: exit %d\n%s\n%s", code, out, errOut)
	}
	_, errOut, code = call("", "testmcp", "echo", "--args", `{"repeat":0}`)
	if code != 1 || !strings.Contains(errOut, "  message: is required (PARAMETER_REQUIRED)") ||
		!strings.Contains(errOut, "  repeat: must be at least 1, got 0 (PARAMETER_CONSTRAINT_VIOLATED)") {
		t.Errorf("invalid arguments: exit %d\n%s", code, errOut)
	}
	if want := "ccproxy: mcp call: invalid arguments for tool \"echo\" of server \"testmcp\"\n"; !strings.HasSuffix(errOut, want) {
		t.Errorf("invalid arguments: stderr ends with %q, want %q", errOut[strings.LastIndexByte(strings.TrimSuffix(errOut, "\n"), '\n')+1:], want)
	}
	_, errOut, code = call("", "testmcp", "nope")
	if code != 1 || !strings.Contains(errOut, `has no tool "nope"`) {
		t.Errorf("unknown tool: exit %d\n%s", code, errOut)
	}
	for _, bad := range [][]string{{"testmcp"}, {"testmcp", "echo", "--args", "{"}, {"testmcp", "echo", "--attachments", "sink"}} {
		if _, errOut, code := call("", bad...); code != 2 {
			t.Errorf("call %v: exit %d, want 2 (%s)", bad, code, errOut)
		}
	}
}

func TestMCPProbeHelp(t *testing.T) {
	for _, cmd := range []string{"probe", "tools", "call"} {
		out, errOut, code := runMCPCmd(t, cmd, "--help")
		if code != 0 || !strings.Contains(out, "Usage:\n  ccproxy mcp "+cmd) {
			t.Errorf("%s --help: exit %d, %s%s", cmd, code, out, errOut)
		}
	}
	out, _, _ := runCmd(t, "", "mcp", "--help")
	for _, cmd := range []string{"probe", "tools", "call"} {
		if !strings.Contains(out, "\n  "+cmd+" ") {
			t.Errorf("usage lacks %s", cmd)
		}
	}
}
