package probe

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ccproxy/ccproxy/internal/childproc"
)

// stdioSpec is what starts a stdio server, from its expanded definition.
type stdioSpec struct {
	command string
	args    []string
	env     [][2]string // in file order
}

// proc is one stdio server process and its pipes. The Prober starts it
// itself rather than through mcp.CommandTransport: it must own Wait to know
// whether (and how) the server exited by itself, keep the stderr tail, and
// signal the whole process group; the SDK then speaks MCP over the pipes
// (mcp.IOTransport). The close sequence is CommandTransport's (stdin EOF,
// wait, SIGTERM, wait, SIGKILL), applied to the group.
//
// Ownership: startProc starts two goroutines, the waiter (cmd.Wait) and the
// stderr reader; stop ends the processes and joins both. stop is idempotent
// and safe to call concurrently.
type proc struct {
	cmd    *exec.Cmd
	pgid   int
	stdin  *os.File // our write end
	stdout *os.File // our read end
	stderr *os.File // our read end
	tail   *childproc.Tail
	log    *slog.Logger

	exited     chan struct{} // closed when cmd.Wait returned
	exitAt     time.Time     // valid after exited
	exitState  *os.ProcessState
	stderrDone chan struct{}

	stdoutEOF atomic.Bool  // the server closed its stdout
	badLine   atomic.Value // string: the first stdout line that is not JSON
	midLine   bool         // the stdout reader is inside a line (reader goroutine only)
	readErr   atomic.Value // error: a read error other than EOF
	writeEOF  atomic.Bool  // a write hit a closed pipe

	stopOnce sync.Once
}

// startProc resolves the command and starts it in its own process group.
func startProc(spec stdioSpec, dir string, environ []string, tailBytes int, log *slog.Logger) (*proc, error) {
	path, err := resolveCommand(spec, dir)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(path, spec.args...)
	cmd.Args[0] = spec.command
	cmd.Dir = dir
	env := append([]string(nil), environ...)
	for _, kv := range spec.env {
		env = append(env, kv[0]+"="+kv[1]) // later entries win (exec dedups)
	}
	cmd.Env = env

	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("creating a pipe: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW)
		return nil, fmt.Errorf("creating a pipe: %w", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW, outR, outW)
		return nil, fmt.Errorf("creating a pipe: %w", err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	err = childproc.Start(cmd) // its own group (and on Windows a job)
	closeAll(inR, outW, errW)  // the child has its copies
	if err != nil {
		closeAll(inW, outR, errR)
		return nil, err
	}
	p := &proc{
		cmd: cmd, pgid: cmd.Process.Pid, stdin: inW, stdout: outR, stderr: errR,
		tail: childproc.NewTail(tailBytes), log: log,
		exited: make(chan struct{}), stderrDone: make(chan struct{}),
	}
	go func() {
		_ = cmd.Wait() // the state is in cmd.ProcessState
		if exitObserved != nil {
			exitObserved()
		}
		p.exitAt = time.Now()
		p.exitState = cmd.ProcessState
		close(p.exited)
	}()
	go func() {
		defer close(p.stderrDone)
		_, _ = io.Copy(p.tail, errR)
	}()
	return p, nil
}

func closeAll(files ...*os.File) {
	for _, f := range files {
		_ = f.Close()
	}
}

// errCommandNotFound marks a command that cannot be started.
type errCommandNotFound struct{ msg string }

func (e errCommandNotFound) Error() string { return e.msg }

// resolveCommand finds the executable the way the CLI (node's spawn) does:
// a name without a slash is looked up in the PATH of the server's "env"
// when it sets one, else in ccproxy's PATH.
func resolveCommand(spec stdioSpec, dir string) (string, error) {
	name := spec.command
	if strings.ContainsRune(name, '/') || strings.ContainsRune(name, filepath.Separator) {
		p := name
		if !filepath.IsAbs(p) && dir != "" {
			p = filepath.Join(dir, p)
		}
		if err := checkExecutable(p); err != nil {
			return "", errCommandNotFound{fmt.Sprintf("command %q %v", name, err)}
		}
		return name, nil
	}
	pathList, custom := os.Getenv("PATH"), false
	for _, kv := range spec.env {
		if kv[0] == "PATH" {
			pathList, custom = kv[1], true
		}
	}
	for _, d := range filepath.SplitList(pathList) {
		if d == "" {
			d = "."
		}
		p := filepath.Join(d, name)
		if checkExecutable(p) == nil {
			if !filepath.IsAbs(p) {
				if abs, err := filepath.Abs(p); err == nil {
					p = abs
				}
			}
			return p, nil
		}
	}
	where := "ccproxy's PATH"
	if custom {
		where = "the PATH set in its env"
	}
	return "", errCommandNotFound{fmt.Sprintf("command %q not found in %s", name, where)}
}

func checkExecutable(p string) error {
	fi, err := os.Stat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errors.New("does not exist")
	case err != nil:
		return errors.New("cannot be read")
	case fi.IsDir():
		return errors.New("is a directory")
	case fi.Mode()&0o111 == 0:
		return errors.New("is not executable")
	}
	return nil
}

// hasExited reports whether the process exited, without waiting.
func (p *proc) hasExited() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// waitExit waits up to d for the process to exit.
func (p *proc) waitExit(d time.Duration) bool {
	if p.hasExited() {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.exited:
		return true
	case <-t.C:
		return false
	}
}

// exitedByItself reports whether the server, whose stdout or stdin is
// closed, exited by itself rather than closing its pipe and staying. It
// waits up to grace for the exit. When it has not been seen by then, the
// answer must not depend on how fast that is seen: on Linux the process
// waited for is the childproc guard, which exits only after it reaped the
// server and ended what is left of its descendants (on a loaded machine
// well after the server's stdout closed), so the guard's descendants are
// looked at (childproc.CommandEnded): none left alive, the server ended,
// and its guard's exit (with the server's status) is awaited, up to
// killWait; one alive, the server stays. Without a guard the process is
// stopped at once (SIGKILL to its group) and the way it ended decides: a
// process that had exited, or was exiting, keeps its own status, one that
// was still running ends by that kill (killedByStop).
func (p *proc) exitedByItself(grace time.Duration) bool {
	if p.waitExit(grace) {
		return true
	}
	if exitSeenLate != nil {
		exitSeenLate()
	}
	if ended, known := childproc.CommandEnded(p.cmd); known {
		return ended && p.waitExit(killWait)
	}
	p.stop(false, grace)
	return p.hasExited() && !killedByStop(p.exitState)
}

// exitSeenLate, when set (tests), is called when exitedByItself did not
// see the exit within its grace.
var exitSeenLate func()

// exitText says how the process ended, e.g. "exited with status 3".
func (p *proc) exitText() string {
	st := p.exitState
	if st == nil {
		return "exited"
	}
	code, sig := childproc.ExitStatus(st)
	if sig != "" {
		return "was killed by " + sig
	}
	return fmt.Sprintf("exited with status %d", code)
}

// stop ends the server: with graceful, stdin EOF first, then SIGTERM to the
// group after grace, then SIGKILL after grace again; without, SIGKILL at
// once. Then whatever is left of the group is killed and stop waits (up to
// a bound) until no process of the group is alive, and joins the
// goroutines. It returns when everything the server started is gone, or
// logs what is left.
func (p *proc) stop(graceful bool, grace time.Duration) {
	p.stopOnce.Do(func() { p.doStop(graceful, grace) })
}

func (p *proc) doStop(graceful bool, grace time.Duration) {
	polite := grace
	if !graceful {
		polite = 0 // SIGKILL at once
	}
	if childproc.Stop(p.cmd.Process, p.pgid, p.exited, func() { _ = p.stdin.Close() }, polite, polite) && !p.waitExit(killWait) {
		p.log.Warn("mcp server process did not die after SIGKILL", "pid", p.pgid)
	}
	// Children that outlived the leader (npx's node, a shell's jobs).
	_ = childproc.SignalGroup(p.pgid, syscall.SIGKILL)
	if !childproc.WaitGroupGone(p.pgid, killWait) {
		p.log.Warn("mcp server process group still has live processes after SIGKILL", "pgid", p.pgid)
	}
	// stderr ends when its last writer is gone; a process that left the
	// group may still hold it, so the wait is bounded.
	t := time.NewTimer(grace)
	select {
	case <-p.stderrDone:
	case <-t.C:
	}
	t.Stop()
	closeAll(p.stdout, p.stderr)
	<-p.stderrDone
}

// killWait bounds the waits after SIGKILL.
const killWait = 5 * time.Second

// stdoutReader is the server's stdout as the SDK reads it; it notes EOF and
// read errors for the failure report.
type stdoutReader struct{ p *proc }

func (r stdoutReader) Read(b []byte) (int, error) {
	n, err := r.p.stdout.Read(b)
	r.p.sniff(b[:n])
	if err == io.EOF {
		r.p.stdoutEOF.Store(true)
	} else if err != nil && !errors.Is(err, os.ErrClosed) {
		r.p.readErr.CompareAndSwap(nil, err)
	}
	return n, err
}

func (r stdoutReader) Close() error { return r.p.stdout.Close() }

// sniff notes the first line of stdout that does not start like JSON (a
// server logging to stdout breaks the protocol; the message quotes it). It
// runs on the SDK's single reader goroutine.
func (p *proc) sniff(b []byte) {
	if p.badLine.Load() != nil {
		return
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case c == '\n':
			p.midLine = false
		case p.midLine || c == ' ' || c == '\t' || c == '\r':
		case c == '{' || c == '[':
			p.midLine = true
		default:
			line := b[i:]
			if j := bytes.IndexByte(line, '\n'); j >= 0 {
				line = line[:j]
			}
			p.badLine.Store(truncateText(strings.ToValidUTF8(string(line[:min(len(line), 200)]), "\uFFFD"), 120))
			return
		}
	}
}

// nonJSON returns the first stdout line that was not JSON, or "".
func (p *proc) nonJSON() string {
	s, _ := p.badLine.Load().(string)
	return s
}

// stdinWriter is the server's stdin as the SDK writes it; it notes writes
// to a server that is gone. Its Close does not close stdin: the SDK closes
// its transport as soon as the server's stdout ends, and a server that
// closed its stdout but stays would then exit on that EOF, looking as if
// it had exited by itself (classify would call it mcp_process_exited, not
// the protocol error it is). The server's stdin is closed by stop, first
// thing, once the prober has looked at how it failed.
type stdinWriter struct{ p *proc }

func (w stdinWriter) Write(b []byte) (int, error) {
	n, err := w.p.stdin.Write(b)
	if err != nil && (isBrokenPipe(err) || errors.Is(err, os.ErrClosed)) {
		w.p.writeEOF.Store(true)
	}
	return n, err
}

func (w stdinWriter) Close() error { return nil }

// stderrTail is the end of the server's stderr; truncated says it is not
// the whole of it. It holds secrets: show session.stderrTail.
func (p *proc) stderrTail() (text string, truncated bool) {
	text, truncated = p.tail.Text()
	return strings.TrimRight(text, "\n"), truncated
}

// exitObserved, when set (tests), is called by the waiter goroutine after
// cmd.Wait returned, before the exit is made known (p.exited).
var exitObserved func()
