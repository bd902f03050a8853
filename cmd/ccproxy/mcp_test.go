package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ccproxy/ccproxy/internal/testkit"
	"github.com/ccproxy/ccproxy/mcpconfig"
	"github.com/ccproxy/ccproxy/proxy/claudecli"
)

func runMCPCmd(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(context.Background(), append([]string{"mcp"}, args...), strings.NewReader(""), &out, &errb)
	code = exitCode(err, &errb)
	return out.String(), errb.String(), code
}

// setup copies testdata/mcpconfig/setups/NAME into a temporary root
// (replacing @ROOT@), points HOME at root/home and returns root.
func setup(t *testing.T, name string) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join("..", "..", "testdata", "mcpconfig", "setups", name)
	err = filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if info.IsDir() {
			return os.MkdirAll(filepath.Join(root, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(root, rel), bytes.ReplaceAll(data, []byte("@ROOT@"), []byte(root)), 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"home", "work/project"} { // git keeps no empty folder
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("HOME", filepath.Join(root, "home"))
	return root
}

func configArgs(root string, extra ...string) []string {
	args := []string{"config", "--project", filepath.Join(root, "work", "project"), "--managed-config", filepath.Join(root, "etc", "managed-mcp.json")}
	files, _ := filepath.Glob(filepath.Join(root, "extra", "*.json"))
	slices.Sort(files)
	for _, f := range files {
		args = append(args, "--mcp-config", f)
	}
	return append(args, extra...)
}

func TestMCPConfigJSON(t *testing.T) {
	root := setup(t, "collisions")
	out, errOut, code := runMCPCmd(t, configArgs(root, "--json")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var v struct {
		Servers []struct {
			Name       string            `json:"name"`
			Scope      string            `json:"scope"`
			Source     string            `json:"source"`
			Type       string            `json:"type"`
			Active     *bool             `json:"active"`
			Approval   string            `json:"approval"`
			Shadows    []json.RawMessage `json:"shadows"`
			MissingEnv []string          `json:"missingEnv"`
			Config     map[string]any    `json:"config"`
		} `json:"servers"`
		Errors       []json.RawMessage `json:"errors"`
		AllowedTools []string          `json:"allowedTools"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("not one JSON object: %v\n%s", err, out)
	}
	if len(v.Servers) != 13 || v.Errors == nil || len(v.Errors) != 0 {
		t.Fatalf("%d servers, errors %v:\n%s", len(v.Servers), v.Errors, out)
	}
	for _, s := range v.Servers {
		if s.Name == "" || s.Scope == "" || s.Source == "" || s.Type == "" || s.Active == nil || s.Approval == "" || s.Shadows == nil || s.MissingEnv == nil || s.Config == nil {
			t.Errorf("incomplete server entry %+v", s)
		}
		if s.Name == "dup_all" && (s.Scope != "extra" || s.Source != filepath.Join(root, "extra", "a.json") || len(s.Shadows) != 3) {
			t.Errorf("dup_all = %+v", s)
		}
		if s.Name == "p1" && (*s.Active || s.Approval != "awaiting") {
			t.Errorf("p1 = %+v", s)
		}
	}
	// MCP tools ask by default: approving a server does not allow its tools.
	if len(v.AllowedTools) != 0 {
		t.Errorf("allowedTools %v", v.AllowedTools)
	}
	out, _, _ = runMCPCmd(t, configArgs(root, "--json", "--allow-mcp-tools")...)
	if !strings.Contains(out, `"mcp__dup_all"`) || strings.Contains(out, `"mcp__p1"`) {
		t.Errorf("--allow-mcp-tools: allowedTools:\n%s", out)
	}

	// --trust-project-mcp activates p1.
	out, _, _ = runMCPCmd(t, configArgs(root, "--json", "--allow-mcp-tools", "--trust-project-mcp")...)
	if !strings.Contains(out, `"mcp__p1"`) {
		t.Errorf("--trust-project-mcp: p1 not allowed:\n%s", out)
	}
}

func TestMCPConfigNoSecrets(t *testing.T) {
	root := setup(t, "redaction")
	t.Setenv("GH_TOKEN", "ghp_live_value_never_shown")
	for _, mode := range [][]string{{"--json"}, nil} {
		out, errOut, code := runMCPCmd(t, configArgs(root, mode...)...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		for _, secret := range []string{"hunter2", "sk-live-123", "pw-abc", "tok-xyz", "pa55", "abc123", "literal-secret-token", "client-secret-value", "ghp_live", "default-secret", "frag-secret"} {
			if strings.Contains(out+errOut, secret) {
				t.Errorf("%v output shows %q:\n%s", mode, secret, out)
			}
		}
		if !strings.Contains(out, "${GH_TOKEN}") {
			t.Errorf("%v output should name ${GH_TOKEN}:\n%s", mode, out)
		}
	}
}

func TestMCPConfigText(t *testing.T) {
	root := setup(t, "invalid")
	// Entries with errors are skipped and listed; the command fails
	// unless --allow-errors.
	failed, errOut, code := runMCPCmd(t, configArgs(root, "--allow-mcp-tools")...)
	if code != 1 || !strings.Contains(errOut, "configuration error(s), listed above") {
		t.Errorf("without --allow-errors: exit %d, stderr %q; want exit 1 and the count of errors", code, errOut)
	}
	out, errOut, code := runMCPCmd(t, configArgs(root, "--allow-mcp-tools", "--allow-errors")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if failed != out {
		t.Errorf("the output differs without --allow-errors:\n%s\nwith:\n%s", failed, out)
	}
	proj := filepath.Join(root, "work", "project", ".mcp.json")
	for _, want := range []string{
		"SERVER", "ok_stdio", "awaiting approval",
		proj + `:3:13: server "no_url": "url" is missing`,
		filepath.Join(root, "work", ".mcp.json") + ":4:3: not JSON at line 4, column 3",
		"--allowedTools: mcp__ok_stdio mcp__u_ok\n", // ok_stdio: approved in ~/.claude/settings.json
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// The permission rules of the settings files make the tool flags.
func TestMCPConfigTextRules(t *testing.T) {
	root := setup(t, "trusted")
	os.MkdirAll(filepath.Join(root, "home", ".claude"), 0o755)
	os.WriteFile(filepath.Join(root, "home", ".claude", "settings.json"), []byte(`{"permissions": {"allow": ["mcp__by_proj__get"], "deny": ["mcp__by_proj__rm"]}}`), 0o644)
	out, errOut, code := runMCPCmd(t, configArgs(root)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "--allowedTools: mcp__by_proj__get Bash(ls:*)\n--disallowedTools: mcp__by_proj__rm\n") {
		t.Errorf("output:\n%s", out)
	}
}

func TestMCPConfigTextShadows(t *testing.T) {
	root := setup(t, "collisions")
	out, errOut, code := runMCPCmd(t, configArgs(root)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"dup_up:\n  - config: {\"command\":\"true\",\"args\":[\"user\"]}\n  - the project definition in " + filepath.Join(root, "work", "project", ".mcp.json") + " would win, but it is awaiting",
		"  - shadows the local definition in " + filepath.Join(root, "home", ".claude.json"),
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestMCPUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"nope"},
		{"config", "--bogus"},
		{"config", "stray"},
		{"list", "--from-cli=false"},
		{"list", "--timeout", "soon"},
		{"approve"},
		{"reject", "a", "b"},
	} {
		_, errOut, code := runMCPCmd(t, args...)
		if code != 2 || !strings.Contains(errOut, "ccproxy: mcp") {
			t.Errorf("mcp %q: exit %d, stderr %q", args, code, errOut)
		}
	}
}

// fakeClaude writes a script that prints a captured `claude mcp list` output.
func fakeClaude(t *testing.T, sample string, exit int) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "mcpconfig", "cli", sample))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "out.txt"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\n[ \"$1\" = --version ] && { echo '" + claudecli.MinClaudeVersion + " (Claude Code)'; exit 0; }\n" +
		"[ \"$1 $2\" = 'mcp list' ] || { echo \"unexpected args: $*\" >&2; exit 9; }\n"
	if exit != 0 {
		script += "echo 'Error: something broke' >&2\nexit " + string(rune('0'+exit)) + "\n"
	} else {
		script += "cat '" + filepath.Join(dir, "out.txt") + "'\n"
	}
	p := filepath.Join(dir, "claude")
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestMCPListFromCLI(t *testing.T) {
	claude := fakeClaude(t, "cli_mcp_list_sample.txt", 0)
	// Its only mode needs no flag; --from-cli, once required, still works.
	for _, args := range [][]string{{"list", "--claude", claude}, {"list", "--from-cli", "--claude", claude}} {
		out, errOut, code := runMCPCmd(t, args...)
		if code != 0 {
			t.Fatalf("%q: exit %d: %s", args, code, errOut)
		}
		for _, want := range []string{"SERVER", "memory-proj", "pending-approval", "remote-sse", "sse", "ECONNREFUSED"} {
			if !strings.Contains(out, want) {
				t.Errorf("%q: output lacks %q:\n%s", args, want, out)
			}
		}
	}
	// A relative --claude is relative to the working directory, not --project.
	wd, _ := os.Getwd()
	rel, err := filepath.Rel(wd, claude)
	if err != nil {
		t.Fatal(err)
	}
	out, _, code := runMCPCmd(t, "list", "--json", "--claude", rel, "--project", t.TempDir())
	var res struct {
		Servers []struct{ Name, Status string } `json:"servers"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 0 || len(res.Servers) != 6 || res.Servers[2].Status != "pending-approval" {
		t.Errorf("--json: exit %d, %v, %+v", code, err, res)
	}

	claude = fakeClaude(t, "list_diagnostics.txt", 0)
	out, _, _ = runMCPCmd(t, "list", "--from-cli", "--claude", claude)
	if !strings.Contains(out, "Warning [envy]: mcpServers.envy: Missing environment variables") {
		t.Errorf("diagnostics missing:\n%s", out)
	}

	_, errOut, code := runMCPCmd(t, "list", "--claude", fakeClaude(t, "list_empty.txt", 3))
	if code != 1 || !strings.Contains(errOut, "something broke") || !strings.Contains(errOut, "exit status 3") {
		t.Errorf("failing claude: exit %d, %q", code, errOut)
	}
	_, errOut, code = runMCPCmd(t, "list", "--from-cli", "--claude", filepath.Join(t.TempDir(), "missing"))
	if code != 1 || !strings.Contains(errOut, "no such file") {
		t.Errorf("missing claude: exit %d, %q", code, errOut)
	}
}

// TestMCPListFindsClaudeLikeServe: without --claude, `mcp list` runs the
// claude named by $CCPROXY_CLAUDE, as `ccproxy serve` does.
func TestMCPListFindsClaudeLikeServe(t *testing.T) {
	t.Setenv(claudecli.ClaudeEnv, fakeClaude(t, "cli_mcp_list_sample.txt", 0))
	out, errOut, code := runMCPCmd(t, "list", "--from-cli")
	if code != 0 || !strings.Contains(out, "memory-proj") {
		t.Fatalf("exit %d: %s%s", code, out, errOut)
	}
	t.Setenv(claudecli.ClaudeEnv, "")
	t.Setenv("PATH", t.TempDir()) // no claude there either
	_, errOut, code = runMCPCmd(t, "list", "--from-cli")
	if code != 1 || !strings.Contains(errOut, "not on PATH") {
		t.Errorf("no claude anywhere: exit %d, %q", code, errOut)
	}
}

// TestMCPListEndlessOutput: output beyond mcpconfig.MaxCLIOutput is
// reported as such, and claude is stopped there, not left to run until the
// timeout.
func TestMCPListEndlessOutput(t *testing.T) {
	dir := t.TempDir()
	claude := filepath.Join(dir, "claude")
	script := "#!/bin/sh\n[ \"$1\" = --version ] && { echo '" + claudecli.MinClaudeVersion + " (Claude Code)'; exit 0; }\nexec yes 'srv: cmd - ✔ Connected'\n"
	if err := os.WriteFile(claude, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := runMCPCmd(t, "list", "--from-cli", "--claude", claude, "--timeout", "30s")
	if code != 1 || !strings.Contains(errOut, fmt.Sprintf("printed more than %d MiB", mcpconfig.MaxCLIOutput>>20)) {
		t.Errorf("exit %d, %q", code, errOut)
	}
}

// TestMCPListFromRealCLI runs the real `claude mcp list` on a fixture and
// checks ccproxy reads every status it prints.
func TestMCPListFromRealCLI(t *testing.T) {
	claude := testkit.Claude(t)
	root := setup(t, "disabled")
	t.Setenv("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
	t.Setenv("MCP_TIMEOUT", "5000")
	out, errOut, code := runMCPCmd(t, "list", "--from-cli", "--json", "--claude", claude, "--project", filepath.Join(root, "work", "project"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var res struct {
		Servers  []struct{ Name, Status string } `json:"servers"`
		Unparsed []any                           `json:"unparsed"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range res.Servers {
		got[s.Name] = s.Status
	}
	// Untrusted workspace: only ~/.claude/settings.json approves; `true`
	// exits at once, so started servers fail; rejected ones are hidden.
	want := map[string]string{
		"udis": "disabled", "u_ok": "failed", "ldis": "disabled",
		"plain": "pending-approval", "p_disabled": "pending-approval", "by_user_settings": "failed",
		"by_proj_settings": "pending-approval", "by_local": "pending-approval",
	}
	if len(got) != len(want) || len(res.Unparsed) != 0 {
		t.Errorf("servers %v (unparsed %v), want %v", got, res.Unparsed, want)
	}
	for n, st := range want {
		if got[n] != st {
			t.Errorf("%s: %q, want %q", n, got[n], st)
		}
	}
}

func TestMCPApproveCommand(t *testing.T) {
	root := setup(t, "trusted")
	proj := filepath.Join(root, "work", "project")
	out, errOut, code := runMCPCmd(t, "approve", "pending", "--project", proj)
	if code != 0 || !strings.Contains(out, "pending: active") {
		t.Fatalf("approve: exit %d, %q %q", code, out, errOut)
	}
	out, _, code = runMCPCmd(t, "reject", "--project", proj, "by_proj")
	if code != 0 || !strings.Contains(out, "by_proj: rejected") {
		t.Errorf("reject: exit %d, %q", code, out)
	}
	_, errOut, code = runMCPCmd(t, "approve", "nope", "--project", proj)
	if code != 1 || !strings.Contains(errOut, `"nope"`) {
		t.Errorf("unknown: exit %d, %q", code, errOut)
	}
}

// Twenty `ccproxy mcp approve` processes at once, each for its own server:
// every approval is kept (the settings file is locked across processes).
func TestMCPApproveConcurrentProcesses(t *testing.T) {
	bin, err := testkit.BuildCommand("github.com/ccproxy/ccproxy/cmd/ccproxy")
	if err != nil {
		t.Fatal(err)
	}
	root := setup(t, "trusted")
	proj := filepath.Join(root, "work", "project")
	const n = 20
	servers := map[string]any{}
	for i := range n {
		servers[fmt.Sprintf("s%02d", i)] = map[string]any{"command": "true"}
	}
	data, _ := json.Marshal(map[string]any{"mcpServers": servers})
	if err := os.WriteFile(filepath.Join(proj, ".mcp.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, n)
	for i := range n {
		go func() {
			cmd := exec.Command(bin, "mcp", "approve", fmt.Sprintf("s%02d", i), "--project", proj)
			cmd.Env = append(os.Environ(), "HOME="+filepath.Join(root, "home"))
			out, err := cmd.CombinedOutput()
			if err != nil {
				err = fmt.Errorf("approve s%02d: %v: %s", i, err, out)
			}
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	var local struct {
		Enabled []string `json:"enabledMcpjsonServers"`
	}
	data, err = os.ReadFile(filepath.Join(proj, ".claude", "settings.local.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &local); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if name := fmt.Sprintf("s%02d", i); !slices.Contains(local.Enabled, name) {
			t.Errorf("approval of %s lost", name)
		}
	}
	if !slices.Contains(local.Enabled, "by_local") || len(local.Enabled) != n+1 {
		t.Errorf("enabledMcpjsonServers = %v", local.Enabled)
	}
}

// With nothing allowed, the text says so rather than ending on an empty
// "--allowedTools:" line.
func TestMCPConfigTextNothingAllowed(t *testing.T) {
	root := setup(t, "collisions")
	out, errOut, code := runMCPCmd(t, configArgs(root)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if strings.Contains(out, "--allowedTools: \n") || strings.Contains(out, "--allowedTools:\n") {
		t.Errorf("an empty --allowedTools line:\n%s", out)
	}
	if !strings.Contains(out, "--allowedTools: none (every MCP tool asks unless a permission rule allows it)\n") {
		t.Errorf("output lacks the none line:\n%s", out)
	}
}
