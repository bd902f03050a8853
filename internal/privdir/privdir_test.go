package privdir

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// These run on Windows too, where NewRun renames its lock file while it is
// open and Remove and RemoveStale delete it: see createLockFile.

// The directory of a live process stays; once the process is killed
// (SIGKILL: no cleanup of its own) the next RemoveStale removes it.
func TestRemoveStale(t *testing.T) {
	base := t.TempDir()
	helper := exec.Command(os.Args[0], "-test.run=^TestPrivDirHelper$")
	helper.Env = append(os.Environ(), "PRIVDIR_HELPER="+base)
	out, err := helper.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	in, err := helper.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	helper.Stderr = os.Stderr
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	dir := strings.TrimSpace(line)
	if !strings.HasPrefix(dir, base) {
		helper.Process.Kill()
		helper.Wait()
		t.Fatalf("helper said %q", line)
	}
	// Not ours, being created: no lock file yet, fresh.
	creating := filepath.Join(base, runPrefix+"1-creating")
	abandoned := filepath.Join(base, runPrefix+"2-abandoned")
	other := filepath.Join(base, "not-a-run-dir")
	for _, d := range []string{creating, abandoned, other} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * staleUnlocked)
	if err := os.Chtimes(abandoned, old, old); err != nil {
		t.Fatal(err)
	}

	removed, err := RemoveStale(base)
	if err != nil || len(removed) != 1 || removed[0] != abandoned {
		t.Errorf("RemoveStale with the helper alive = %v, %v; want only %s", removed, err, abandoned)
	}
	if _, err := os.Stat(filepath.Join(dir, "mcp.json")); err != nil {
		t.Fatalf("the live helper's file is gone: %v", err)
	}

	helper.Process.Kill()
	helper.Wait()
	removed, err = RemoveStale(base)
	if err != nil || len(removed) != 1 || removed[0] != dir {
		t.Errorf("RemoveStale after the helper was killed = %v, %v; want %s", removed, err, dir)
	}
	for _, d := range []string{creating, other} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s was removed: %v", d, err)
		}
	}
}

// TestPrivDirHelper is the "ccproxy" of TestRemoveStale: it makes its run
// directory, writes a file, prints the directory and waits for stdin EOF.
func TestPrivDirHelper(t *testing.T) {
	base := os.Getenv("PRIVDIR_HELPER")
	if base == "" {
		t.Skip("helper process of TestRemoveStale")
	}
	run, err := NewRun(base)
	if err != nil {
		t.Fatal(err)
	}
	dir := run.Dir
	if err := os.WriteFile(filepath.Join(dir, "mcp.json"), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString(dir + "\n")
	bufio.NewReader(os.Stdin).ReadString('\n')
}

// A Run is present until removed; Remove removes it, and it is no longer
// a stale candidate.
func TestRunRemove(t *testing.T) {
	base := t.TempDir()
	run, err := NewRun(base)
	if err != nil {
		t.Fatal(err)
	}
	if !run.Present() {
		t.Fatal("a new Run is not present")
	}
	if removed, err := RemoveStale(base); err != nil || len(removed) != 0 {
		t.Fatalf("RemoveStale with the Run held = %v, %v; want nothing removed", removed, err)
	}
	if err := run.Remove(); err != nil {
		t.Fatal(err)
	}
	if run.Present() {
		t.Fatal("a removed Run is still present")
	}
	// Released without removing: the next RemoveStale takes it.
	run2, err := NewRun(base)
	if err != nil {
		t.Fatal(err)
	}
	run2.Release()
	if removed, err := RemoveStale(base); err != nil || len(removed) != 1 || removed[0] != run2.Dir {
		t.Fatalf("RemoveStale after Release = %v, %v; want %s", removed, err, run2.Dir)
	}
}
