// Package mcphubtest holds what the tests of proxy/mcphub and proxy share
// to set up MCP configurations: a home and a project directory for package
// mcpconfig, their files written and resolved, and a wait for a source's
// change. Only tests import it; it does not import mcphub (mcphub's own
// tests use it).
package mcphubtest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ccproxy/ccproxy/mcpconfig"
)

// Env is a home, a project and a files directory (for --mcp-config files)
// for package mcpconfig, under a test's temporary directory.
type Env struct {
	Home, Project, FilesDir string
	Opts                    mcpconfig.Options
}

// NewEnv makes the directories; Opts resolves them (no managed settings,
// a short debounce for Watchers).
func NewEnv(t testing.TB) *Env {
	t.Helper()
	root := t.TempDir()
	e := &Env{Home: filepath.Join(root, "home"), Project: filepath.Join(root, "project"), FilesDir: filepath.Join(root, "files")}
	for _, d := range []string{filepath.Join(e.Home, ".claude"), e.Project, e.FilesDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	e.Opts = mcpconfig.Options{HomeDir: e.Home, ProjectDir: e.Project, ManagedPath: filepath.Join(root, "no-managed.json"), Debounce: 20 * time.Millisecond}
	return e
}

// WriteMCPJSON replaces the project's .mcp.json (atomically: a Watcher
// never reads half a file).
func (e *Env) WriteMCPJSON(t testing.TB, servers map[string]any) {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"mcpServers": servers})
	tmp := filepath.Join(e.Project, ".mcp.json.tmp")
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(e.Project, ".mcp.json")); err != nil {
		t.Fatal(err)
	}
}

// Resolve writes ~/.claude.json with the user servers (those named in
// disabled disabled in the project) and, when project is not nil, the
// project's .mcp.json (an untrusted workspace: its servers await
// approval), and resolves the configuration.
func (e *Env) Resolve(t testing.TB, user, project map[string]any, disabled ...string) *mcpconfig.Config {
	t.Helper()
	proj, err := filepath.EvalSymlinks(e.Project)
	if err != nil {
		t.Fatal(err)
	}
	home := map[string]any{"mcpServers": user}
	if len(disabled) > 0 {
		home["projects"] = map[string]any{proj: map[string]any{"disabledMcpServers": disabled}}
	}
	b, _ := json.Marshal(home)
	if err := os.WriteFile(filepath.Join(e.Home, ".claude.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	if project != nil {
		e.WriteMCPJSON(t, project)
	}
	cfg, err := mcpconfig.Resolve(e.Opts)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// Source is what WaitChange needs of an mcphub.Source.
type Source[C any] interface {
	Current() C
	Changes() <-chan struct{}
}

// WaitChange waits until pred holds for src's configuration, or fails the
// test after timeout.
func WaitChange[C any](t testing.TB, src Source[C], pred func(C) bool, timeout time.Duration) C {
	t.Helper()
	deadline := time.After(timeout)
	for {
		if cfg := src.Current(); pred(cfg) {
			return cfg
		}
		select {
		case <-src.Changes():
		case <-deadline:
			t.Fatalf("configuration did not change as expected in %v", timeout)
		}
	}
}
