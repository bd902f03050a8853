package proxy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// When Serve returns, no spill file of a replay log is open any more and
// the spool's run directory is gone: on Windows an open file cannot be
// removed, so a file left open there would outlive the process.
func TestShutdownClosesSpillFiles(t *testing.T) {
	spool := t.TempDir()
	ts := startServer(t, Options{ReplayOptions: ReplayOptions{ReplayBytes: 4 << 10, SpoolDir: spool}})
	c := ts.dial(t)
	s := c.create(nil)
	c.turn(s, "flood 300 200") // 60 KB of events: most of them spill
	segs, _ := filepath.Glob(filepath.Join(spool, "*", "*.log"))
	if len(segs) == 0 {
		t.Fatal("nothing spilled: the test needs spill files")
	}
	if err := ts.stop(); err != nil {
		t.Fatal(err)
	}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil && strings.HasPrefix(target, spool) {
			t.Errorf("still open after Serve returned: %s", target)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(spool, "*")); len(left) != 0 {
		t.Errorf("left in the spool: %v", left)
	}
}
