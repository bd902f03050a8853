package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccproxy/ccproxy/internal/testkit"
)

// Secrets of secretsSetup's configuration, none of which a view may show.
const (
	headerSecret = "sk-header-0123456789"   // after --header, in "Authorization: Bearer …"
	pathSecret   = "path-token-abcdef42"    // $PATH_TOKEN, used as ${PATH_TOKEN}, and a URL path segment
	envSecret    = "env-secret-9876543"     // an env value, also a URL path segment of another server
	leakyToken   = "leaky-token-0123456789" // $LEAKY_SRC, leaky-server.sh's LEAKY_TOKEN
	leakyAPIKey  = "sk-ant-api03-leaky-4242"
)

// secretsSetup writes a user-scope configuration (~/.claude.json) whose
// servers carry secrets in header arguments, URL path segments, env values
// and ${VAR}s, plus two servers running testdata/mcp/leaky-server.sh, and
// returns the project directory.
func secretsSetup(t *testing.T) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home, proj := filepath.Join(root, "home"), filepath.Join(root, "project")
	for _, d := range []string{home, proj} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	script, err := filepath.Abs(filepath.Join("..", "..", "testdata", "mcp", "leaky-server.sh"))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("PATH_TOKEN", pathSecret)
	t.Setenv("LEAKY_SRC", leakyToken)
	t.Setenv("ANTHROPIC_API_KEY", leakyAPIKey)
	t.Setenv("MCP_TIMEOUT", "")
	leaky := func(mode string) map[string]any {
		return map[string]any{"command": script, "args": []string{}, "env": map[string]string{"LEAKY_TOKEN": "${LEAKY_SRC}", "LEAKY_MODE": mode}}
	}
	servers := map[string]any{
		"remote": map[string]any{"command": "true", "args": []string{"mcp-remote", "https://h.invalid/mcp/${PATH_TOKEN}/sse",
			"--header", "Authorization: Bearer " + headerSecret, "-H", "X-Api-Key:${PATH_TOKEN}"}},
		"web": map[string]any{"type": "http", "url": "http://127.0.0.1:1/u/" + envSecret + "/mcp"},
		"db": map[string]any{"command": "true", "args": []string{"--url", "https://h.invalid/" + pathSecret},
			"env": map[string]string{"DB_PASSWORD": envSecret}},
		"leakyfail": leaky("fail"),
		"leaky":     leaky("serve"),
	}
	b, _ := json.Marshal(map[string]any{"mcpServers": servers})
	if err := os.WriteFile(filepath.Join(home, ".claude.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	return proj
}

func checkNoSecrets(t *testing.T, what, out string) {
	t.Helper()
	for _, s := range []string{headerSecret, pathSecret, envSecret, leakyToken, leakyAPIKey} {
		if strings.Contains(out, s) {
			t.Errorf("%s shows %q:\n%s", what, s, out)
		}
	}
}

// TestMCPConfigHidesHeaderAndPathSecrets: `mcp config` (JSON and text)
// masks header arguments and URL path segments that are configured secrets
// or ${VAR} values.
func TestMCPConfigHidesHeaderAndPathSecrets(t *testing.T) {
	proj := secretsSetup(t)
	for _, mode := range []string{"--json", "--project"} {
		args := []string{"config", "--project", proj, "--managed-config", filepath.Join(proj, "none")}
		if mode == "--json" {
			args = append(args, mode)
		}
		out, errOut, code := runMCPCmd(t, args...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		checkNoSecrets(t, "mcp config "+mode, out+errOut)
		for _, want := range []string{"Authorization: ***", "X-Api-Key:${PATH_TOKEN}", "/u/***/mcp", "https://h.invalid/***"} {
			if !strings.Contains(out, want) {
				t.Errorf("mcp config %s lacks %q:\n%s", mode, want, out)
			}
		}
	}
}

// TestMCPListFromRealCLIHidesSecrets: the real `claude mcp list` prints
// targets as configured (literal secrets in clear, ${VAR}s unexpanded:
// measured on 2.1.329) and joined by spaces; `ccproxy mcp list --from-cli`
// masks the header values and the secret path segments in them.
func TestMCPListFromRealCLIHidesSecrets(t *testing.T) {
	claude := testkit.Claude(t)
	proj := secretsSetup(t)
	t.Setenv("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
	t.Setenv("MCP_TIMEOUT", "5000")
	for _, mode := range []string{"--json", "--from-cli"} {
		out, errOut, code := runMCPCmd(t, "list", "--from-cli", mode, "--claude", claude, "--project", proj)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		checkNoSecrets(t, "mcp list "+mode, out+errOut)
		for _, want := range []string{"--header Authorization: *** ***", "http://127.0.0.1:1/u/***/mcp", "https://h.invalid/***"} {
			if !strings.Contains(out, want) {
				t.Errorf("mcp list %s lacks %q:\n%s", mode, want, out)
			}
		}
	}
}

// TestMCPProbeAndCallHideServerSecrets: `ccproxy mcp probe` and `mcp call`
// against a real stdio server that echoes its env secret and
// ANTHROPIC_API_KEY on stderr and in its errors show neither.
func TestMCPProbeAndCallHideServerSecrets(t *testing.T) {
	proj := secretsSetup(t)
	flags := []string{"--project", proj, "--managed-config", filepath.Join(proj, "none")}
	out, errOut, _ := runMCPCmd(t, append([]string{"probe", "leakyfail", "--json"}, flags...)...)
	checkNoSecrets(t, "mcp probe leakyfail", out+errOut)
	if !strings.Contains(out, "token=*** apikey=***") {
		t.Errorf("mcp probe leakyfail shows no scrubbed stderr:\n%s%s", out, errOut)
	}
	out, errOut, _ = runMCPCmd(t, append([]string{"probe"}, flags...)...)
	checkNoSecrets(t, "mcp probe", out+errOut)
	for _, tool := range []string{"leak", "leak_result", "crash"} {
		out, errOut, _ = runMCPCmd(t, append([]string{"call", "leaky", tool, "--args", "{}"}, flags...)...)
		checkNoSecrets(t, "mcp call leaky "+tool, out+errOut)
		if !strings.Contains(out+errOut, "token=*** apikey=***") {
			t.Errorf("mcp call leaky %s:\n%s%s", tool, out, errOut)
		}
	}
}
