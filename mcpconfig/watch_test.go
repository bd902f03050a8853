package mcpconfig

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// eventTimeout is generous: it only bounds a test that is already failing.
const eventTimeout = 20 * time.Second

func startWatcher(t *testing.T, f *fixture) *Watcher {
	t.Helper()
	if f.opts.Debounce == 0 {
		f.opts.Debounce = 20 * time.Millisecond
	}
	w, err := NewWatcher(f.opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// next awaits the next event.
func next(t *testing.T, w *Watcher) Event {
	t.Helper()
	select {
	case ev, ok := <-w.Events():
		if !ok {
			t.Fatal("Events closed")
		}
		return ev
	case <-time.After(eventTimeout):
		t.Fatalf("no event within %v", eventTimeout)
	}
	return Event{}
}

// until awaits events until cond holds for the event's config; events that
// do not yet satisfy it (a partial write seen on the way) are skipped.
func until(t *testing.T, w *Watcher, what string, cond func(*Config) bool) Event {
	t.Helper()
	deadline := time.After(eventTimeout)
	for {
		select {
		case ev, ok := <-w.Events():
			if !ok {
				t.Fatal("Events closed")
			}
			if cond(ev.Config) {
				return ev
			}
		case <-deadline:
			t.Fatalf("no event with %s within %v; current servers: %v", what, eventTimeout, names(w.Current()))
		}
	}
}

func names(c *Config) []string {
	var out []string
	for _, s := range c.Servers {
		out = append(out, s.Name)
	}
	return out
}

func has(name string) func(*Config) bool {
	return func(c *Config) bool { _, ok := c.Server(name); return ok }
}

func argsOf(c *Config, name string) string {
	s, _ := c.Server(name)
	return string(s.Expanded)
}

func TestWatcherFileOperations(t *testing.T) {
	f := newFixture(t, "empty")
	f.write(t, "work/project/.mcp.json", `{"mcpServers": {"a": {"command": "true"}}}`)
	w := startWatcher(t, f)
	if !has("a")(w.Initial()) {
		t.Fatalf("initial servers %v", names(w.Initial()))
	}

	t.Run("in-place write", func(t *testing.T) {
		f.write(t, "work/project/.mcp.json", `{"mcpServers": {"a": {"command": "true", "args": ["v2"]}}}`)
		ev := until(t, w, "a at v2", func(c *Config) bool { return strings.Contains(argsOf(c, "a"), "v2") })
		if !slices.Equal(ev.Changes.Changed, []string{"a"}) {
			t.Errorf("changes %+v", ev.Changes)
		}
	})
	t.Run("atomic rename save", func(t *testing.T) {
		f.write(t, "work/project/.mcp.json.swp", `{"mcpServers": {"a": {"command": "true", "args": ["v3"]}, "b": {"command": "true"}}}`)
		if err := os.Rename(f.path("work/project/.mcp.json.swp"), f.path("work/project/.mcp.json")); err != nil {
			t.Fatal(err)
		}
		ev := until(t, w, "b", has("b"))
		if !strings.Contains(argsOf(ev.Config, "a"), "v3") || !slices.Equal(ev.Changes.Added, []string{"b"}) {
			t.Errorf("after rename: a=%s changes %+v", argsOf(ev.Config, "a"), ev.Changes)
		}
	})
	t.Run("delete and re-create", func(t *testing.T) {
		if err := os.Remove(f.path("work/project/.mcp.json")); err != nil {
			t.Fatal(err)
		}
		ev := next(t, w)
		if len(ev.Config.Servers) != 0 || !slices.Equal(ev.Changes.Removed, []string{"a", "b"}) {
			t.Errorf("after delete: %v, changes %+v", names(ev.Config), ev.Changes)
		}
		f.write(t, "work/project/.mcp.json", `{"mcpServers": {"c": {"command": "true"}}}`)
		until(t, w, "c", has("c"))
	})
	t.Run("file in a folder that appears later", func(t *testing.T) {
		// ~/.claude does not exist yet; user settings approve project servers.
		if _, err := os.Stat(f.path("home/.claude")); !os.IsNotExist(err) {
			t.Fatalf("home/.claude exists: %v", err)
		}
		f.write(t, "home/.claude/settings.json", `{"enabledMcpjsonServers": ["c"]}`)
		ev := until(t, w, "c approved", func(c *Config) bool { s, _ := c.Server("c"); return s.Active })
		if !ev.Changes.ActiveChanged {
			t.Errorf("changes %+v", ev.Changes)
		}
	})
	t.Run("broken edit keeps the last good version", func(t *testing.T) {
		f.write(t, "work/project/.mcp.json", `{"mcpServers": {"c": {"command": "true"}, "d": `)
		ev := until(t, w, "an error", func(c *Config) bool { return len(c.Errors) > 0 })
		if !has("c")(ev.Config) || has("d")(ev.Config) {
			t.Errorf("servers while broken: %v", names(ev.Config))
		}
		e := ev.Config.Errors[0]
		if e.File != f.path("work/project/.mcp.json") || e.Line != 1 || !strings.Contains(e.Message, "last valid version") {
			t.Errorf("error %+v", e)
		}
		if !ev.Changes.ErrorsChanged || ev.Changes.ActiveChanged {
			t.Errorf("changes %+v", ev.Changes)
		}
		f.write(t, "work/project/.mcp.json", `{"mcpServers": {"c": {"command": "true"}, "d": {"command": "true"}}}`)
		ev = until(t, w, "d", has("d"))
		if len(ev.Config.Errors) != 0 {
			t.Errorf("errors after the fix: %v", ev.Config.Errors)
		}
	})
	t.Run("deep folders of an extra file appear later", func(t *testing.T) {
		// A new watcher whose extra file's folders do not exist yet.
		g := newFixture(t, "empty")
		g.opts.Extra = []string{g.path("later/deep/extra.json")}
		w2 := startWatcher(t, g)
		if err := os.MkdirAll(g.path("later/deep"), 0o755); err != nil {
			t.Fatal(err)
		}
		g.write(t, "later/deep/extra.json", `{"mcpServers": {"ex": {"type": "sse", "url": "http://127.0.0.1:9/sse"}}}`)
		ev := until(t, w2, "ex", has("ex"))
		if s, _ := ev.Config.Server("ex"); !s.Active || s.Scope != ScopeExtra {
			t.Errorf("ex = %+v", s)
		}
	})
}

func TestWatcherParentMCPJSONAndSymlink(t *testing.T) {
	f := newFixture(t, "empty")
	// ~/.claude.json is a symlink into a dotfiles folder: editing the target
	// must be seen too.
	f.write(t, "dotfiles/claude.json", `{"mcpServers": {}}`)
	if err := os.Symlink(f.path("dotfiles/claude.json"), f.path("home/.claude.json")); err != nil {
		t.Fatal(err)
	}
	w := startWatcher(t, f)
	f.write(t, "work/.mcp.json", `{"mcpServers": {"from_parent": {"command": "true"}}}`)
	until(t, w, "from_parent", has("from_parent"))
	f.write(t, "dotfiles/claude.json", `{"mcpServers": {"via_link": {"command": "true"}}}`)
	ev := until(t, w, "via_link", has("via_link"))
	if s, _ := ev.Config.Server("via_link"); s.Scope != ScopeUser || !s.Active {
		t.Errorf("via_link = %+v", s)
	}
}

func TestWatcherDebounceAndCoalesce(t *testing.T) {
	f := newFixture(t, "empty")
	reloads := make(chan bool, 100)
	f.opts.reloadHook = func(_ *Config, pending bool) { reloads <- pending }
	f.opts.Debounce = 10 * time.Millisecond
	w := startWatcher(t, f)
	awaitReload := func() bool {
		t.Helper()
		select {
		case p := <-reloads:
			return p
		case <-time.After(eventTimeout):
			t.Fatal("no reload")
		}
		return false
	}

	// Two separate changes while nobody reads Events: one event, coalesced.
	f.write(t, "work/project/.mcp.json", `{"mcpServers": {"a": {"command": "true"}}}`)
	for !awaitReload() {
	}
	f.write(t, "work/project/.mcp.json", `{"mcpServers": {"a": {"command": "true"}, "b": {"command": "true"}}}`)
	for w.Current() == nil || !has("b")(w.Current()) {
		awaitReload()
	}
	ev := next(t, w)
	if ev.Coalesced < 1 || !slices.Equal(ev.Changes.Added, []string{"a", "b"}) {
		t.Errorf("coalesced event: %d, changes %+v", ev.Coalesced, ev.Changes)
	}
	// The second write may have been resolved more than once (more than
	// one file event for it); those reloads saw the event waiting. The
	// hook runs on the goroutine that delivered the event, so every reload
	// from before the delivery is in the channel now: drop them, so that
	// the next one read is the unrelated change's.
	for len(reloads) > 0 {
		<-reloads
	}

	// An unrelated rewrite of ~/.claude.json (the CLI does one on every run)
	// resolves again but sends nothing.
	f.write(t, "home/.claude.json", `{"numStartups": 7, "projects": {}}`)
	if pending := awaitReload(); pending {
		t.Error("an unrelated change produced an event")
	}
}

// TestWatcherRelevantPaths: only sources, their ancestors and symlink
// targets trigger a reload, not every file of a watched folder.
func TestWatcherRelevantPaths(t *testing.T) {
	f := newFixture(t, "empty")
	w, err := NewWatcher(f.opts)
	if err != nil {
		t.Fatal(err)
	}
	w.Close() // the goroutine has ended: its fields may be read
	for _, p := range []string{"work/project/.mcp.json", "work/.mcp.json", "work/project/.claude", "home/.claude.json", "home/.claude/settings.json", "work"} {
		if !w.relevant[f.path(p)] {
			t.Errorf("%s is not relevant", p)
		}
	}
	for _, p := range []string{"work/project/notes.txt", "home/.claude.json.tmp", "work/project/.claude/settings.local.json.bak"} {
		if w.relevant[f.path(p)] {
			t.Errorf("%s is relevant", p)
		}
	}
}

func TestWatcherBurst(t *testing.T) {
	f := newFixture(t, "empty")
	f.opts.Debounce = time.Second // a burst of writes, well inside one period
	w := startWatcher(t, f)
	for i := range 5 {
		f.write(t, "work/project/.mcp.json", `{"mcpServers": {"s`+string(rune('0'+i))+`": {"command": "true"}}}`)
	}
	ev := next(t, w)
	if got := names(ev.Config); !slices.Equal(got, []string{"s4"}) {
		t.Errorf("first event after a burst: %v, want [s4]", got)
	}
}

func TestWatcherClose(t *testing.T) {
	f := newFixture(t, "empty")
	w, err := NewWatcher(f.opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	// The channel is closed only by the goroutine on its way out.
	if _, ok := <-w.Events(); ok {
		t.Error("Events still open after Close")
	}
	// Close from several goroutines at once.
	w, _ = NewWatcher(f.opts)
	done := make(chan struct{})
	for range 3 {
		go func() { w.Close(); done <- struct{}{} }()
	}
	for range 3 {
		<-done
	}
}
