package mcphub

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ccproxy/ccproxy/protocol"
)

func TestMCPConfigSource(t *testing.T) {
	e := newMCPEnv(t)
	// A trusted workspace: its settings.local.json (where approvals are
	// recorded) counts.
	proj, _ := filepath.EvalSymlinks(e.Project)
	home, _ := json.Marshal(map[string]any{
		"mcpServers": map[string]any{"usr": map[string]any{"command": "u", "env": map[string]any{"TOKEN": "s3cret-value"}}},
		"projects":   map[string]any{proj: map[string]any{"hasTrustDialogAccepted": true}},
	})
	os.WriteFile(filepath.Join(e.Home, ".claude.json"), home, 0o600)
	e.WriteMCPJSON(t, map[string]any{"proj": map[string]any{"command": "p"}})
	// The user's permission rules, not the servers, make the tool flags.
	os.WriteFile(filepath.Join(e.Home, ".claude", "settings.json"), []byte(`{"permissions": {"allow": ["mcp__usr__get"], "deny": ["mcp__usr__rm"]}}`), 0o600)
	src, err := NewConfigSource(e.Opts, e.FilesDir, nil)
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
	if b, _ := os.ReadFile(filepath.Join(e.Project, ".claude", "settings.local.json")); !strings.Contains(string(b), `"proj"`) {
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
	e.WriteMCPJSON(t, map[string]any{"proj": map[string]any{"command": "p"}, "proj2": map[string]any{"command": "q", "args": []any{"x"}}})
	waitChange(t, src, func(c *Config) bool {
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
