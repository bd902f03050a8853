package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ccproxy/ccproxy/internal/childproc"
	"github.com/ccproxy/ccproxy/internal/testkit"
	"github.com/ccproxy/ccproxy/internal/testkit/fakeapi"
)

// kill -9 of `ccproxy serve` (the built binary, the real CLI, the fake
// API) leaves nothing running within 5 s: not claude, not the npm
// reference MCP server, not a server that ignores SIGTERM and stdin EOF,
// not one that left the process group with setsid. The --mcp-config
// directory the killed process left is removed when ccproxy serve starts
// again; the new process's own is kept.
func TestServeKill9LeavesNothing(t *testing.T) {
	bin := testkit.CCProxyBinary(t)
	claude := testkit.Claude(t)
	everything := testkit.NodeBin(t, "mcp-server-everything")
	api := fakeapi.Start(t, fakeapi.First(fakeapi.OnText("hello", fakeapi.Say("hi"))))
	testdata, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	home, project, tmp := t.TempDir(), t.TempDir(), t.TempDir()
	marker := fmt.Sprintf("serve-kill9-%d", time.Now().UnixNano())
	env := map[string]any{"CCPROXY_TEST_MARKER": marker}
	mcpJSON, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"everything": map[string]any{"command": everything, "env": env},
		"stubborn":   map[string]any{"command": "sh", "args": []string{filepath.Join(testdata, "stubborn-mcp.sh"), "stubborn"}, "env": env},
		"escaper":    map[string]any{"command": "sh", "args": []string{filepath.Join(testdata, "stubborn-mcp.sh"), "escaper", "setsid"}, "env": env},
	}})
	if err := os.WriteFile(filepath.Join(project, ".mcp.json"), mcpJSON, 0o644); err != nil {
		t.Fatal(err)
	}
	environ := append(testkit.WithoutEnv(os.Environ(), "CCPROXY_TOKEN"), api.Env(home)...)
	environ = append(environ, "CCPROXY_TEST_MARKER="+marker, "CCPROXY_TOKEN="+serveToken, "TMPDIR="+tmp)
	start := func() (*exec.Cmd, firstLine, *testkit.SyncBuffer) {
		cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--project", project, "--claude", claude, "--trust-project-mcp", "--log-level", "debug")
		testkit.DieWithTest(cmd)
		cmd.Env = environ
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		stderr := &testkit.SyncBuffer{}
		cmd.Stderr = stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd, readFirstLine(t, bufio.NewReader(stdout)), stderr
	}
	defer func() {
		for _, p := range testkit.MarkedProcesses("CCPROXY_TEST_MARKER=" + marker) {
			syscall.Kill(p.PID, syscall.SIGKILL) // whatever this test started
		}
	}()

	cmd, fl, stderr := start()
	c := dialProxy(t, fl.URL, http.Header{"Authorization": {"Bearer " + serveToken}})
	s := c.do("session/create", map[string]any{})["session"].(string)
	c.do("session/subscribe", map[string]any{"session": s})
	c.do("session/send", map[string]any{"session": s, "text": "hello"})
	c.next("result", isResultOf(s))

	// Everything runs under claude: the three servers (and their guard).
	// The stubborn ones answer the MCP handshake, so claude keeps them.
	// ccproxy's own probe starts the same servers for a moment, so a
	// server counts only when it descends from claude (whose pid the log
	// gives: "claude started", or "claude taken from the spares" when the
	// session claimed the parked spare of --warm 1); the CLI may be a
	// native binary or a node wrapper around one.
	claudePID := loggedPID(t, stderr, "claude started", "claude taken from the spares")
	want := map[string]string{"everything": "mcp-server-everything", "stubborn": "stubborn-mcp.sh stubborn", "escaper": "stubborn-mcp.sh escaper"}
	var running []testkit.GroupProc
	found := map[string]int{}
	deadline := time.Now().Add(60 * time.Second)
	for {
		running = testkit.MarkedProcesses("CCPROXY_TEST_MARKER=" + marker)
		clear(found)
		for name, sub := range want {
			for _, p := range running {
				if strings.Contains(p.Command, sub) && descendsFrom(p.PID, claudePID) {
					found[name] = p.PID
				}
			}
		}
		if len(found) == len(want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("under claude (pid %d) after 60 s: %v, want %v; running: %v\nlog:\n%s", claudePID, found, want, running, stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The stubborn one stays in claude's process group (the group of the
	// command under the guard whose pid the log gives, which every server
	// claude starts joins); the escaper left it and the session, and leads
	// a session of its own. Session ids of processes that did not call
	// setsid may read 0: in a container the session leader can live
	// outside the pid namespace (CI's does), so groups are the test.
	claudeG := groupOf(found["everything"])
	stubbornG, escaperG := groupOf(found["stubborn"]), groupOf(found["escaper"])
	stubbornSID, escaperSID := sessionOf(found["stubborn"]), sessionOf(found["escaper"])
	if claudeG == 0 || claudeG == claudePID || !descendsFrom(claudeG, claudePID) || stubbornG != claudeG ||
		escaperG == claudeG || escaperSID != found["escaper"] || escaperSID == stubbornSID {
		t.Errorf("guard pid %d: groups claude %d, stubborn %d, escaper %d; sessions stubborn %d, escaper %d (pid %d); want the stubborn one in claude's group under the guard, the escaper leading a session of its own",
			claudePID, claudeG, stubbornG, escaperG, stubbornSID, escaperSID, found["escaper"])
	}
	leftDir := mcpConfigDirs(t, tmp)
	if len(leftDir) != 1 {
		t.Fatalf("want one private --mcp-config directory of the running ccproxy, found %v", leftDir)
	}

	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	killed := time.Now()
	if left := testkit.WaitGone("CCPROXY_TEST_MARKER="+marker, 5*time.Second); len(left) > 0 {
		t.Errorf("still running 5 s after kill -9 of ccproxy: %v\n(were running: %v)", left, running)
	} else {
		t.Logf("all %d processes gone %v after kill -9", len(running), time.Since(killed).Round(10*time.Millisecond))
	}

	// The killed process's directory is still there; the next start
	// removes it, and keeps its own.
	if got := mcpConfigDirs(t, tmp); len(got) != 1 || got[0] != leftDir[0] {
		t.Fatalf("after kill -9: %v, want %v left", got, leftDir)
	}
	cmd2, fl2, stderr2 := start()
	c2 := dialProxy(t, fl2.URL, http.Header{"Authorization": {"Bearer " + serveToken}})
	s2 := c2.do("session/create", map[string]any{})["session"].(string)
	c2.do("session/subscribe", map[string]any{"session": s2})
	c2.do("session/send", map[string]any{"session": s2, "text": "hello"})
	c2.next("result", isResultOf(s2))
	got := mcpConfigDirs(t, tmp)
	if len(got) != 1 || got[0] == leftDir[0] || !strings.Contains(filepath.Base(got[0]), "-"+strconv.Itoa(cmd2.Process.Pid)+"-") {
		t.Errorf("after the restart: %v, want only the new process's directory (the killed one's was %v)\nlog:\n%s", got, leftDir, stderr2.String())
	}
	if !strings.Contains(stderr2.String(), "removed --mcp-config files left by stopped ccproxy processes") {
		t.Errorf("the restart did not log the removal:\n%s", stderr2.String())
	}
	cmd2.Process.Signal(syscall.SIGTERM)
	cmd2.Wait()
	testkit.CheckNothingLeft(t, marker)
	if t.Failed() {
		t.Logf("first log:\n%s", stderr.String())
	}
}

// mcpConfigDirs lists the private --mcp-config directories under tmp that
// hold a file.
func mcpConfigDirs(t *testing.T, tmp string) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(tmp, "ccproxy-"+strconv.Itoa(os.Getuid()), "run-*"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range dirs {
		if files, _ := filepath.Glob(filepath.Join(d, "ccproxy-mcp-*.json")); len(files) > 0 {
			out = append(out, d)
		}
	}
	return out
}

// loggedPID returns the pid= of the first log line of one of msgs in log.
func loggedPID(t *testing.T, log *testkit.SyncBuffer, msgs ...string) int {
	t.Helper()
	for _, line := range strings.Split(log.String(), "\n") {
		if !slices.ContainsFunc(msgs, func(msg string) bool { return strings.Contains(line, `msg="`+msg+`"`) }) {
			continue
		}
		for _, f := range strings.Fields(line) {
			if v, ok := strings.CutPrefix(f, "pid="); ok {
				if pid, err := strconv.Atoi(v); err == nil {
					return pid
				}
			}
		}
	}
	t.Fatalf("no %q line with a pid in the log:\n%s", msgs, log.String())
	return 0
}

// descendsFrom reports whether process pid is ancestor or one of its
// descendants, following parent pids in /proc.
func descendsFrom(pid, ancestor int) bool {
	for i := 0; i < 64 && pid > 1; i++ {
		if pid == ancestor {
			return true
		}
		st, ok := childproc.ProcStat(pid)
		if !ok {
			return false
		}
		pid = st.PPID
	}
	return false
}

// groupOf and sessionOf return the process group and session of process
// pid: 0 if unknown, or if the leader is outside this pid namespace.
func groupOf(pid int) int   { st, _ := childproc.ProcStat(pid); return st.PGrp }
func sessionOf(pid int) int { st, _ := childproc.ProcStat(pid); return st.Session }
