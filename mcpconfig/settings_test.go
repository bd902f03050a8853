package mcpconfig

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Permission rules come from every settings scope (the allow rules of the
// project's settings.json only in a trusted workspace, as in the CLI); by
// default approved servers' tools are not allowed wholesale.
func TestPermissionRules(t *testing.T) {
	f := newFixture(t, "collisions")
	f.opts.AllowServerTools = false
	writeFile(t, f.path("etc/managed-settings.json"), `{"permissions": {"deny": ["mcp__x__rm"]}}`)
	writeFile(t, f.path("home/.claude/settings.json"), `{"permissions": {"allow": ["mcp__u1__get", "Read"], "ask": ["Bash"]}}`)
	writeFile(t, f.path("work/project/.claude/settings.json"), `{"permissions": {"allow": ["mcp__l1", "Read"], "deny": ["WebFetch"]}}`)
	writeFile(t, f.path("work/project/.claude/settings.local.json"), `{"permissions": {"allow": ["mcp__x__*"]}}`)
	cfg := f.resolve(t)
	if len(cfg.Errors) > 0 {
		for _, e := range cfg.Errors {
			if strings.Contains(e.File, "settings") {
				t.Errorf("error %v", e)
			}
		}
	}
	// Untrusted: the project's settings.json allows nothing; its deny counts.
	want := Permissions{Allow: []string{"mcp__u1__get", "Read", "mcp__x__*"}, Deny: []string{"mcp__x__rm", "WebFetch"}, Ask: []string{"Bash"}}
	if !cfg.Permissions.equal(want) {
		t.Errorf("Permissions = %+v, want %+v", cfg.Permissions, want)
	}
	if got := cfg.AllowedTools(); !slices.Equal(got, want.Allow) {
		t.Errorf("AllowedTools = %v, want only the rules", got)
	}
	if got := cfg.DisallowedTools(); !slices.Equal(got, want.Deny) {
		t.Errorf("DisallowedTools = %v", got)
	}
	// serve --allow-mcp-tools: every active server's tools as well.
	f.opts.AllowServerTools = true
	if got := f.resolve(t).AllowedTools(); !slices.Contains(got, "mcp__dup_all") || !slices.Contains(got, "mcp__u1__get") {
		t.Errorf("AllowedTools with AllowServerTools = %v", got)
	}
	// A bad rule list is an error at its place; the other rules still count.
	writeFile(t, f.path("work/project/.claude/settings.local.json"), "{\n  \"permissions\": {\"allow\": [\"mcp__l1\", 7]}}")
	cfg = f.resolve(t)
	if !slices.Contains(cfg.Permissions.Allow, "mcp__l1") || !hasError(cfg, "settings.local.json", 2, "permissions.allow[1] must be a string") {
		t.Errorf("bad rule: %+v %v", cfg.Permissions, cfg.Errors)
	}
	// Trusted: the project's settings.json allow rules count.
	tf := newFixture(t, "trusted")
	writeFile(t, tf.path("work/project/.claude/settings.json"), `{"permissions": {"allow": ["mcp__p__t"]}}`)
	if got := tf.resolve(t).AllowedTools(); !slices.Contains(got, "mcp__p__t") {
		t.Errorf("trusted: AllowedTools = %v", got)
	}
	// Changing a rule is a change the Watcher reports.
	old := cfg
	writeFile(t, f.path("work/project/.claude/settings.local.json"), `{"permissions": {"allow": ["mcp__x__*", "mcp__x__y"]}}`)
	if d := Diff(old, f.resolve(t)); d.Empty() || !d.PermissionsChanged {
		t.Errorf("Diff = %+v", d)
	}
}

func hasError(cfg *Config, file string, line int, msg string) bool {
	return slices.ContainsFunc(cfg.Errors, func(e FileError) bool {
		return strings.HasSuffix(e.File, file) && e.Line == line && strings.Contains(e.Message, msg)
	})
}

// A settings file with a duplicate key is refused: an error naming the key
// at its second occurrence, its rules and approvals ignored, and writes
// leave it unchanged.
func TestSettingsDuplicateKey(t *testing.T) {
	f := newFixture(t, "trusted")
	local := f.path("work/project/.claude/settings.local.json")
	text := "{\n  \"permissions\": {\n    \"allow\": [\"mcp__a\"],\n    \"allow\": [\"mcp__b\"]\n  },\n  \"enabledMcpjsonServers\": [\"pending\"]\n}\n"
	writeFile(t, local, text)
	cfg := f.resolve(t)
	var found *FileError
	for i, e := range cfg.Errors {
		if e.File == local {
			found = &cfg.Errors[i]
		}
	}
	if found == nil || found.Line != 4 || found.Column != 5 || !strings.Contains(found.Message, `duplicate key "allow" in permissions`) {
		t.Fatalf("errors %v", cfg.Errors)
	}
	if slices.Contains(cfg.Permissions.Allow, "mcp__b") || slices.Contains(cfg.Permissions.Allow, "mcp__a") {
		t.Errorf("rules of a refused file used: %v", cfg.Permissions.Allow)
	}
	if s, _ := cfg.Server("pending"); s.Active {
		t.Errorf("approval of a refused file used: %+v", s)
	}
	for name, write := range map[string]func() error{
		"Approve":    func() error { _, err := Approve(f.opts, "pending"); return err },
		"Reject":     func() error { _, err := Reject(f.opts, "pending"); return err },
		"AllowRules": func() error { _, err := AllowRules(f.opts, "mcp__c"); return err },
	} {
		err := write()
		if err == nil || !strings.Contains(err.Error(), local+":4:5: duplicate key") {
			t.Errorf("%s: error %v", name, err)
		}
		if data, _ := os.ReadFile(local); string(data) != text {
			t.Errorf("%s changed the file:\n%s", name, data)
		}
	}
	// Other files' duplicate keys follow JSON.parse (the last wins), as before.
	writeFile(t, f.path("work/project/.mcp.json"), `{"mcpServers": {}, "mcpServers": {"z": {"command": "true"}}}`)
	if _, ok := f.resolve(t).Server("z"); !ok {
		t.Error(".mcp.json with a repeated key: the last value should count")
	}
}

// AllowRules writes an "allow, don't ask again" rule where the CLI does,
// keeping the other keys; writing it twice changes nothing.
func TestAllowRule(t *testing.T) {
	f := newFixture(t, "trusted")
	local := f.path("work/project/.claude/settings.local.json")
	cfg, err := AllowRules(f.opts, "mcp__everything__echo", "Bash(npm test:*)", "mcp__everything__echo")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(cfg.Permissions.Allow, "mcp__everything__echo") || !slices.Contains(cfg.AllowedTools(), "mcp__everything__echo") {
		t.Errorf("after AllowRule: %+v", cfg.Permissions)
	}
	m := readJSON(t, local)
	perms, _ := m["permissions"].(map[string]any)
	if allow, _ := perms["allow"].([]any); len(allow) != 3 || allow[1] != "mcp__everything__echo" || allow[2] != "Bash(npm test:*)" {
		t.Errorf("permissions = %v", m["permissions"])
	}
	if _, ok := m["enabledMcpjsonServers"]; !ok {
		t.Error("other keys lost")
	}
	before, _ := os.ReadFile(local)
	if _, err := AllowRules(f.opts, "mcp__everything__echo"); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(local); string(after) != string(before) {
		t.Errorf("second AllowRules changed the file:\n%s", after)
	}
	// Created from nothing.
	os.Remove(local)
	if _, err := AllowRules(f.opts, "Read"); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(local); string(data) != "{\n  \"permissions\": {\n    \"allow\": [\n      \"Read\"\n    ]\n  }\n}\n" {
		t.Errorf("new file:\n%s", data)
	}
	if _, err := AllowRules(f.opts, " "); err == nil {
		t.Error("empty rule accepted")
	}
	writeFile(t, local, `{"permissions": ["x"]}`)
	if _, err := AllowRules(f.opts, "Read"); err == nil || !strings.Contains(err.Error(), "permissions must be an object") {
		t.Errorf("bad permissions: %v", err)
	}
}

// Approvals and permission rules written at once from many goroutines are
// all kept: every write goes through the same locked read-modify-write.
func TestSettingsConcurrentWrites(t *testing.T) {
	f := newFixture(t, "trusted")
	servers := map[string]any{}
	for i := range 10 {
		servers[fmt.Sprintf("s%d", i)] = map[string]any{"command": "true"}
	}
	b, _ := json.Marshal(map[string]any{"mcpServers": servers})
	writeFile(t, f.path("work/project/.mcp.json"), string(b))
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := range 10 {
		wg.Add(2)
		go func() { defer wg.Done(); _, err := Approve(f.opts, fmt.Sprintf("s%d", i)); errs <- err }()
		go func() { defer wg.Done(); _, err := AllowRules(f.opts, fmt.Sprintf("mcp__s%d__t", i)); errs <- err }()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	cfg := f.resolve(t)
	for i := range 10 {
		if s, _ := cfg.Server(fmt.Sprintf("s%d", i)); !s.Active {
			t.Errorf("approval of s%d lost", i)
		}
		if !slices.Contains(cfg.Permissions.Allow, fmt.Sprintf("mcp__s%d__t", i)) {
			t.Errorf("rule for s%d lost", i)
		}
	}
}
