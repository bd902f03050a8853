//go:build unix

package eventlog

import (
	"os"
	"path/filepath"
	"testing"
)

// A SpoolDir that is a symlink is refused (no spool), and the directory
// it points to keeps its mode: the spool makes only a directory of its
// own private (it chmod'ed the symlink's target to 0700 before refusing).
func TestSpoolSymlinkLeftAlone(t *testing.T) {
	tmp := t.TempDir()
	target := filepath.Join(tmp, "shared")
	if err := os.Mkdir(target, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(target, 0o755); err != nil { // whatever the umask
		t.Fatal(err)
	}
	link := filepath.Join(tmp, "spool")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	sp := NewSpool(link, testDiscardLogger())
	if dir := sp.Dir(); dir != "" {
		t.Errorf("a symlinked SpoolDir was used: %s", dir)
	}
	sp.Close()
	if info, err := os.Stat(target); err != nil || info.Mode().Perm() != 0o755 {
		t.Fatalf("the symlink's target: %v, %v; want mode 0755 kept", info.Mode(), err)
	}
}
