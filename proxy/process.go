//go:build unix

package proxy

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/ccproxy/ccproxy/internal/childproc"
	"golang.org/x/sys/unix"
)

// process is one running claude: its own process group, a pipe for each of
// stdin, stdout and stderr, and the single goroutine that writes stdin.
//
// Goroutines (all started by the session that owns the process, which joins
// them): writeLoop (the only writer of stdin), the session's stdout loop,
// its stderr loop, and waitLoop, which reaps the process, kills whatever is
// left of its group (MCP servers claude started) and closes exited.
type process struct {
	pid     int
	cmd     *exec.Cmd
	started time.Time

	stdin          *os.File // owned by writeLoop
	stdout, stderr *os.File // read ends, owned by the read loops

	in         chan stdinWrite // to writeLoop
	eof        chan struct{}   // closed to have writeLoop close stdin after what is queued
	writerDone chan struct{}   // closed when writeLoop has returned

	exited   chan struct{}    // closed when the process was reaped and its group killed
	state    *os.ProcessState // set before exited is closed
	finished chan struct{}    // closed by the owner once the exit was fully handled
	release  func()           // called once the process has exited (MCP config file)

	eofOnce sync.Once
}

// stdinWrite is one line for claude's stdin; done (buffered, may be nil)
// receives the result of the write.
type stdinWrite struct {
	line []byte
	done chan error
}

// stdinQueue bounds the lines waiting for claude to read them.
const stdinQueue = 256

var errStdinClosed = errors.New("claude's stdin is closed (the process is exiting)")

type procSpec struct {
	path string
	args []string
	dir  string
	env  []string
}

// startProcess starts claude in a new process group with pipes on its
// standard streams.
func startProcess(spec procSpec) (*process, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("stdin pipe: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW)
		return nil, fmt.Errorf("stdout pipe: %w", err)
	}
	enlargePipe(outR)
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW, outR, outW)
		return nil, fmt.Errorf("stderr pipe: %w", err)
	}
	cmd := exec.Command(spec.path, spec.args...)
	cmd.Dir = spec.dir
	cmd.Env = spec.env
	// *os.File streams: exec starts no copying goroutines, and Wait does
	// not wait for the pipes, which we read ourselves.
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	childproc.SetGroup(cmd)
	if err := cmd.Start(); err != nil {
		closeAll(inR, inW, outR, outW, errR, errW)
		return nil, err
	}
	closeAll(inR, outW, errW) // the child has its copies
	return &process{
		pid:        cmd.Process.Pid,
		cmd:        cmd,
		started:    time.Now(),
		stdin:      inW,
		stdout:     outR,
		stderr:     errR,
		in:         make(chan stdinWrite, stdinQueue),
		eof:        make(chan struct{}),
		writerDone: make(chan struct{}),
		exited:     make(chan struct{}),
		finished:   make(chan struct{}),
		release:    func() {},
	}, nil
}

func closeAll(fs ...*os.File) {
	for _, f := range fs {
		f.Close()
	}
}

// writeLoop is the only writer of claude's stdin. It writes the queued lines
// in order; after eof is closed it writes what is still queued, closes stdin
// (claude sees EOF) and returns. After a failed write every later write
// fails too: a partial line must never be followed by another one.
func (p *process) writeLoop() {
	defer close(p.writerDone)
	defer p.stdin.Close()
	var broken error
	write := func(w stdinWrite) {
		err := broken
		if err == nil {
			if _, err = p.stdin.Write(w.line); err != nil {
				err = fmt.Errorf("writing claude's stdin: %w", err)
				broken = err
			}
		}
		if w.done != nil {
			w.done <- err
		}
	}
	for {
		select {
		case w := <-p.in:
			write(w)
		case <-p.eof:
			for {
				select {
				case w := <-p.in:
					write(w)
				default:
					return
				}
			}
		}
	}
}

// write queues line for stdin and waits until it is written, ctx is done or
// stdin is closed.
func (p *process) write(ctx context.Context, line []byte) error {
	done := make(chan error, 1)
	select {
	case p.in <- stdinWrite{line: line, done: done}:
	case <-p.writerDone:
		return errStdinClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-done:
		return err
	case <-p.writerDone:
		select {
		case err := <-done:
			return err
		default:
			return errStdinClosed
		}
	case <-ctx.Done():
		return ctx.Err()
	}
}

// writeAsync queues line without waiting. It reports false when the queue is
// full (claude has not read its stdin for a long time) or stdin is closed.
func (p *process) writeAsync(line []byte) bool {
	select {
	case <-p.writerDone:
		return false
	default:
	}
	select {
	case p.in <- stdinWrite{line: line}:
		return true
	default:
		return false
	}
}

// closeStdin asks writeLoop to close stdin once what is queued is written.
func (p *process) closeStdin() { p.eofOnce.Do(func() { close(p.eof) }) }

// waitLoop reaps the process, then kills what is left of its process group
// (MCP servers that outlived claude), then closes exited. The group id
// cannot be reused while any member lives, so signalling it after the
// leader is reaped reaches only our processes.
func (p *process) waitLoop() {
	_ = p.cmd.Wait() // the exit status is in ProcessState
	p.state = p.cmd.ProcessState
	_ = childproc.SignalGroup(p.pid, syscall.SIGKILL)
	p.closeStdin() // ends writeLoop: nobody reads stdin any more
	close(p.exited)
}

// stop ends the process the polite way first: stdin EOF, grace; SIGTERM to
// the group, termGrace; SIGKILL to the group. It returns when the process
// has been reaped.
func (p *process) stop(grace, termGrace time.Duration) {
	p.closeStdin()
	if waitClosed(p.exited, grace) {
		return
	}
	_ = childproc.SignalGroup(p.pid, syscall.SIGTERM)
	if waitClosed(p.exited, termGrace) {
		return
	}
	_ = childproc.SignalGroup(p.pid, syscall.SIGKILL)
	<-p.exited
}

// kill sends SIGKILL to the whole group at once.
func (p *process) kill() { _ = childproc.SignalGroup(p.pid, syscall.SIGKILL) }

func waitClosed(ch <-chan struct{}, d time.Duration) bool {
	if d <= 0 {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	}
}

// exitStatus describes how a process ended: its exit code, or the name of
// the signal that killed it (the other is nil).
func exitStatus(st *os.ProcessState) (code *int64, signal *string) {
	if st == nil {
		s := "unknown"
		return nil, &s
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		name := unix.SignalName(ws.Signal())
		if name == "" {
			name = fmt.Sprintf("signal %d", int(ws.Signal()))
		}
		return nil, &name
	}
	c := int64(st.ExitCode())
	return &c, nil
}
