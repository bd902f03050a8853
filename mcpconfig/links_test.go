package mcpconfig

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need a privilege on Windows")
	}
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(link)
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// victim is a valid file outside the project that a write through a link
// would change (it defines the servers the writers act on, so that every
// write would succeed).
const victim = `{"mcpServers":{"pending":{"command":"true"}},"enabledMcpjsonServers":[],"permissions":{"allow":[]}}`

// projectWriters are every write of a project file, with the file they
// write (relative to the project).
var projectWriters = []struct {
	name, file string
	write      func(Options) error
}{
	{"Approve", ".claude/settings.local.json", func(o Options) error { _, err := Approve(o, "pending"); return err }},
	{"Reject", ".claude/settings.local.json", func(o Options) error { _, err := Reject(o, "pending"); return err }},
	{"AllowRules", ".claude/settings.local.json", func(o Options) error { _, err := AllowRules(o, "mcp__pending__x"); return err }},
	{"AddServer", ".mcp.json", func(o Options) error {
		_, err := AddServer(o, ScopeProject, "added", json.RawMessage(`{"type":"stdio","command":"true","args":[],"env":{}}`), AddNew)
		return err
	}},
	{"RemoveServer", ".mcp.json", func(o Options) error { _, err := RemoveServer(o, ScopeProject, "pending"); return err }},
}

// TestProjectFileLinkOutsideRefused: a project file that is a link, or
// whose folder is a link, resolving outside the project is not written
// through, nor is a lock or temporary file created there; the error names
// the link and its target. Each writer of a project file, each shape.
func TestProjectFileLinkOutsideRefused(t *testing.T) {
	for _, w := range projectWriters {
		for _, shape := range []string{"file", "folder", "dangling", "relative"} {
			if shape == "folder" && !strings.Contains(w.file, "/") {
				continue // .mcp.json sits in the project directory itself
			}
			t.Run(w.name+"/"+shape, func(t *testing.T) {
				f := newFixture(t, "trusted")
				outside := f.path("outside")
				f.write(t, "outside/"+filepath.Base(w.file), victim)
				proj := f.opts.ProjectDir
				file := filepath.Join(proj, filepath.FromSlash(w.file))
				link, target := file, filepath.Join(outside, filepath.Base(w.file))
				switch shape {
				case "folder":
					link, target = filepath.Dir(file), outside
					os.RemoveAll(link)
				case "dangling":
					target = filepath.Join(outside, "new.json")
				case "relative":
					rel, _ := filepath.Rel(filepath.Dir(file), target)
					symlink(t, rel, link)
				}
				if shape != "relative" {
					symlink(t, target, link)
				}
				before := listDir(t, outside)

				err := w.write(f.opts)
				var le *LinkError
				if !errors.As(err, &le) {
					t.Fatalf("%s through a %s link: err = %v, want a *LinkError", w.name, shape, err)
				}
				if le.Link != link || le.Target != target {
					t.Errorf("LinkError{Link: %s, Target: %s}, want %s → %s", le.Link, le.Target, link, target)
				}
				if msg := err.Error(); !strings.Contains(msg, link) || !strings.Contains(msg, target) {
					t.Errorf("message does not name the link and its target: %s", msg)
				}
				if data, _ := os.ReadFile(filepath.Join(outside, filepath.Base(w.file))); string(data) != victim {
					t.Errorf("the file outside was written: %s", data)
				}
				if after := listDir(t, outside); !slices.Equal(after, before) {
					t.Errorf("files outside: %v, were %v (a lock, temporary or new file was created there)", after, before)
				}
			})
		}
	}
}

// TestProjectFileLinkInsideFollowed: a link that stays inside the project
// is written through (the link kept), as before.
func TestProjectFileLinkInsideFollowed(t *testing.T) {
	for _, w := range projectWriters {
		t.Run(w.name, func(t *testing.T) {
			f := newFixture(t, "trusted")
			proj := f.opts.ProjectDir
			real := filepath.Join(proj, "conf", "real.json")
			f.write(t, "work/project/conf/real.json", victim)
			file := filepath.Join(proj, filepath.FromSlash(w.file))
			target := "conf/real.json" // relative to the link's folder
			if strings.Contains(w.file, "/") {
				target = "../conf/real.json"
			}
			symlink(t, target, file)
			if err := w.write(f.opts); err != nil {
				t.Fatalf("%s through a link inside the project: %v", w.name, err)
			}
			if data, _ := os.ReadFile(real); string(data) == victim {
				t.Errorf("the link's target was not written")
			}
			if fi, err := os.Lstat(file); err != nil || fi.Mode()&os.ModeSymlink == 0 {
				t.Errorf("the link was replaced by a file (%v)", err)
			}
		})
	}
}

// TestProjectLockFileLinkRefused: the lock file of a project file is not
// opened (nor created) through a link.
func TestProjectLockFileLinkRefused(t *testing.T) {
	f := newFixture(t, "trusted")
	outside := f.path("outside")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	symlink(t, filepath.Join(outside, "lock"), lockPath(filepath.Join(f.opts.ProjectDir, ".claude", "settings.local.json")))
	if _, err := Approve(f.opts, "pending"); err == nil || !strings.Contains(err.Error(), "is a link") {
		t.Fatalf("Approve with the lock file a link outside: err = %v", err)
	}
	if names := listDir(t, outside); len(names) != 0 {
		t.Errorf("created outside: %v", names)
	}
}

// TestUserFileLinkFollowed: the user's own files (~/.claude.json) may be
// links anywhere (dotfile managers): written where they point, the link
// kept.
func TestUserFileLinkFollowed(t *testing.T) {
	f := newFixture(t, "trusted")
	dot := f.path("dotfiles/claude.json")
	data, err := os.ReadFile(f.path("home/.claude.json"))
	if err != nil {
		t.Fatal(err)
	}
	f.write(t, "dotfiles/claude.json", string(data))
	symlink(t, dot, f.path("home/.claude.json"))
	if _, err := AddServer(f.opts, ScopeUser, "added", json.RawMessage(`{"type":"stdio","command":"true","args":[],"env":{}}`), AddNew); err != nil {
		t.Fatal(err)
	}
	if _, err := TrustWorkspace(f.opts); err != nil {
		t.Fatal(err)
	}
	if m := readJSON(t, dot); m["mcpServers"].(map[string]any)["added"] == nil {
		t.Errorf("not written through the link: %v", m)
	}
	if fi, err := os.Lstat(f.path("home/.claude.json")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced (%v)", err)
	}
}
