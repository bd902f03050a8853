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
