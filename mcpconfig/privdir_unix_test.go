//go:build unix

package mcpconfig

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// MCPConfigFile("") writes into this process's private directory: 0700,
// under <TMPDIR>/ccproxy-<uid> (0700), with its lock held.
func TestPrivateDir(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	cfg := &Config{}
	f, err := cfg.MCPConfigFile("")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dir := filepath.Dir(f.Path)
	base := filepath.Dir(dir)
	if want := filepath.Join(tmp, "ccproxy-"+strconv.Itoa(os.Getuid())); base != want {
		t.Fatalf("file %s, want it under %s", f.Path, want)
	}
	for _, d := range []string{base, dir} {
		if info, err := os.Stat(d); err != nil || info.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v %v, want mode 0700", d, info.Mode(), err)
		}
	}
	if info, err := os.Stat(f.Path); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("%s: %v, want 0600", f.Path, err)
	}
	// Its own directory is live: never removed.
	if removed, err := RemoveStale(); err != nil || len(removed) != 0 {
		t.Errorf("RemoveStale = %v, %v; want nothing removed", removed, err)
	}
	if _, err := os.Stat(f.Path); err != nil {
		t.Error(err)
	}
	// Removed behind its back (a cleaner of /tmp): made again.
	if err := os.RemoveAll(base); err != nil {
		t.Fatal(err)
	}
	f2, err := cfg.MCPConfigFile("")
	if err != nil {
		t.Fatalf("after the directory was removed: %v", err)
	}
	defer f2.Close()
	if filepath.Dir(filepath.Dir(f2.Path)) != base {
		t.Errorf("file %s, want it under %s", f2.Path, base)
	}
}

// The base under TMPDIR must be private: a 0755 directory is refused with
// an error naming it.
func TestPrivateBaseRefused(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	base := filepath.Join(tmp, "ccproxy-"+strconv.Itoa(os.Getuid()))
	if err := os.Mkdir(base, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := RemoveStale(); err == nil || !strings.Contains(err.Error(), base) || !strings.Contains(err.Error(), "0700") {
		t.Errorf("RemoveStale with a 0755 base = %v, want an error naming it", err)
	}
}

// A symlinked ~/.claude.json or settings file (dotfiles kept elsewhere)
// stays a symlink when ccproxy writes it: the file it points to changes.
func TestWriteFollowsSymlinks(t *testing.T) {
	opts := writeEnv(t)
	dotfiles := filepath.Join(filepath.Dir(opts.HomeDir), "dotfiles")
	if err := os.MkdirAll(dotfiles, 0o755); err != nil {
		t.Fatal(err)
	}
	real := filepath.Join(dotfiles, "claude.json")
	if err := os.WriteFile(real, []byte("{\"numStartups\": 3}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(opts.HomeDir, ".claude.json")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	def, _ := BuildDefinition(AddSpec{Transport: TransportStdio, CommandOrURL: "node"})
	if _, err := AddServer(opts, ScopeUser, "linked", def, AddNew); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("%s is no longer a symlink (%v)", link, err)
	}
	data, _ := os.ReadFile(real)
	if !strings.Contains(string(data), `"linked"`) || !strings.Contains(strings.ReplaceAll(string(data), " ", ""), `"numStartups":3`) {
		t.Errorf("the file the link points to was not updated:\n%s", data)
	}
	if left, _ := filepath.Glob(filepath.Join(opts.HomeDir, ".claude.json.tmp-*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// At a clean shutdown ReleasePrivateDir removes the private directory once
// its files are gone (and not before); the next file makes a new one.
// RemoveStale makes no directory.
func TestReleasePrivateDir(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	base := filepath.Join(tmp, "ccproxy-"+strconv.Itoa(os.Getuid()))
	if removed, err := RemoveStale(); err != nil || len(removed) != 0 {
		t.Fatalf("RemoveStale = %v, %v", removed, err)
	}
	if _, err := os.Lstat(base); err == nil {
		t.Fatal("RemoveStale made the base directory")
	}
	f, err := (&Config{}).MCPConfigFile("")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(f.Path)
	if removed, err := ReleasePrivateDir(); removed || err != nil {
		t.Fatalf("ReleasePrivateDir with a file in it = %v, %v; want it kept", removed, err)
	}
	if _, err := os.Stat(f.Path); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if removed, err := ReleasePrivateDir(); !removed || err != nil {
		t.Fatalf("ReleasePrivateDir once empty = %v, %v; want it removed", removed, err)
	}
	if _, err := os.Lstat(dir); err == nil {
		t.Fatalf("%s is still there", dir)
	}
	f2, err := (&Config{}).MCPConfigFile("")
	if err != nil {
		t.Fatal(err)
	}
	defer f2.Close()
	if d := filepath.Dir(f2.Path); d == dir || filepath.Dir(d) != base {
		t.Errorf("after the release the file went to %s; want a new directory under %s", d, base)
	}
}
