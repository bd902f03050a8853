package childproc_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ccproxy/ccproxy/internal/childproc"
	"github.com/ccproxy/ccproxy/internal/testkit"
)

// guarded returns `sh -c script` prepared by SetGroup, with a unique
// marker in its environment, and checks that it goes through the guard.
func guarded(t *testing.T, script string) (*exec.Cmd, string) {
	t.Helper()
	marker := fmt.Sprintf("CHILDPROC_TEST_MARKER=%s-%d", t.Name(), time.Now().UnixNano())
	cmd := exec.Command("sh", "-c", script)
	cmd.Env = append(os.Environ(), marker)
	childproc.SetGroup(cmd)
	if cmd.Path != "/proc/self/exe" {
		t.Fatalf("SetGroup did not put the guard in front: Path %q Args %q", cmd.Path, cmd.Args)
	}
	return cmd, marker
}

func TestGuardExitStatusAndStreams(t *testing.T) {
	var stdout, stderr bytes.Buffer
	r3, w3, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r3.Close()
	// ExtraFiles set before SetGroup reach the command at the same number.
	cmd := exec.Command("sh", "-c", `read line; echo "out:$line"; echo "err:$line" >&2; echo "fd3:$line" >&3; exit 7`)
	cmd.ExtraFiles = []*os.File{w3}
	childproc.SetGroup(cmd)
	if cmd.Path != "/proc/self/exe" {
		t.Fatalf("not guarded: %q", cmd.Args)
	}
	cmd.Stdin = strings.NewReader("hello\n")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	w3.Close()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 7 {
		t.Fatalf("Run = %v, want exit status 7", err)
	}
	if stdout.String() != "out:hello\n" || stderr.String() != "err:hello\n" {
		t.Errorf("stdout %q stderr %q, want out:hello / err:hello", stdout.String(), stderr.String())
	}
	fd3, _ := bufio.NewReader(r3).ReadString('\n')
	if fd3 != "fd3:hello\n" {
		t.Errorf("extra file 3 got %q", fd3)
	}
}

func TestGuardExitCodes(t *testing.T) {
	for _, code := range []int{0, 1, 2, 125, 126, 127, 255} {
		cmd, _ := guarded(t, fmt.Sprintf("exit %d", code))
		err := cmd.Run()
		if got := cmd.ProcessState.ExitCode(); got != code {
			t.Errorf("exit %d: got %d (%v)", code, got, err)
		}
	}
}

// The command dies by a signal: so does the guard, by the same signal, and
// the caller sees it in the wait status.
func TestGuardSignalStatus(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL, syscall.SIGINT, syscall.SIGSEGV, syscall.SIGABRT, syscall.SIGUSR1} {
		cmd, _ := guarded(t, fmt.Sprintf("kill -%d $$", sig))
		_ = cmd.Run()
		ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
		if !ws.Signaled() || ws.Signal() != sig {
			t.Errorf("kill -%v: wait status %v (exited %v, code %d), want killed by %v", sig, cmd.ProcessState, ws.Exited(), ws.ExitStatus(), sig)
		}
	}
}

// SIGTERM to the group, as the callers stop a command, or to the pid
// (cmd.Process.Signal): the guard forwards it, and the command gets it
// once.
func TestGuardSignalForwarded(t *testing.T) {
	for _, tc := range []struct {
		name   string
		signal func(pid int) error
	}{
		{"group", func(pid int) error { return childproc.SignalGroup(pid, syscall.SIGTERM) }},
		{"pid", func(pid int) error { return syscall.Kill(pid, syscall.SIGTERM) }},
	} {
		cmd, _ := guarded(t, `n=0; trap 'n=$((n+1))' TERM; echo ready; while [ $n -lt 1 ]; do sleep 0.01; done; sleep 0.2; exit $((40+n))`)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if line, _ := bufio.NewReader(out).ReadString('\n'); line != "ready\n" {
			t.Fatalf("read %q", line)
		}
		if err := tc.signal(cmd.Process.Pid); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		if got := cmd.ProcessState.ExitCode(); got != 41 {
			t.Errorf("SIGTERM to the %s: exit %d, want 41: the command gets SIGTERM once", tc.name, got)
		}
	}
}

// A command that cannot start fails in Start as without the guard.
func TestGuardStartErrors(t *testing.T) {
	if err := exec.Command("/nonexistent/cmd").Start(); err == nil {
		t.Fatal("no error without the guard")
	}
	cmd := exec.Command("/nonexistent/cmd")
	childproc.SetGroup(cmd)
	if err := cmd.Start(); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Start = %v, want not exist", err)
	}
	noexec := filepath.Join(t.TempDir(), "noexec")
	if err := os.WriteFile(noexec, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd = exec.Command(noexec)
	childproc.SetGroup(cmd)
	if err := cmd.Start(); !errors.Is(err, os.ErrPermission) {
		t.Errorf("Start = %v, want permission denied", err)
	}
}

// What the command leaves behind (a process that left the group with
// setsid and ignores SIGTERM, one in the group that ignores SIGTERM and
// has no stdin) is gone when Wait returns.
func TestGuardEndsLeftovers(t *testing.T) {
	cmd, marker := guarded(t, `export D=`+t.TempDir()+`
`+stubborn+`
exit 3`)
	if err := cmd.Run(); cmd.ProcessState.ExitCode() != 3 {
		t.Fatalf("Run = %v, want exit 3", err)
	}
	if left := testkit.MarkedProcesses(marker); len(left) > 0 {
		t.Errorf("still running after Wait: %v", left)
	}
}

// ccproxy (here a helper process) dies by SIGKILL: the guard ends what the
// command started, even processes that ignore SIGTERM and stdin EOF and
// one that left the group with setsid.
func TestGuardParentKilled(t *testing.T) {
	marker := fmt.Sprintf("CHILDPROC_TEST_MARKER=%s-%d", t.Name(), time.Now().UnixNano())
	helper := exec.Command(os.Args[0], "-test.run=^TestGuardHelperParent$")
	// The helper is killed, so it cannot remove a temporary folder of its
	// own: it works in this test's.
	helper.Env = append(os.Environ(), marker, "CHILDPROC_HELPER_PARENT="+t.TempDir())
	out, err := helper.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	helper.Stderr = os.Stderr
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	ready := false
	for sc.Scan() {
		if sc.Text() == "ready" {
			ready = true
			break
		}
	}
	if !ready {
		helper.Process.Kill()
		helper.Wait()
		t.Fatal("the helper did not get ready")
	}
	before := testkit.MarkedProcesses(marker)
	if len(before) < 4 { // the guard, sh, the setsid'd sh and its sleep, the stubborn sleep
		t.Fatalf("expected the command's processes, found %v", before)
	}
	helper.Process.Kill()
	helper.Wait()
	if left := testkit.WaitGone(marker, 5*time.Second); len(left) > 0 {
		t.Errorf("still running 5 s after the parent's SIGKILL: %v", left)
		for _, p := range left {
			syscall.Kill(p.PID, syscall.SIGKILL)
		}
	}
}

// stubborn starts two processes that ignore SIGTERM, SIGHUP and stdin EOF
// (they never read it): one that left the group with setsid, one in it.
// It waits until both run. $D is a private directory.
const stubborn = `setsid sh -c 'trap "" TERM HUP; echo $$ >"$D/a.tmp"; mv "$D/a.tmp" "$D/a"; exec sleep 300' </dev/null >/dev/null 2>&1 &
(trap '' TERM HUP; echo $$ >"$D/b.tmp"; mv "$D/b.tmp" "$D/b"; exec sleep 300) </dev/null >/dev/null 2>&1 &
while [ ! -e "$D/a" ] || [ ! -e "$D/b" ]; do sleep 0.01; done`

// TestGuardHelperParent is the "ccproxy" of TestGuardParentKilled.
func TestGuardHelperParent(t *testing.T) {
	dir := os.Getenv("CHILDPROC_HELPER_PARENT")
	if dir == "" {
		t.Skip("helper process of TestGuardParentKilled")
	}
	cmd := exec.Command("sh", "-c", `export D=`+dir+`
`+stubborn+`
echo ready
trap '' TERM; exec sleep 302`)
	cmd.Stdout = os.Stdout
	childproc.SetGroup(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
}

// SIGKILL to a guarded group (the callers' last resort) also kills what
// the command started outside the group: the guard's tree goes first.
func TestGuardGroupKill(t *testing.T) {
	cmd, marker := guarded(t, `export D=`+t.TempDir()+`
`+stubborn+`
echo ready
trap '' TERM; exec sleep 302`)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if line, _ := bufio.NewReader(out).ReadString('\n'); line != "ready\n" {
		t.Fatalf("read %q", line)
	}
	if err := childproc.SignalGroup(cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if left := testkit.WaitGone(marker, 5*time.Second); len(left) > 0 {
		t.Errorf("still running 5 s after SIGKILL to the group: %v", left)
		for _, p := range left {
			syscall.Kill(p.PID, syscall.SIGKILL)
		}
	}
}
