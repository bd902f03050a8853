//go:build unix

package privdir

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Base refuses a directory others may enter, and a symlink, naming it.
func TestBaseRefused(t *testing.T) {
	tmp := t.TempDir()
	base := filepath.Join(tmp, "private")
	if err := os.Mkdir(base, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := Base(base); err == nil || !strings.Contains(err.Error(), base) || !strings.Contains(err.Error(), "0700") {
		t.Errorf("Base with a 0755 directory = %v, want an error naming it", err)
	}
	os.Remove(base)
	if err := os.Symlink(tmp, base); err != nil {
		t.Fatal(err)
	}
	if err := Base(base); err == nil {
		t.Error("Base accepted a symlink")
	}
	// Missing, with missing parents: made, 0700.
	deep := filepath.Join(tmp, "a", "b")
	if err := Base(deep); err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(deep); err != nil || info.Mode().Perm() != 0o700 {
		t.Fatalf("%s: %v, %v; want mode 0700", deep, info.Mode(), err)
	}
}

// UserTemp names a per-user directory under the temporary directory.
func TestUserTemp(t *testing.T) {
	t.Setenv("TMPDIR", "/some/tmp")
	if got, want := UserTemp("ccproxy"), "/some/tmp/ccproxy-"+strconv.Itoa(os.Getuid()); got != want {
		t.Errorf("UserTemp = %q, want %q", got, want)
	}
}

// Sweep leaves a base that is not private alone, saying why.
func TestSweepNotPrivate(t *testing.T) {
	base := t.TempDir()
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Sweep(base); err == nil || !strings.Contains(err.Error(), base) {
		t.Errorf("Sweep of a 0755 base = %v, want an error naming it", err)
	}
}
