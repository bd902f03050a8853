package claudecli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tidwall/gjson"

	"github.com/ccproxy/ccproxy/internal/childproc"
	"github.com/ccproxy/ccproxy/stream"
)

// Defaults of Config.
const (
	DefaultStdinQueue      = 256
	DefaultControlTimeout  = 15 * time.Second
	DefaultCloseGrace      = 5 * time.Second
	DefaultTermGrace       = 3 * time.Second
	DefaultStderrTailBytes = 8 << 10
	DefaultIDPrefix        = "ccproxy-"
)

// Config says which claude to start and how to talk to it. Only Path is
// required. The handlers are called from the client's stdout goroutine, one
// at a time, in the order of claude's output; they must not block for long
// (claude's stdout is not read meanwhile) and must not call Close or Wait.
type Config struct {
	Path string   // the claude executable
	Args []string // its arguments (user text never belongs here: send it with Send)
	Dir  string   // working directory ("" = this process's)
	Env  []string // environment (nil = this process's)

	// Stream configures the stream.Normalizer applied to every stdout line.
	Stream stream.Options
	// MaxLineBytes caps a stdout line (stream.DefaultMaxLine when <= 0);
	// longer lines become oversized_line events.
	MaxLineBytes int
	// StderrTailBytes is how much of the end of stderr Exit reports
	// (DefaultStderrTailBytes when <= 0).
	StderrTailBytes int
	// StdinQueue bounds the lines waiting to be written to stdin
	// (DefaultStdinQueue when <= 0).
	StdinQueue int
	// ControlTimeout is how long a control request waits for its answer
	// (DefaultControlTimeout when <= 0).
	ControlTimeout time.Duration
	// CloseGrace (after stdin EOF) and TermGrace (after SIGTERM) are the
	// waits of Close (the defaults when <= 0).
	CloseGrace, TermGrace time.Duration
	// IDPrefix starts the request_id of every control request
	// (DefaultIDPrefix when "").
	IDPrefix string

	// OnEvent receives every event that is not part of the control
	// protocol (system, assistant, user, result, stream_event, unknown
	// types, ccproxy's oversized_line and noise). ev and ev.JSON are valid
	// only during the call. Nil: events are dropped.
	OnEvent func(ev *stream.Event)
	// OnControlRequest receives claude's own control requests (can_use_tool,
	// hook callbacks, ...). Every request must be answered (Answer) or
	// claude waits forever. Nil: each gets an error answer at once.
	OnControlRequest func(c *Client, req ControlRequest)
	// OnControlCancel receives claude's control_cancel_request: the request
	// of that id is withdrawn and must not be answered. Nil: ignored.
	OnControlCancel func(requestID string)

	// OnNormalized, when set, gets the time a stdout line took to
	// normalize, for one line in NormalizeSampleEvery (reading the clock
	// costs up to ~100 ns on virtual machines: timing every line would cost
	// more than the metric is worth). Called from the stdout goroutine; it
	// must not block.
	OnNormalized func(took time.Duration)
	// OnControlDone, when set, gets each control request's outcome just
	// before its callback: the subtype, the time since it was registered,
	// and the error (nil: claude answered success; *CLIError, ErrTimeout,
	// ErrExited, a write error). Forgotten requests are not reported. It
	// must not block.
	OnControlDone func(subtype string, took time.Duration, err error)

	// Logger receives the client's log lines (discarded when nil).
	Logger *slog.Logger
}

// ControlRequest is a control request claude sent to the host.
type ControlRequest struct {
	ID      string // request_id: answer with stream.ControlSuccess/ControlError(ID, ...)
	Subtype string // request.subtype
	Line    []byte // the whole normalized line; valid only during the handler call
}

// Exit says how the process ended.
type Exit struct {
	Code       *int64        // exit code, nil when a signal ended it
	Signal     *string       // e.g. "SIGKILL", nil when it exited by itself
	StderrTail string        // the end of its stderr, marked when the start was dropped
	Ran        time.Duration // from Start to reaping
}

// StreamArgs returns the flags that make claude speak what a Client reads
// and writes: stream-json both ways, every event (--verbose) with the
// partial messages, each user turn echoed (--replay-user-messages), and
// permission prompts as control requests on stdio. ccproxy starts every
// claude with them (proxy.claudeArgs), and the session bench its CLI
// alone, so that the two are driven alike.
func StreamArgs() []string {
	return []string{"-p", "--input-format", "stream-json", "--output-format", "stream-json",
		"--verbose", "--include-partial-messages", "--replay-user-messages", "--permission-prompt-tool", "stdio"}
}

// Errors of the client. A control request gets ErrTimeout when claude does
// not answer within ControlTimeout, ErrExited when the process ends first,
// and a *CLIError when claude answers with an error.
var (
	ErrTimeout     = errors.New("claude did not answer the control request in time")
	ErrExited      = errors.New("the claude process has exited")
	ErrStdinClosed = errors.New("claude's stdin is closed (the process is exiting)")
	ErrQueueFull   = errors.New("claude's stdin queue is full (claude has not read its input for a long time)")
)

// CLIError is claude's error answer to a control request.
type CLIError struct{ Msg string }

func (e *CLIError) Error() string { return e.Msg }

// NormalizeSampleEvery is how often Config.OnNormalized is called: for the
// first stdout line, then every NormalizeSampleEvery-th.
const NormalizeSampleEvery = 64

// Client owns one running claude process: its own process group, the one
// writer of its stdin, the reader of its stdout (events and the control
// protocol) and of its stderr, and its exit. It knows nothing of sessions
// or clients of ccproxy.
//
// Concurrency: every method is safe for concurrent use, except that Close
// and Wait must not be called from a handler or a control callback (they
// wait for those to return). Close may be called several times.
type Client struct {
	cfg     Config
	log     *slog.Logger
	cmd     *exec.Cmd
	pid     int
	started time.Time

	stdin          *os.File // owned by writeLoop
	stdout, stderr *os.File // read ends, owned by the read loops

	in         chan stdinWrite // to writeLoop
	eof        chan struct{}   // closed to have writeLoop close stdin after what is queued
	eofOnce    sync.Once
	writerDone chan struct{} // closed when writeLoop has returned
	reaped     chan struct{} // closed when the process was reaped and its group killed
	done       chan struct{} // closed when everything ended; exit is set before
	exit       Exit
	tail       *childproc.Tail

	mu      sync.Mutex
	pending map[string]*pendingCall // guarded by mu: control requests sent, not answered
	seq     int64                   // guarded by mu: last request number
	exited  bool                    // guarded by mu: no new request may be registered

	wg sync.WaitGroup // the goroutines and armed control timers
}

// stdinWrite is one line for claude's stdin; done (buffered, may be nil)
// receives the result of the write.
type stdinWrite struct {
	line []byte
	done chan error
}

// pendingCall is a control request sent to claude and not answered yet.
type pendingCall struct {
	subtype string
	cb      func(json.RawMessage, error)
	timer   *time.Timer
	sent    time.Time // when it was registered (OnControlDone)
}

// done reports the outcome to OnControlDone, then to the request's callback.
func (pc *pendingCall) done(c *Client, resp json.RawMessage, err error) {
	if c.cfg.OnControlDone != nil {
		c.cfg.OnControlDone(pc.subtype, time.Since(pc.sent), err)
	}
	pc.cb(resp, err)
}

// Start starts claude in a process group of its own with a pipe on each
// standard stream, and the client's goroutines: the stdin writer, the
// stdout and stderr readers and the waiter. The caller owns the client:
// it must call Close (or Kill then Wait) once done.
func Start(cfg Config) (*Client, error) {
	if cfg.Path == "" {
		return nil, errors.New("claudecli: Config.Path is empty")
	}
	if cfg.StderrTailBytes <= 0 {
		cfg.StderrTailBytes = DefaultStderrTailBytes
	}
	if cfg.StdinQueue <= 0 {
		cfg.StdinQueue = DefaultStdinQueue
	}
	if cfg.ControlTimeout <= 0 {
		cfg.ControlTimeout = DefaultControlTimeout
	}
	if cfg.CloseGrace <= 0 {
		cfg.CloseGrace = DefaultCloseGrace
	}
	if cfg.TermGrace <= 0 {
		cfg.TermGrace = DefaultTermGrace
	}
	if cfg.IDPrefix == "" {
		cfg.IDPrefix = DefaultIDPrefix
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}

	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("claudecli: stdin pipe: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW)
		return nil, fmt.Errorf("claudecli: stdout pipe: %w", err)
	}
	EnlargePipe(outR)
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW, outR, outW)
		return nil, fmt.Errorf("claudecli: stderr pipe: %w", err)
	}
	cmd := exec.Command(cfg.Path, cfg.Args...)
	cmd.Dir = cfg.Dir
	cmd.Env = cfg.Env
	// *os.File streams: exec starts no copying goroutines, and Wait does
	// not wait for the pipes, which we read ourselves.
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	if err := childproc.Start(cmd); err != nil { // its own group (and on Windows a job)
		closeAll(inR, inW, outR, outW, errR, errW)
		return nil, err
	}
	closeAll(inR, outW, errW) // the child has its copies
	c := &Client{
		cfg:        cfg,
		log:        log,
		cmd:        cmd,
		pid:        cmd.Process.Pid,
		started:    time.Now(),
		stdin:      inW,
		stdout:     outR,
		stderr:     errR,
		in:         make(chan stdinWrite, cfg.StdinQueue),
		eof:        make(chan struct{}),
		writerDone: make(chan struct{}),
		reaped:     make(chan struct{}),
		done:       make(chan struct{}),
		tail:       childproc.NewTail(cfg.StderrTailBytes),
		pending:    map[string]*pendingCall{},
	}
	outDone, errDone := make(chan struct{}), make(chan struct{})
	c.wg.Add(4)
	go func() { defer c.wg.Done(); c.writeLoop() }()
	go func() { defer c.wg.Done(); defer close(outDone); c.readStdout() }()
	go func() { defer c.wg.Done(); defer close(errDone); c.readStderr() }()
	go func() { defer c.wg.Done(); c.waitLoop(outDone, errDone) }()
	return c, nil
}

func closeAll(fs ...*os.File) {
	for _, f := range fs {
		f.Close()
	}
}

// PID is the process id of claude (and the id of its process group).
func (c *Client) PID() int { return c.pid }

// Done is closed once the process has ended, its group was killed, its
// output was read to the end and its pending control requests failed.
func (c *Client) Done() <-chan struct{} { return c.done }

// Exit reports how the process ended; the zero Exit before Done is closed.
func (c *Client) Exit() Exit {
	select {
	case <-c.done:
		return c.exit
	default:
		return Exit{}
	}
}

// ---------------------------------------------------------------- stdin

// writeLoop is the only writer of claude's stdin. It writes the queued lines
// in order; after eof is closed it writes what is still queued, closes stdin
// (claude sees EOF) and returns. After a failed write every later write
// fails too: a partial line must never be followed by another one.
func (c *Client) writeLoop() {
	defer close(c.writerDone)
	defer c.stdin.Close()
	var broken error
	write := func(w stdinWrite) {
		err := broken
		if err == nil {
			if _, err = c.stdin.Write(w.line); err != nil {
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
		case w := <-c.in:
			write(w)
		case <-c.eof:
			for {
				select {
				case w := <-c.in:
					write(w)
				default:
					return
				}
			}
		}
	}
}

// Send queues line (one JSON object and "\n", e.g. from stream.UserTurn)
// for claude's stdin and waits until it is written, ctx is done or stdin
// is closed (ErrStdinClosed).
func (c *Client) Send(ctx context.Context, line []byte) error {
	done := make(chan error, 1)
	select {
	case c.in <- stdinWrite{line: line, done: done}:
	case <-c.writerDone:
		return ErrStdinClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-done:
		return err
	case <-c.writerDone:
		select {
		case err := <-done:
			return err
		default:
			return ErrStdinClosed
		}
	case <-ctx.Done():
		return ctx.Err()
	}
}

// SendAsync queues line without waiting: ErrQueueFull when StdinQueue
// lines are waiting already, ErrStdinClosed when stdin is closed.
func (c *Client) SendAsync(line []byte) error {
	select {
	case <-c.writerDone:
		return ErrStdinClosed
	default:
	}
	select {
	case c.in <- stdinWrite{line: line}:
		return nil
	default:
		return ErrQueueFull
	}
}

// Answer queues the answer to one of claude's control requests without
// blocking. If claude has not read its stdin for so long that the queue
// is full, the session with it cannot go on (claude would wait for this
// answer forever): the process is killed, and the error says so.
func (c *Client) Answer(line []byte) error {
	err := c.SendAsync(line)
	if errors.Is(err, ErrQueueFull) {
		c.log.Error("claude's stdin queue is full; killing the process", "pid", c.pid, "queue", c.cfg.StdinQueue)
		c.Kill()
	}
	return err
}

// CloseStdin has claude's stdin closed once what is queued is written:
// claude ends when it has nothing left to do.
func (c *Client) CloseStdin() { c.eofOnce.Do(func() { close(c.eof) }) }

// ---------------------------------------------------------------- control requests

// Call sends claude the control request subtype with fields (an object, or
// nil), waits until the line is written, then for the answer: the success
// response object, or an error (*CLIError, ErrTimeout, ErrExited,
// ErrStdinClosed, or ctx's; the request is then forgotten).
func (c *Client) Call(ctx context.Context, subtype string, fields any) (json.RawMessage, error) {
	type result struct {
		resp json.RawMessage
		err  error
	}
	ch := make(chan result, 1)
	id, err := c.call(ctx, subtype, fields, func(r json.RawMessage, err error) { ch <- result{r, err} })
	if err != nil {
		return nil, err
	}
	select {
	case r := <-ch:
		return r.resp, r.err
	case <-ctx.Done():
		c.Forget(id)
		return nil, ctx.Err()
	}
}

// CallAsync queues the control request subtype without waiting and returns
// its request id. cb gets the answer exactly once (unless Forget drops the
// request first): from the stdout goroutine, from the timer after
// ControlTimeout (ErrTimeout), at exit (ErrExited), or before CallAsync
// returns when the line cannot be queued (the error is also returned). cb
// must not block.
func (c *Client) CallAsync(subtype string, fields any, cb func(resp json.RawMessage, err error)) (string, error) {
	return c.call(nil, subtype, fields, cb)
}

// call registers a request, then writes it: with ctx nil it is only
// queued. On a failure to write, cb gets the error before call returns.
func (c *Client) call(ctx context.Context, subtype string, fields any, cb func(json.RawMessage, error)) (string, error) {
	c.mu.Lock()
	if c.exited {
		c.mu.Unlock()
		cb(nil, ErrExited)
		return "", ErrExited
	}
	c.seq++
	id := fmt.Sprintf("%s%d", c.cfg.IDPrefix, c.seq)
	pc := &pendingCall{subtype: subtype, cb: cb, sent: time.Now()}
	c.pending[id] = pc
	c.wg.Add(1)
	pc.timer = time.AfterFunc(c.cfg.ControlTimeout, func() {
		defer c.wg.Done()
		c.timedOut(id, pc)
	})
	c.mu.Unlock()

	line, err := stream.ControlRequest(id, subtype, fields)
	if err == nil {
		if ctx == nil {
			err = c.SendAsync(line)
		} else {
			err = c.Send(ctx, line)
		}
	}
	if err != nil {
		if pc := c.take(id); pc != nil {
			pc.done(c, nil, err)
		}
		return id, err
	}
	return id, nil
}

// take removes a pending request (nil if it is not pending) and stops its
// timer.
func (c *Client) take(id string) *pendingCall {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.takeLocked(id)
}

func (c *Client) takeLocked(id string) *pendingCall {
	pc := c.pending[id]
	if pc == nil {
		return nil
	}
	delete(c.pending, id)
	if pc.timer.Stop() {
		c.wg.Done() // the AfterFunc will not run
	}
	return pc
}

// Pending reports how many control requests wait for claude's answer.
func (c *Client) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pending)
}

// Forget drops a pending control request whose answer nobody waits for any
// more; its callback is not called.
func (c *Client) Forget(id string) { c.take(id) }

func (c *Client) timedOut(id string, pc *pendingCall) {
	c.mu.Lock()
	if c.pending[id] != pc {
		c.mu.Unlock()
		return // answered meanwhile
	}
	delete(c.pending, id) // the timer has fired: nothing to stop
	c.mu.Unlock()
	c.log.Warn("claude did not answer a control request in time; it is forgotten", "subtype", pc.subtype, "request_id", id, "timeout", c.cfg.ControlTimeout)
	pc.done(c, nil, ErrTimeout)
}

func (c *Client) onResponse(line []byte) {
	resp := gjson.GetBytes(line, "response")
	id := resp.Get("request_id").String()
	pc := c.take(id)
	if pc == nil {
		c.log.Debug("control response to no pending request (timed out, or not ours)", "request_id", id)
		return
	}
	if resp.Get("subtype").String() == "success" {
		raw := json.RawMessage("{}")
		if r := resp.Get("response"); r.IsObject() {
			raw = json.RawMessage(bytes.Clone([]byte(r.Raw)))
		}
		pc.done(c, raw, nil)
		return
	}
	msg := resp.Get("error").String()
	if msg == "" {
		msg = "claude answered with an error and no message"
	}
	pc.done(c, nil, &CLIError{Msg: msg})
}

// ---------------------------------------------------------------- stdout, stderr

// readStdout reads claude's stdout: each line is normalized, then matched
// to a pending request, handed to a control handler, or to OnEvent.
func (c *Client) readStdout() {
	defer c.stdout.Close()
	r := stream.NewReader(c.stdout, c.cfg.MaxLineBytes)
	norm := stream.NewNormalizer(c.cfg.Stream)
	var lines int
	for {
		line, err := r.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				c.log.Warn("reading claude's stdout", "pid", c.pid, "err", err)
			}
			break
		}
		var ev stream.Event
		if lines++; c.cfg.OnNormalized != nil && lines%NormalizeSampleEvery == 1 {
			t0 := time.Now()
			ev = norm.Normalize(line)
			c.cfg.OnNormalized(time.Since(t0))
		} else {
			ev = norm.Normalize(line)
		}
		switch ev.Type {
		case stream.TypeControlResponse:
			c.onResponse(ev.JSON)
		case stream.TypeControlRequest:
			c.onRequest(ev.JSON)
		case stream.TypeControlCancel:
			if c.cfg.OnControlCancel != nil {
				c.cfg.OnControlCancel(gjson.GetBytes(ev.JSON, "request_id").String())
			}
		default:
			if c.cfg.OnEvent != nil {
				c.cfg.OnEvent(&ev)
			}
		}
	}
	if n := r.Oversized(); n > 0 {
		c.log.Warn("claude printed lines over the line limit; they were replaced by oversized_line events", "pid", c.pid, "lines", n, "limit", c.cfg.MaxLineBytes)
	}
}

func (c *Client) onRequest(line []byte) {
	req := ControlRequest{
		ID:      gjson.GetBytes(line, "request_id").String(),
		Subtype: gjson.GetBytes(line, "request.subtype").String(),
		Line:    line,
	}
	if req.ID == "" {
		c.log.Warn("claude sent a control request without request_id; ignored", "subtype", req.Subtype)
		return
	}
	if c.cfg.OnControlRequest == nil {
		c.Answer(stream.ControlError(req.ID, fmt.Sprintf("this host does not handle control requests of subtype %q", req.Subtype)))
		return
	}
	c.cfg.OnControlRequest(c, req)
}

// What of claude's stderr goes to the log.
const (
	stderrLogLines    = 200
	stderrLogLineMax  = 1024
	stderrReadBufSize = 4096
)

// readStderr keeps the tail of claude's stderr for the exit report and
// logs its first lines.
func (c *Client) readStderr() {
	defer c.stderr.Close()
	br := bufio.NewReaderSize(io.TeeReader(c.stderr, c.tail), stderrReadBufSize)
	lines, skipping := 0, false
	for {
		chunk, err := br.ReadSlice('\n')
		if len(chunk) > 0 && !skipping {
			text := strings.TrimRight(string(chunk), "\r\n")
			if len(text) > stderrLogLineMax {
				text = text[:stderrLogLineMax] + "…"
			}
			switch {
			case lines < stderrLogLines:
				if strings.TrimSpace(text) != "" {
					c.log.Info("claude stderr", "pid", c.pid, "line", strings.ToValidUTF8(text, "\uFFFD"))
				}
			case lines == stderrLogLines:
				c.log.Warn("claude stderr: more lines are not logged (the tail is kept for the exit report)", "pid", c.pid, "logged", stderrLogLines)
			}
			lines++
		}
		// A line longer than the buffer arrives in pieces: log its first.
		skipping = errors.Is(err, bufio.ErrBufferFull)
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return
		}
	}
}

// ---------------------------------------------------------------- exit

// waitLoop reaps the process, kills what is left of its process group (MCP
// servers that outlived claude), waits for the output to be read to the
// end, fails the pending requests and closes done. The group id cannot be
// reused while any member lives, so signalling it after the leader is
// reaped reaches only our processes.
func (c *Client) waitLoop(outDone, errDone <-chan struct{}) {
	_ = c.cmd.Wait() // the exit status is in ProcessState
	ran := time.Since(c.started)
	_ = childproc.SignalGroup(c.pid, syscall.SIGKILL)
	c.CloseStdin() // ends writeLoop: nobody reads stdin any more
	close(c.reaped)
	// The group is dead; EOF comes once every writer of the pipes is gone.
	// A process that escaped the group could hold them open: do not wait
	// for it forever.
	deadline := time.Now().Add(2 * time.Second)
	c.stdout.SetReadDeadline(deadline)
	c.stderr.SetReadDeadline(deadline)
	<-outDone
	<-errDone

	c.mu.Lock()
	c.exited = true
	var gone []*pendingCall
	for id := range c.pending {
		gone = append(gone, c.takeLocked(id))
	}
	c.mu.Unlock()
	for _, pc := range gone {
		pc.done(c, nil, ErrExited)
	}

	code, sig := exitStatus(c.cmd.ProcessState)
	text, truncated := c.tail.Text()
	if truncated {
		text = "[…earlier stderr dropped…]\n" + text
	}
	c.exit = Exit{Code: code, Signal: sig, StderrTail: text, Ran: ran}
	close(c.done)
}

// Kill sends SIGKILL to claude's whole process group at once.
func (c *Client) Kill() { childproc.Kill(c.cmd.Process, c.pid) }

// Close ends claude the polite way first: stdin EOF, CloseGrace; SIGTERM
// to the group, TermGrace; SIGKILL to the group. It returns when the
// process has been reaped and every goroutine of the client has ended.
// It may be called several times and concurrently.
func (c *Client) Close() error {
	childproc.Stop(c.cmd.Process, c.pid, c.reaped, c.CloseStdin, c.cfg.CloseGrace, c.cfg.TermGrace)
	return c.Wait()
}

// Wait waits until the process has ended (by itself, Kill or Close) and
// every goroutine of the client has ended.
func (c *Client) Wait() error {
	<-c.done
	c.wg.Wait()
	return nil
}

// exitStatus describes how a process ended: its exit code, or the name of
// the signal that killed it (the other is nil; "unknown" when it was never
// waited for).
func exitStatus(st *os.ProcessState) (code *int64, signal *string) {
	n, sig := childproc.ExitStatus(st)
	switch {
	case st == nil:
		sig = "unknown"
		fallthrough
	case sig != "":
		return nil, &sig
	}
	c := int64(n)
	return &c, nil
}
