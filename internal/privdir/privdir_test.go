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

// RemoveIfEmpty removes a Run holding nothing but its lock, and keeps one
// that holds a file (locked: still a live process's).
func TestRunRemoveIfEmpty(t *testing.T) {
	base := t.TempDir()
	run, err := NewRun(base)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(run.Dir, "mcp.json")
	if err := os.WriteFile(file, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	if removed, err := run.RemoveIfEmpty(); removed || err != nil {
		t.Fatalf("RemoveIfEmpty with a file = %v, %v; want it kept", removed, err)
	}
	if removed, err := RemoveStale(base); err != nil || len(removed) != 0 || !run.Present() {
		t.Fatalf("after RemoveIfEmpty kept it: RemoveStale = %v, %v, present %v; want it still locked", removed, err, run.Present())
	}
	os.Remove(file)
	if removed, err := run.RemoveIfEmpty(); !removed || err != nil {
		t.Fatalf("RemoveIfEmpty when empty = %v, %v; want it removed", removed, err)
	}
	if entries, _ := os.ReadDir(base); len(entries) != 0 {
		t.Errorf("left in the base: %v", entries)
	}
}

// Sweep makes no base, removes nothing from a missing one, and otherwise
// removes what RemoveStale removes.
func TestSweep(t *testing.T) {
	base := filepath.Join(t.TempDir(), "base")
	if removed, err := Sweep(base); err != nil || len(removed) != 0 {
		t.Fatalf("Sweep of a missing base = %v, %v", removed, err)
	}
	if _, err := os.Lstat(base); err == nil {
		t.Fatal("Sweep made the base")
	}
	if err := Base(base); err != nil {
		t.Fatal(err)
	}
	live, err := NewRun(base)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Remove()
	gone, err := NewRun(base)
	if err != nil {
		t.Fatal(err)
	}
	gone.Release()
	if removed, err := Sweep(base); err != nil || len(removed) != 1 || removed[0] != gone.Dir || !live.Present() {
		t.Fatalf("Sweep = %v, %v, live present %v; want only %s", removed, err, live.Present(), gone.Dir)
	}
}
