package proxy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ccproxy/ccproxy/mcpconfig"
	"github.com/ccproxy/ccproxy/proxy/mcphub"
)

// mcpEnv is a home and a project directory for package mcpconfig.
type mcpEnv struct {
	home, project, filesDir string
	opts                    mcpconfig.Options
}

func newMCPEnv(t testing.TB) *mcpEnv {
	t.Helper()
	root := t.TempDir()
	e := &mcpEnv{home: filepath.Join(root, "home"), project: filepath.Join(root, "project"), filesDir: filepath.Join(root, "files")}
	for _, d := range []string{filepath.Join(e.home, ".claude"), e.project, e.filesDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	e.opts = mcpconfig.Options{HomeDir: e.home, ProjectDir: e.project, ManagedPath: filepath.Join(root, "no-managed.json"), Debounce: 20 * time.Millisecond}
	return e
}

func (e *mcpEnv) writeMCPJSON(t testing.TB, servers map[string]any) {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"mcpServers": servers})
	tmp := filepath.Join(e.project, ".mcp.json.tmp")
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(e.project, ".mcp.json")); err != nil {
		t.Fatal(err)
	}
}

func waitChange(t testing.TB, src mcphub.Source, pred func(*mcphub.Config) bool) *mcphub.Config {
	t.Helper()
	deadline := time.After(waitTimeout)
	for {
		if cfg := src.Current(); pred(cfg) {
			return cfg
		}
		select {
		case <-src.Changes():
		case <-deadline:
			t.Fatalf("configuration did not change as expected in %v", waitTimeout)
		}
	}
}
