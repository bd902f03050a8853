package capture

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/ccproxy/ccproxy/internal/childproc"
	"github.com/ccproxy/ccproxy/internal/testkit"
	"github.com/ccproxy/ccproxy/internal/testkit/fakeapi"
	"github.com/ccproxy/ccproxy/stream"
)

// Config says where the programs are and where captures go.
type Config struct {
	Claude     string // the Claude Code CLI
	Everything string // mcp-server-everything (npm)
	TestMCP    string // the built ccproxy-testmcp command
	OutDir     string // where <scenario>.jsonl[.gz] and <scenario>.stdin.log are written

	// Timeout bounds one scenario, from start to exit (default 3 minutes).
	Timeout time.Duration
	// Logger gets progress lines; nil discards.
	Logger *slog.Logger
	// KeepTemp leaves each scenario's HOME and project directory in place
	// (their paths are in Result.TempDir) instead of removing them.
	KeepTemp bool
}

// Result is what one scenario run produced.
type Result struct {
	Scenario   string
	StdoutPath string // the captured stdout (.jsonl, or .jsonl.gz)
	StdinPath  string // the timestamped log of what was written to stdin
	TempDir    string // HOME and project dir lived here (removed unless KeepTemp)

	Lines      int   // stdout lines
	Bytes      int64 // stdout bytes (uncompressed)
	MaxLine    int   // the longest stdout line, in bytes
	ExitCode   int
	PGID       int           // the CLI's process group
	LeftBehind []string      // processes of the group still alive after the CLI exited (then killed)
	Duration   time.Duration // start to exit
	StderrTail string        // the last 16 KiB of the CLI's stderr

	Requests []*fakeapi.Request // what the fake API received
	Dropped  int                // requests the fake API could not keep (bound hit)
}

const (
	stderrTail     = 16 << 10
	classifyLimit  = 1 << 20 // lines longer than this are stored but not inspected
	exitGrace      = 30 * time.Second
	pipeWaitDelay  = 3 * time.Second
	killWait       = 5 * time.Second
	defaultTimeout = 3 * time.Minute
)

// Run captures one scenario: it makes a fresh HOME and project directory,
// starts the fake API with the scenario's script, writes an --mcp-config with
// server-everything and the test server, starts the real CLI in its own
// process group, writes the scenario's stdin lines (waiting for each turn's
// result event), closes stdin, waits for the CLI to exit and kills whatever
// is left of its process group. It returns an error if the CLI did not
// answer every turn or did not exit; a non-zero exit status is only recorded
// (Verify judges it).
func Run(ctx context.Context, cfg Config, sc Scenario) (res *Result, err error) {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	for what, p := range map[string]string{"claude": cfg.Claude, "mcp-server-everything": cfg.Everything, "ccproxy-testmcp": cfg.TestMCP, "output directory": cfg.OutDir} {
		if p == "" {
			return nil, fmt.Errorf("capture %s: no %s given", sc.Name, what)
		}
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = defaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	tmp, err := os.MkdirTemp("", "ccproxy-capture-"+sc.Name+"-")
	if err != nil {
		return nil, fmt.Errorf("capture %s: %w", sc.Name, err)
	}
	if !cfg.KeepTemp {
		defer os.RemoveAll(tmp)
	}
	home, proj := filepath.Join(tmp, "home"), filepath.Join(tmp, "project")
	for _, d := range []string{filepath.Join(home, "tmp"), proj} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("capture %s: %w", sc.Name, err)
		}
	}
	if sc.Setup != nil {
		if err := sc.Setup(home, proj); err != nil {
			return nil, fmt.Errorf("capture %s: setup: %w", sc.Name, err)
		}
	}
	mcpConfig := filepath.Join(tmp, "mcp.json")
	if err := writeMCPConfig(mcpConfig, cfg); err != nil {
		return nil, fmt.Errorf("capture %s: %w", sc.Name, err)
	}

	fake := fakeapi.NewServer(sc.Script, &fakeapi.Options{Logger: log})
	defer fake.Close()

	if err := os.MkdirAll(cfg.OutDir, 0o755); err != nil {
		return nil, fmt.Errorf("capture %s: %w", sc.Name, err)
	}
	res = &Result{Scenario: sc.Name, TempDir: tmp,
		StdoutPath: filepath.Join(cfg.OutDir, sc.Name+".jsonl"),
		StdinPath:  filepath.Join(cfg.OutDir, sc.Name+".stdin.log")}
	if sc.Gzip {
		res.StdoutPath += ".gz"
	}
	out, err := newLineSink(res.StdoutPath, sc.Gzip)
	if err != nil {
		return nil, fmt.Errorf("capture %s: %w", sc.Name, err)
	}
	defer func() {
		if cerr := out.close(); cerr != nil && err == nil {
			err = fmt.Errorf("capture %s: writing %s: %w", sc.Name, res.StdoutPath, cerr)
		}
		res.Lines, res.Bytes, res.MaxLine = out.lines, out.bytes, out.maxLine
	}()
	stdinLog, err := os.Create(res.StdinPath)
	if err != nil {
		return nil, fmt.Errorf("capture %s: %w", sc.Name, err)
	}
	defer stdinLog.Close()

	args := []string{"-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose"}
	if sc.PartialMessages {
		args = append(args, "--include-partial-messages")
	}
	if sc.PermissionPrompts {
		args = append(args, "--permission-prompt-tool", "stdio")
	}
	if sc.ReplayUserMessages {
		args = append(args, "--replay-user-messages")
	}
	args = append(args, sc.Args...)
	allowed := []string{"mcp__everything", "mcp__testmcp"}
	if sc.AllowedTools != nil {
		allowed = sc.AllowedTools
	}
	// --allowedTools is variadic: it goes last, and the prompt goes on stdin.
	args = append(args, "--mcp-config", mcpConfig, "--strict-mcp-config", "--allowedTools")
	args = append(args, allowed...)
	cmd := exec.Command(cfg.Claude, args...)
	cmd.Dir = proj
	cmd.Env = fake.Env(home)
	cmd.Stdout = out
	stderr := childproc.NewTail(stderrTail)
	cmd.Stderr = stderr
	cmd.WaitDelay = pipeWaitDelay
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("capture %s: %w", sc.Name, err)
	}
	start := time.Now()
	if err := childproc.Start(cmd); err != nil {
		return nil, fmt.Errorf("capture %s: starting %s: %w", sc.Name, cfg.Claude, err)
	}
	res.PGID = cmd.Process.Pid
	log.Info("capture: started", "scenario", sc.Name, "pid", res.PGID)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	// Whatever happens, the whole process group goes at the end.
	waited := false
	defer func() {
		if !waited {
			_ = childproc.SignalGroup(res.PGID, syscall.SIGKILL)
			<-exited
			res.Duration = time.Since(start)
		}
		if kerr := testkit.KillGroup(res.PGID, killWait); kerr != nil && err == nil {
			err = fmt.Errorf("capture %s: %w", sc.Name, kerr)
		}
		res.StderrTail = stderrText(stderr)
		res.Requests, res.Dropped = fake.Requests(), fake.Dropped()
	}()

	fail := func(format string, a ...any) error {
		return fmt.Errorf("capture %s: %s (stderr tail: %q)", sc.Name, fmt.Sprintf(format, a...), clipTail(stderrText(stderr), 2000))
	}
	// write sends a line built by package stream, as the proxy builds it
	// (it ends in "\n"), and logs it.
	write := func(line []byte) error {
		fmt.Fprintf(stdinLog, "[%.2fs] %s", time.Since(start).Seconds(), line)
		if _, err := stdin.Write(line); err != nil {
			return fail("writing to stdin: %v", err)
		}
		return nil
	}
	// answerPrompts answers the can_use_tool requests seen so far (only
	// with PermissionPrompts; without it the CLI sends none).
	answerPrompts := func() error {
		for _, req := range out.takePrompts() {
			line, err := permissionResponse(sc, req)
			if err != nil {
				return fmt.Errorf("capture %s: %w", sc.Name, err)
			}
			if err := write(line); err != nil {
				return err
			}
		}
		return nil
	}
	await := func(what string, done func() bool) error {
		for {
			ch := out.watch()
			if err := answerPrompts(); err != nil {
				return err
			}
			if done() {
				return nil
			}
			select {
			case <-ch:
			case werr := <-exited:
				exited <- werr // keep it for the deferred wait
				if done() {
					return nil
				}
				return fail("claude exited (%v) while waiting for %s", werr, what)
			case <-ctx.Done():
				return fail("waiting for %s: %v", what, ctx.Err())
			}
		}
	}

	if sc.Initialize {
		req, err := stream.ControlRequest("req_init", "initialize", nil)
		if err != nil {
			return res, fmt.Errorf("capture %s: %w", sc.Name, err)
		}
		if err := write(req); err != nil {
			return res, err
		}
		if err := await("the initialize control_response", func() bool { return out.sawControlResponse("req_init") }); err != nil {
			return res, err
		}
	}
	for i, turn := range sc.Turns {
		line, err := stream.UserTurn(turn, nil)
		if err != nil {
			return res, fmt.Errorf("capture %s: turn %d: %w", sc.Name, i+1, err)
		}
		if err := write(line); err != nil {
			return res, err
		}
		n := i + 1
		if err := await(fmt.Sprintf("the result of turn %d", n), func() bool { return out.results() >= n }); err != nil {
			return res, err
		}
		log.Info("capture: turn done", "scenario", sc.Name, "turn", n)
	}
	for i, subtype := range sc.Controls {
		id := fmt.Sprintf("req_ctl_%d", i+1)
		req, err := stream.ControlRequest(id, subtype, nil)
		if err != nil {
			return res, fmt.Errorf("capture %s: %w", sc.Name, err)
		}
		if err := write(req); err != nil {
			return res, err
		}
		if err := await("the "+subtype+" control_response", func() bool { return out.sawControlResponse(id) }); err != nil {
			return res, err
		}
	}
	if err := stdin.Close(); err != nil {
		return res, fail("closing stdin: %v", err)
	}
	var waitErr error
	select {
	case waitErr = <-exited:
	case <-time.After(exitGrace):
		return res, fail("claude did not exit within %v of stdin closing", exitGrace)
	case <-ctx.Done():
		return res, fail("waiting for claude to exit: %v", ctx.Err())
	}
	waited = true
	res.Duration = time.Since(start)
	for _, p := range testkit.GroupMembers(res.PGID) {
		res.LeftBehind = append(res.LeftBehind, p.String())
	}
	res.ExitCode = cmd.ProcessState.ExitCode()
	if waitErr != nil && !errors.Is(waitErr, exec.ErrWaitDelay) {
		var ee *exec.ExitError
		if !errors.As(waitErr, &ee) {
			return res, fail("waiting for claude: %v", waitErr)
		}
	}
	log.Info("capture: done", "scenario", sc.Name, "exit", res.ExitCode, "lines", out.lines, "left_behind", len(res.LeftBehind))
	return res, nil
}

// permissionResponse is the stdin line answering a can_use_tool request
// line: allow with the input unchanged, or deny, as sc.Permit decides.
func permissionResponse(sc Scenario, line []byte) ([]byte, error) {
	var req struct {
		RequestID string          `json:"request_id"`
		Request   json.RawMessage `json:"request"`
	}
	if err := json.Unmarshal(line, &req); err != nil {
		return nil, fmt.Errorf("reading a can_use_tool request: %w", err)
	}
	var fields struct {
		Input json.RawMessage `json:"input"`
	}
	if err := json.Unmarshal(req.Request, &fields); err != nil {
		return nil, fmt.Errorf("reading can_use_tool request %s: %w", req.RequestID, err)
	}
	allow, msg := true, ""
	if sc.Permit != nil {
		allow, msg = sc.Permit(req.Request)
	}
	decision := map[string]any{"behavior": "deny", "message": msg}
	if allow {
		input := fields.Input
		if len(input) == 0 || string(input) == "null" {
			input = json.RawMessage("{}")
		}
		decision = map[string]any{"behavior": "allow", "updatedInput": input}
	}
	return stream.ControlSuccess(req.RequestID, decision)
}

func writeMCPConfig(path string, cfg Config) error {
	conf := map[string]any{"mcpServers": map[string]any{
		"everything": map[string]any{"type": "stdio", "command": cfg.Everything, "args": []string{}},
		"testmcp":    map[string]any{"type": "stdio", "command": cfg.TestMCP, "args": []string{}},
	}}
	b, err := json.MarshalIndent(conf, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// lineSink receives the CLI's stdout (from os/exec's copying goroutine),
// stores it, and notes the events that the runner waits for. Only lines up
// to classifyLimit are inspected, so memory stays bounded whatever the CLI
// prints.
type lineSink struct {
	f  *os.File
	gz *gzip.Writer
	w  *bufio.Writer

	cur      []byte
	overflow bool
	curLen   int

	mu       sync.Mutex
	lines    int
	bytes    int64
	maxLine  int
	nResults int
	ctlResp  map[string]bool
	prompts  [][]byte // can_use_tool requests not yet answered
	changed  chan struct{}
	closeErr error
	closed   bool
}

func newLineSink(path string, compress bool) (*lineSink, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	s := &lineSink{f: f, ctlResp: map[string]bool{}, changed: make(chan struct{})}
	var w io.Writer = f
	if compress {
		s.gz = gzip.NewWriter(f)
		w = s.gz
	}
	s.w = bufio.NewWriterSize(w, 256<<10)
	return s, nil
}

// Write implements io.Writer; os/exec calls it from one goroutine.
func (s *lineSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return 0, errors.New("capture: stdout sink is closed")
	}
	if _, err := s.w.Write(p); err != nil {
		return 0, err
	}
	rest := p
	for len(rest) > 0 {
		i := bytes.IndexByte(rest, '\n')
		part := rest
		if i >= 0 {
			part = rest[:i]
		}
		s.curLen += len(part)
		if !s.overflow {
			if len(s.cur)+len(part) > classifyLimit {
				s.overflow, s.cur = true, nil
			} else {
				s.cur = append(s.cur, part...)
			}
		}
		if i < 0 {
			break
		}
		s.endLine()
		rest = rest[i+1:]
	}
	s.mu.Lock()
	s.bytes += int64(len(p))
	s.mu.Unlock()
	return len(p), nil
}

func (s *lineSink) endLine() {
	var ev struct {
		Type     string `json:"type"`
		Response struct {
			RequestID string `json:"request_id"`
		} `json:"response"`
		Request struct {
			Subtype string `json:"subtype"`
		} `json:"request"`
	}
	if !s.overflow {
		_ = json.Unmarshal(s.cur, &ev) // noise lines just have no type
	}
	s.mu.Lock()
	s.lines++
	s.maxLine = max(s.maxLine, s.curLen)
	switch ev.Type {
	case "result":
		s.nResults++
	case "control_response":
		s.ctlResp[ev.Response.RequestID] = true
	case "control_request":
		if ev.Request.Subtype == "can_use_tool" {
			s.prompts = append(s.prompts, bytes.Clone(s.cur))
		}
	}
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
	s.cur, s.overflow, s.curLen = s.cur[:0], false, 0
}

// watch returns a channel closed at the next line.
func (s *lineSink) watch() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed
}

func (s *lineSink) results() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nResults
}

// takePrompts returns the can_use_tool requests seen since the last call.
func (s *lineSink) takePrompts() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.prompts
	s.prompts = nil
	return p
}

func (s *lineSink) sawControlResponse(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ctlResp[id]
}

// close flushes and closes the file; an unterminated last line counts.
func (s *lineSink) close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return s.closeErr
	}
	s.closed = true
	s.mu.Unlock()
	if s.curLen > 0 {
		s.endLine()
	}
	err := s.w.Flush()
	if s.gz != nil {
		err = errors.Join(err, s.gz.Close())
	}
	err = errors.Join(err, s.f.Close())
	s.closeErr = err
	return err
}

func clipTail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// stderrText is the kept end of claude's stderr.
func stderrText(t *childproc.Tail) string {
	s, _ := t.Text()
	return s
}
