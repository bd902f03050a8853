package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ccproxy/ccproxy/internal/testkit"
	"github.com/ccproxy/ccproxy/internal/testkit/fakeapi"
	"github.com/ccproxy/ccproxy/internal/testkit/mcptest"
)

// Every start cleans up after a killed predecessor, --demo too: of two
// live serves (the real CLI, an MCP server, so each has its private
// --mcp-config file), one is killed with SIGKILL; a `serve --demo` started
// next removes the killed one's directory, file and all, and keeps the
// live one's. A clean shutdown (SIGTERM) leaves no run directory behind.
func TestDemoStartRemovesKilledServesFiles(t *testing.T) {
	bin := testkit.CCProxyBinary(t)
	claude := testkit.Claude(t)
	testmcp := mcptest.Command(t)
	api := fakeapi.Start(t, fakeapi.First(fakeapi.OnText("hello", fakeapi.Say("hi"))))
	home, project, tmp := t.TempDir(), t.TempDir(), t.TempDir()
	marker := fmt.Sprintf("stale-demo-%d", time.Now().UnixNano())
	mcpJSON, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"testmcp": map[string]any{"command": testmcp, "env": map[string]any{"CCPROXY_TEST_MARKER": marker}},
	}})
	if err := os.WriteFile(filepath.Join(project, ".mcp.json"), mcpJSON, 0o644); err != nil {
		t.Fatal(err)
	}
	environ := append(testkit.WithoutEnv(os.Environ(), "CCPROXY_TOKEN"), api.Env(home)...)
	environ = append(environ, "CCPROXY_TEST_MARKER="+marker, "CCPROXY_TOKEN="+serveToken, "TMPDIR="+tmp)
	defer func() {
		for _, p := range testkit.MarkedProcesses("CCPROXY_TEST_MARKER=" + marker) {
			syscall.Kill(p.PID, syscall.SIGKILL) // whatever this test started
		}
	}()
	start := func(args ...string) (*exec.Cmd, firstLine, *testkit.SyncBuffer) {
		cmd := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0", "--project", project, "--log-level", "debug"}, args...)...)
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
	live := func() (*exec.Cmd, *testkit.SyncBuffer, string) {
		cmd, fl, stderr := start("--claude", claude, "--trust-project-mcp")
		c := dialProxy(t, fl.URL, http.Header{"Authorization": {"Bearer " + serveToken}})
		s := c.do("session/create", map[string]any{})["session"].(string)
		c.do("session/subscribe", map[string]any{"session": s})
		c.do("session/send", map[string]any{"session": s, "text": "hello"})
		c.next("result", isResultOf(s))
		var own string
		for _, d := range mcpConfigDirs(t, tmp) {
			if strings.HasPrefix(filepath.Base(d), "run-"+strconv.Itoa(cmd.Process.Pid)+"-") {
				own = d
			}
		}
		if own == "" {
			t.Fatalf("no --mcp-config file of ccproxy %d under %s\nlog:\n%s", cmd.Process.Pid, tmp, stderr.String())
		}
		return cmd, stderr, own
	}
	wait := func(cmd *exec.Cmd, stderr *testkit.SyncBuffer) {
		t.Helper()
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("ccproxy %d exited with %v after SIGTERM\nlog:\n%s", cmd.Process.Pid, err, stderr.String())
			}
		case <-time.After(60 * time.Second):
			t.Fatalf("ccproxy %d did not exit within 60 s of SIGTERM", cmd.Process.Pid)
		}
	}

	killed, _, killedDir := live()
	kept, keptLog, keptDir := live()
	if err := killed.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	killed.Wait()
	if _, err := os.Stat(killedDir); err != nil {
		t.Fatalf("the killed ccproxy's directory is already gone: %v", err)
	}

	demo, _, demoLog := start("--demo")
	if _, err := os.Lstat(killedDir); err == nil {
		t.Errorf("serve --demo started and the killed ccproxy's --mcp-config directory %s is still there\nlog:\n%s", killedDir, demoLog.String())
	}
	if got := mcpConfigDirs(t, tmp); len(got) != 1 || got[0] != keptDir {
		t.Errorf("after the demo started: %v, want the live ccproxy's %s kept, file and all", got, keptDir)
	}
	if !strings.Contains(demoLog.String(), "removed --mcp-config files left by stopped ccproxy processes") {
		t.Errorf("the demo did not log the removal:\n%s", demoLog.String())
	}
	wait(demo, demoLog)
	wait(kept, keptLog)
	left, _ := filepath.Glob(filepath.Join(tmp, "ccproxy-"+strconv.Itoa(os.Getuid()), "run-*"))
	if len(left) != 0 {
		t.Errorf("after clean shutdowns, run directories are left: %v\nlog:\n%s", left, keptLog.String())
	}
	testkit.CheckNothingLeft(t, marker)
}
