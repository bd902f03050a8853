//go:build windows

package childproc

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/windows"
)

// The test binary doubles as the child: with CHILDPROC_TEST_ROLE=leader it
// starts itself as a "sleeper" (which neither exits on its own nor on EOF
// of its stdin, so only a kill of the whole group ends it), prints the
// sleeper's pid and waits for it.
func TestMain(m *testing.M) {
	switch os.Getenv("CHILDPROC_TEST_ROLE") {
	case "leader":
		c := exec.Command(os.Args[0])
		c.Env = append(os.Environ(), "CHILDPROC_TEST_ROLE=sleeper")
		if err := c.Start(); err != nil {
			os.Exit(3)
		}
		fmt.Println(c.Process.Pid)
		_ = c.Wait()
		os.Exit(0)
	case "sleeper":
		time.Sleep(time.Hour)
		os.Exit(0)
	case "polite":
		// Ends with status 7 on Ctrl-Break (Go reports it as os.Interrupt).
		c := make(chan os.Signal, 1)
		signal.Notify(c, os.Interrupt)
		fmt.Println("ready")
		<-c
		os.Exit(7)
	}
	os.Exit(m.Run())
}

// waitExit waits for process pid to end. The bound is only there so that a
// process that is never killed fails the test instead of hanging it.
func waitExit(t *testing.T, pid int) {
	t.Helper()
	h, err := windows.OpenProcess(windows.SYNCHRONIZE, false, uint32(pid))
	if err != nil {
		return // gone already
	}
	defer windows.CloseHandle(h)
	ev, err := windows.WaitForSingleObject(h, uint32((2 * time.Minute).Milliseconds()))
	if err != nil {
		t.Fatal(err)
	}
	if ev == uint32(windows.WAIT_TIMEOUT) {
		t.Fatalf("process %d is still running: the kill of its group did not reach it", pid)
	}
}

// A leader and its child started with Start are in one job: SIGKILL of the
// group ends both, and the group is gone afterwards.
func TestGroupJob(t *testing.T) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "CHILDPROC_TEST_ROLE=leader")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := Start(cmd); err != nil {
		t.Fatal(err)
	}
	pgid := cmd.Process.Pid
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the sleeper's pid: %v", err)
	}
	sleeper, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatal(err)
	}
	if !GroupAlive(pgid) || !leaderAlive(sleeper) {
		t.Fatal("the group is not alive after Start")
	}
	if err := SignalGroup(pgid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	waitExit(t, sleeper)
	if GroupAlive(pgid) {
		t.Error("the group is alive after SIGKILL and its processes' exit")
	}
	if !isEnded(pgid) {
		t.Error("the group is not remembered as ended")
	}
	if err := SignalGroup(pgid, syscall.SIGKILL); err != nil {
		t.Errorf("killing a group that is gone: %v", err)
	}
	if err := SignalGroup(1, syscall.SIGTERM); err == nil {
		t.Error("group 1 must be refused")
	}
	if err := SignalGroup(pgid, syscall.SIGHUP); err == nil {
		t.Error("SIGHUP must be refused on Windows")
	}
}

// Ended groups are remembered, at most maxEnded of them: a late signal to
// one of them does nothing, whoever has its pid now.
func TestEndedGroups(t *testing.T) {
	const first = 1 << 30 // pids no process has
	for i := 0; i < maxEnded+10; i++ {
		h, err := newJob()
		if err != nil {
			t.Fatal(err)
		}
		register(first+i, h)
		if GroupAlive(first + i) { // an empty job: the group ends
			t.Fatalf("group %d with an empty job is alive", first+i)
		}
		if !isEnded(first + i) {
			t.Fatalf("group %d is not remembered as ended", first+i)
		}
	}
	jobs.mu.Lock()
	n := len(jobs.ended)
	_, oldest := jobs.byPID[first]
	jobs.mu.Unlock()
	if n != maxEnded || oldest {
		t.Errorf("%d ended groups remembered (want %d); the oldest still there: %v", n, maxEnded, oldest)
	}
	if err := SignalGroup(first+maxEnded+9, syscall.SIGTERM); err != nil {
		t.Errorf("signalling an ended group: %v", err)
	}
}

// SIGTERM is Ctrl-Break for a child that shares our console: it can end
// cleanly. Without a console to share, it is a termination.
func TestGroupPoliteStop(t *testing.T) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "CHILDPROC_TEST_ROLE=polite")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := Start(cmd); err != nil {
		t.Fatal(err)
	}
	if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
		t.Fatalf("waiting for the child to be ready: %v", err)
	}
	if err := SignalGroup(cmd.Process.Pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	code := cmd.ProcessState.ExitCode()
	t.Logf("exit status %d", code)
	if code != 7 && code != 1 {
		t.Errorf("exit status %d: neither the Ctrl-Break handler's 7 nor a termination's 1", code)
	}
}
