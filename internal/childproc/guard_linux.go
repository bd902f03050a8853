package childproc

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// The guard: on Linux every child that SetGroup prepares is started as
//
//	/proc/self/exe ccproxy-guard <guardFlag> FD PATH ARGV0 ARGS...
//
// that is ccproxy (or the test binary) itself, which runs runGuard from
// this package's init before anything else. FD is the read end of the
// lifeline pipe, whose only write end ccproxy holds: it reads EOF exactly
// when ccproxy is gone, however it died.
const guardFlag = "__ccproxy_childproc_guard_v1"

// guardGrace is how long the guard waits after SIGTERM before it sends
// SIGKILL to what is left of the command's processes; parentGoneGrace
// when ccproxy is gone (nobody waits for them any more, and all must be
// gone within seconds).
const (
	guardGrace      = time.Second
	parentGoneGrace = 500 * time.Millisecond
)

var (
	guardOnce sync.Once
	guardOK   bool     // /proc/self/exe and the lifeline are usable
	lifelineR *os.File // passed to every guard; kept open for ccproxy's life
	lifelineW *os.File // never written, never closed: its close is the news
)

func init() {
	if len(os.Args) >= 5 && os.Args[1] == guardFlag {
		runGuard(os.Args[2], os.Args[3], os.Args[4:]) // does not return
	}
}

// setupGuard makes the lifeline pipe once.
func setupGuard() {
	guardOnce.Do(func() {
		if _, err := os.Stat("/proc/self/exe"); err != nil {
			return
		}
		r, w, err := os.Pipe() // close-on-exec: only the guards get r, by ExtraFiles
		if err != nil {
			return
		}
		lifelineR, lifelineW, guardOK = r, w, true
	})
}

// guardCmd rewrites cmd to start through the guard, and reports whether it
// did. It does not when Start is going to fail anyway (cmd.Err, a path that
// is not an executable file): then Start reports that error as before.
func guardCmd(cmd *exec.Cmd) bool {
	if cmd.Err != nil || cmd.Path == "" || cmd.Process != nil {
		return false
	}
	if len(cmd.Args) >= 2 && cmd.Args[1] == guardFlag {
		return true // SetGroup called twice
	}
	path := cmd.Path
	if !filepath.IsAbs(path) && cmd.Dir != "" {
		path = filepath.Join(cmd.Dir, path)
	}
	if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() || syscall.Access(path, 1 /* X_OK */) != nil {
		return false
	}
	setupGuard()
	if !guardOK {
		return false
	}
	argv := cmd.Args
	if len(argv) == 0 {
		argv = []string{cmd.Path}
	}
	fd := 3 + len(cmd.ExtraFiles)
	args := make([]string, 0, 4+len(argv))
	args = append(args, "ccproxy-guard", guardFlag, strconv.Itoa(fd), cmd.Path)
	cmd.Args = append(args, argv...)
	cmd.Path = "/proc/self/exe"
	cmd.ExtraFiles = append(cmd.ExtraFiles, lifelineR)
	return true
}

// forwarded are the signals the guard passes on to the command's group:
// those whose default is to terminate, that a caller may send.
var forwarded = []os.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT,
	syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGALRM}

// runGuard is the guard process, alone in the process group the caller
// sees (SetGroup set Setpgid). It makes itself the subreaper of everything
// the command starts (orphans are reparented to it, not to init), starts
// the command in a process group of its own with its standard streams and
// extra files, and then waits for one of two things:
//
//   - the command ends: the guard ends what is left of its descendants
//     (SIGTERM, guardGrace, SIGKILL) and exits with the command's status,
//     or dies by the command's signal;
//   - ccproxy ends (EOF on the lifeline): the guard ends every descendant
//     the same way and exits.
//
// The forwarded signals, sent to the guard or its group, go to the
// command's group (once). SIGKILL to the guard kills the command by its
// parent-death signal; SignalGroup's SIGKILL kills the guard's tree first.
func runGuard(fdArg, path string, argv []string) {
	fail := func(code int, format string, a ...any) {
		fmt.Fprintf(os.Stderr, "ccproxy: "+format+"\n", a...)
		guardExit(code)
	}
	fd, err := strconv.Atoi(fdArg)
	if err != nil || fd < 3 {
		fail(125, "guard: bad lifeline descriptor %q", fdArg)
	}
	if _, _, e := syscall.RawSyscall6(syscall.SYS_PRCTL, 36 /* PR_SET_CHILD_SUBREAPER */, 1, 0, 0, 0, 0); e != 0 {
		fail(125, "guard: PR_SET_CHILD_SUBREAPER: %v", e)
	}
	syscall.CloseOnExec(fd)
	lifeline := os.NewFile(uintptr(fd), "lifeline")

	// Caught to be forwarded (below); exec resets them to the default in
	// the command. SIGPIPE is the guard's own.
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, forwarded...)
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)

	files := make([]uintptr, fd) // 0..fd-1: the streams and the caller's ExtraFiles
	for i := range files {
		files[i] = uintptr(i)
	}
	pid, err := syscall.ForkExec(path, argv, &syscall.ProcAttr{
		Env:   os.Environ(),
		Files: files,
		Sys:   &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL},
	})
	if err != nil {
		code := 126
		if errors.Is(err, syscall.ENOENT) {
			code = 127
		}
		fail(code, "starting %s: %v", path, err)
	}
	// The command has its streams; the guard keeps none, so EOF on them
	// means what it meant without the guard.
	if null, err := syscall.Open("/dev/null", syscall.O_RDWR, 0); err == nil {
		for i := 0; i < 3; i++ {
			_ = syscall.Dup3(null, i, 0)
		}
		if null > 2 {
			syscall.Close(null)
		}
	}
	for i := 3; i < fd; i++ {
		syscall.Close(i)
	}

	// The reaper reaps every child (the command and adopted orphans); it
	// returns when the guard has no child left (ECHILD).
	// reaped guards the command's pid: once it is reaped, its group id may
	// be reused, so signals are no longer forwarded to it.
	var mu sync.Mutex
	reaped := false
	status := make(chan syscall.WaitStatus, 1)
	noChildren := make(chan struct{})
	go func() {
		defer close(noChildren)
		for {
			var ws syscall.WaitStatus
			p, err := syscall.Wait4(-1, &ws, 0, nil)
			if errors.Is(err, syscall.EINTR) {
				continue
			}
			if err != nil {
				return
			}
			if p == pid {
				mu.Lock()
				reaped = true
				mu.Unlock()
				status <- ws
			}
		}
	}()
	go func() {
		for sig := range sigs {
			mu.Lock()
			if !reaped {
				_ = syscall.Kill(-pid, sig.(syscall.Signal))
			}
			mu.Unlock()
		}
	}()
	parentGone := make(chan struct{})
	go func() {
		var b [1]byte
		for {
			if _, err := lifeline.Read(b[:]); err != nil {
				close(parentGone)
				return
			}
		}
	}()

	select {
	case ws := <-status:
		endDescendants(noChildren, guardGrace)
		exitLike(ws)
	case <-parentGone:
		endDescendants(noChildren, parentGoneGrace)
		guardExit(1)
	}
}

// endDescendants sends SIGTERM to every descendant of the guard, waits up
// to grace for them to be gone, then SIGKILLs until none is left.
// noChildren is closed when the guard has no child: as it is their
// subreaper, it then has no descendant either.
func endDescendants(noChildren <-chan struct{}, grace time.Duration) {
	self := os.Getpid()
	for _, p := range descendants(self) {
		_ = syscall.Kill(p, syscall.SIGTERM)
	}
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-noChildren:
		return
	case <-t.C:
	}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		for _, p := range descendants(self) {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
		select {
		case <-noChildren:
			return
		case <-tick.C: // a process forked while we listed: list again
		}
	}
}

// descendants lists the live (not zombie) processes below pid, read from
// /proc (ppid links).
func descendants(pid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	zombie := map[int]bool{}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, ok := ProcStat(p); ok {
			children[st.PPID] = append(children[st.PPID], p)
			zombie[p] = !st.Live()
		}
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			if !zombie[c] {
				out = append(out, c)
			}
			queue = append(queue, c)
		}
	}
	return out
}

// killGuardTree is SignalGroup's SIGKILL for a guarded group: when pgid is
// a guard that is this process's child (so its pid cannot have been
// reused), it SIGKILLs the guard's descendants first, until none is left
// alive, and only then the group with the guard. Killing the guard first
// would orphan to init what left the group (setsid), with nobody to end
// it. Bounded: after killTreeRounds it leaves the rest to the group kill.
func killGuardTree(pgid int) {
	st, ok := ProcStat(pgid)
	if !ok || st.PPID != os.Getpid() || !st.Live() {
		return
	}
	cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(pgid) + "/cmdline")
	if err != nil || !strings.Contains(string(cmdline), "\x00"+guardFlag+"\x00") {
		return
	}
	for range killTreeRounds {
		ds := descendants(pgid)
		if len(ds) == 0 {
			return
		}
		for _, p := range ds {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
		time.Sleep(time.Millisecond) // let them die and the guard reap them
	}
}

const killTreeRounds = 200

// guardExit ends the guard with code. It is syscall.Exit, not os.Exit: the
// guard has nothing to flush, and os.Exit in a binary built with -race
// (a test binary that is its own guard) first sleeps GORACE's
// atexit_sleep_ms, a second by default, which made every child's stop a
// second longer in the race tests.
func guardExit(code int) { syscall.Exit(code) }

// exitLike ends the guard the way the command ended: the same exit code,
// or death by the same signal (without a core dump of the guard).
func exitLike(ws syscall.WaitStatus) {
	if !ws.Signaled() {
		guardExit(ws.ExitStatus())
	}
	sig := ws.Signal()
	_ = syscall.Setrlimit(syscall.RLIMIT_CORE, &syscall.Rlimit{})
	runtime.LockOSThread()
	// The Go runtime handles most signals; put the kernel's default action
	// back (an all-zero sigaction is SIG_DFL, no flags, empty mask) and
	// unblock the signal on this thread, then send it to ourselves.
	var act [4]uint64
	syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&act)), 0, 8, 0, 0)
	set := uint64(1) << (uint(sig) - 1)
	syscall.RawSyscall6(syscall.SYS_RT_SIGPROCMASK, 1 /* SIG_UNBLOCK */, uintptr(unsafe.Pointer(&set)), 0, 8, 0, 0)
	syscall.RawSyscall(syscall.SYS_TGKILL, uintptr(os.Getpid()), uintptr(syscall.Gettid()), uintptr(sig))
	time.Sleep(100 * time.Millisecond)
	guardExit(128 + int(sig)) // a signal whose default is not to terminate
}

// CommandEnded reports, for cmd started by Start, whether the command it
// runs has ended (or is ending), while its guard — the process cmd waits
// for — may not have exited yet: the guard reaps the command, ends what is
// left of its descendants and only then exits. So a caller that saw the
// command's stdout close can tell an exit from a command that closed it
// and runs on, whatever the order in which it sees the two. ended is true
// when no descendant of the guard is alive, a zombie or exiting
// (PF_EXITING) not counting; known is false when cmd does not run under a
// guard (the process is the command itself) or has not started.
func CommandEnded(cmd *exec.Cmd) (ended, known bool) {
	if cmd.Process == nil || len(cmd.Args) < 2 || cmd.Args[1] != guardFlag {
		return false, false
	}
	for _, p := range descendants(cmd.Process.Pid) {
		if !exiting(p) {
			return false, true
		}
	}
	return true, true
}

// pfExiting is the kernel's PF_EXITING task flag: set as the task begins
// to exit, before its files are closed.
const pfExiting = 0x4

// exiting reports whether process pid is gone, a zombie, or exiting
// (PF_EXITING in the flags of /proc/<pid>/stat, the 9th field).
func exiting(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 7 {
		return false
	}
	if f[0] == "Z" || f[0] == "X" {
		return true
	}
	flags, err := strconv.ParseUint(f[6], 10, 64)
	return err == nil && flags&pfExiting != 0
}
