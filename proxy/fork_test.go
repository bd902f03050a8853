package proxy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/ccproxy/ccproxy/protocol"
)

// waitArgs waits until the fake claude started last has written its
// arguments to argsFile (removed before it started; read once it is
// whole JSON), and returns them.
func waitArgs(t *testing.T, argsFile string) []string {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		var args []string
		if b, err := os.ReadFile(argsFile); err == nil && json.Unmarshal(b, &args) == nil {
			return args
		}
		if time.Now().After(deadline) {
			t.Fatalf("no arguments written to %s in %v", argsFile, waitTimeout)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// session/create {resume, fork} launches claude with --resume ID
// --fork-session; a restart before claude reported the fork's own session
// id forks again (nothing of the fork was written), one after it resumes
// the fork's session without the flag; a plain resume never forks.
func TestForkSpawnArgs(t *testing.T) {
	t.Parallel()
	argsFile := filepath.Join(t.TempDir(), "args.json")
	ts := startServer(t, Options{}, "FAKE_ARGS_FILE="+argsFile)
	c := ts.dial(t)
	forks := func(args []string, resume string) bool {
		if argValue(args, "--resume") != resume {
			t.Errorf("arguments %v, want --resume %s", args, resume)
		}
		return slices.Contains(args, "--fork-session")
	}

	s := c.create(map[string]any{"resume": "orig-1", "fork": true})
	if !forks(waitArgs(t, argsFile), "orig-1") {
		t.Error("a fork's claude was not launched with --fork-session")
	}
	os.Remove(argsFile)
	restartSession(t, ts, c, s)
	c.turn(s, "hi") // held, then run by the new claude
	if !forks(waitArgs(t, argsFile), "orig-1") {
		t.Error("a restart before the fork's session id was known does not fork again")
	}
	var list protocol.SessionListResult
	mustUnmarshal(t, c.do(protocol.TypeSessionList, map[string]any{}), &list)
	if len(list.Sessions) != 1 || list.Sessions[0].ClaudeSessionID != "fork-of-orig-1" {
		t.Fatalf("session/list %+v, want the fork's own Claude session", list.Sessions)
	}
	os.Remove(argsFile)
	restartSession(t, ts, c, s)
	c.turn(s, "again")
	if forks(waitArgs(t, argsFile), "fork-of-orig-1") {
		t.Error("a restart of the fork forks its own session again")
	}

	os.Remove(argsFile)
	c.create(map[string]any{"resume": "orig-1"})
	if forks(waitArgs(t, argsFile), "orig-1") {
		t.Error("a plain resume forks")
	}
}
