package acp

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/protocol/client"
)

// Modes are the permission modes offered as ACP session modes.
var Modes = []sdk.SessionMode{
	{Id: protocol.PermissionModeDefault, Name: "Default", Description: sdk.Ptr("Ask before edits and commands")},
	{Id: protocol.PermissionModeAcceptEdits, Name: "Accept edits", Description: sdk.Ptr("Edit files without asking")},
	{Id: protocol.PermissionModePlan, Name: "Plan", Description: sdk.Ptr("Plan without changing anything")},
	// Not bypassPermissions: claude takes it only when launched in it,
	// which session/new cannot ask for, so it could never be set.
}

// Agent is an ACP agent backed by ccproxy sessions over a client.Client (protocol/client). Each
// ACP session is one ccproxy session this agent created and subscribed
// to, or, suspended while idle, none until its next prompt resumes it in
// a new one; Close closes them all.
type Agent struct {
	// IdleTimeout is how long a session may stay idle (no turn running,
	// no prompt waiting for its turn, no permission asked) before it is
	// suspended: its ccproxy session is closed (claude stops) and the ACP
	// session kept, to be resumed (claude --resume) by its next prompt or
	// set_mode. 0: never. NewAgent sets DefaultIdleTimeout; change it
	// before Serve.
	IdleTimeout time.Duration

	b    *client.Client
	conn *sdk.AgentSideConnection
	log  *slog.Logger
	ctx  context.Context // ends with Close: stops permission prompts in flight
	stop context.CancelFunc
	wg   sync.WaitGroup // permission prompt goroutines

	timers sync.WaitGroup                       // idle timer callbacks running (Add under mu while ctx is live, so Close's Wait follows every Add)
	clock  atomic.Uint64                        // counts uses of sessions (session.used): the least recently used idle one makes room
	hook   func(event string, id sdk.SessionId) // tests (set before Serve): "suspend" once a suspend has begun, before it checks again that s is quiet; "close" after that check, just before its ccproxy session is closed; "wait" when a request waits for a suspend or resume to end; "send" just before a prompt sends its turn

	mu       sync.Mutex // guards sessions
	sessions map[string]*session
}

// DefaultIdleTimeout is Agent.IdleTimeout's default.
const DefaultIdleTimeout = 10 * time.Minute

// session is one ACP session. Its parts under mu: the prompt queue
// (promptQueue, queue.go), what a suspend and resume use (liveState) and
// the mode and model the editor is told of (sessionConfig, config.go);
// each is embedded, so its fields read as the session's.
type session struct {
	acpID   sdk.SessionId   // the editor's name for it: its first ccproxy session id, or the Claude session id it loaded
	mapper  *Mapper         // owned by the backend's read loop (also across a suspend and resume)
	cwd     string          // where its claude runs: a resume runs there
	servers json.RawMessage // the editor's MCP servers (may hold secrets: never logged), for a resume

	mu            sync.Mutex                    // guards what follows
	liveState                                   // its ccproxy session, suspended or not
	promptQueue                                 // its prompts' order and running turn
	sessionConfig                               // its mode and model
	closing       bool                          // closeSession has begun: a turn it ends is cancelled, no new one starts
	asks          map[string]context.CancelFunc // pending permission prompts by requestId
	claudeID      string                        // the Claude session id: the resumed one at open, else from session/state ("" until claude said it; never suspended then)
}

// liveState is a session's ccproxy session and what suspending and
// resuming it use (guarded by session.mu).
type liveState struct {
	id        string        // the ccproxy session: a new one at each resume (stale while suspended)
	suspended bool          // idle, its ccproxy session closed: the next prompt or set_mode resumes it
	moving    chan struct{} // non-nil while a suspend or resume of it runs; closed when it is over
	busy      int           // Prompt and SetSessionMode calls in flight: not idle
	used      uint64        // Agent.clock at its last use
	pstate    string        // the proxy's state of it (session/state): running or restarting is not idle
	idle      *time.Timer   // its idle timer (nil without IdleTimeout): re-armed by touch, stopped by closeSession
}

// sessionConfig is a session's permission mode and model, and what the
// editor was last told of them (guarded by session.mu).
type sessionConfig struct {
	mode        string               // its permission mode, as claude last reported it or set_mode set it: a resume starts in it
	model       string               // the model it runs, as the proxy's session/state (or subscribe reply) last said
	models      []protocol.ModelInfo // the models claude offers (session/state): the model config option's values
	modelChosen string               // the model set_config_option chose ("" none): a resume after a suspend keeps it
	configSent  string               // configKeyLocked as the editor was last told it: a config_option_update goes when it changes
}

// claudeSession returns the Claude session id of s, "" if not known yet.
func (s *session) claudeSession() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.claudeID
}

// NewAgent returns an agent over b. Call Serve to speak ACP.
func NewAgent(b *client.Client, log *slog.Logger) *Agent {
	ctx, stop := context.WithCancel(context.Background())
	return &Agent{b: b, log: log, ctx: ctx, stop: stop, sessions: map[string]*session{}, IdleTimeout: DefaultIdleTimeout}
}

// Serve speaks ACP on r/w until r ends (or the backend's connection
// ends), then closes every session it created.
// Malformed lines never reach the SDK: guard answers them.
func (a *Agent) Serve(w io.Writer, r io.Reader) error {
	lw := &lockedWriter{w: w}
	pr, pw := io.Pipe()
	a.conn = sdk.NewAgentSideConnection(a, lw, pr)
	a.conn.SetLogger(a.log)
	// Only now a message can reach the SDK, whose handlers use a.conn.
	guarded := make(chan struct{})
	go func() { defer close(guarded); guard(r, pw, lw, a.log, a.order) }()
	var err error
	select {
	case <-a.conn.Done():
	case <-a.b.Done():
		if a.ctx.Err() == nil { // not Close's doing
			err = client.ErrClosed
			a.log.Error("the connection to ccproxy ended")
		}
	}
	pr.Close()
	a.Close()
	stopGuard(r, guarded, a.log)
	return err
}

// stopGuard ends the guard, which reads r, and waits for it. The guard
// ends by itself when r ends; when Serve ends first (ccproxy went away),
// a reader with a read deadline (stdin as an *os.File on a pipe or a
// terminal) is given one in the past, which ends its pending read. A
// reader without one (a file, an io.Pipe: the caller owns it and closes
// it) cannot be interrupted, so the guard is left to end with r.
func stopGuard(r io.Reader, guarded <-chan struct{}, log *slog.Logger) {
	select {
	case <-guarded:
		return
	default:
	}
	d, ok := r.(interface{ SetReadDeadline(time.Time) error })
	if !ok || d.SetReadDeadline(time.Now()) != nil {
		log.Debug("the client's input cannot be interrupted; its reader ends with it")
		return
	}
	<-guarded
}

// Close closes every session this agent created, and waits for its
// goroutines. It may be called more than once, and before Serve returns
// (while the backend is still up, so that the sessions really close).
func (a *Agent) Close() {
	a.stop() // before the lock: an open that takes it later sees a.ctx done
	a.mu.Lock()
	ss := a.sessions
	a.sessions = map[string]*session{}
	a.mu.Unlock()
	for _, s := range ss {
		a.closeSession(s) // stops its idle timer
	}
	a.wg.Wait()
	a.timers.Wait()
}

// Authenticate refuses every method: initialize offers none (claude's own
// login is used), so any methodId is unknown (-32602 naming it). Answering
// success would tell the editor it had signed in to something.
func (a *Agent) Authenticate(_ context.Context, p sdk.AuthenticateRequest) (sdk.AuthenticateResponse, error) {
	return sdk.AuthenticateResponse{}, sdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf("authenticate: methodId %q is not one of the authMethods initialize offered (none: claude uses its own login)", p.MethodId)})
}

func (a *Agent) Initialize(ctx context.Context, p sdk.InitializeRequest) (sdk.InitializeResponse, error) {
	v := p.ProtocolVersion
	if v > sdk.ProtocolVersionNumber || v < 1 {
		v = sdk.ProtocolVersionNumber // the newest we speak; the client decides
	}
	return sdk.InitializeResponse{
		ProtocolVersion: v,
		AgentInfo:       &sdk.Implementation{Name: "ccproxy", Version: Version},
		AgentCapabilities: sdk.AgentCapabilities{
			PromptCapabilities: sdk.PromptCapabilities{Image: true, EmbeddedContext: true},
			LoadSession:        hasHistory(ctx, a.b),
			// session/list and session/resume read the same history.
			SessionCapabilities: sessionCaps(hasHistory(ctx, a.b)),
			// stdio always; http and sse as Claude Code takes them (mcp.go).
			McpCapabilities: sdk.McpCapabilities{Http: true, Sse: true},
		},
		AuthMethods: []sdk.AuthMethod{},
	}, nil
}

// hasHistory reports whether the proxy serves its session history
// (history/list, history/read: its hello's capability "history"), which
// session/load, session/list and session/resume read.
func hasHistory(ctx context.Context, b *client.Client) bool {
	h, err := b.Hello(ctx)
	return err == nil && slices.Contains(h.Capabilities, "history")
}

// sessionCaps offers session/close and session/fork (fork.go: a session
// of this agent; a stored one too with the history), and session/list and
// session/resume when the proxy serves its history.
func sessionCaps(history bool) sdk.SessionCapabilities {
	caps := sdk.SessionCapabilities{Close: &sdk.SessionCloseCapabilities{}, Fork: &sdk.SessionForkCapabilities{}}
	if history {
		caps.List, caps.Resume = &sdk.SessionListCapabilities{}, &sdk.SessionResumeCapabilities{}
	}
	return caps
}

// checkCwd refuses a cwd that is not an absolute path (invalid params, as
// ACP asks for an absolute one); "" is left to the proxy's default.
func checkCwd(method, cwd string) error {
	if cwd == "" {
		return nil
	}
	return absCwd(method, cwd)
}

// absCwd is checkCwd where the cwd must be given.
func absCwd(method, cwd string) error {
	if !filepath.IsAbs(cwd) {
		return sdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf("%s: cwd %q is not an absolute path", method, cwd)})
	}
	return nil
}

// evictLocked takes out of a.sessions the session under key and those
// whose Claude session is claude (when not ""), and returns them for the
// caller to close (a.mu held).
func (a *Agent) evictLocked(key, claude string) []*session {
	var olds []*session
	for k, old := range a.sessions {
		if k == key || claude != "" && old.claudeSession() == claude {
			delete(a.sessions, k)
			olds = append(olds, old)
		}
	}
	return olds
}

// Version is ccproxy's version, announced in initialize.
var Version = "dev"

func (a *Agent) NewSession(ctx context.Context, p sdk.NewSessionRequest) (sdk.NewSessionResponse, error) {
	if err := checkCwd("session/new", p.Cwd); err != nil {
		return sdk.NewSessionResponse{}, err
	}
	servers, err := clientServers("session/new", p.McpServers)
	if err != nil {
		return sdk.NewSessionResponse{}, err
	}
	s, res, err := a.open(ctx, "session/new", &protocol.SessionCreate{Cwd: p.Cwd, MCPServers: servers}, "", nil)
	if err != nil {
		return sdk.NewSessionResponse{}, err
	}
	return sdk.NewSessionResponse{SessionId: s.acpID, Modes: defaultModes(), ConfigOptions: s.answeredConfig(),
		Meta: mcpMeta(res.MCPServers)}, nil
}

// open creates a ccproxy session, registers it under acpID (its own id
// when ""), and subscribes to it. It logs the client's MCP servers that
// were not started.
func (a *Agent) open(ctx context.Context, method string, create *protocol.SessionCreate, acpID sdk.SessionId, replayed *Mapper) (*session, *protocol.SessionCreateResult, error) {
	res, err := a.create(ctx, create)
	if err != nil {
		return nil, nil, rpcError(method, err)
	}
	if acpID == "" {
		acpID = sdk.SessionId(res.Session)
	}
	// A resumed session's Claude session id is known now (session/list
	// shows it open before its first prompt); claude's session/state may
	// later name another. A fork's is a new one, which claude will say.
	// It is busy until subscribed: not suspended before.
	id := res.Session
	claudeID := create.Resume
	if create.Fork {
		claudeID = ""
	}
	s := &session{acpID: acpID, asks: map[string]context.CancelFunc{}, claudeID: claudeID, promptQueue: newPromptQueue(),
		cwd: res.Cwd, servers: create.MCPServers, sessionConfig: sessionConfig{mode: create.PermissionMode}, liveState: liveState{id: id, busy: 1}}
	if s.cwd == "" {
		s.cwd = create.Cwd
	}
	s.mapper = NewMapper(func(u string) ([]byte, error) { return a.b.Blob(a.ctx, u) })
	s.mapper.mode = protocol.PermissionModeDefault // what session/new answers
	// Before the read loop can use it: the commands a replay sent are not
	// sent again unless they change.
	if replayed != nil {
		s.mapper.commands, s.mapper.rich = replayed.commands, replayed.rich
	}
	if a.IdleTimeout > 0 {
		s.mu.Lock() // the timer reads s.idle under s.mu: it may fire before the assignment
		s.idle = time.AfterFunc(a.IdleTimeout, func() { a.idleFired(s) })
		s.mu.Unlock()
	}
	a.mu.Lock()
	if a.ctx.Err() != nil { // Close has run: nobody would close it
		a.mu.Unlock()
		a.closeSession(s)
		return nil, nil, sdk.NewInternalError(map[string]any{"error": method + ": the agent is shutting down"})
	}
	// Loaded or resumed again, under its id or as the Claude session of a
	// session/new: the old one goes (one claude per stored session). A
	// fork leaves the session it forked.
	for _, old := range a.evictLocked(string(acpID), claudeID) {
		defer a.closeSession(old)
	}
	a.sessions[string(acpID)] = s
	a.mu.Unlock()
	a.b.Handle(id, func(f protocol.Frame) { a.push(s, id, f) })
	if err := a.subscribe(ctx, s, id); err != nil {
		a.forget(s)
		a.closeSession(s)
		return nil, nil, rpcError(method, err)
	}
	a.release(s)
	return s, res, nil
}

// create asks the proxy for a session and logs the client's MCP servers
// that were not started. When the proxy's limit of sessions is reached,
// the least recently used idle session of this agent is suspended to make
// room and the request sent once more; when none can be, the error
// (limit_exceeded) says why.
//
// Once sent, a session/create is carried out by the proxy whatever becomes
// of ctx, so its answer is waited for (up to createTimeout) even when ctx
// ends: the caller gets the new session, and its next request with ctx
// (subscribe) fails and closes it, rather than a session nobody knows of
// being left at the proxy.
func (a *Agent) create(ctx context.Context, create *protocol.SessionCreate) (*protocol.SessionCreateResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	send := func() (*protocol.SessionCreateResult, error) {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), createTimeout)
		defer cancel()
		var res protocol.SessionCreateResult
		err := a.b.Request(rctx, protocol.TypeSessionCreate, create, &res)
		return &res, err
	}
	res, err := send()
	if pe := (*protocol.Error)(nil); errors.As(err, &pe) && pe.Code == protocol.CodeLimitExceeded {
		if !a.makeRoom() {
			return nil, a.noRoom(pe)
		}
		if err := ctx.Err(); err != nil { // the wait for room outlived the request
			return nil, err
		}
		res, err = send()
	}
	if err != nil {
		return nil, err
	}
	for _, st := range res.MCPServers {
		if !st.Active {
			a.log.Warn("an MCP server of the client is not started", "session", res.Session, "server", st.Name, "approval", st.Approval, "reason", st.Reason)
		}
	}
	return res, nil
}

// closeSession closes s's ccproxy session, or forgets s if suspended; a
// suspend or resume of it in progress ends first.
func (a *Agent) closeSession(s *session) {
	s.mu.Lock()
	s.closing = true // a prompt whose turn this ends answers cancelled (ACP: close cancels the work); no suspend or resume starts
	s.wakeLocked()   // and one waiting for its turn gives up
	if s.idle != nil {
		s.idle.Stop()
	}
	id, moving := s.id, s.moving
	s.mu.Unlock()
	if moving == nil {
		a.b.Handle(id, nil) // no result of it now: its prompt answers cancelled
	}
	s.deliver(nil, a.log)
	s.mu.Lock()
	s.withdrawAsksLocked()
	s.mu.Unlock()
	id, suspended := s.settled()
	if suspended {
		a.log.Debug("closing a suspended session: nothing to stop", "session", s.acpID)
		return
	}
	a.b.Handle(id, nil)
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	if err := a.b.Request(ctx, protocol.TypeSessionClose, &protocol.SessionClose{Session: id}, nil); err != nil {
		a.log.Warn("closing a session", "session", id, "err", err)
	}
}

// settled waits until no suspend or resume of s runs, and returns its
// ccproxy session and whether s is suspended.
func (s *session) settled() (string, bool) {
	for {
		s.mu.Lock()
		id, suspended, moving := s.id, s.suspended, s.moving
		s.mu.Unlock()
		if moving == nil {
			return id, suspended
		}
		<-moving // bounded: a suspend by closeTimeout, a resume by the proxy's answer or Agent.ctx
	}
}

// idleLocked reports whether s may be suspended now (s.mu held): live,
// not being suspended or resumed or closed, no Prompt or SetSessionMode
// in flight nor a session/prompt on its way to one (guard), no turn (nor
// one whose prompt gave up on it), no permission asked, claude not in a
// turn of its own, and its Claude session known (to resume it from).
func (s *session) idleLocked() bool {
	return !s.suspended && s.moving == nil && s.quietLocked()
}

// quietLocked is idleLocked but for a suspend or resume (s.mu held):
// suspend asks it again once its hook has run, just before the close.
func (s *session) quietLocked() bool {
	return !s.closing && s.busy == 0 && s.received <= s.started &&
		s.turn == nil && len(s.asks) == 0 && s.pstate != protocol.StateRunning && s.pstate != protocol.StateRestarting &&
		s.claudeID != ""
}

// withdrawAsksLocked cancels s's pending permission prompts (s.mu held):
// the editor's session/request_permission of each is withdrawn (its
// permission/resolved will not come now).
func (s *session) withdrawAsksLocked() {
	for k, cancel := range s.asks {
		cancel()
		delete(s.asks, k)
	}
}

// touch records a use of s (the least recently used idle session makes
// room) and re-arms its idle timer.
func (a *Agent) touch(s *session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.used = a.clock.Add(1)
	if s.idle != nil && !s.closing {
		s.idle.Reset(a.IdleTimeout)
	}
}

// release ends a Prompt or SetSessionMode call of s (busy), a use of it.
func (a *Agent) release(s *session) {
	s.mu.Lock()
	s.busy--
	s.mu.Unlock()
	a.touch(s)
}

// idleFired is s's idle timer (its own goroutine, counted by a.timers):
// it suspends s if s is idle, else waits another IdleTimeout (touch
// re-arms it when a use of s ends; this also covers what touch does not
// see, such as a permission asked in a turn claude started by itself).
func (a *Agent) idleFired(s *session) {
	a.mu.Lock()
	if a.ctx.Err() != nil {
		a.mu.Unlock()
		return
	}
	a.timers.Add(1)
	a.mu.Unlock()
	defer a.timers.Done()
	if a.suspend(s, "idle") {
		return
	}
	s.mu.Lock()
	if !s.closing && !s.suspended {
		s.idle.Reset(a.IdleTimeout)
	}
	s.mu.Unlock()
}

// suspend closes s's ccproxy session (claude stops) if s is idle,
// keeping s under its ACP id to be resumed; why says what for (logged).
// It reports whether s is now suspended. A prompt or set_mode arriving
// meanwhile waits for it (session.moving), then resumes s.
func (a *Agent) suspend(s *session, why string) bool {
	s.mu.Lock()
	if !s.idleLocked() {
		s.mu.Unlock()
		return false
	}
	done := make(chan struct{})
	s.moving = done
	id := s.id
	s.mu.Unlock()
	if a.hook != nil {
		a.hook("suspend", s.acpID)
	}
	// Its pushes stay routed until it is closed: a turn another client (or
	// claude itself) starts meanwhile is seen (its state, its permission
	// prompts), and ends the suspend here if it began before this check;
	// one that begins after it is ended by the close, and its prompts are
	// withdrawn below. (A state push of it cannot end the turn of a
	// prompt that resumes s: push's current check.)
	s.mu.Lock()
	if !s.quietLocked() {
		s.moving = nil
		close(done)
		s.mu.Unlock()
		return false
	}
	s.mu.Unlock()
	if a.hook != nil {
		a.hook("close", s.acpID)
	}
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	err := a.b.Request(ctx, protocol.TypeSessionClose, &protocol.SessionClose{Session: id}, nil)
	cancel()
	var pe *protocol.Error
	gone := err == nil || errors.As(err, &pe) && pe.Code == protocol.CodeNotFound
	if gone {
		a.b.Handle(id, nil)
	}
	s.mu.Lock()
	s.suspended, s.moving = gone, nil
	if gone {
		s.withdrawAsksLocked() // of a turn the close ended
		s.pstate = ""          // the next session's states say
	}
	close(done)
	s.mu.Unlock()
	if !gone {
		a.log.Warn("suspending an idle session: its ccproxy session did not close; it stays open", "session", s.acpID, "ccproxy", id, "err", err)
		return false
	}
	a.log.Info("suspended an idle session: claude stopped; its next prompt resumes it", "session", s.acpID, "ccproxy", id, "why", why)
	return true
}

// errClosing is live's error for a session being closed.
var errClosing = errors.New("the session is closed")

// live returns s's ccproxy session, resuming s first if it is suspended
// (after a suspend or resume in progress has ended): a ccproxy session
// created with resume (claude --resume of its Claude session, in its cwd
// and mode, with the editor's MCP servers), to which the agent subscribes;
// the editor is sent no replay (it has the conversation). The caller
// holds s's turn or counts in s.busy, so s is not suspended meanwhile.
func (a *Agent) live(s *session, method string) (string, error) {
	for {
		s.mu.Lock()
		switch {
		case s.closing:
			s.mu.Unlock()
			return "", errClosing
		case s.moving != nil:
			moving := s.moving
			s.mu.Unlock()
			if a.hook != nil {
				a.hook("wait", s.acpID)
			}
			select {
			case <-moving:
			case <-a.ctx.Done():
				return "", errClosing
			}
			continue
		case !s.suspended:
			id := s.id
			s.mu.Unlock()
			return id, nil
		}
		done := make(chan struct{})
		s.moving = done
		create := &protocol.SessionCreate{Cwd: s.cwd, Resume: s.claudeID, MCPServers: s.servers, Model: s.modelChosen}
		if s.mode != protocol.PermissionModeDefault {
			create.PermissionMode = s.mode
		}
		old := s.id
		s.mu.Unlock()
		id, err := a.reopen(s, create)
		s.mu.Lock()
		if err == nil {
			s.id, s.suspended = id, false
		}
		s.moving = nil
		close(done)
		closing := s.closing
		s.mu.Unlock()
		if err == nil && closing { // closeSession, waiting for the resume to end, closes id
			return "", errClosing
		}
		if err != nil && a.ctx.Err() != nil { // Close: the session goes
			return "", errClosing
		}
		if err != nil {
			a.log.Warn("resuming a suspended session failed; it stays suspended", "session", s.acpID, "claudeSession", create.Resume, "err", err)
			data := map[string]any{"error": fmt.Sprintf("%s: session %s was suspended while idle and resuming it (Claude session %s) failed: %v", method, s.acpID, create.Resume, err)}
			if pe := (*protocol.Error)(nil); errors.As(err, &pe) {
				data["code"] = string(pe.Code)
			}
			return "", sdk.NewInternalError(data)
		}
		a.log.Info("resumed a suspended session", "session", s.acpID, "ccproxy", id, "was", old, "claudeSession", create.Resume)
		return id, nil
	}
}

// subscribe subscribes s to its ccproxy session id and notes the model
// and models the reply names (claude may not have said them yet: its
// session/state will).
func (a *Agent) subscribe(ctx context.Context, s *session, id string) error {
	var res protocol.SessionSubscribeResult
	if err := a.b.Request(ctx, protocol.TypeSessionSubscribe, &protocol.SessionSubscribe{Session: id}, &res); err != nil {
		return err
	}
	s.mu.Lock()
	s.noteModelsLocked(res.Model, res.Models)
	s.mu.Unlock()
	return nil
}

// reopen creates s's ccproxy session again with create (a resume) and
// subscribes s to it.
func (a *Agent) reopen(s *session, create *protocol.SessionCreate) (string, error) {
	res, err := a.create(a.ctx, create)
	if err != nil {
		return "", err
	}
	id := res.Session
	a.b.Handle(id, func(f protocol.Frame) { a.push(s, id, f) })
	if err := a.subscribe(a.ctx, s, id); err != nil {
		a.b.Handle(id, nil)
		ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
		defer cancel()
		if cerr := a.b.Request(ctx, protocol.TypeSessionClose, &protocol.SessionClose{Session: id}, nil); cerr != nil {
			a.log.Warn("closing a session", "session", id, "err", cerr)
		}
		return "", fmt.Errorf("subscribing to %s: %w", id, err)
	}
	return id, nil
}

// makeRoom suspends the least recently used idle session of this agent,
// and reports whether one was.
func (a *Agent) makeRoom() bool {
	type cand struct {
		s    *session
		used uint64
	}
	var cs []cand
	a.mu.Lock()
	for _, s := range a.sessions {
		s.mu.Lock()
		if s.idleLocked() {
			cs = append(cs, cand{s, s.used})
		}
		s.mu.Unlock()
	}
	a.mu.Unlock()
	slices.SortFunc(cs, func(x, y cand) int { return cmp.Compare(x.used, y.used) })
	for _, c := range cs {
		if a.suspend(c.s, "room for another session") {
			return true
		}
	}
	return false
}

// noRoom is the error of a session/create refused at the proxy's limit
// (pe) when no session of this agent could be suspended: it says how many
// are busy, and how many have had no turn yet (no Claude session to
// resume from).
func (a *Agent) noRoom(pe *protocol.Error) error {
	var busy, fresh int
	a.mu.Lock()
	for _, s := range a.sessions {
		s.mu.Lock()
		switch {
		case s.suspended:
		case s.claudeID == "" && s.turn == nil && s.busy == 0 && len(s.asks) == 0:
			fresh++
		default:
			busy++
		}
		s.mu.Unlock()
	}
	a.mu.Unlock()
	why := fmt.Sprintf("all %d sessions of this agent are busy (a turn running, a prompt waiting or a permission asked)", busy)
	if fresh > 0 {
		why = fmt.Sprintf("of the %d sessions of this agent, %d are busy (a turn running, a prompt waiting or a permission asked) and %d have had no turn yet (nothing to resume them from)", busy+fresh, busy, fresh)
	}
	return &protocol.Error{Code: protocol.CodeLimitExceeded, Message: fmt.Sprintf("%s, so none can be suspended to make room; close one, or try again once one is idle (ccproxy: %s)", why, pe.Message)}
}

func (a *Agent) session(id sdk.SessionId) (*session, error) {
	s := a.lookup(string(id))
	if s == nil {
		return nil, sdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf("sessionId: no session %q", id)})
	}
	return s, nil
}

// lookup returns the session the editor calls id, or nil.
func (a *Agent) lookup(id string) *session {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.sessions[id]
}

// SetSessionMode sets the session's permission mode (resuming a
// suspended session first).
func (a *Agent) SetSessionMode(ctx context.Context, p sdk.SetSessionModeRequest) (sdk.SetSessionModeResponse, error) {
	s, err := a.session(p.SessionId)
	if err != nil {
		return sdk.SetSessionModeResponse{}, err
	}
	return sdk.SetSessionModeResponse{}, a.setMode(ctx, s, "session/set_mode", string(p.ModeId))
}

// setMode sets s's permission mode (resuming s first if it is suspended):
// session/set_mode and the mode config option. s.mode is set by the
// session/state with the new mode, which the proxy sends before this
// reply: not here, where a slower reply to an earlier set_mode could undo
// a later one.
func (a *Agent) setMode(ctx context.Context, s *session, method, mode string) error {
	return a.liveRequest(ctx, s, method, func(id string) error {
		return a.b.Request(ctx, protocol.TypeSessionSetMode, &protocol.SessionSetPermissionMode{Session: id, Mode: mode}, nil)
	})
}

// liveRequest runs request on s's live ccproxy session id (resuming s
// first if it is suspended), s counted busy meanwhile so that it is not
// suspended; a closed session is invalid params, request's error an
// rpcError of method.
func (a *Agent) liveRequest(ctx context.Context, s *session, method string, request func(id string) error) error {
	s.mu.Lock()
	s.busy++
	s.mu.Unlock()
	defer a.release(s)
	id, err := a.live(s, method)
	if errors.Is(err, errClosing) {
		return sdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf("sessionId: session %q is closed", s.acpID)})
	}
	if err != nil {
		return err
	}
	if err := request(id); err != nil {
		return rpcError(method, err)
	}
	return nil
}

// push handles one push of s's ccproxy session id; it runs on the
// backend's read loop.
func (a *Agent) push(s *session, id string, f protocol.Frame) {
	switch f.Type {
	case protocol.TypeSessionEvent:
		var ev protocol.SessionEvent
		if json.Unmarshal(f.Data, &ev) != nil {
			return
		}
		ups, res := s.mapper.Map(ev.Event)
		for _, u := range ups {
			if err := a.conn.SessionUpdate(a.ctx, sdk.SessionNotification{SessionId: s.acpID, Update: u}); err != nil {
				a.log.Debug("session/update not sent", "err", err)
			}
		}
		if res != nil {
			// The turn is over: the proxy's session/state says so right
			// after, but the prompt may answer first and the editor use
			// the session at once.
			s.mu.Lock()
			if s.pstate == protocol.StateRunning {
				s.pstate = protocol.StateIdle
			}
			s.mu.Unlock()
			s.deliver(res, a.log)
		}
	case protocol.TypeSessionState:
		var st protocol.SessionState
		if json.Unmarshal(f.Data, &st) != nil {
			return
		}
		s.mu.Lock()
		if st.ClaudeSessionID != "" {
			s.claudeID = st.ClaudeSessionID
		}
		if st.PermissionMode != "" {
			s.mode = st.PermissionMode
		}
		s.noteModelsLocked(st.Model, st.Models)
		if s.offersLocked(st.Model) {
			// A model chosen by any client of the session (not an id a
			// plan turn ran): what a resume after a suspend starts with.
			s.modelChosen = st.Model
		}
		s.pstate = st.State
		// Only the live ccproxy session's end ends a turn: not the one
		// being suspended, nor (while s resumes) the one it replaces.
		current := s.id == id && !s.suspended && s.moving == nil
		s.mu.Unlock()
		if st.PermissionMode != "" {
			for _, u := range s.mapper.ModeUpdate(st.PermissionMode) {
				_ = a.conn.SessionUpdate(a.ctx, sdk.SessionNotification{SessionId: s.acpID, Update: u})
			}
		}
		a.configUpdate(s) // when the mode, the model or the models changed
		switch {
		case (st.State == protocol.StateExited || st.State == protocol.StateClosed) && current:
			s.deliver(nil, a.log)
		case st.State == protocol.StateIdle:
			a.touch(s) // also the end of a turn claude started by itself
		}
	case protocol.TypePermissionRequest:
		var req protocol.PermissionRequest
		if json.Unmarshal(f.Data, &req) != nil {
			return
		}
		ctx, cancel := context.WithCancel(a.ctx)
		s.mu.Lock()
		if s.id != id || s.suspended || s.closing { // a push of a session being closed, handled as its route went
			s.mu.Unlock()
			cancel()
			return
		}
		s.asks[req.RequestID] = cancel
		s.mu.Unlock()
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			defer cancel()
			a.ask(ctx, s, id, req)
		}()
	case protocol.TypePermissionResolved:
		var r protocol.PermissionResolved
		if json.Unmarshal(f.Data, &r) != nil {
			return
		}
		s.mu.Lock()
		cancel := s.asks[r.RequestID]
		delete(s.asks, r.RequestID)
		s.mu.Unlock()
		if cancel != nil {
			cancel() // answered elsewhere (or timed out): withdraw the client's prompt
		}
	}
}

// deliver hands a turn's end to the waiting prompt, if any.
func (s *session) deliver(r *Result, log *slog.Logger) {
	s.mu.Lock()
	ended := s.deliverLocked(r)
	id := s.id
	s.mu.Unlock()
	if ended {
		log.Info("the turn whose interrupt failed has ended", "session", id)
	}
}

// ask turns a permission/request into session/request_permission and its
// answer into permission/respond.
func (a *Agent) ask(ctx context.Context, s *session, id string, req protocol.PermissionRequest) {
	defer func() {
		s.mu.Lock()
		delete(s.asks, req.RequestID)
		s.mu.Unlock()
		a.touch(s) // a use of s has ended
	}()
	answer, ok := a.askEditor(ctx, s, id, req)
	if !ok {
		return // withdrawn (resolved elsewhere), or the agent is closing
	}
	if answer.Behavior == protocol.BehaviorDeny && answer.Message == "" {
		answer.Message = "Rejected by the user"
	}
	rctx, cancel := context.WithTimeout(a.ctx, closeTimeout)
	defer cancel()
	if err := a.b.Request(rctx, protocol.TypePermissionRespond, answer, nil); err != nil {
		a.log.Info("permission answer not taken", "request", req.RequestID, "err", err)
	}
}

// askEditor asks the editor with session/request_permission: once, or for
// AskUserQuestion once per question, in order (ACP's request has one list
// of options: a multiSelect question takes one). It returns the answer for
// the proxy, and false when the request was withdrawn or the agent closes.
// An error from the editor (or an answer the SDK could not read) is a
// denial now, not a turn left waiting for the proxy's permission timeout.
func (a *Agent) askEditor(ctx context.Context, s *session, ccID string, req protocol.PermissionRequest) (*protocol.PermissionRespond, bool) {
	in := json.RawMessage(req.Input)
	kind := toolKind(req.ToolName)
	id := req.ToolUseID
	if id == "" {
		id = req.RequestID
	}
	answer := &protocol.PermissionRespond{Session: ccID, RequestID: req.RequestID, Behavior: protocol.BehaviorAllow}
	deny := func(msg string) (*protocol.PermissionRespond, bool) {
		answer.Behavior, answer.Always, answer.Answers, answer.Message = protocol.BehaviorDeny, false, nil, msg
		return answer, true
	}
	parsed := gjsonParse(in)
	baseTitle, locations := toolTitle(req.ToolName, parsed, mcpRef(req.MCP)), toolLocations(req.ToolName, parsed)
	questions := req.Questions
	if req.Kind != protocol.PermissionKindQuestion || len(questions) == 0 {
		questions = []protocol.Question{{}} // one round, not a question
	}
	for n, q := range questions {
		title := baseTitle
		opts := []sdk.PermissionOption{
			{OptionId: "allow", Name: "Allow", Kind: sdk.PermissionOptionKindAllowOnce},
			{OptionId: "always", Name: "Always allow", Kind: sdk.PermissionOptionKindAllowAlways},
			{OptionId: "reject", Name: "Reject", Kind: sdk.PermissionOptionKindRejectOnce},
		}
		switch {
		case req.Kind == protocol.PermissionKindPlan:
			title = "Approve the plan"
			opts = []sdk.PermissionOption{
				{OptionId: "allow", Name: "Approve the plan", Kind: sdk.PermissionOptionKindAllowOnce},
				{OptionId: "reject", Name: "Keep planning", Kind: sdk.PermissionOptionKindRejectOnce},
			}
		case req.Kind == protocol.PermissionKindQuestion && q.Question != "":
			title = q.Question
			if len(questions) > 1 {
				title = fmt.Sprintf("Question %d of %d: %s", n+1, len(questions), q.Question)
			}
			opts = nil
			for i, o := range q.Options {
				opts = append(opts, sdk.PermissionOption{OptionId: sdk.PermissionOptionId(fmt.Sprintf("answer-%d", i)), Name: o.Label, Kind: sdk.PermissionOptionKindAllowOnce})
			}
			opts = append(opts, sdk.PermissionOption{OptionId: "reject", Name: "Don't answer", Kind: sdk.PermissionOptionKindRejectOnce})
		}
		call := id
		if len(questions) > 1 {
			call = fmt.Sprintf("%s#%d", id, n+1) // a tool call id per round: editors key their prompts by it
		}
		resp, err := a.conn.RequestPermission(ctx, sdk.RequestPermissionRequest{
			SessionId: s.acpID,
			Options:   opts,
			ToolCall:  sdk.ToolCallUpdate{ToolCallId: sdk.ToolCallId(call), Title: &title, Kind: &kind, RawInput: in, Locations: locations},
		})
		switch {
		case err != nil && ctx.Err() != nil:
			return nil, false
		case err != nil:
			a.log.Warn("session/request_permission failed: denied", "session", ccID, "err", err)
			return deny("Denied: the editor did not answer the permission request")
		case resp.Outcome.Selected == nil:
			return deny("Cancelled by the user")
		}
		o := string(resp.Outcome.Selected.OptionId)
		var i int
		switch {
		case o == "allow":
		case o == "always":
			answer.Always = true
		case q.Question != "" && strings.HasPrefix(o, "answer-"):
			if _, err := fmt.Sscanf(o, "answer-%d", &i); err != nil || i < 0 || i >= len(q.Options) {
				return deny("")
			}
			if answer.Answers == nil {
				answer.Answers = map[string]string{}
			}
			answer.Answers[q.Question] = q.Options[i].Label
		default: // reject, or an option not offered
			return deny("")
		}
	}
	return answer, true
}

// rpcError makes a JSON-RPC error of a proxy error: the proxy's
// bad_request is the client's invalid params (-32602), anything else
// internal (-32603).
func rpcError(method string, err error) error {
	var pe *protocol.Error
	if errors.As(err, &pe) { // also wrapped: client.Request's own validation of what it sends
		data := map[string]any{"error": method + ": " + pe.Message, "code": string(pe.Code)}
		if pe.Code == protocol.CodeBadRequest {
			return sdk.NewInvalidParams(data)
		}
		return sdk.NewInternalError(data)
	}
	return sdk.NewInternalError(map[string]any{"error": method + ": " + err.Error()})
}

// CloseSession closes the ccproxy session (session/close).
func (a *Agent) CloseSession(ctx context.Context, p sdk.CloseSessionRequest) (sdk.CloseSessionResponse, error) {
	s, err := a.session(p.SessionId)
	if err != nil {
		return sdk.CloseSessionResponse{}, err
	}
	a.forget(s)
	a.closeSession(s)
	return sdk.CloseSessionResponse{}, nil
}

// forget takes s out of the session table if it is still there: a
// session/load of the same id may have put a new one under its key.
func (a *Agent) forget(s *session) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.sessions[string(s.acpID)] == s {
		delete(a.sessions, string(s.acpID))
	}
}

// LoadSession replays a stored Claude Code session (its id is the ACP
// session id) as session/update notifications, then continues it live: a
// ccproxy session created with resume. The replay goes through a Mapper of
// its own in history mode (user prompts as user_message_chunk, images
// inline), page by page, before the response, as the protocol asks.
func (a *Agent) LoadSession(ctx context.Context, p sdk.LoadSessionRequest) (sdk.LoadSessionResponse, error) {
	if !hasHistory(ctx, a.b) {
		return sdk.LoadSessionResponse{}, sdk.NewMethodNotFound(sdk.AgentMethodSessionLoad)
	}
	m := NewMapper(func(u string) ([]byte, error) { return a.b.Blob(ctx, u) })
	m.history = true
	s, res, err := a.continueStored(ctx, "session/load", p.SessionId, p.Cwd, p.McpServers, m)
	if err != nil {
		return sdk.LoadSessionResponse{}, err
	}
	return sdk.LoadSessionResponse{Modes: defaultModes(), ConfigOptions: s.answeredConfig(),
		Meta: mcpMeta(res.MCPServers)}, nil
}

// ResumeSession continues a stored Claude Code session live, as
// LoadSession does, without replaying it: the editor already shows it.
func (a *Agent) ResumeSession(ctx context.Context, p sdk.ResumeSessionRequest) (sdk.ResumeSessionResponse, error) {
	if !hasHistory(ctx, a.b) {
		return sdk.ResumeSessionResponse{}, sdk.NewMethodNotFound(sdk.AgentMethodSessionResume)
	}
	s, res, err := a.continueStored(ctx, "session/resume", p.SessionId, p.Cwd, p.McpServers, nil)
	if err != nil {
		return sdk.ResumeSessionResponse{}, err
	}
	return sdk.ResumeSessionResponse{Modes: defaultModes(), ConfigOptions: s.answeredConfig(),
		Meta: mcpMeta(res.MCPServers)}, nil
}

// continueStored is session/load and session/resume: it checks the
// editor's MCP servers, finds the stored session id (under cwd's project
// folder, else any), replays it through replay (a Mapper in history mode)
// when not nil, and opens a ccproxy session resuming it, whose ACP id is
// id. An unknown or malformed id is invalid params.
func (a *Agent) continueStored(ctx context.Context, method string, id sdk.SessionId, cwd string, mcp []sdk.McpServer, replay *Mapper) (*session, *protocol.SessionCreateResult, error) {
	if err := checkCwd(method, cwd); err != nil {
		return nil, nil, err
	}
	servers, err := clientServers(method, mcp)
	if err != nil {
		return nil, nil, err
	}
	// This agent's session of id (or whose Claude session is id) goes
	// first: before the replay (its live updates would mix in) and before
	// the new claude resumes the same session file.
	a.mu.Lock()
	olds := a.evictLocked(string(id), string(id))
	a.mu.Unlock()
	for _, old := range olds {
		a.closeSession(old)
	}
	if err := replayStored(ctx, a.b, a.conn, method, id, cwd, replay); err != nil {
		return nil, nil, err
	}
	return a.open(ctx, method, &protocol.SessionCreate{Cwd: cwd, Resume: string(id), MCPServers: servers}, id, replay)
}

// replayStored reads the stored session id with history/read (the proxy's
// history: under cwd's project folder, else any; tool results masked by
// the proxy, attachments as /v1/blobs urls) and, when m is not nil, sends
// it to the editor through m page by page. Without m it reads one event:
// is the session there? An unknown or malformed id is invalid params, and
// so is a session with no readable event (claude could not resume it).
func replayStored(ctx context.Context, b *client.Client, conn *sdk.AgentSideConnection, method string, id sdk.SessionId, cwd string, m *Mapper) error {
	limit := int64(1) // resume: the first page only tells that the session is there
	if m != nil {
		limit = protocol.MaxHistoryReadLimit
	}
	req := protocol.HistoryRead{ID: string(id), Project: cwd, Limit: &limit}
	var page protocol.HistoryReadResult
	err := b.Request(ctx, protocol.TypeHistoryRead, &req, &page)
	if isCode(err, protocol.CodeNotFound) && cwd != "" { // kept under another project folder
		req.Project = ""
		err = b.Request(ctx, protocol.TypeHistoryRead, &req, &page)
	}
	if err == nil && len(page.Events) == 0 && !page.More {
		// Empty or unreadable: claude could not resume it either.
		return sdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf("%s: sessionId: stored session %q has no conversation to continue (its file is empty or holds no readable event)", method, id)})
	}
	for err == nil && m != nil {
		for _, ev := range page.Events {
			ups, _ := m.Map(ev.Event)
			for _, u := range ups {
				if err := conn.SessionUpdate(ctx, sdk.SessionNotification{SessionId: id, Update: u}); err != nil {
					return sdk.NewInternalError(map[string]any{"error": method + ": " + err.Error()})
				}
			}
		}
		if !page.More {
			break
		}
		req.Cursor, page = page.Next, protocol.HistoryReadResult{}
		err = b.Request(ctx, protocol.TypeHistoryRead, &req, &page)
	}
	switch {
	case isCode(err, protocol.CodeNotFound), isCode(err, protocol.CodeBadRequest):
		return sdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf("%s: sessionId: no stored Claude Code session %q in the proxy's history", method, id)})
	case err != nil:
		return sdk.NewInternalError(map[string]any{"error": method + ": " + err.Error()})
	}
	return nil
}

// isCode reports whether err is the proxy's error reply of code c.
func isCode(err error, c protocol.Code) bool {
	var pe *protocol.Error
	return errors.As(err, &pe) && pe.Code == c
}

// ListSessions lists the Claude Code sessions of the proxy's history
// (history/list), newest first, a page of its default size at a time: those of cwd when
// it is given (an absolute path), else all. The cursor is history's own
// (opaque to the editor). A session's id is its Claude session id (what
// session/load and session/resume take), its title the store's (the
// CLI's summary, else the first prompt), updatedAt its last record's time.
// Sessions this agent has open are there once claude has written them,
// with _meta.ccproxy.openAs: the ACP session id they are open as (a
// session/new's differs from its Claude session id).
func (a *Agent) ListSessions(ctx context.Context, p sdk.ListSessionsRequest) (sdk.ListSessionsResponse, error) {
	if !hasHistory(ctx, a.b) {
		return sdk.ListSessionsResponse{}, sdk.NewMethodNotFound(sdk.AgentMethodSessionList)
	}
	var req protocol.HistoryList
	if p.Cwd != nil {
		if err := absCwd("session/list", *p.Cwd); err != nil {
			return sdk.ListSessionsResponse{}, err
		}
		req.Project = filepath.Clean(*p.Cwd)
	} else {
		req.All = true
	}
	if len(p.AdditionalDirectories) > 0 { // not offered in initialize
		return sdk.ListSessionsResponse{}, sdk.NewInvalidParams(map[string]any{"error": "session/list: additionalDirectories is not supported"})
	}
	if p.Cursor != nil {
		req.Cursor = *p.Cursor
	}
	var page protocol.HistoryListResult
	err := a.b.Request(ctx, protocol.TypeHistoryList, &req, &page)
	switch {
	case isCode(err, protocol.CodeBadRequest) && req.Cursor != "":
		return sdk.ListSessionsResponse{}, sdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf("session/list: cursor %q is not a nextCursor of session/list", req.Cursor)})
	case err != nil:
		return sdk.ListSessionsResponse{}, rpcError("session/list", err)
	}
	openAs := map[string]sdk.SessionId{} // Claude session id -> the ACP id this agent has it open as
	a.mu.Lock()
	for _, s := range a.sessions {
		if c := s.claudeSession(); c != "" {
			openAs[c] = s.acpID
		}
	}
	a.mu.Unlock()
	res := sdk.ListSessionsResponse{Sessions: make([]sdk.SessionInfo, 0, len(page.Sessions))}
	for _, s := range page.Sessions {
		cwd := s.Project
		if cwd == "" { // no record names it: the folder's, when asked for
			cwd = req.Project
		}
		if cwd == "" { // the folder's name cannot be turned back into a path
			a.log.Debug("session/list: a session without a cwd is left out", "session", s.ID, "folder", s.Folder)
			continue
		}
		info := sdk.SessionInfo{SessionId: sdk.SessionId(s.ID), Cwd: cwd, UpdatedAt: sdk.Ptr(s.Updated.UTC().Format(rfc3339Millis))}
		if s.Title != "" {
			info.Title = sdk.Ptr(s.Title)
		}
		if id, ok := openAs[s.ID]; ok {
			info.Meta = map[string]any{"ccproxy": map[string]any{"openAs": id}}
		}
		res.Sessions = append(res.Sessions, info)
	}
	if page.Next != "" {
		res.NextCursor = sdk.Ptr(page.Next)
	}
	return res, nil
}

// rfc3339Millis is RFC 3339 with milliseconds, as the CLI's records have.
const rfc3339Millis = "2006-01-02T15:04:05.000Z07:00"

// defaultModes is the mode state a new, loaded or resumed session starts in.
func defaultModes() *sdk.SessionModeState {
	return &sdk.SessionModeState{CurrentModeId: protocol.PermissionModeDefault, AvailableModes: Modes}
}
