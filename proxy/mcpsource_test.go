package proxy

import (
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ccproxy/ccproxy/mcpconfig"
	"github.com/ccproxy/ccproxy/protocol"
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

func waitChange(t testing.TB, src MCPSource, pred func(*MCPConfig) bool) *MCPConfig {
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

func TestMCPConfigSource(t *testing.T) {
	e := newMCPEnv(t)
	// A trusted workspace: its settings.local.json (where approvals are
	// recorded) counts.
	proj, _ := filepath.EvalSymlinks(e.project)
	home, _ := json.Marshal(map[string]any{
		"mcpServers": map[string]any{"usr": map[string]any{"command": "u", "env": map[string]any{"TOKEN": "s3cret-value"}}},
		"projects":   map[string]any{proj: map[string]any{"hasTrustDialogAccepted": true}},
	})
	os.WriteFile(filepath.Join(e.home, ".claude.json"), home, 0o600)
	e.writeMCPJSON(t, map[string]any{"proj": map[string]any{"command": "p"}})
	// The user's permission rules, not the servers, make the tool flags.
	os.WriteFile(filepath.Join(e.home, ".claude", "settings.json"), []byte(`{"permissions": {"allow": ["mcp__usr__get"], "deny": ["mcp__usr__rm"]}}`), 0o600)
	src, err := NewMCPConfigSource(e.opts, e.filesDir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()

	cfg := src.Current()
	if _, ok := cfg.Servers["usr"]; !ok || len(cfg.Servers) != 1 {
		t.Errorf("active servers %v, want only usr (proj awaits approval)", cfg.Servers)
	}
	var usr, want any
	json.Unmarshal(cfg.Servers["usr"], &usr)
	json.Unmarshal([]byte(`{"type":"stdio","command":"u","args":[],"env":{"TOKEN":"s3cret-value"}}`), &want)
	if !reflect.DeepEqual(usr, want) {
		t.Errorf("usr payload %s", cfg.Servers["usr"])
	}
	view, _ := json.Marshal(cfg.View)
	if strings.Contains(string(view), "s3cret") {
		t.Errorf("the view shows a secret: %s", view)
	}
	if err := cfg.View.Validate(); err != nil {
		t.Errorf("view: %v", err)
	}
	if i := slices.IndexFunc(cfg.View.Servers, func(s protocol.MCPConfigServer) bool { return s.Name == "proj" }); i < 0 || cfg.View.Servers[i].Approval != "awaiting" || cfg.View.Servers[i].Active {
		t.Errorf("proj in view: %s", view)
	}

	// The spawn flags name a private file holding the active servers.
	args, release, err := cfg.Spawn()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.Index(args, "--mcp-config")
	if i < 0 || !slices.Contains(args, "--strict-mcp-config") || !slices.Equal(args[len(args)-4:], []string{"--allowedTools", "mcp__usr__get", "--disallowedTools", "mcp__usr__rm"}) {
		t.Fatalf("spawn args %q", args)
	}
	file := args[i+1]
	st, err := os.Stat(file)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("config file %s: %v %v", file, st, err)
	}

	// Errors map to protocol codes.
	if _, err := src.Approve("nope"); protocol.CodeOf(err) != protocol.CodeMCPServerNotFound {
		t.Errorf("approve unknown: %v", err)
	}
	if _, err := src.Approve("usr"); protocol.CodeOf(err) != protocol.CodeBadRequest {
		t.Errorf("approve a user server: %v", err)
	}
	approval, err := src.Approve("proj")
	if err != nil || approval != "approved" {
		t.Fatalf("approve: %q %v", approval, err)
	}
	cfg2 := src.Current()
	if _, ok := cfg2.Servers["proj"]; !ok {
		t.Errorf("proj not active after approval: %v", cfg2.Servers)
	}
	if b, _ := os.ReadFile(filepath.Join(e.project, ".claude", "settings.local.json")); !strings.Contains(string(b), `"proj"`) {
		t.Errorf("approval not recorded: %s", b)
	}
	// The old file lives until its process releases it.
	if _, err := os.Stat(file); err != nil {
		t.Errorf("the file of a process still running was removed: %v", err)
	}
	release()
	release() // idempotent
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("the old config file was not removed after release: %v", err)
	}

	// A file edit arrives through the watcher.
	e.writeMCPJSON(t, map[string]any{"proj": map[string]any{"command": "p"}, "proj2": map[string]any{"command": "q", "args": []any{"x"}}})
	waitChange(t, src, func(c *MCPConfig) bool {
		return slices.ContainsFunc(c.View.Servers, func(s protocol.MCPConfigServer) bool { return s.Name == "proj2" })
	})
	if r, err := src.Reject("proj"); err != nil || r != "rejected" {
		t.Errorf("reject: %q %v", r, err)
	}
	if _, ok := src.Current().Servers["proj"]; ok {
		t.Error("proj still active after reject")
	}

	// After Close, the last file goes when its process releases it.
	args, release, _ = src.Current().Spawn()
	last := args[slices.Index(args, "--mcp-config")+1]
	src.Close()
	src.Close()
	if _, err := os.Stat(last); err != nil {
		t.Errorf("a file still referenced was removed by Close: %v", err)
	}
	release()
	if _, err := os.Stat(last); !os.IsNotExist(err) {
		t.Errorf("the last config file was not removed: %v", err)
	}
}

// What a new resolved configuration changes decides what is sent: only a
// change of the active servers goes to live sessions (mcp_set_servers);
// any other change (an inactive server, the error list) is pushed to MCP
// subscribers as mcp/config only; nothing at all when nothing changed.
func TestMCPConfigChangesApplied(t *testing.T) {
	usr := map[string]any{"usr": map[string]any{"command": "u"}}
	src := newProbeSource(t, usr, map[string]any{"proj": map[string]any{"command": "p"}}) // proj awaits approval
	h := newMCPHub(slog.New(slog.DiscardHandler))
	for _, step := range []struct {
		what          string
		user, project map[string]any
		pushed        bool
		active        bool
	}{
		{"first configuration", nil, nil, true, false},
		{"the same files resolved again", usr, map[string]any{"proj": map[string]any{"command": "p"}}, false, false},
		{"the inactive project server edited", usr, map[string]any{"proj": map[string]any{"command": "p2"}}, true, false},
		{"an error added", usr, map[string]any{"proj": map[string]any{"command": "p2"}, "bad": map[string]any{"command": 5}}, true, false},
		{"the active server edited", map[string]any{"usr": map[string]any{"command": "u2"}}, map[string]any{"proj": map[string]any{"command": "p2"}}, true, true},
		{"an active server added", map[string]any{"usr": map[string]any{"command": "u2"}, "usr2": map[string]any{"command": "v"}}, map[string]any{"proj": map[string]any{"command": "p2"}}, true, true},
	} {
		if step.user != nil {
			src.set(step.user, step.project)
		}
		cfg := src.Current()
		pushed, active := h.setConfig(cfg)
		if pushed != step.pushed || active != step.active {
			t.Errorf("%s: pushed %v, active %v; want %v, %v (config errors %+v)", step.what, pushed, active, step.pushed, step.active, cfg.View.Errors)
		}
		if h.config() != cfg {
			t.Errorf("%s: the new configuration is not the one in force", step.what)
		}
		if _, bad := step.project["bad"]; bad && len(cfg.View.Errors) == 0 {
			t.Errorf("%s: no errors", step.what)
		}
	}
}
