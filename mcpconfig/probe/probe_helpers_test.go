package probe

import (
	"encoding/json"
	"flag"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ccproxy/ccproxy/internal/testkit"
	"github.com/ccproxy/ccproxy/mcpconfig"
	"github.com/ccproxy/ccproxy/protocol"
)

// probeConfig resolves a configuration whose servers are given as the
// mcpServers object of a --mcp-config file (scope extra), in a fresh home
// and project. Extra keys of project add a .mcp.json with those servers
// (awaiting approval unless approved).
func probeConfig(t testing.TB, servers map[string]any, project map[string]any) *mcpconfig.Config {
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
	write := func(p string, v any) {
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	extra := filepath.Join(root, "extra.json")
	write(extra, map[string]any{"mcpServers": servers})
	if project != nil {
		write(filepath.Join(proj, ".mcp.json"), map[string]any{"mcpServers": project})
	}
	cfg, err := mcpconfig.Resolve(mcpconfig.Options{HomeDir: home, ProjectDir: proj, ManagedPath: filepath.Join(root, "none"),
		Extra: []string{extra}, Env: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Errors) > 0 {
		t.Fatalf("config errors: %v", cfg.Errors)
	}
	return cfg
}

// stdio is a stdio server definition.
func stdio(command string, args ...string) map[string]any {
	if args == nil {
		args = []string{}
	}
	return map[string]any{"command": command, "args": args}
}

// testProber is a Prober with short timeouts for tests; the timeout is
// generous enough for node servers on a loaded 2-core machine.
func testProber(t testing.TB, mod func(*ProberOptions)) *Prober {
	o := ProberOptions{Timeout: 20 * time.Second, Grace: 2 * time.Second, Env: func(string) (string, bool) { return "", false }}
	if testing.Verbose() {
		o.Logger = testLogger(t)
	}
	if mod != nil {
		mod(&o)
	}
	return NewProber(o)
}

// checkProbeShape validates results against the protocol's rules for
// mcp/probe replies.
func checkProbeShape(t testing.TB, results ...Result) {
	t.Helper()
	if err := (protocol.MCPProbeResult{Results: Wire.ProbeResults(results)}).Validate(); err != nil {
		t.Errorf("probe results break the protocol: %v", err)
	}
}

// nodeBin finds an npm MCP server (a failure in CI, a skip elsewhere).
func nodeBin(t testing.TB, name string) string { return testkit.NodeBin(t, name) }

// testLogger writes log records to the test's log.
func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

var update = flag.Bool("update", false, "rewrite the golden files in testdata/mcpconfig/params")
