package proxy

// The process part of a Session: its claude process (claudeProc: a
// claudecli.Client and what its flags hold), the spawn, the exit watcher,
// exit reporting, close and reap. Fields (type procState): cur, exited,
// exitFrames, exitedAt, closing, forgotten, all guarded by Session.mu
// (a part of the Session, not a lock of its own); final is closed under
// it when the exit is reported.

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/tidwall/gjson"

	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/proxy/claudecli"
	"github.com/ccproxy/ccproxy/proxy/models"
	"github.com/ccproxy/ccproxy/stream"
)

// procState is the process part of a session. Guarded by Session.mu.
type procState struct {
	cur        *claudeProc
	exited     bool          // the exit was reported (final is closed at the same time)
	exitFrames [][]byte      // session/exited + session/state as reported, for subscribers catching up later
	exitedAt   time.Time     // when the exit was reported (the session is reaped SessionTTL later)
	closing    string        // "", protocol.ExitClosed or protocol.ExitShutdown
	forgotten  bool          // closed: no more subscribers
	final      chan struct{} // closed when the exit has been reported, for close to wait on
}

// gone reports whether the session has exited or is being closed: it
// takes no more work.
func (ps *procState) gone() bool { return ps.exited || ps.closing != "" }

// claudeProc is one claude process of a session.
type claudeProc struct {
	cli      *claudecli.Client
	release  func()        // frees what its flags name (the MCP config file); called once it has exited
	finished chan struct{} // closed once the session has handled its exit
	// mcpLaunched names the servers of its --mcp-config (set by spawn,
	// never changed): claude's mcp_set_servers cannot remove them, so a
	// configuration without one of them restarts the session
	// (mcpsession.Part.Apply).
	mcpLaunched map[string]bool

	initialized bool // claude answered initialize (or failed to): held turns may go to it (Session.mu)
	// model and mode it was launched with (set by spawn, never changed):
	// a choice made while it started is sent to it once it has
	// initialized, before the held turns (catchUpLocked, restart.go).
	model, mode string
}

// claudeArgs builds claude's command line. The user's text never goes
// here; values were validated by package protocol so none reads as a flag.
// --replay-user-messages has claude echo each user turn as an event, so
// every client (and a replay after a reconnect) shows what was asked.
// It is launched with model (the value chosen, "" for claude's default)
// and in permission mode mode ("" for claude's default); resumeArgs
// follow --resume (sessionConfig.forkArgs).
func claudeArgs(prefix []string, model, mode, resume string, resumeArgs, mcpArgs []string) []string {
	args := append(append([]string(nil), prefix...), claudecli.StreamArgs()...)
	args = append(args, models.Args(model)...)
	if mode != "" {
		args = append(args, "--permission-mode", mode)
	}
	if resume != "" {
		args = append(args, "--resume", resume)
		args = append(args, resumeArgs...)
	}
	return append(args, mcpArgs...) // variadic flags: last
}

// errMCPSpawn marks a failure to prepare the MCP flags of a process.
var errMCPSpawn = errors.New("preparing the MCP configuration for claude")

// spawn starts a claude process for the session. Its events reach the
// session's handlers at once; the caller makes it s.proc.cur and calls run,
// or reaps it.
func (s *Session) spawn(claude Claude, resume string) (*claudeProc, error) {
	var mcpArgs []string
	var launched map[string]bool
	release := func() {}
	if cfg := s.mcp.Config(); cfg != nil && cfg.Spawn != nil {
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
	calls := s.env.callLog(s.id, s.log) // nil without a call log
	if calls != nil {
		calls.scrub = s.mcp.scrub
	}
	o := s.env.opts
	s.mu.Lock()
	model, mode := s.models.Chosen(), s.broker.Mode()
	resumeArgs := s.cfg.forkArgs(resume)
	if at := s.restarts.at; at != "" && resume != "" {
		resumeArgs = append(resumeArgs, "--resume-session-at", at) // a rewind (rewind.go)
	}
	s.mu.Unlock()
	// The handlers use p only as the identity of the process (p.cli is set
	// after Start, while they may already run).
	p := &claudeProc{release: release, finished: make(chan struct{}), mcpLaunched: launched, model: model, mode: mode}
	cli, err := claudecli.Start(claudecli.Config{
		Path:             claude.Path,
		Args:             claudeArgs(o.claudePrefixArgs, model, mode, resume, resumeArgs, mcpArgs),
		Dir:              s.cfg.cwd,
		Env:              s.env.claudeEnv(),
		Stream:           stream.Options{Attachments: stream.AttachSink, Sink: s.env.blobs},
		MaxLineBytes:     o.maxLineBytes,
		StderrTailBytes:  o.stderrTailBytes,
		StdinQueue:       stdinQueue,
		ControlTimeout:   o.controlTimeout,
		CloseGrace:       o.closeGrace,
		TermGrace:        o.termGrace,
		OnEvent:          func(ev *stream.Event) { s.onEvent(p, ev, calls) },
		OnControlRequest: s.onControlRequest,
		OnControlCancel:  s.broker.Withdraw,
		OnNormalized:     s.env.metrics.Normalized,
		OnControlDone:    s.env.metrics.ControlDone,
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

// run watches the exit of p and asks claude to initialize, unless the
// answer is there already (claimed: what a claimed spare's claim carried,
// claim.go). s.proc.cur is p already.
func (s *Session) run(p *claudeProc, claimed json.RawMessage) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer close(p.finished)
		p.cli.Wait()
		p.release()
		s.onExit(p, p.cli.Exit())
	}()

	initialized := func(r controlResult) {
		if r.err != nil {
			s.log.Warn("claude did not accept initialize", "err", r.err)
		} else {
			s.mu.Lock()
			if s.models.NoteList(r.resp, s.log) {
				s.pushStateLocked("")
			}
			s.cmds.Note(s.id, gjson.GetBytes(r.resp, "commands"), s.log, s.hub.push)
			s.mu.Unlock()
		}
		s.onInitialized(p)
		s.refreshMCPStatus()
	}
	if len(claimed) > 0 && string(claimed) != "null" {
		initialized(controlResult{resp: claimed})
		return
	}
	_, _ = s.control(p, "initialize", map[string]any{"hooks": nil}, initialized)
}

// forget drops a pending control request of p whose answer nobody waits
// for any more; its callback is not called.
func (p *claudeProc) forget(id string) {
	if p != nil {
		p.cli.Forget(id)
	}
}

// onExit runs when process p has ended, its output was read to the end and
// its pending control requests failed.
func (s *Session) onExit(p *claudeProc, ex claudecli.Exit) {
	code, sig := ex.Code, ex.Signal
	logArgs := []any{"pid", p.cli.PID(), "code", deref(code), "signal", deref(sig), "ran", ex.Ran.Round(time.Millisecond)}

	s.mu.Lock()
	if p != s.proc.cur || (s.restarts.active && s.proc.closing == "") {
		// Replaced: what it asked (a turn it started on its own while it
		// was being closed) can no longer be answered.
		s.broker.CancelOf(p.cli)
		why := "restart"
		if s.suspend.SuspendedLocked() {
			why = "suspend"
		}
		s.mu.Unlock()
		s.env.metrics.ClaudeExited(why, ex)
		s.log.Info("claude exited for a "+why, logArgs...)
		return
	}
	reason := s.proc.closing
	if reason == "" {
		reason = protocol.ExitExited
	}
	s.log.Info("claude exited", append(logArgs, "reason", reason)...)
	s.env.metrics.ClaudeExited(reason, ex)
	s.reportExitLocked(code, sig, ex.StderrTail, reason)
	held := s.restarts.held.Take()
	s.mu.Unlock()
	held.Reply(protocol.Errorf(protocol.CodeSessionExited, "session/send: session %s has exited; create a new session with resume to continue", s.id))
}

// reportExitLocked makes the session exited: pending permission requests are
// cancelled, subscribers get session/exited then session/state.
func (s *Session) reportExitLocked(code *int64, sig *string, stderrTail, reason string) {
	if s.proc.exited {
		return
	}
	s.broker.CancelAll()
	s.suspend.DisarmLocked()
	s.proc.exited = true
	s.turns.EndAll()
	state := protocol.StateExited
	if reason == protocol.ExitClosed {
		state = protocol.StateClosed
	}
	s.state = state
	exited, err := protocol.EncodePush(protocol.TypeSessionExited, protocol.SessionExited{
		Session: s.id, Code: code, Signal: sig, StderrTail: stderrTail, Reason: reason})
	if err != nil {
		s.log.Error("session exited", "err", err)
	}
	st := s.stateFrameLocked(reason)
	s.proc.exitFrames = nil
	if exited != nil {
		s.proc.exitFrames = append(s.proc.exitFrames, exited)
		s.hub.push(exited)
	}
	if st != nil {
		s.proc.exitFrames = append(s.proc.exitFrames, st)
		s.hub.pushState(st, s.stateKeyLocked())
	}
	s.hub.setExited()
	s.proc.exitedAt = time.Now()
	close(s.proc.final)
}

// close ends the session: stdin EOF, CloseGrace, SIGTERM to the group,
// TermGrace, SIGKILL. Subscribers get session/exited (reason) and
// session/state before it returns; with reason closed the session is then
// forgotten. It waits for every goroutine of the session. Safe to call
// more than once and concurrently.
func (s *Session) close(reason string) {
	s.mu.Lock()
	if s.proc.closing == "" {
		s.proc.closing = reason
	}
	s.suspend.CloseLocked() // a suspended session at rest exits now
	p := s.proc.cur
	exited := s.proc.exited
	s.mu.Unlock()

	if !exited && p != nil {
		p.cli.Close() // stdin EOF, CloseGrace, SIGTERM, TermGrace, SIGKILL
	}
	<-s.proc.final
	s.wg.Wait()
	s.broker.Wait()
	s.suspend.Wait()
	s.mcp.End() // no process left, none to come

	if reason != protocol.ExitClosed {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc.forgotten {
		return
	}
	if exited && s.state != protocol.StateClosed {
		// It had exited on its own; now it is closed too.
		s.state = protocol.StateClosed
		s.pushStateLocked(reason)
	}
	s.proc.forgotten = true
	s.hub.release() // subscribers' queued frames still go out; spill files removed
}

// reap forgets an exited session the server removed from its registry
// (SessionTTL after its exit, or evicted to make room): subscribers get
// session/state closed with reason (protocol.ReasonReaped or
// ReasonEvicted), then its log (memory and spill files) is freed.
func (s *Session) reap(reason string) {
	<-s.proc.final
	s.wg.Wait()
	s.broker.Wait()
	s.mcp.End()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc.forgotten {
		return
	}
	s.state = protocol.StateClosed
	s.pushStateLocked(reason)
	s.proc.forgotten = true
	s.hub.release()
}
