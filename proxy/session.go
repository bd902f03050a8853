package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tidwall/gjson"

	"github.com/ccproxy/ccproxy/mcpconfig"
	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/proxy/broker"
	"github.com/ccproxy/ccproxy/proxy/claudecli"
	"github.com/ccproxy/ccproxy/proxy/held"
	"github.com/ccproxy/ccproxy/proxy/idle"
	"github.com/ccproxy/ccproxy/proxy/mcphub"
	"github.com/ccproxy/ccproxy/proxy/models"
	"github.com/ccproxy/ccproxy/proxy/slashcmd"
	"github.com/ccproxy/ccproxy/proxy/turnstate"
	"github.com/ccproxy/ccproxy/stream"
)

// Session is one chat: one long-lived claude process (a claudecli.Client,
// replaced only by a restart with --resume when claude refuses a live MCP
// change), its replay log, its subscribers and its pending permission
// requests. The client does the process, stdin, stdout and the control
// protocol's bookkeeping; the session is composed of parts with one job
// each, in files of their own:
//
//   - proc (process.go): the claude process, its spawn, the exit
//     watcher, exit reporting and close;
//   - turns (package proxy/turnstate): which turn claude runs, read
//     from its events;
//   - broker (package proxy/broker): permission requests and the
//     permission mode; it sees the session as a brokerSession;
//   - models (package proxy/models; model.go): the models claude offers
//     and the one it runs;
//   - cmds (package proxy/slashcmd): the slash commands claude offers (its
//     initialize answer, commands_changed), pushed as session/commands;
//   - restarts (restart.go): restarts between turns and the turns held
//     meanwhile (package proxy/held; also while claude starts; an
//     interrupt withdraws them: interrupt.go);
//   - mcp (package proxy/mcpsession; sessionmcp.go): the MCP
//     configuration sent live (the pending-apply slot), toggles, status
//     reports, the client's servers and the session's secrets;
//   - suspend (package proxy/idle; suspend.go): claude stopped while the
//     session is idle, resumed by its next use;
//   - session/rewind (package proxy/rewind; rewind.go) goes through the
//     restarts part.
//
// What a session reaches of its server is env (session_env.go), nothing
// else. This file holds the session's state (state, claudeID) and its
// face to clients: events in, turns written, subscriptions.
//
// Goroutines, all tracked by wg and joined by close: per process, the
// exit watcher (it waits for the client, whose own goroutines call the
// session's handlers: onEvent, onControlRequest, broker.Withdraw, and the
// callbacks of control requests); a restart; the flush of held turns; the
// applier of MCP configuration changes (markApply); the stop of a
// suspended claude (suspend.go). The permission timeouts
// (time.AfterFuncs) are the broker's own (Broker.Wait), the idle timer
// the suspender's (idle.Suspender.Wait), which close also waits for.
//
// mu guards state, claudeID and the fields of every part that says it is
// guarded by Session.mu (proc, turns, restarts, the broker's state,
// models but its setMu, cmds, suspend, usage, mcp's statusInFlight,
// applyWanted and applying). The parts' own locks: sessionModels.setMu
// (taken before mu), mcpsession.Part.mu (taken before mu),
// mcpsession.Part.clientMu (alone or under mu). The hub has its own lock,
// taken after mu.
type Session struct {
	id        string
	env       sessionEnv // all it reaches of its server (session_env.go)
	log       *slog.Logger
	cfg       sessionConfig
	createdAt time.Time

	mu       sync.Mutex
	state    string
	claudeID string
	title    string // set by history/rename while claude runs the session (historylive.go)
	hub      *hub   // the event log and the subscriptions (its own lock, taken after mu)

	proc     procState       // the process and its end (process.go); guarded by mu
	turns    turnstate.Turns // turn state (package proxy/turnstate); guarded by mu
	restarts restarts        // restarts and held turns (restart.go, proxy/held); guarded by mu
	broker   *broker.Broker  // permission requests and the mode (package proxy/broker)
	models   sessionModels   // models (package proxy/models; model.go)
	cmds     slashcmd.List   // slash commands (package proxy/slashcmd); guarded by mu
	mcp      sessionMCP      // MCP in the session (proxy/mcpsession; sessionmcp.go)
	suspend  *idle.Suspender // suspended while idle, resumed by the next use (package proxy/idle; suspend.go); guarded by mu
	usage    usageState      // what the turns used (proxy/usage; usage.go); guarded by mu

	wg sync.WaitGroup
}

// makeSession returns a session in state starting, with no process yet:
// its parts wired to each other and to env.
func makeSession(id string, env sessionEnv, log *slog.Logger, cfg sessionConfig, h *hub) *Session {
	s := &Session{id: id, env: env, log: log, cfg: cfg, createdAt: time.Now(), state: protocol.StateStarting, hub: h}
	s.proc.final = make(chan struct{})
	s.models.State = models.Start(cfg.model)
	s.broker = broker.New(&s.mu, brokerSession{s}, broker.Config{
		Session: id, Log: log, Metrics: env.metrics,
		Timeout: env.opts.permissionTimeout, MaxPending: env.opts.maxPendingPermissions, Rules: env.opts.rules, Cwd: cfg.cwd,
		Mode: cfg.permissionMode,
	})
	s.mcp = newSessionMCP(s)
	s.suspend = newSuspender(s)
	return s
}

// brokerSession is the session as its broker sees it (broker.Session).
type brokerSession struct{ s *Session }

func (b brokerSession) Push(frame []byte) { b.s.hub.push(frame) }    // Session.mu held
func (b brokerSession) Exited() bool      { return b.s.proc.exited } // Session.mu held
func (b brokerSession) Allows(tool string, ref *protocol.MCPRef) bool {
	return b.s.mcp.Config().Allows(tool, ref)
}

type sessionConfig struct {
	cwd, model, permissionMode, resume string
	fork                               bool                     // session/create fork: the first claude forks resume (forkArgs)
	client                             *mcpconfig.ClientServers // session/create mcpServers; nil without
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

// cliError is claude's error answer to a control request.
type cliError = claudecli.CLIError

var errSessionExited = errors.New("the session's claude process has exited")

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
	s.mcp.ScrubToolResults(ev)
	var reports []mcphub.Report
	if ev.Type == stream.TypeSystem && ev.Subtype == stream.SubtypeInit {
		reports = mcphub.ParseInitServers(ev.JSON)
	}

	s.mu.Lock()
	_, overBudget := s.hub.append(func(seq int64) []byte {
		// The envelope is under 100 bytes besides the id and the event.
		frame := protocol.AppendSessionEvent(make([]byte, 0, len(ev.JSON)+len(s.id)+128), s.id, seq, ev.JSON)
		// Counted here, when it is sure to be logged and before any
		// subscriber has it: a client that saw the event and scrapes
		// /metrics finds it counted.
		s.env.metrics.EventLogged(frame)
		return frame
	})
	if ev.Type == stream.TypeSystem && ev.Subtype == stream.SubtypeInit && ev.SessionID != "" && ev.SessionID != s.claudeID {
		s.claudeID = ev.SessionID
		s.pushStateLocked("")
	}
	if ev.Type == stream.TypeSystem {
		if s.broker.NoteMode(ev) {
			s.pushStateLocked("")
		}
		if s.models.NoteInit(ev) {
			s.pushStateLocked("")
		}
		if ev.Subtype == slashcmd.SubtypeChanged {
			s.cmds.Note(s.id, gjson.GetBytes(ev.JSON, "commands"), s.log, s.hub.push)
		}
	}
	ended := ev.Type == stream.TypeResult && p == s.proc.cur && !s.restarts.active
	if ev.Type == stream.TypeAssistant && p == s.proc.cur {
		s.usage.NoteAssistant(ev.JSON) // proxy/usage
	}
	if ended {
		s.usage.NoteResult(ev.JSON, s.cfg.resume != "")
		s.restarts.at, s.restarts.fresh, s.restarts.why = "", false, "" // a rewind's restart has its turn (restart.go)
	}
	if p == s.proc.cur && !s.restarts.active && s.turns.Event(ev, s.log) {
		s.settleStateLocked() // the idle push carries the turn's usage
	}
	s.mu.Unlock()
	if ended {
		askContextUsage(s, p) // usage.go
	}
	if overBudget {
		s.env.trimLogs() // without the session's lock
	}

	if reports != nil {
		s.env.mcp.Observe(reports, time.Now())
		if s.env.mcp.NeedsDetail(reports) {
			s.refreshMCPStatus() // tools and failure reasons come only from mcp_status
		}
	}
}

// ---------------------------------------------------------------- state (package turnstate reads it from the events)

// settleStateLocked sets running or idle from the turn state (while the
// session is running or idle: not while it starts, restarts or has
// exited), and begins a deferred restart once no turn is in flight.
func (s *Session) settleStateLocked() {
	if s.state == protocol.StateRunning || s.state == protocol.StateIdle {
		s.setStateLocked(s.turns.StateName(), "")
	}
	if s.restarts.wanted && !s.turns.Busy() {
		s.beginRestartLocked()
	}
}

// setStateLocked changes the state and tells the live subscribers.
func (s *Session) setStateLocked(state, reason string) {
	if s.state == state {
		return
	}
	s.state = state
	s.pushStateLocked(reason)
	s.suspend.NoteStateLocked(state == protocol.StateIdle) // idle: the idle timer runs
}

func (s *Session) pushStateLocked(reason string) {
	if f := s.stateFrameLocked(reason); f != nil {
		s.hub.pushState(f, s.stateKeyLocked())
	}
}

// stateKeyLocked identifies what a session/state tells: the state, the
// permission mode, the model and the models list, the usage and the title. A subscription notes
// the key of what it was told (the subscribe reply, the state pushes), so
// one that catches up is sent a session/state when it turns live if any
// of them changed meanwhile (liveFramesLocked).
func (s *Session) stateKeyLocked() string {
	return s.state + "\x00" + s.broker.Mode() + "\x00" + s.models.Current() + "\x00" + strconv.FormatUint(s.models.Gen(), 10) + "\x00" + strconv.FormatUint(s.usage.Gen(), 10) + "\x00" + s.title
}

// stateFrameLocked is the session/state push of the state now (nil, and
// logged, if it cannot be encoded).
func (s *Session) stateFrameLocked(reason string) []byte {
	f, err := protocol.EncodePush(protocol.TypeSessionState, protocol.SessionState{Session: s.id, State: s.state, ClaudeSessionID: s.claudeID, Reason: reason, PermissionMode: s.broker.Mode(),
		Model: s.models.Current(), Models: s.models.Infos(), Usage: s.usage.Info(), Title: s.title})
	if err != nil {
		s.log.Error("session state", "err", err)
		return nil
	}
	return f
}

// ---------------------------------------------------------------- control protocol

// control sends claude (process p) the control request subtype with fields
// without waiting and returns its request id; cb gets the answer (from the
// stdout goroutine, from the timeout after ControlTimeout, at exit, or at
// once when the request cannot be sent; it must not block), exactly once
// unless claudeProc.forget drops the request first.
func (s *Session) control(p *claudeProc, subtype string, fields any, cb func(controlResult)) (string, error) {
	s.mu.Lock()
	exited := s.proc.exited
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

// controlWait sends a control request to the current process and waits
// for its answer.
func (s *Session) controlWait(ctx context.Context, subtype string, fields any) (json.RawMessage, error) {
	s.mu.Lock()
	p, exited := s.proc.cur, s.proc.exited
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
		s.broker.Request(p, req.ID, req.Line)
		return
	}
	s.log.Info("claude sent a control request ccproxy does not handle; answered with an error", "subtype", req.Subtype)
	_ = p.Answer(stream.ControlError(req.ID, fmt.Sprintf("ccproxy does not handle control requests of subtype %q", req.Subtype))) // never blocks
}

// ---------------------------------------------------------------- turns

// sendTurn writes a user turn to claude's stdin and calls reply with the
// result. While the session is restarting or suspended, or its claude has
// not answered initialize yet, the turn is held, and written (and replied
// to) when claude is ready (a suspended session resumes); an interrupt
// meanwhile withdraws it (interrupt.go).
func (s *Session) sendTurn(ctx context.Context, line []byte, reply func(error)) {
	s.mu.Lock()
	switch {
	case s.proc.exited || s.proc.closing != "":
		s.mu.Unlock()
		reply(protocol.Errorf(protocol.CodeSessionExited, "session/send: session %s has exited; create a new session with resume to continue", s.id))
		return
	case s.restarts.holds(s.proc.cur): // claude is not ready: held for it (interrupt.go)
		if !s.restarts.held.Add(line, reply) {
			s.mu.Unlock()
			reply(protocol.Errorf(protocol.CodeLimitExceeded, "session/send: session %s is starting or restarting and already holds %d turns (at most %d, %d MiB in all); wait until it is idle", s.id, s.restarts.held.Len(), held.MaxTurns, held.MaxBytes>>20))
			return
		}
		s.suspend.WakeLocked() // a suspended session resumes
		s.mu.Unlock()
		return
	case s.turns.Queued() >= turnstate.MaxQueued:
		s.mu.Unlock()
		reply(protocol.Errorf(protocol.CodeLimitExceeded, "session/send: session %s: claude has not started the %d turns sent before; wait until it is idle", s.id, turnstate.MaxQueued))
		return
	}
	p := s.proc.cur
	k := s.turns.Queue(line)
	s.settleStateLocked()
	s.mu.Unlock()
	reply(s.writeTurn(ctx, p, line, k))
}

// writeTurn writes a turn queued with key k; if that fails, it is
// unqueued.
func (s *Session) writeTurn(ctx context.Context, p *claudeProc, line []byte, k turnstate.Key) error {
	err := p.cli.Send(ctx, line)
	if err == nil {
		return nil
	}
	s.mu.Lock()
	if s.proc.cur == p {
		s.turns.Unqueue(k)
		s.settleStateLocked()
	}
	s.mu.Unlock()
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return protocol.Errorf(protocol.CodeTimeout, "session/send: claude did not read the turn in time")
	}
	return protocol.Errorf(protocol.CodeSessionExited, "session/send: session %s has exited; create a new session with resume to continue", s.id)
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
	if s.proc.forgotten {
		return protocol.Errorf(protocol.CodeUnknownSession, "session/subscribe: no session %q", s.id)
	}
	return s.hub.subscribe(c, s, afterSeq, s.stateKeyLocked(), func(first, last int64) ([]byte, error) {
		return encodeReply(id, protocol.SessionSubscribeResult{Session: s.id, State: s.state, FirstSeq: first, LastSeq: last,
			Model: s.models.Current(), Models: s.models.Infos(), Usage: s.usage.Info(), Title: s.title})
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
	if !sub.wasLive && s.proc.exited {
		sub.sentState = key
		return append(s.cmds.Frames(), s.proc.exitFrames...)
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
	return append(s.broker.AppendFrames(frames), s.cmds.Frames()...)
}

// unsubscribe ends c's subscription; its queued frames are dropped.
func (s *Session) unsubscribe(c *client) bool { return s.hub.unsubscribe(c) }

// ---------------------------------------------------------------- info

func (s *Session) info() protocol.SessionInfo {
	first, last := s.hub.seqs()
	s.mu.Lock()
	defer s.mu.Unlock()
	return protocol.SessionInfo{
		Session:            s.id,
		State:              s.state,
		Cwd:                s.cfg.cwd,
		Model:              s.models.Current(),
		PermissionMode:     s.broker.Mode(),
		ClaudeSessionID:    s.claudeID,
		CreatedAt:          s.createdAt.UTC(),
		FirstSeq:           first,
		LastSeq:            last,
		Subscribers:        int64(s.hub.subscribers()),
		PendingPermissions: int64(s.broker.Pending()),
		Title:              s.title,
	}
}

// exitTime is when the session's exit was reported, if it was.
func (s *Session) exitTime() (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.proc.exitedAt, s.proc.exited && !s.proc.forgotten
}

func (s *Session) isLive() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.proc.exited && s.proc.closing == ""
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
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
