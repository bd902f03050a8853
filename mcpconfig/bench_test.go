package mcpconfig

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// bigSetup writes a 200-server configuration: 60 user, 40 local, 80 project
// (in two .mcp.json files), 20 extra; names collide across scopes, values
// use ${VAR}s, and ~/.claude.json also holds 300 other projects.
func bigSetup(tb testing.TB) Options {
	tb.Helper()
	root, _ := filepath.EvalSymlinks(tb.TempDir())
	proj := filepath.Join(root, "work", "project")
	server := func(i int, scope string) string {
		if i%4 == 0 {
			return fmt.Sprintf(`"s%03d": {"type": "http", "url": "https://h%d.example/mcp?key=${KEY_%d}", "headers": {"Authorization": "Bearer ${TOKEN}"}}`, i, i, i)
		}
		return fmt.Sprintf(`"s%03d": {"command": "/usr/bin/server-%s", "args": ["--n", "%d", "${HOME_DIR:-/tmp}"], "env": {"TOKEN": "${TOKEN}", "N": "%d"}}`, i, scope, i, i)
	}
	list := func(from, to int, scope string) string {
		var parts []string
		for i := from; i < to; i++ {
			parts = append(parts, server(i, scope))
		}
		return "{" + strings.Join(parts, ",\n") + "}"
	}
	var projects []string
	for i := range 300 {
		projects = append(projects, fmt.Sprintf(`"/home/u/other%d": {"allowedTools": [], "history": [{"display": "some prompt %d"}], "hasTrustDialogAccepted": true}`, i, i))
	}
	projects = append(projects, fmt.Sprintf(`%q: {"mcpServers": %s, "hasTrustDialogAccepted": true, "disabledMcpServers": ["s050"]}`, proj, list(50, 90, "local")))
	files := map[string]string{
		"home/.claude.json":                        fmt.Sprintf(`{"numStartups": 42, "mcpServers": %s, "projects": {%s}}`, list(0, 60, "user"), strings.Join(projects, ",\n")),
		"home/.claude/settings.json":               `{"enabledMcpjsonServers": ["s100", "s101", "s102"]}`,
		"work/project/.mcp.json":                   fmt.Sprintf(`{"mcpServers": %s}`, list(80, 140, "project")),
		"work/.mcp.json":                           fmt.Sprintf(`{"mcpServers": %s}`, list(120, 160, "parent")),
		"work/project/.claude/settings.local.json": `{"enableAllProjectMcpServers": true, "disabledMcpjsonServers": ["s081"]}`,
		"extra/x.json":                             fmt.Sprintf(`{"mcpServers": %s}`, list(180, 200, "extra")),
	}
	for rel, content := range files {
		p := filepath.Join(root, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	env := map[string]string{"TOKEN": "t0k3n", "KEY_4": "k"}
	return Options{
		HomeDir: filepath.Join(root, "home"), ProjectDir: proj, ManagedPath: filepath.Join(root, "none"),
		AllowServerTools: true,
		Extra:            []string{filepath.Join(root, "extra", "x.json")},
		Env:              func(k string) (string, bool) { v, ok := env[k]; return v, ok },
	}
}

func TestBigSetup(t *testing.T) {
	cfg, err := Resolve(bigSetup(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Errors) != 0 {
		t.Fatal(cfg.Errors)
	}
	defs := 60 + 40 + 60 + 40 + 20
	if defs != 220 || len(cfg.Servers) != 180 { // 220 definitions, 40 collide
		t.Fatalf("%d servers", len(cfg.Servers))
	}
	if s, _ := cfg.Server("s120"); s.Scope != ScopeProject || len(s.Shadows) != 1 || !strings.Contains(s.Source, "project") {
		t.Errorf("s120 = %+v", s)
	}
	if s, _ := cfg.Server("s050"); !s.Disabled || s.Active {
		t.Errorf("s050 = %+v", s)
	}
	if !slices.Contains(cfg.AllowedTools(), "mcp__s199") {
		t.Error("s199 not active")
	}
}

// BenchmarkResolveDiff200 resolves a 200-definition configuration (eight
// files, ~/.claude.json with 300 other projects) and diffs it with the
// previous result: the work the Watcher does per change. Target: well under
// 5 ms.
func BenchmarkResolveDiff200(b *testing.B) {
	opts := bigSetup(b)
	prev, err := Resolve(opts)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		cfg, _ := Resolve(opts)
		if d := Diff(prev, cfg); !d.Empty() {
			b.Fatal("changed")
		}
		prev = cfg
	}
}

// BenchmarkWatchLatency measures the time from a file write (an in-place
// write of .mcp.json) to the change Event being received, with the default
// debounce (100 ms) included. It reports the p50, p99 and maximum in ms;
// run it with -benchtime=200x for a meaningful p99. Target: p99 < 250 ms.
func BenchmarkWatchLatency(b *testing.B) {
	opts := bigSetup(b)
	opts.Debounce = DefaultDebounce
	w, err := NewWatcher(opts)
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	path := filepath.Join(opts.ProjectDir, ".mcp.json")
	var lat []time.Duration
	i := 0
	for b.Loop() {
		i++
		content := fmt.Sprintf(`{"mcpServers": {"bench": {"command": "true", "args": ["%d"]}}}`, i)
		start := time.Now()
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
		want := fmt.Sprintf(`"%d"`, i)
		for {
			select {
			case ev := <-w.Events():
				if s, ok := ev.Config.Server("bench"); ok && strings.Contains(string(s.Expanded), want) {
					lat = append(lat, time.Since(start))
					goto next
				}
			case <-time.After(10 * time.Second):
				b.Fatal("no event within 10 s")
			}
		}
	next:
	}
	slices.Sort(lat)
	pct := func(p float64) float64 {
		return float64(lat[int(p*float64(len(lat)-1))]) / float64(time.Millisecond)
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(pct(1), "max-ms")
}
