package testkit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BuildCommand builds a command once per process, to a binary named after
// it; a package that does not exist gives go build's error.
func TestBuildCommand(t *testing.T) {
	const pkg = "github.com/ccproxy/ccproxy/internal/testkit/cmd/ccproxy-testmcp"
	p, err := BuildCommand(pkg)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(p) != "ccproxy-testmcp" {
		t.Errorf("binary %s is not named after the command", p)
	}
	st, err := os.Stat(p)
	if err != nil || st.Mode()&0o111 == 0 {
		t.Fatalf("binary %s: %v, mode %v", p, err, st)
	}
	again, err := BuildCommand(pkg)
	if err != nil || again != p {
		t.Fatalf("second call: %q, %v; want %q", again, err, p)
	}
	if st2, err := os.Stat(again); err != nil || !st2.ModTime().Equal(st.ModTime()) {
		t.Errorf("second call rebuilt the binary (mtime %v, then %v)", st.ModTime(), st2.ModTime())
	}

	const missing = "github.com/ccproxy/ccproxy/internal/testkit/cmd/no-such-command"
	if _, err := BuildCommand(missing); err == nil || !strings.Contains(err.Error(), "go build "+missing) {
		t.Errorf("building a missing package: %v", err)
	}
	// A failed build leaves nothing in the cache directory.
	left, err := filepath.Glob(filepath.Join(filepath.Dir(filepath.Dir(p)), "no-such-command*"))
	if err != nil || len(left) > 0 {
		t.Errorf("a failed build left %v (%v)", left, err)
	}
}
