package proxy

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ccproxy/ccproxy/mcpconfig"
	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/proxy/claudecli"
	"github.com/ccproxy/ccproxy/proxy/mcphub"
	"github.com/ccproxy/ccproxy/stream"
)

// Session is one chat: one long-lived claude process (a claudecli.Client,
// replaced only by a restart with --resume when claude refuses a live MCP
// change), its replay log, its subscribers and its pending permission
// requests. The client does the process, stdin, stdout and the control
// protocol's bookkeeping; the session does turns, state, the permission
// broker, restarts and MCP application.
//
// Goroutines, all tracked by wg and joined by close: per process, the
// exit watcher (it waits for the client, whose own goroutines call the
// session's handlers: onEvent, onControlRequest, onControlCancel, and the
// callbacks of control requests); one per pending permission timeout
// (time.AfterFuncs, counted when armed and released when they run or are
// stopped); a restart; the flush of held turns.
//
// mu guards every field below it up to mcpMu; mcpMu serializes
// applyCurrentServers and toggleMCP and guards mcpOff.
type Session struct {
	id        string
	srv       *Server
	log       *slog.Logger
	cfg       sessionConfig
	createdAt time.Time

	secretsCache atomic.Pointer[sessionSecrets] // see secrets

	mu             sync.Mutex
	state          string
	claudeID       string
	hub            *hub          // the event log and the subscriptions (its own lock, taken after mu)
	mode           string        // the permission mode: claude's last report, or set by session/setPermissionMode (broker.go)
	model          string        // the model the session runs, as reported in session/state (model.go)
	modelChosen    string        // the model value last chosen (session/create, session/setModel): a new process is launched with it
	modelResolved  string        // the model id claude's set_model answer resolved modelChosen to ("" unknown)
	models         []modelEntry  // the models claude's initialize reply offers (at most protocol.MaxModels)
	modelsGen      uint64        // counts the changes of models (stateKeyLocked)
	perms          []*permission // pending, in arrival order (a few at most: a linear search is fine)
	resolved       recentSet     // request ids answered, timed out or cancelled
	inTurn         bool          // claude runs a turn: its system/init (or first event) was seen, its result not yet
	queued         []turnKey     // user turns written to claude and not yet seen starting (their replay), oldest first
	replays        bool          // the current process has replayed a user turn (it echoes them)
	turnReplayed   bool          // a user turn was replayed in the running turn
	proc           *claudeProc
	exited         bool      // the exit was reported (final is closed at the same time)
	exitFrames     [][]byte  // session/exited + session/state as reported, for subscribers catching up later
	exitedAt       time.Time // when the exit was reported (the session is reaped SessionTTL later)
	closing        string    // "", protocol.ExitClosed or protocol.ExitShutdown
	forgotten      bool      // closed: no more subscribers
	restartWanted  bool
	restarting     bool
	held           []heldTurn // turns waiting for a restarted process (at most maxHeldTurns)
	flushing       bool       // held turns are being written
	statusInFlight bool

	mcpMu   sync.Mutex      // serializes applyCurrentServers and toggleMCP
	mcpOff  map[string]bool // servers toggled off in this session (mcp/toggle); guarded by mcpMu
	modelMu sync.Mutex      // serializes setModel (taken before mu)

	// The configuration with the servers the client sent (cfg.client),
	// made from the proxy's configuration clientBase; see mcpConfig.
	// clientMu guards them; it is taken alone or under mu, and nothing is
	// locked under it but a configFile's lock.
	clientMu     sync.Mutex
	clientBase   *mcphub.Config
	clientCfg    *mcphub.Config
	clientStatus []mcpconfig.ClientStatus
	clientRetire func()
	clientDone   bool // the session ended: nothing more is made

	wg    sync.WaitGroup
	final chan struct{} // closed when the exit has been reported, for close to wait on
}

type sessionConfig struct {
	cwd, model, permissionMode, resume string
	client                             *mcpconfig.ClientServers // session/create mcpServers; nil without
}

// claudeProc is one claude process of a session.
type claudeProc struct {
	cli      *claudecli.Client
	release  func()        // frees what its flags name (the MCP config file); called once it has exited
	finished chan struct{} // closed once the session has handled its exit
	// mcpLaunched names the servers of its --mcp-config (set by spawn,
	// never changed): claude's mcp_set_servers cannot remove them, so a
	// configuration without one of them restarts the session
	// (applyCurrentServers).
	mcpLaunched map[string]bool

	initialized bool // claude answered initialize (or failed to): held turns may go to it (Session.mu)
}

type permission struct {
	id          string
	proc        *claudecli.Client
	kind        string // protocol.PermissionKind*
	tool        string
	input       json.RawMessage
	suggestions json.RawMessage // the CLI's permission_suggestions (for "always")
	frame       []byte          // the permission/request push
	timer       *time.Timer
	asked       time.Time // when it arrived (ccproxy_permission_wait_seconds)
	answering   bool      // an "always" answer claimed it and is recording its rules (respondPermission)
	expired     bool      // its timeout ran while it was claimed: denied if the claim is released
}

type heldTurn struct {
	line  []byte
	reply func(error)
}

type controlResult struct {
	resp json.RawMessage // the response object of a success
	err  error           // *cliError, errSessionExited, errControlTimeout, ...
}

// stdinQueue bounds the lines waiting for claude to read them.
const stdinQueue = claudecli.DefaultStdinQueue

// errControlTimeout is the result of a control request claude did not
// answer within ControlTimeout.
var errControlTimeout = claudecli.ErrTimeout

// maxHeldTurns bounds the turns held while the session restarts: as many
// as claude's stdin queue takes.
const maxHeldTurns = stdinQueue

// cliError is claude's error answer to a control request.
type cliError = claudecli.CLIError

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
	args = append(args, modelArgs(s.chosenModel())...)
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

// spawn starts a claude process for the session. Its events reach the
// session's handlers at once; the caller makes it s.proc and calls run,
// or reaps it.
func (s *Session) spawn(claude Claude, resume string) (*claudeProc, error) {
	var mcpArgs []string
	var launched map[string]bool
	release := func() {}
	if cfg := s.mcpConfig(); cfg != nil && cfg.Spawn != nil {
		args, rel, err := cfg.Spawn()
		if err != nil {
			return nil, fmt.Errorf("%w: %w", errMCPSpawn, err)
		}
		mcpArgs = args
		if rel != nil {
			release = rel
		}
		launched = make(map[string]bool, len(cfg.Servers))
		for name := range cfg.Servers { // what Spawn's --mcp-config holds
			launched[name] = true
		}
	}
	calls := s.srv.calls.forSession(s.id, s.log) // nil without a call log
	if calls != nil {
		calls.scrub = s.scrubClient
	}
	o := s.srv.opts
	// The handlers use p only as the identity of the process (p.cli is set
	// after Start, while they may already run).
	p := &claudeProc{release: release, finished: make(chan struct{}), mcpLaunched: launched}
	cli, err := claudecli.Start(claudecli.Config{
		Path:             claude.Path,
		Args:             s.claudeArgs(resume, mcpArgs),
		Dir:              s.cfg.cwd,
		Env:              s.srv.claudeEnv(),
		Stream:           stream.Options{Attachments: stream.AttachSink, Sink: s.srv.blobs},
		MaxLineBytes:     o.MaxLineBytes,
		StderrTailBytes:  o.StderrTailBytes,
		StdinQueue:       stdinQueue,
		ControlTimeout:   o.ControlTimeout,
		CloseGrace:       o.CloseGrace,
		TermGrace:        o.TermGrace,
		OnEvent:          func(ev *stream.Event) { s.onEvent(p, ev, calls) },
		OnControlRequest: s.onControlRequest,
		OnControlCancel:  s.onControlCancel,
		OnNormalized:     s.srv.metrics.normalized,
		OnControlDone:    s.srv.metrics.controlDone,
		Logger:           s.log,
	})
	if err != nil {
		release()
		return nil, err
	}
	p.cli = cli
	s.log.Info("claude started", "pid", cli.PID(), "path", claude.Path, "cwd", s.cfg.cwd, "resume", resume != "")
	return p, nil
}

// reap kills p, a process the session does not run (nobody else owns
// it), waits for it and frees what it holds.
func reap(p *claudeProc) {
	p.cli.Kill()
	p.cli.Wait()
	p.release()
}

// run watches the exit of p and asks claude to initialize. s.proc is p
// already.
func (s *Session) run(p *claudeProc) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer close(p.finished)
		p.cli.Wait()
		p.release()
		s.onExit(p, p.cli.Exit())
	}()

	_, _ = s.control(p, "initialize", map[string]any{"hooks": nil}, func(r controlResult) {
		if r.err != nil {
			s.log.Warn("claude did not accept initialize", "err", r.err)
		} else {
			s.mu.Lock()
			s.noteModelsLocked(r.resp)
			s.mu.Unlock()
		}
		s.onInitialized(p)
		s.refreshMCPStatus()
	})
}

// onInitialized notes that p answered initialize (or failed to): the
// session leaves "starting", and the turns held during a restart go to p —
// unless p is already being replaced (a second restart that began while p
// initialized): they wait for its successor then.
func (s *Session) onInitialized(p *claudeProc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p.initialized = true
	if s.proc == p && s.state == protocol.StateStarting {
		s.setStateLocked(s.busyState(), "")
	}
	s.flushHeldLocked()
}

// flushHeldLocked starts writing the held turns to the session's process
// if it has initialized, is not being replaced, and nobody writes them
// already.
func (s *Session) flushHeldLocked() {
	p := s.proc
	if p == nil || !p.initialized || s.restarting || s.flushing || s.exited || len(s.held) == 0 {
		return
	}
	s.flushing = true
	s.wg.Add(1)
	go func() { defer s.wg.Done(); s.flushHeld(p) }()
}

// busyLocked reports whether a turn is in flight: claude runs one (a user
// turn or one it started by itself), or a user turn was written that has
// not started yet.
func (s *Session) busyLocked() bool { return s.inTurn || len(s.queued) > 0 }

func (s *Session) busyState() string {
	if s.busyLocked() {
		return protocol.StateRunning
	}
	return protocol.StateIdle
}

// ---------------------------------------------------------------- events

// onEvent handles an event of claude process p (called from its client's
// stdout goroutine): it is logged and fanned out, it moves the turn state,
// and MCP tool_use/tool_result pairs go to the call log.
func (s *Session) onEvent(p *claudeProc, ev *stream.Event, calls *sessionCalls) {
	s.appendEvent(p, ev)
	if calls != nil {
		calls.observe(ev)
	}
}

// appendEvent hands an event to the hub (log and fan-out), which gives it
// its seq under the hub's lock: the stdout loops of an old process and its
// successor may call it at once. The turn state follows the event under
// the session's lock, so a state push comes right after the event that
// caused it.
func (s *Session) appendEvent(p *claudeProc, ev *stream.Event) {
	s.scrubToolResults(ev)
	var reports []mcphub.Report
	if ev.Type == stream.TypeSystem && ev.Subtype == stream.SubtypeInit {
		reports = mcphub.ParseInitServers(ev.JSON)
	}

	s.mu.Lock()
	frame, overBudget := s.hub.append(func(seq int64) []byte {
		// The envelope is under 100 bytes besides the id and the event.
		return protocol.AppendSessionEvent(make([]byte, 0, len(ev.JSON)+len(s.id)+128), s.id, seq, ev.JSON)
	})
	if frame != nil {
		s.srv.metrics.eventLogged(frame)
	}
	if ev.Type == stream.TypeSystem && ev.Subtype == stream.SubtypeInit && ev.SessionID != "" && ev.SessionID != s.claudeID {
		s.claudeID = ev.SessionID
		s.pushStateLocked("")
	}
	if ev.Type == stream.TypeSystem {
		s.noteModeLocked(ev)
		s.noteModelLocked(ev)
	}
	if p == s.proc && !s.restarting {
		s.turnEventLocked(ev)
	}
	s.mu.Unlock()
	if overBudget {
		s.srv.logs.Trim() // without the session's lock
	}

	if reports != nil {
		s.srv.mcp.Observe(reports, time.Now())
		if s.srv.mcp.NeedsDetail(reports) {
			s.refreshMCPStatus() // tools and failure reasons come only from mcp_status
		}
	}
}

// ---------------------------------------------------------------- state (turnstate.go reads it from the events)

// setStateLocked changes the state and tells the live subscribers.
func (s *Session) setStateLocked(state, reason string) {
	if s.state == state {
		return
	}
	s.state = state
	s.pushStateLocked(reason)
}

func (s *Session) pushStateLocked(reason string) {
	if f := s.stateFrameLocked(reason); f != nil {
		s.hub.pushState(f, s.stateKeyLocked())
	}
}

// stateKeyLocked identifies what a session/state tells: the state, the
// permission mode, the model and the models list. A subscription notes
// the key of what it was told (the subscribe reply, the state pushes), so
// one that catches up is sent a session/state when it turns live if any
// of them changed meanwhile (liveFramesLocked).
func (s *Session) stateKeyLocked() string {
	return s.state + "\x00" + s.mode + "\x00" + s.model + "\x00" + strconv.FormatUint(s.modelsGen, 10)
}

// stateFrameLocked is the session/state push of the state now (nil, and
// logged, if it cannot be encoded).
func (s *Session) stateFrameLocked(reason string) []byte {
	f, err := encodePush(protocol.TypeSessionState, protocol.SessionState{Session: s.id, State: s.state, ClaudeSessionID: s.claudeID, Reason: reason, PermissionMode: s.mode,
		Model: s.model, Models: s.modelInfosLocked()})
	if err != nil {
		s.log.Error("session state", "err", err)
		return nil
	}
	return f
}

// pushLocked queues a frame for every live subscriber (the hub's push).
func (s *Session) pushLocked(frame []byte) { s.hub.push(frame) }

// ---------------------------------------------------------------- control protocol

// control sends claude (process p) the control request subtype with fields
// without waiting and returns its request id; cb gets the answer (from the
// stdout goroutine, from the timeout after ControlTimeout, at exit, or at
// once when the request cannot be sent; it must not block), exactly once
// unless forgetControl drops the request first.
func (s *Session) control(p *claudeProc, subtype string, fields any, cb func(controlResult)) (string, error) {
	s.mu.Lock()
	exited := s.exited
	s.mu.Unlock()
	if exited || p == nil {
		cb(controlResult{err: errSessionExited})
		return "", errSessionExited
	}
	return p.cli.CallAsync(subtype, fields, func(resp json.RawMessage, err error) {
		cb(controlResult{resp: resp, err: sessionErr(err)})
	})
}

// sessionErr maps the client's "the process has exited" to the session's.
func sessionErr(err error) error {
	if errors.Is(err, claudecli.ErrExited) {
		return errSessionExited
	}
	return err
}

// forgetControl drops a pending control request of p whose answer nobody
// waits for any more; its callback is not called.
func (s *Session) forgetControl(p *claudeProc, id string) {
	if p != nil {
		p.cli.Forget(id)
	}
}

// controlWait sends a control request to the current process and waits
// for its answer.
func (s *Session) controlWait(ctx context.Context, subtype string, fields any) (json.RawMessage, error) {
	s.mu.Lock()
	p, exited := s.proc, s.exited
	s.mu.Unlock()
	if exited || p == nil {
		return nil, errSessionExited
	}
	resp, err := p.cli.Call(ctx, subtype, fields)
	return resp, sessionErr(err)
}

// onControlRequest handles a request of claude: can_use_tool goes to the
// permission broker; anything else gets an error answer at once, so claude
// is never left waiting.
func (s *Session) onControlRequest(p *claudecli.Client, req claudecli.ControlRequest) {
	if req.Subtype == "can_use_tool" {
		s.onPermissionRequest(p, req.ID, req.Line)
		return
	}
	s.log.Info("claude sent a control request ccproxy does not handle; answered with an error", "subtype", req.Subtype)
	s.answerClaude(p, stream.ControlError(req.ID, fmt.Sprintf("ccproxy does not handle control requests of subtype %q", req.Subtype)))
}

// answerClaude queues an answer to a control request of claude without
// blocking. If claude has not read its stdin for so long that the queue is
// full, the session cannot go on: the client kills the process.
func (s *Session) answerClaude(p *claudecli.Client, line []byte) { _ = p.Answer(line) }

func (s *Session) onControlCancel(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	perm := s.takePermLocked(id)
	if perm == nil {
		return
	}
	s.resolvedLocked(perm, protocol.BehaviorCancelled, protocol.ResolvedCancelled, "")
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
	case len(s.queued) >= maxQueuedTurns:
		s.mu.Unlock()
		reply(protocol.Errorf(protocol.CodeLimitExceeded, "session/send: session %s: claude has not started the %d turns sent before; wait until it is idle", s.id, maxQueuedTurns))
		return
	}
	p := s.proc
	k := s.queueTurnLocked(line)
	s.mu.Unlock()
	reply(s.writeTurn(ctx, p, line, k))
}

// writeTurn writes a turn queued with key k; if that fails, it is
// unqueued.
func (s *Session) writeTurn(ctx context.Context, p *claudeProc, line []byte, k turnKey) error {
	err := p.cli.Send(ctx, line)
	if err == nil {
		return nil
	}
	s.mu.Lock()
	if s.proc == p {
		s.unqueueLocked(k)
		s.settleStateLocked()
	}
	s.mu.Unlock()
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return protocol.Errorf(protocol.CodeTimeout, "session/send: claude did not read the turn in time")
	}
	return protocol.Errorf(protocol.CodeSessionExited, "session/send: session %s has exited; create a new session with resume to continue", s.id)
}

// flushHeld writes the turns held during a restart to p, in order,
// including those sent while it runs. It stops when p is being replaced or
// was: the rest go to p's successor once it has initialized (at once if it
// has).
func (s *Session) flushHeld(p *claudeProc) {
	for {
		s.mu.Lock()
		if len(s.held) == 0 || s.exited || s.proc != p || s.restarting {
			s.flushing = false
			s.flushHeldLocked()
			s.mu.Unlock()
			return
		}
		h := s.held[0]
		s.held = s.held[1:]
		k := s.queueTurnLocked(h.line)
		s.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), s.srv.opts.ControlTimeout)
		h.reply(s.writeTurn(ctx, p, h.line, k))
		cancel()
	}
}

// ---------------------------------------------------------------- subscribers

// subscribe subscribes c (replacing an earlier subscription of c): the
// hub queues the reply and a session/gap if the log no longer reaches back
// to afterSeq, atomically with respect to new events. The client's write
// pump then pulls the logged events, the subscription turns live and the
// pending permission requests follow (pull).
func (s *Session) subscribe(c *client, id json.RawMessage, afterSeq int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.forgotten {
		return protocol.Errorf(protocol.CodeUnknownSession, "session/subscribe: no session %q", s.id)
	}
	return s.hub.subscribe(c, s, afterSeq, s.stateKeyLocked(), func(first, last int64) ([]byte, error) {
		return encodeReply(id, protocol.SessionSubscribeResult{Session: s.id, State: s.state, FirstSeq: first, LastSeq: last,
			Model: s.model, Models: s.modelInfosLocked()})
	})
}

// pull returns the next logged frames of a catching-up subscription (the
// hub reads them, from disk without any lock), with the pushes made while
// it was behind in their places. When it reaches the end of the log the
// subscription turns live under the session's lock, and the pushes still
// kept for it, then the pending permission requests (and the exit report
// of an exited session) of one catching up for the first time are
// appended, so nothing is lost or sent twice.
func (s *Session) pull(sub *subscription) [][]byte {
	frames, atEnd := s.hub.pull(sub)
	if !atEnd {
		return frames
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	more, _ := s.hub.goLive(sub, s.liveFramesLocked)
	return append(frames, more...)
}

// liveFramesLocked is what a subscription gets when it turns live (called
// by the hub with s.mu and the hub's lock held). One that was live before
// and fell behind got the pushes of that time in their places (the hub
// kept them), state included.
func (s *Session) liveFramesLocked(sub *subscription) [][]byte {
	key := s.stateKeyLocked()
	if !sub.wasLive && s.exited {
		sub.sentState = key
		return slices.Clone(s.exitFrames)
	}
	var frames [][]byte
	if sub.sentState != key {
		if f := s.stateFrameLocked(""); f != nil {
			frames = append(frames, f)
		}
		sub.sentState = key
	}
	if sub.wasLive {
		return frames
	}
	for _, perm := range s.perms {
		frames = append(frames, perm.frame)
	}
	return frames
}

// unsubscribe ends c's subscription; its queued frames are dropped.
func (s *Session) unsubscribe(c *client) bool { return s.hub.unsubscribe(c) }

// ---------------------------------------------------------------- exit, close, restart

// onExit runs when process p has ended, its output was read to the end and
// its pending control requests failed.
func (s *Session) onExit(p *claudeProc, ex claudecli.Exit) {
	code, sig := ex.Code, ex.Signal
	logArgs := []any{"pid", p.cli.PID(), "code", deref(code), "signal", deref(sig), "ran", ex.Ran.Round(time.Millisecond)}

	s.mu.Lock()
	if p != s.proc || (s.restarting && s.closing == "") {
		// Replaced: what it asked (a turn it started on its own while it
		// was being closed) can no longer be answered.
		s.cancelPermsLocked(p.cli)
		s.mu.Unlock()
		s.srv.metrics.claudeExited("restart", ex)
		s.log.Info("claude exited for a restart", logArgs...)
		return
	}
	reason := s.closing
	if reason == "" {
		reason = protocol.ExitExited
	}
	s.log.Info("claude exited", append(logArgs, "reason", reason)...)
	s.srv.metrics.claudeExited(reason, ex)
	s.reportExitLocked(code, sig, ex.StderrTail, reason)
	held := s.held
	s.held = nil
	s.mu.Unlock()

	for _, h := range held {
		h.reply(protocol.Errorf(protocol.CodeSessionExited, "session/send: session %s has exited; create a new session with resume to continue", s.id))
	}
}

// reportExitLocked makes the session exited: pending permission requests are
// cancelled, subscribers get session/exited then session/state.
func (s *Session) reportExitLocked(code *int64, sig *string, stderrTail, reason string) {
	if s.exited {
		return
	}
	s.cancelPermsLocked(nil)
	s.exited = true
	s.inTurn, s.queued = false, nil
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
	st := s.stateFrameLocked(reason)
	s.exitFrames = nil
	if exited != nil {
		s.exitFrames = append(s.exitFrames, exited)
		s.pushLocked(exited)
	}
	if st != nil {
		s.exitFrames = append(s.exitFrames, st)
		s.hub.pushState(st, s.stateKeyLocked())
	}
	s.hub.setExited()
	s.exitedAt = time.Now()
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
		p.cli.Close() // stdin EOF, CloseGrace, SIGTERM, TermGrace, SIGKILL
	}
	<-s.final
	s.wg.Wait()
	s.endClientMCP() // no process left, none to come

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
		s.pushStateLocked(reason)
	}
	s.forgotten = true
	s.hub.release() // subscribers' queued frames still go out; spill files removed
}

// reap forgets a session that exited SessionTTL ago (the server removed
// it from its registry first): subscribers get session/state closed with
// reason "reaped", then its log (memory and spill files) is freed.
func (s *Session) reap() {
	<-s.final
	s.wg.Wait()
	s.endClientMCP()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.forgotten {
		return
	}
	s.state = protocol.StateClosed
	s.pushStateLocked(protocol.ReasonReaped)
	s.forgotten = true
	s.hub.release()
}

// requestRestart restarts claude with --resume between turns, because it
// refused a live MCP change or cannot make it (a server it was launched
// with left the configuration: applyCurrentServers).
func (s *Session) requestRestart(why string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.exited || s.closing != "" || s.restarting {
		return
	}
	s.log.Info("restarting claude between turns", "why", why)
	s.restartWanted = true
	if !s.busyLocked() {
		s.beginRestartLocked()
	}
}

func (s *Session) beginRestartLocked() {
	if s.restarting || s.exited || s.closing != "" {
		return
	}
	s.restartWanted = false
	s.restarting = true
	s.inTurn, s.queued = false, nil          // none in flight (busyLocked was false)
	s.replays, s.turnReplayed = false, false // the new process has echoed nothing yet
	s.setStateLocked(protocol.StateRestarting, "applying an MCP configuration change")
	old := s.proc
	s.wg.Add(1)
	go func() { defer s.wg.Done(); s.restart(old) }()
}

// restart replaces old by a new claude resuming the same conversation.
func (s *Session) restart(old *claudeProc) {
	old.cli.Close()
	<-old.finished

	s.mu.Lock()
	// The conversation claude reported, or, before its first turn, the one
	// the session was created to resume.
	resume := cmp.Or(s.claudeID, s.cfg.resume)
	closing := s.closing
	s.mu.Unlock()
	fail := func(msg string) {
		ex := old.cli.Exit()
		code, sig := ex.Code, ex.Signal
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
	s.srv.metrics.restarted()
	s.state = "" // so the next line announces it
	s.setStateLocked(protocol.StateStarting, "resumed with the new MCP configuration")
	s.mu.Unlock()
	s.run(p)
	s.reapplyMCPOff() // servers mcp/toggle disabled in this session (sessionmcp.go)
}

// ---------------------------------------------------------------- info

func (s *Session) info() protocol.SessionInfo {
	first, last := s.hub.seqs()
	s.mu.Lock()
	defer s.mu.Unlock()
	return protocol.SessionInfo{
		Session:            s.id,
		State:              s.state,
		Cwd:                s.cfg.cwd,
		Model:              s.model,
		PermissionMode:     s.mode,
		ClaudeSessionID:    s.claudeID,
		CreatedAt:          s.createdAt.UTC(),
		FirstSeq:           first,
		LastSeq:            last,
		Subscribers:        int64(s.hub.subscribers()),
		PendingPermissions: int64(len(s.perms)),
	}
}

// exitTime is when the session's exit was reported, if it was.
func (s *Session) exitTime() (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.exitedAt, s.exited && !s.forgotten
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
