package proxy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidwall/gjson"

	"github.com/ccproxy/ccproxy/internal/childproc"
	"github.com/ccproxy/ccproxy/stream"
	protocol "github.com/ccproxy/ccproxy/webview-protocol"
)

// Session is one chat: one long-lived claude process (replaced only by a
// restart with --resume when claude refuses a live MCP change), its replay
// log, its subscribers and its pending permission requests.
//
// Goroutines, all tracked by wg and joined by close: per process, the stdin
// writer, the stdout loop (the only producer of events), the stderr loop
// and the waiter; one per pending permission timeout and one per pending
// control request timeout (time.AfterFuncs, counted when armed and
// released when they run or are stopped); a restart.
type Session struct {
	id        string
	srv       *Server
	log       *slog.Logger
	cfg       sessionConfig
	createdAt time.Time

	mu             sync.Mutex
	state          string
	claudeID       string
	mode           string // the permission mode: claude's last report, or set by session/setPermissionMode (broker.go)
	elog           *eventLog
	subs           map[*client]*subscription
	perms          []*permission              // pending, in arrival order (a few at most: a linear search is fine)
	resolved       recentSet                  // request ids answered, timed out or cancelled
	ctrl           map[string]*pendingControl // control requests sent to claude, by request id
	ctrlSeq        int64
	turns          int // turns written and not yet ended by a result
	proc           *process
	exited         bool     // the exit was reported (final is closed at the same time)
	exitFrames     [][]byte // session/exited + session/state as reported, for subscribers catching up later
	closing        string   // "", protocol.ExitClosed or protocol.ExitShutdown
	forgotten      bool     // closed: no more subscribers
	restartWanted  bool
	restarting     bool
	held           []heldTurn // turns waiting for a restarted process (at most maxHeldTurns)
	flushing       bool       // held turns are being written
	statusInFlight bool

	mcpMu sync.Mutex // serializes applyCurrentServers

	wg    sync.WaitGroup
	final chan struct{} // closed when the exit has been reported, for close to wait on
}

type sessionConfig struct {
	cwd, model, permissionMode, resume string
}

// subscription is one client's subscription to one session. While it
// catches up, the client's write pump pulls logged frames from next on;
// then it turns live and the session queues frames for it directly.
type subscription struct {
	c         *client
	s         *Session
	next      int64       // guarded by s.mu
	live      bool        // guarded by s.mu
	sentState string      // guarded by s.mu: the state this client was last told
	gone      atomic.Bool // unsubscribed: drop its queued frames
}

type permission struct {
	id          string
	proc        *process
	kind        string // protocol.PermissionKind*
	tool        string
	input       json.RawMessage
	suggestions json.RawMessage // the CLI's permission_suggestions (for "always")
	frame       []byte          // the permission/request push
	timer       *time.Timer
}

type heldTurn struct {
	line  []byte
	reply func(error)
}

type controlResult struct {
	resp json.RawMessage // the response object of a success
	err  error           // *cliError, errSessionExited, errControlTimeout, ...
}

// pendingControl is a control request sent to claude and not answered yet.
// After ControlTimeout it is forgotten: cb gets errControlTimeout.
type pendingControl struct {
	subtype string
	p       *process // the process it was sent to
	cb      func(controlResult)
	timer   *time.Timer
}

// errControlTimeout is the result of a control request claude did not
// answer within ControlTimeout.
var errControlTimeout = errors.New("claude did not answer the control request in time")

// maxHeldTurns bounds the turns held while the session restarts: as many
// as claude's stdin queue takes.
const maxHeldTurns = stdinQueue

// cliError is claude's error answer to a control request.
type cliError struct{ msg string }

func (e *cliError) Error() string { return e.msg }

var errSessionExited = errors.New("the session's claude process has exited")

// recentSet remembers the last recentMax ids added.
type recentSet struct {
	m    map[string]struct{}
	ring []string
	next int
}

const recentMax = 1024

func (r *recentSet) add(id string) {
	if r.m == nil {
		r.m = map[string]struct{}{}
		r.ring = make([]string, recentMax)
	}
	if old := r.ring[r.next]; old != "" {
		delete(r.m, old)
	}
	r.ring[r.next] = id
	r.next = (r.next + 1) % recentMax
	r.m[id] = struct{}{}
}

func (r *recentSet) has(id string) bool { _, ok := r.m[id]; return ok }

// ---------------------------------------------------------------- process

// claudeArgs builds claude's command line. The user's text never goes
// here; values were validated by package protocol so none reads as a flag.
// --replay-user-messages has claude echo each user turn as an event, so
// every client (and a replay after a reconnect) shows what was asked.
func (s *Session) claudeArgs(resume string, mcpArgs []string) []string {
	args := append([]string(nil), s.srv.opts.ClaudePrefixArgs...)
	args = append(args, "-p", "--input-format", "stream-json", "--output-format", "stream-json",
		"--verbose", "--include-partial-messages", "--replay-user-messages", "--permission-prompt-tool", "stdio")
	if s.cfg.model != "" {
		args = append(args, "--model", s.cfg.model)
	}
	if mode := s.permissionMode(); mode != "" {
		args = append(args, "--permission-mode", mode)
	}
	if resume != "" {
		args = append(args, "--resume", resume)
	}
	return append(args, mcpArgs...) // variadic flags: last
}

// errMCPSpawn marks a failure to prepare the MCP flags of a process.
var errMCPSpawn = errors.New("preparing the MCP configuration for claude")

// spawn starts a claude process for the session.
func (s *Session) spawn(claude Claude, resume string) (*process, error) {
	var mcpArgs []string
	release := func() {}
	if cfg := s.srv.mcp.config(); cfg != nil && cfg.Spawn != nil {
		args, rel, err := cfg.Spawn()
		if err != nil {
			return nil, fmt.Errorf("%w: %w", errMCPSpawn, err)
		}
		mcpArgs = args
		if rel != nil {
			release = rel
		}
	}
	spec := procSpec{
		path: claude.Path,
		args: s.claudeArgs(resume, mcpArgs),
		dir:  s.cfg.cwd,
		env:  s.srv.claudeEnv(),
	}
	p, err := startProcess(spec)
	if err != nil {
		release()
		return nil, err
	}
	p.release = release
	s.log.Info("claude started", "pid", p.pid, "path", claude.Path, "cwd", s.cfg.cwd, "resume", resume != "")
	return p, nil
}

// reap kills p, a process no goroutine of run serves (nobody else owns
// it), waits for it and frees what it holds.
func reap(p *process) {
	p.kill()
	p.waitLoop()
	p.release()
	closeAll(p.stdin, p.stdout, p.stderr)
}

// run starts the goroutines of p and asks claude to initialize. s.proc is
// p already.
func (s *Session) run(p *process) {
	tail := childproc.NewTail(s.srv.opts.StderrTailBytes)
	outDone, errDone := make(chan struct{}), make(chan struct{})
	s.wg.Add(4)
	go func() { defer s.wg.Done(); p.writeLoop() }()
	go func() { defer s.wg.Done(); defer close(outDone); s.stdoutLoop(p) }()
	go func() { defer s.wg.Done(); defer close(errDone); s.stderrLoop(p, tail) }()
	go func() {
		defer s.wg.Done()
		defer close(p.finished)
		p.waitLoop()
		p.release()
		// The group is dead; EOF comes once every writer of the pipes is
		// gone. A process that escaped the group could hold them open:
		// do not wait for it forever.
		deadline := time.Now().Add(2 * time.Second)
		p.stdout.SetReadDeadline(deadline)
		p.stderr.SetReadDeadline(deadline)
		<-outDone
		<-errDone
		s.onExit(p, stderrTail(tail))
	}()

	_, _ = s.control(p, "initialize", map[string]any{"hooks": nil}, true, func(r controlResult) {
		if r.err != nil {
			s.log.Warn("claude did not accept initialize", "err", r.err)
		}
		s.mu.Lock()
		if s.proc == p && s.state == protocol.StateStarting {
			s.setStateLocked(s.busyState(), "")
		}
		if len(s.held) > 0 && !s.flushing {
			s.flushing = true
			s.wg.Add(1)
			go func() { defer s.wg.Done(); s.flushHeld(p) }()
		}
		s.mu.Unlock()
		s.refreshMCPStatus()
	})
}

func (s *Session) busyState() string {
	if s.turns > 0 {
		return protocol.StateRunning
	}
	return protocol.StateIdle
}

// stdoutLoop reads claude's stdout: each line is normalized, then handled
// as a control message or logged and fanned out as an event.
func (s *Session) stdoutLoop(p *process) {
	defer p.stdout.Close()
	r := stream.NewReader(p.stdout, s.srv.opts.MaxLineBytes)
	norm := stream.NewNormalizer(stream.Options{Attachments: stream.AttachSink, Sink: s.srv.blobs})
	calls := s.srv.calls.forSession(s.id, s.log) // nil without a call log
	for {
		line, err := r.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				s.log.Warn("reading claude's stdout", "pid", p.pid, "err", err)
			}
			break
		}
		if s.srv.lineRead != nil {
			s.srv.lineRead()
		}
		ev := norm.Normalize(line)
		switch ev.Type {
		case stream.TypeControlRequest:
			s.onControlRequest(p, ev.JSON)
		case stream.TypeControlResponse:
			s.onControlResponse(ev.JSON)
		case stream.TypeControlCancel:
			s.onControlCancel(ev.JSON)
		default:
			s.appendEvent(&ev)
			if calls != nil {
				calls.observe(&ev) // MCP tool_use/tool_result pairs → the call log
			}
		}
	}
	if n := r.Oversized(); n > 0 {
		s.log.Warn("claude printed lines over the line limit; they were replaced by oversized_line events", "pid", p.pid, "lines", n, "limit", s.srv.opts.MaxLineBytes)
	}
}

// stderrLog bounds what of claude's stderr goes to the log.
const (
	stderrLogLines    = 200
	stderrLogLineMax  = 1024
	stderrReadBufSize = 4096
)

// stderrLoop keeps the tail of claude's stderr for the exit report and
// logs its first lines.
func (s *Session) stderrLoop(p *process, tail *childproc.Tail) {
	defer p.stderr.Close()
	br := bufio.NewReaderSize(io.TeeReader(p.stderr, tail), stderrReadBufSize)
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
					s.log.Info("claude stderr", "pid", p.pid, "line", strings.ToValidUTF8(text, "\uFFFD"))
				}
			case lines == stderrLogLines:
				s.log.Warn("claude stderr: more lines are not logged (the tail is kept for the exit report)", "pid", p.pid, "logged", stderrLogLines)
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

// ---------------------------------------------------------------- events

// appendEvent gives an event its seq, logs it and queues it for the live
// subscribers. Only the stdout loop of the current process calls it, so
// reading LastSeq without the lock is safe (it writes it under the lock).
func (s *Session) appendEvent(ev *stream.Event) {
	seq := s.elog.LastSeq() + 1
	// The envelope is under 100 bytes besides the id and the event.
	frame := protocol.AppendSessionEvent(make([]byte, 0, len(ev.JSON)+len(s.id)+128), s.id, seq, ev.JSON)
	var reports []mcpReport
	if ev.Type == stream.TypeSystem && ev.Subtype == stream.SubtypeInit {
		reports = parseInitServers(ev.JSON)
	}

	s.mu.Lock()
	s.elog.Append(seq, frame)
	for c, sub := range s.subs {
		if sub.live {
			c.enqueue(outFrame{data: frame, sub: sub})
		}
	}
	switch ev.Type {
	case stream.TypeSystem:
		if ev.Subtype == stream.SubtypeInit && ev.SessionID != "" && ev.SessionID != s.claudeID {
			s.claudeID = ev.SessionID
			s.pushStateLocked("")
		}
		s.noteModeLocked(ev)
	case stream.TypeResult:
		if s.turns > 0 {
			s.turns--
		}
		if s.turns == 0 && s.state == protocol.StateRunning {
			s.setStateLocked(protocol.StateIdle, "")
		}
		if s.turns == 0 && s.restartWanted {
			s.beginRestartLocked()
		}
	}
	s.mu.Unlock()

	if reports != nil {
		s.srv.mcp.observe(reports, time.Now())
		if s.srv.mcp.needsDetail(reports) {
			s.refreshMCPStatus() // tools and failure reasons come only from mcp_status
		}
	}
}

// setStateLocked changes the state and tells the live subscribers.
func (s *Session) setStateLocked(state, reason string) {
	if s.state == state {
		return
	}
	s.state = state
	s.pushStateLocked(reason)
}

func (s *Session) pushStateLocked(reason string) {
	f, err := encodePush(protocol.TypeSessionState, protocol.SessionState{Session: s.id, State: s.state, ClaudeSessionID: s.claudeID, Reason: reason, PermissionMode: s.mode})
	if err != nil {
		s.log.Error("session state", "err", err)
		return
	}
	for c, sub := range s.subs {
		if sub.live {
			sub.sentState = s.state
			c.enqueue(outFrame{data: f, sub: sub})
		}
	}
}

// pushLocked queues a frame for every live subscriber.
func (s *Session) pushLocked(frame []byte) {
	for c, sub := range s.subs {
		if sub.live {
			c.enqueue(outFrame{data: frame, sub: sub})
		}
	}
}

// ---------------------------------------------------------------- control protocol

// control sends claude the control request subtype with fields and
// returns its request id; cb gets the answer (from the stdout loop, from
// the timeout after ControlTimeout, or at once when the request cannot be
// sent; it must not block), exactly once unless forgetControl drops the
// request first. With async the line is queued without waiting (for
// callers that must not block, like the stdout loop).
func (s *Session) control(p *process, subtype string, fields any, async bool, cb func(controlResult)) (string, error) {
	s.mu.Lock()
	if s.exited || p == nil {
		s.mu.Unlock()
		cb(controlResult{err: errSessionExited})
		return "", errSessionExited
	}
	s.ctrlSeq++
	id := fmt.Sprintf("ccproxy-%d", s.ctrlSeq)
	pc := &pendingControl{subtype: subtype, p: p, cb: cb}
	s.ctrl[id] = pc
	s.wg.Add(1)
	pc.timer = time.AfterFunc(s.srv.opts.ControlTimeout, func() {
		defer s.wg.Done()
		s.controlTimedOut(id, pc)
	})
	s.mu.Unlock()

	line, err := stream.ControlRequest(id, subtype, fields)
	if err == nil {
		if async {
			if !p.writeAsync(line) {
				err = errStdinClosed
			}
		} else {
			ctx, cancel := context.WithTimeout(context.Background(), s.srv.opts.ControlTimeout)
			err = p.write(ctx, line)
			cancel()
		}
	}
	if err != nil {
		s.mu.Lock()
		pc := s.takeControlLocked(id)
		s.mu.Unlock()
		if pc != nil {
			pc.cb(controlResult{err: err})
		}
		return id, err
	}
	return id, nil
}

// takeControlLocked removes a pending control request (nil if it is not
// pending) and stops its timeout.
func (s *Session) takeControlLocked(id string) *pendingControl {
	pc := s.ctrl[id]
	if pc == nil {
		return nil
	}
	delete(s.ctrl, id)
	if pc.timer.Stop() {
		s.wg.Done() // the AfterFunc will not run
	}
	return pc
}

// forgetControl drops a pending control request whose answer nobody waits
// for any more; its callback is not called.
func (s *Session) forgetControl(id string) {
	s.mu.Lock()
	s.takeControlLocked(id)
	s.mu.Unlock()
}

func (s *Session) controlTimedOut(id string, pc *pendingControl) {
	s.mu.Lock()
	if s.ctrl[id] != pc {
		s.mu.Unlock()
		return // answered meanwhile
	}
	delete(s.ctrl, id) // the timer has fired: nothing to stop
	s.mu.Unlock()
	s.log.Warn("claude did not answer a control request in time; it is forgotten", "subtype", pc.subtype, "request_id", id, "timeout", s.srv.opts.ControlTimeout)
	pc.cb(controlResult{err: errControlTimeout})
}

// controlWait sends a control request and waits for its answer.
func (s *Session) controlWait(ctx context.Context, subtype string, fields any) (json.RawMessage, error) {
	ch := make(chan controlResult, 1)
	s.mu.Lock()
	p := s.proc
	s.mu.Unlock()
	id, _ := s.control(p, subtype, fields, false, func(r controlResult) { ch <- r })
	select {
	case r := <-ch:
		return r.resp, r.err
	case <-ctx.Done():
		s.forgetControl(id)
		return nil, ctx.Err()
	}
}

func (s *Session) onControlResponse(line []byte) {
	resp := gjson.GetBytes(line, "response")
	id := resp.Get("request_id").String()
	s.mu.Lock()
	pc := s.takeControlLocked(id)
	s.mu.Unlock()
	if pc == nil {
		s.log.Debug("control response to no pending request (timed out, or not ours)", "request_id", id)
		return
	}
	cb := pc.cb
	if resp.Get("subtype").String() == "success" {
		r := resp.Get("response")
		raw := json.RawMessage("{}")
		if r.IsObject() {
			raw = json.RawMessage(bytes.Clone([]byte(r.Raw)))
		}
		cb(controlResult{resp: raw})
		return
	}
	msg := resp.Get("error").String()
	if msg == "" {
		msg = "claude answered with an error and no message"
	}
	cb(controlResult{err: &cliError{msg: msg}})
}

// onControlRequest handles a request of claude: can_use_tool goes to the
// permission broker; anything else gets an error answer at once, so claude
// is never left waiting.
func (s *Session) onControlRequest(p *process, line []byte) {
	id := gjson.GetBytes(line, "request_id").String()
	subtype := gjson.GetBytes(line, "request.subtype").String()
	if id == "" {
		s.log.Warn("claude sent a control request without request_id; ignored", "subtype", subtype)
		return
	}
	if subtype == "can_use_tool" {
		s.onPermissionRequest(p, id, line)
		return
	}
	s.log.Info("claude sent a control request ccproxy does not handle; answered with an error", "subtype", subtype)
	s.answerClaude(p, stream.ControlError(id, fmt.Sprintf("ccproxy does not handle control requests of subtype %q", subtype)))
}

// answerClaude queues an answer to a control request of claude without
// blocking. If claude has not read its stdin for so long that the queue is
// full, the session cannot go on: its process is killed.
func (s *Session) answerClaude(p *process, line []byte) {
	if p.writeAsync(line) {
		return
	}
	select {
	case <-p.writerDone:
		return // exiting anyway
	default:
	}
	s.log.Error("claude's stdin queue is full; killing the process", "pid", p.pid, "queue", stdinQueue)
	p.kill()
}

func (s *Session) onControlCancel(line []byte) {
	id := gjson.GetBytes(line, "request_id").String()
	s.mu.Lock()
	defer s.mu.Unlock()
	perm := s.takePermLocked(id)
	if perm == nil {
		return
	}
	s.resolvedLocked(perm, protocol.BehaviorCancelled, protocol.ResolvedCancelled, "")
}

// ---------------------------------------------------------------- permission broker

func (s *Session) onPermissionRequest(p *process, id string, line []byte) {
	req := gjson.GetBytes(line, "request")
	input := json.RawMessage(`{}`)
	if in := req.Get("input"); in.IsObject() {
		input = json.RawMessage(bytes.Clone([]byte(in.Raw)))
	}
	pr := protocol.PermissionRequest{
		Session:     s.id,
		RequestID:   id,
		ToolName:    req.Get("tool_name").String(),
		Input:       input,
		ToolUseID:   req.Get("tool_use_id").String(),
		DisplayName: req.Get("display_name").String(),
	}
	if m := req.Get("mcp"); m.IsObject() && m.Get("server").String() != "" && m.Get("tool").String() != "" {
		pr.MCP = &protocol.MCPRef{Server: m.Get("server").String(), Tool: m.Get("tool").String()}
	}
	if sg := req.Get("permission_suggestions"); sg.IsArray() {
		pr.Suggestions = json.RawMessage(bytes.Clone([]byte(sg.Raw)))
	}
	if pr.ToolName == "" {
		pr.ToolName = "unknown"
	}
	classifyPermission(&pr)

	// A tool the current permission rules allow (a rule written after
	// claude started, so its --allowedTools did not name it): allowed, as
	// claude would have if it had been started now. Never a question or a
	// plan: those are for a person.
	if pr.Kind == protocol.PermissionKindTool && s.srv.mcp.config().allows(pr.ToolName, pr.MCP) {
		s.log.Info("permission allowed by the permission rules", "tool", pr.ToolName)
		resp, _ := stream.ControlSuccess(id, map[string]any{"behavior": "allow", "updatedInput": input})
		s.answerClaude(p, resp)
		return
	}

	timeout := s.srv.opts.PermissionTimeout
	if waitsForPerson(pr.Kind) {
		timeout = 0 // never auto-denied
	}
	if timeout > 0 {
		pr.Deadline = time.Now().Add(timeout).UTC()
	}
	frame, err := encodePush(protocol.TypePermissionRequest, pr)
	if err != nil {
		s.log.Error("permission request cannot be sent to clients; denied", "err", err)
		resp, _ := stream.ControlSuccess(id, map[string]any{"behavior": "deny", "message": "ccproxy could not show this permission request"})
		s.answerClaude(p, resp)
		return
	}
	perm := &permission{id: id, proc: p, kind: pr.Kind, tool: pr.ToolName, input: input, suggestions: pr.Suggestions, frame: frame}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.permLocked(id) != nil || s.exited {
		return
	}
	if len(s.perms) >= s.srv.opts.MaxPendingPermissions {
		s.log.Warn("too many pending permission requests; denied", "request_id", id, "tool", pr.ToolName, "pending", len(s.perms))
		resp, _ := stream.ControlSuccess(id, map[string]any{"behavior": "deny",
			"message": fmt.Sprintf("ccproxy denied this request: %d permission requests are already waiting for an answer", len(s.perms))})
		s.answerClaude(p, resp) // does not block
		return
	}
	s.perms = append(s.perms, perm)
	s.pushLocked(frame)
	if timeout > 0 {
		s.wg.Add(1)
		perm.timer = time.AfterFunc(timeout, func() {
			defer s.wg.Done()
			s.permissionTimedOut(id, timeout)
		})
	}
	s.log.Info("permission requested", "request_id", id, "tool", pr.ToolName)
}

// permLocked returns the pending request id, or nil.
func (s *Session) permLocked(id string) *permission {
	if i := slices.IndexFunc(s.perms, func(p *permission) bool { return p.id == id }); i >= 0 {
		return s.perms[i]
	}
	return nil
}

// takePermLocked removes a pending request (nil if it is not pending),
// stops its timer and remembers it was resolved.
func (s *Session) takePermLocked(id string) *permission {
	i := slices.IndexFunc(s.perms, func(p *permission) bool { return p.id == id })
	if i < 0 {
		return nil
	}
	perm := s.perms[i]
	s.perms = slices.Delete(s.perms, i, i+1)
	if perm.timer != nil && perm.timer.Stop() {
		s.wg.Done() // the AfterFunc will not run
	}
	s.resolved.add(id)
	return perm
}

func (s *Session) resolvedLocked(perm *permission, behavior, reason, message string) {
	f, err := encodePush(protocol.TypePermissionResolved, protocol.PermissionResolved{
		Session: s.id, RequestID: perm.id, Behavior: behavior, Reason: reason, Message: message})
	if err != nil {
		s.log.Error("permission resolved", "err", err)
		return
	}
	s.pushLocked(f)
}

func (s *Session) permissionTimedOut(id string, timeout time.Duration) {
	s.mu.Lock()
	perm := s.permLocked(id)
	if perm == nil {
		s.mu.Unlock()
		return
	}
	perm.timer = nil // running now: nothing to stop
	s.takePermLocked(id)
	msg := fmt.Sprintf("No answer to the permission request within %v: denied by ccproxy.", timeout)
	resp, _ := stream.ControlSuccess(id, map[string]any{"behavior": "deny", "message": msg})
	s.answerClaude(perm.proc, resp)
	s.resolvedLocked(perm, protocol.BehaviorDeny, protocol.ResolvedTimeout, msg)
	s.mu.Unlock()
	s.log.Info("permission request timed out; denied", "request_id", id, "timeout", timeout)
}

// respondPermission answers a pending request (first answer wins). On
// success every subscriber, the answering client included, has been sent
// permission/resolved when it returns.
func (s *Session) respondPermission(ctx context.Context, d *protocol.PermissionRespond) error {
	dest, err := s.recordAlways(d) // broker.go: writes "always" rules first, outside the lock
	if err != nil {
		return err
	}
	s.mu.Lock()
	perm := s.permLocked(d.RequestID)
	if perm == nil {
		known := s.resolved.has(d.RequestID)
		s.mu.Unlock()
		if known {
			return protocol.Errorf(protocol.CodeAlreadyResolved, "permission/respond: request %q was already answered, timed out or was cancelled", truncate(d.RequestID, 80))
		}
		return protocol.Errorf(protocol.CodeNotFound, "permission/respond: session %s has no permission request %q", s.id, truncate(d.RequestID, 80))
	}
	var resp map[string]any
	if d.Behavior == protocol.BehaviorAllow {
		if resp, err = permissionAnswer(perm, d, dest); err != nil {
			s.mu.Unlock()
			return err // the request stays pending
		}
	}
	s.takePermLocked(d.RequestID)
	s.mu.Unlock()

	message := ""
	if d.Behavior != protocol.BehaviorAllow {
		message = d.Message
		if message == "" {
			message = "Denied by the user"
		}
		resp = map[string]any{"behavior": "deny", "message": message}
	}
	line, err := stream.ControlSuccess(d.RequestID, resp)
	if err != nil {
		return fmt.Errorf("permission answer: %w", err)
	}
	werr := perm.proc.write(ctx, line)
	s.mu.Lock()
	defer s.mu.Unlock()
	if werr != nil {
		s.resolvedLocked(perm, protocol.BehaviorCancelled, protocol.ResolvedSessionExited, "")
		return protocol.Errorf(protocol.CodeSessionExited, "permission/respond: session %s: claude is gone, the answer could not be delivered", s.id)
	}
	s.resolvedLocked(perm, d.Behavior, protocol.ResolvedAnswered, message)
	s.log.Info("permission answered", "request_id", d.RequestID, "behavior", d.Behavior)
	return nil
}

// ---------------------------------------------------------------- turns

// sendTurn writes a user turn to claude's stdin and calls reply with the
// result. While the session is restarting the turn is held, and written
// (and replied to) when the new process is up.
func (s *Session) sendTurn(ctx context.Context, line []byte, reply func(error)) {
	s.mu.Lock()
	switch {
	case s.exited || s.closing != "":
		s.mu.Unlock()
		reply(protocol.Errorf(protocol.CodeSessionExited, "session/send: session %s has exited; create a new session with resume to continue", s.id))
		return
	case s.restarting || s.flushing || len(s.held) > 0:
		if len(s.held) >= maxHeldTurns {
			s.mu.Unlock()
			reply(protocol.Errorf(protocol.CodeLimitExceeded, "session/send: session %s is restarting and already holds %d turns; wait until it is idle", s.id, maxHeldTurns))
			return
		}
		s.held = append(s.held, heldTurn{line: line, reply: reply})
		s.mu.Unlock()
		return
	}
	p := s.proc
	s.turns++
	if s.state == protocol.StateIdle {
		s.setStateLocked(protocol.StateRunning, "")
	}
	s.mu.Unlock()
	reply(s.writeTurn(ctx, p, line))
}

func (s *Session) writeTurn(ctx context.Context, p *process, line []byte) error {
	err := p.write(ctx, line)
	if err == nil {
		return nil
	}
	s.mu.Lock()
	if s.turns > 0 {
		s.turns--
	}
	if s.turns == 0 && s.state == protocol.StateRunning {
		s.setStateLocked(protocol.StateIdle, "")
	}
	s.mu.Unlock()
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return protocol.Errorf(protocol.CodeTimeout, "session/send: claude did not read the turn in time")
	}
	return protocol.Errorf(protocol.CodeSessionExited, "session/send: session %s has exited; create a new session with resume to continue", s.id)
}

// flushHeld writes the turns held during a restart, in order, including
// those sent while it runs.
func (s *Session) flushHeld(p *process) {
	for {
		s.mu.Lock()
		if len(s.held) == 0 || s.exited {
			s.flushing = false
			s.mu.Unlock()
			return
		}
		h := s.held[0]
		s.held = s.held[1:]
		s.turns++
		if s.state == protocol.StateIdle {
			s.setStateLocked(protocol.StateRunning, "")
		}
		s.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), s.srv.opts.ControlTimeout)
		h.reply(s.writeTurn(ctx, p, h.line))
		cancel()
	}
}

// ---------------------------------------------------------------- subscribers

// subscribe subscribes c (replacing an earlier subscription of c) and
// queues, in this order and atomically with respect to new events: the
// reply, a session/gap if the log no longer reaches back to afterSeq. The
// client's write pump then pulls the logged events, the pending permission
// requests, and the subscription turns live (pull).
func (s *Session) subscribe(c *client, id json.RawMessage, afterSeq int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.forgotten {
		return protocol.Errorf(protocol.CodeUnknownSession, "session/subscribe: no session %q", s.id)
	}
	first, last := s.elog.FirstSeq(), s.elog.LastSeq()
	if afterSeq > last {
		return protocol.Errorf(protocol.CodeBadRequest, "session/subscribe: data.afterSeq: %d is beyond the last seq of session %s (%d): events are numbered anew when ccproxy restarts", afterSeq, s.id, last)
	}
	reply, err := encodeReply(id, protocol.SessionSubscribeResult{Session: s.id, State: s.state, FirstSeq: first, LastSeq: last})
	if err != nil {
		return err
	}
	if old := s.subs[c]; old != nil {
		old.gone.Store(true)
		c.dropSub(old)
	}
	sub := &subscription{c: c, s: s, next: max(afterSeq+1, first), sentState: s.state}
	c.enqueue(outFrame{data: reply})
	if afterSeq+1 < first {
		if gap, err := encodePush(protocol.TypeSessionGap, protocol.SessionGap{Session: s.id, FirstSeq: first}); err == nil {
			c.enqueue(outFrame{data: gap, sub: sub})
		}
	}
	s.subs[c] = sub
	c.addSub(sub)
	return nil
}

// Chunks a write pump pulls at a time while a subscription catches up.
const (
	pullFrames = 256
	pullBytes  = 4 << 20
)

// pull returns the next logged frames of a catching-up subscription. When
// it reaches the end of the log the subscription turns live, and the
// pending permission requests (and the exit report of an exited session)
// are appended, so nothing is lost or sent twice.
func (s *Session) pull(sub *subscription) [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sub.live || sub.gone.Load() || s.subs[sub.c] != sub {
		return nil
	}
	var frames [][]byte
	if first := s.elog.FirstSeq(); sub.next < first {
		// Evicted while this client was catching up.
		if gap, err := encodePush(protocol.TypeSessionGap, protocol.SessionGap{Session: s.id, FirstSeq: first}); err == nil {
			frames = append(frames, gap)
		}
		sub.next = first
	}
	size := 0
	for sub.next <= s.elog.LastSeq() && len(frames) < pullFrames && size < pullBytes {
		f := s.elog.Get(sub.next)
		frames = append(frames, f)
		size += len(f)
		sub.next++
	}
	if sub.next <= s.elog.LastSeq() {
		return frames
	}
	sub.live = true
	sub.c.catchupDone(sub)
	if s.exited {
		frames = append(frames, s.exitFrames...)
		sub.sentState = s.state
		return frames
	}
	if sub.sentState != s.state {
		if f, err := encodePush(protocol.TypeSessionState, protocol.SessionState{Session: s.id, State: s.state, ClaudeSessionID: s.claudeID, PermissionMode: s.mode}); err == nil {
			frames = append(frames, f)
		}
		sub.sentState = s.state
	}
	for _, perm := range s.perms {
		frames = append(frames, perm.frame)
	}
	return frames
}

// unsubscribe ends c's subscription; its queued frames are dropped.
func (s *Session) unsubscribe(c *client) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	sub := s.subs[c]
	if sub == nil {
		return false
	}
	sub.gone.Store(true)
	delete(s.subs, c)
	c.dropSub(sub)
	return true
}

// ---------------------------------------------------------------- exit, close, restart

// onExit runs when process p has ended and its output was read to the end.
func (s *Session) onExit(p *process, stderrTail string) {
	code, sig := exitStatus(p.state)
	logArgs := []any{"pid", p.pid, "code", deref(code), "signal", deref(sig), "ran", time.Since(p.started).Round(time.Millisecond)}

	s.mu.Lock()
	if p != s.proc || (s.restarting && s.closing == "") {
		// Requests to p go unanswered now; the session goes on.
		gone := s.takeControlsLocked(func(pc *pendingControl) bool { return pc.p == p })
		s.mu.Unlock()
		s.log.Info("claude exited for a restart", logArgs...)
		for _, pc := range gone {
			pc.cb(controlResult{err: errSessionExited})
		}
		return
	}
	reason := s.closing
	if reason == "" {
		reason = protocol.ExitExited
	}
	s.log.Info("claude exited", append(logArgs, "reason", reason)...)
	s.reportExitLocked(code, sig, stderrTail, reason)
	gone := s.takeControlsLocked(func(*pendingControl) bool { return true })
	held := s.held
	s.held = nil
	s.mu.Unlock()

	for _, pc := range gone {
		pc.cb(controlResult{err: errSessionExited})
	}
	for _, h := range held {
		h.reply(protocol.Errorf(protocol.CodeSessionExited, "session/send: session %s has exited; create a new session with resume to continue", s.id))
	}
}

// takeControlsLocked removes the pending control requests that match.
func (s *Session) takeControlsLocked(match func(*pendingControl) bool) []*pendingControl {
	var out []*pendingControl
	for id, pc := range s.ctrl {
		if match(pc) {
			out = append(out, s.takeControlLocked(id))
		}
	}
	return out
}

// reportExitLocked makes the session exited: pending permission requests are
// cancelled, subscribers get session/exited then session/state.
func (s *Session) reportExitLocked(code *int64, sig *string, stderrTail, reason string) {
	if s.exited {
		return
	}
	for len(s.perms) > 0 {
		perm := s.takePermLocked(s.perms[0].id)
		s.resolvedLocked(perm, protocol.BehaviorCancelled, protocol.ResolvedSessionExited, "")
	}
	s.exited = true
	s.turns = 0
	state := protocol.StateExited
	if reason == protocol.ExitClosed {
		state = protocol.StateClosed
	}
	s.state = state
	exited, err := encodePush(protocol.TypeSessionExited, protocol.SessionExited{
		Session: s.id, Code: code, Signal: sig, StderrTail: stderrTail, Reason: reason})
	if err != nil {
		s.log.Error("session exited", "err", err)
	}
	st, err := encodePush(protocol.TypeSessionState, protocol.SessionState{Session: s.id, State: state, ClaudeSessionID: s.claudeID, Reason: reason})
	if err != nil {
		s.log.Error("session state", "err", err)
	}
	s.exitFrames = nil
	for _, f := range [][]byte{exited, st} {
		if f != nil {
			s.exitFrames = append(s.exitFrames, f)
			s.pushLocked(f)
		}
	}
	for _, sub := range s.subs {
		if sub.live {
			sub.sentState = state
		}
	}
	close(s.final)
}

// close ends the session: stdin EOF, CloseGrace, SIGTERM to the group,
// TermGrace, SIGKILL. Subscribers get session/exited (reason) and
// session/state before it returns; with reason closed the session is then
// forgotten. It waits for every goroutine of the session. Safe to call
// more than once and concurrently.
func (s *Session) close(reason string) {
	s.mu.Lock()
	if s.closing == "" {
		s.closing = reason
	}
	p := s.proc
	exited := s.exited
	s.mu.Unlock()

	if !exited && p != nil {
		p.stop(s.srv.opts.CloseGrace, s.srv.opts.TermGrace)
	}
	<-s.final
	s.wg.Wait()

	if reason != protocol.ExitClosed {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.forgotten {
		return
	}
	if exited && s.state != protocol.StateClosed {
		// It had exited on its own; now it is closed too.
		s.state = protocol.StateClosed
		if f, err := encodePush(protocol.TypeSessionState, protocol.SessionState{Session: s.id, State: s.state, ClaudeSessionID: s.claudeID, Reason: reason}); err == nil {
			s.pushLocked(f)
		}
	}
	s.forgotten = true
	for c, sub := range s.subs {
		c.dropSub(sub) // its queued frames still go out
	}
	s.subs = map[*client]*subscription{}
	s.elog = newEventLog(1)
}

// requestRestart restarts claude with --resume between turns, because it
// refused a live MCP change.
func (s *Session) requestRestart(why string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.exited || s.closing != "" || s.restarting {
		return
	}
	s.log.Info("restarting claude between turns", "why", why)
	s.restartWanted = true
	if s.turns == 0 {
		s.beginRestartLocked()
	}
}

func (s *Session) beginRestartLocked() {
	if s.restarting || s.exited || s.closing != "" {
		return
	}
	s.restartWanted = false
	s.restarting = true
	s.setStateLocked(protocol.StateRestarting, "applying an MCP configuration change")
	old := s.proc
	s.wg.Add(1)
	go func() { defer s.wg.Done(); s.restart(old) }()
}

// restart replaces old by a new claude resuming the same conversation.
func (s *Session) restart(old *process) {
	old.stop(s.srv.opts.CloseGrace, s.srv.opts.TermGrace)
	<-old.finished

	s.mu.Lock()
	resume := s.claudeID
	closing := s.closing
	s.mu.Unlock()
	fail := func(msg string) {
		code, sig := exitStatus(old.state)
		s.mu.Lock()
		reason := s.closing
		if reason == "" {
			reason = protocol.ExitExited
		}
		s.restarting = false
		s.reportExitLocked(code, sig, msg, reason)
		held := s.held
		s.held = nil
		s.mu.Unlock()
		for _, h := range held {
			h.reply(protocol.Errorf(protocol.CodeSessionExited, "session/send: session %s has exited", s.id))
		}
	}
	if closing != "" {
		fail("")
		return
	}
	claude, err := s.srv.findClaude()
	if err != nil {
		s.log.Error("restart: claude unavailable", "err", err)
		fail("ccproxy could not restart claude: " + err.Error())
		return
	}
	p, err := s.spawn(claude, resume)
	if err != nil {
		s.log.Error("restart: starting claude", "err", err)
		fail("ccproxy could not restart claude: " + spawnErrorMessage(err)) // what session/create would say
		return
	}
	s.mu.Lock()
	if s.closing != "" {
		s.mu.Unlock()
		// Closed meanwhile: nobody else owns the new process.
		reap(p)
		fail("")
		return
	}
	s.proc = p
	s.restarting = false
	s.state = "" // so the next line announces it
	s.setStateLocked(protocol.StateStarting, "resumed with the new MCP configuration")
	s.mu.Unlock()
	s.run(p)
}

// ---------------------------------------------------------------- MCP

// applyCurrentServers sends the full MCP server set now in force to
// claude, then asks for its status; if claude refuses, the session restarts
// between turns. Calls are serialized, and each sends the newest
// configuration, so the last one to run wins.
func (s *Session) applyCurrentServers() {
	s.mcpMu.Lock()
	defer s.mcpMu.Unlock()
	cfg := s.srv.mcp.config()
	if cfg == nil {
		return
	}
	s.mu.Lock()
	skip := s.exited || s.closing != "" || s.restarting
	s.mu.Unlock()
	if skip {
		return
	}
	servers := cfg.Servers
	if servers == nil {
		servers = map[string]json.RawMessage{}
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.srv.opts.ControlTimeout)
	defer cancel()
	resp, err := s.controlWait(ctx, "mcp_set_servers", map[string]any{"servers": servers})
	switch {
	case errors.Is(err, errSessionExited):
		return
	case err != nil:
		s.log.Warn("claude refused mcp_set_servers", "err", err)
		s.requestRestart("mcp_set_servers failed: " + err.Error())
	default:
		if errs := gjson.GetBytes(resp, "errors"); errs.IsObject() && len(errs.Map()) > 0 {
			names := make([]string, 0)
			for k := range errs.Map() {
				names = append(names, k)
			}
			s.log.Warn("claude reported errors applying MCP servers", "servers", strings.Join(names, ","))
			s.requestRestart("mcp_set_servers reported errors for " + strings.Join(names, ", "))
		} else {
			s.log.Info("MCP servers applied", "added", gjson.GetBytes(resp, "added").Raw, "removed", gjson.GetBytes(resp, "removed").Raw)
		}
	}
	s.refreshMCPStatus()
}

// refreshMCPStatus asks claude for mcp_status (at most one request at a
// time) and feeds the answer to the MCP status.
func (s *Session) refreshMCPStatus() {
	s.mu.Lock()
	if s.statusInFlight || s.exited || s.restarting || s.proc == nil {
		s.mu.Unlock()
		return
	}
	s.statusInFlight = true
	p := s.proc
	s.mu.Unlock()
	_, _ = s.control(p, "mcp_status", nil, true, func(r controlResult) {
		s.mu.Lock()
		s.statusInFlight = false
		s.mu.Unlock()
		if r.err != nil {
			if !errors.Is(r.err, errSessionExited) {
				s.log.Debug("mcp_status failed", "err", r.err)
			}
			return
		}
		s.srv.mcp.observe(parseMCPStatus(r.resp), time.Now())
	})
}

// ---------------------------------------------------------------- info

func (s *Session) info() protocol.SessionInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	return protocol.SessionInfo{
		Session:            s.id,
		State:              s.state,
		Cwd:                s.cfg.cwd,
		Model:              s.cfg.model,
		PermissionMode:     s.mode,
		ClaudeSessionID:    s.claudeID,
		CreatedAt:          s.createdAt.UTC(),
		FirstSeq:           s.elog.FirstSeq(),
		LastSeq:            s.elog.LastSeq(),
		Subscribers:        int64(len(s.subs)),
		PendingPermissions: int64(len(s.perms)),
	}
}

func (s *Session) isLive() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.exited && s.closing == ""
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// osEnvWithout returns env without the variables named.
func envWithout(env []string, names ...string) []string {
	out := make([]string, 0, len(env))
next:
	for _, kv := range env {
		for _, n := range names {
			if strings.HasPrefix(kv, n+"=") {
				continue next
			}
		}
		out = append(out, kv)
	}
	return out
}
