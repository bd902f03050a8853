package mcphub

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ccproxy/ccproxy/mcpconfig"
)

const waitTimeout = 60 * time.Second

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

func waitChange(t testing.TB, src Source, pred func(*Config) bool) *Config {
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

// resolvedSource is the configuration files of an mcpEnv resolved at once
// (no Watcher, no Spawn): user servers (~/.claude.json) are active unless
// disabled; project servers (.mcp.json, an untrusted workspace) await
// approval.
type resolvedSource struct {
	t   testing.TB
	env *mcpEnv
	cur *Config
}

func newResolvedSource(t testing.TB, user, project map[string]any, disabled ...string) *resolvedSource {
	t.Helper()
	s := &resolvedSource{t: t, env: newMCPEnv(t)}
	s.set(user, project, disabled...)
	return s
}

// set rewrites the configuration files and resolves them.
func (s *resolvedSource) set(user, project map[string]any, disabled ...string) {
	s.t.Helper()
	proj, err := filepath.EvalSymlinks(s.env.project)
	if err != nil {
		s.t.Fatal(err)
	}
	home := map[string]any{"mcpServers": user}
	if len(disabled) > 0 {
		home["projects"] = map[string]any{proj: map[string]any{"disabledMcpServers": disabled}}
	}
	b, _ := json.Marshal(home)
	if err := os.WriteFile(filepath.Join(s.env.home, ".claude.json"), b, 0o600); err != nil {
		s.t.Fatal(err)
	}
	if project != nil {
		s.env.writeMCPJSON(s.t, project)
	}
	cfg, err := mcpconfig.Resolve(s.env.opts)
	if err != nil {
		s.t.Fatal(err)
	}
	s.cur = Convert(cfg)
}

func (s *resolvedSource) Current() *Config { return s.cur }
