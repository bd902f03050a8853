//go:build unix

package mcpconfig

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
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

// The directory of a live process stays; once the process is killed
// (SIGKILL: no cleanup of its own) the next RemoveStale removes it.
func TestRemoveStale(t *testing.T) {
	base := t.TempDir()
	helper := exec.Command(os.Args[0], "-test.run=^TestPrivDirHelper$")
	helper.Env = append(os.Environ(), "MCPCONFIG_PRIVDIR_HELPER="+base)
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

	removed, err := removeStale(base)
	if err != nil || len(removed) != 1 || removed[0] != abandoned {
		t.Errorf("removeStale with the helper alive = %v, %v; want only %s", removed, err, abandoned)
	}
	if _, err := os.Stat(filepath.Join(dir, "mcp.json")); err != nil {
		t.Fatalf("the live helper's file is gone: %v", err)
	}

	helper.Process.Kill()
	helper.Wait()
	removed, err = removeStale(base)
	if err != nil || len(removed) != 1 || removed[0] != dir {
		t.Errorf("removeStale after the helper was killed = %v, %v; want %s", removed, err, dir)
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
	base := os.Getenv("MCPCONFIG_PRIVDIR_HELPER")
	if base == "" {
		t.Skip("helper process of TestRemoveStale")
	}
	dir, _, err := makeRunDir(base)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "mcp.json"), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString(dir + "\n")
	bufio.NewReader(os.Stdin).ReadString('\n')
}

func TestPrivateBaseRefused(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	base := filepath.Join(tmp, "ccproxy-"+strconv.Itoa(os.Getuid()))
	if err := os.Mkdir(base, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := privateBase(); err == nil || !strings.Contains(err.Error(), base) || !strings.Contains(err.Error(), "0700") {
		t.Errorf("privateBase with a 0755 directory = %v, want an error naming it", err)
	}
	os.Remove(base)
	if err := os.Symlink(tmp, base); err != nil {
		t.Fatal(err)
	}
	if _, err := privateBase(); err == nil {
		t.Error("privateBase accepted a symlink")
	}
}
