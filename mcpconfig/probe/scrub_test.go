//go:build unix

package probe

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccproxy/ccproxy/mcpconfig"
)

// The secrets leakyConfig gives testdata/mcp/leaky-server.sh: its
// LEAKY_TOKEN is the expansion of ${LEAKY_SRC}, and ANTHROPIC_API_KEY comes
// from the environment the server inherits.
const (
	leakyToken  = "leaky-token-0123456789"
	leakyAPIKey = "sk-ant-api03-leaky-4242"
)

// leakyConfig resolves two stdio servers running leaky-server.sh: "fail"
// (fails at initialize) and "tools".
func leakyConfig(t *testing.T) *mcpconfig.Config {
	t.Helper()
	script, err := filepath.Abs("../../testdata/mcp/leaky-server.sh")
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	def := func(mode string) map[string]any {
		return map[string]any{"command": script, "args": []string{}, "env": map[string]string{"LEAKY_TOKEN": "${LEAKY_SRC}", "LEAKY_MODE": mode}}
	}
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"fail": def("fail"), "tools": def("serve")}})
	extra := filepath.Join(root, "extra.json")
	if err := os.WriteFile(extra, b, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := mcpconfig.Resolve(mcpconfig.Options{HomeDir: root, ProjectDir: root, ManagedPath: filepath.Join(root, "none"), Extra: []string{extra},
		Env: func(k string) (string, bool) {
			if k == "LEAKY_SRC" {
				return leakyToken, true
			}
			return "", false
		}})
	if err != nil || len(cfg.Errors) > 0 {
		t.Fatal(err, cfg.Errors)
	}
	return cfg
}

func checkNoLeak(t *testing.T, what string, v any) string {
	t.Helper()
	b, _ := json.Marshal(v)
	for _, s := range []string{leakyToken, leakyAPIKey, leakyToken[6:], leakyAPIKey[7:]} {
		if strings.Contains(string(b), s) {
			t.Errorf("%s leaks %q: %s", what, s, b)
		}
	}
	return string(b)
}

// TestProbeAndCallScrubServerOutput: a real stdio server whose stderr and
// error messages echo its env secret (a ${VAR} expansion) and
// ANTHROPIC_API_KEY (inherited, not configured): probe results, call
// failures, JSON-RPC error results and isError results mask them all.
func TestProbeAndCallScrubServerOutput(t *testing.T) {
	cfg := leakyConfig(t)
	p := testProber(t, func(o *ProberOptions) {
		o.Environ = func() []string { return append(os.Environ(), "ANTHROPIC_API_KEY="+leakyAPIKey) }
	})
	ctx := context.Background()

	res, err := p.Probe(ctx, cfg, "fail")
	if err != nil || res.Error == nil {
		t.Fatalf("probe fail: %+v, %v", res, err)
	}
	checkNoLeak(t, "the probe result", res)
	if !strings.Contains(res.Error.StderrTail, "token=*** apikey=***") {
		t.Errorf("stderr tail %q", res.Error.StderrTail)
	}

	out, err := p.Call(ctx, cfg, "tools", "leak", nil)
	if err != nil || !out.IsError || !strings.Contains(out.Content, "upstream refused token=*** apikey=***") {
		t.Errorf("call leak: %+v, %v", out, err)
	}
	checkNoLeak(t, "the JSON-RPC error result", out)

	out, err = p.Call(ctx, cfg, "tools", "leak_result", nil)
	if err != nil || !out.IsError || !strings.Contains(out.Content, "refused token=*** apikey=***") {
		t.Errorf("call leak_result: %+v, %v", out, err)
	}
	checkNoLeak(t, "the isError result", out)

	_, err = p.Call(ctx, cfg, "tools", "crash", nil)
	var pe *Error
	if !asError(err, &pe) || !strings.Contains(pe.StderrTail, "crashing with token=*** apikey=***") {
		t.Errorf("call crash: %v (%+v)", err, pe)
	}
	checkNoLeak(t, "the call failure", pe)
}

func asError(err error, pe **Error) bool {
	e, ok := err.(*Error)
	*pe = e
	return ok
}
