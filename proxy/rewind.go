package proxy

// session/rewind on a Session: package proxy/rewind (the flow, refusals,
// rewind_files, the rewound marker) behind its rewind.Session interface
// (rewindSession). It takes the session through the restart part
// (restart.go): restarts.active is set before anything changes, so turns
// sent meanwhile are held for the new process, and the restart goroutine
// (the session's wg) replaces the process with --resume-session-at
// (restarts.at). Locks: Session.mu only, taken by each method, never held
// while the rewind waits for claude or reads the session file.

import (
	"context"
	"encoding/json"

	"github.com/ccproxy/ccproxy/history"
	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/proxy/rewind"
)

// sessionClaudeEnv is the environment of every claude a session runs,
// spawned or taken from the spares (spares.go): claudeEnv with file
// checkpoints on (rewind.WithFileCheckpoints). (Only these: claude mcp
// login and the MCP hub's CLI calls run no session.)
func (o *Options) sessionClaudeEnv() []string { return rewind.WithFileCheckpoints(o.claudeEnv()) }

// runRewind serves session/rewind d on sess (rewind.Run). A replay of a
// recording (Options.Replay: serve --demo, --replay) has no session file
// and no file checkpoints: it is refused in plain words, not with where
// the file was looked for.
func runRewind(ctx context.Context, replay string, sess *Session, d *protocol.SessionRewind) (protocol.SessionRewindResult, error) {
	if replay != "" {
		return protocol.SessionRewindResult{}, rewind.ReplayRefusal()
	}
	return rewind.Run(ctx, rewindSession{sess}, d)
}

// rewindSession is a Session as a rewind sees it (rewind.Session).
type rewindSession struct{ s *Session }

func (r rewindSession) ID() string { return r.s.id }

// refusalLocked says why the session cannot rewind now (rewind.Refusal).
func (r rewindSession) refusalLocked(dryRun bool) error {
	s := r.s
	return rewind.Refusal(rewind.State{ID: s.id, State: s.state, Gone: s.proc.gone(),
		Ready:       !s.restarts.active && s.proc.cur != nil && s.proc.cur.initialized,
		TurnRunning: s.turns.Busy() || s.restarts.held.Len() > 0 || s.restarts.flushing}, dryRun)
}

func (r rewindSession) Current(dryRun bool) (string, rewind.Proc, error) {
	s := r.s
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.claudeID, rewindProc{s.proc.cur}, r.refusalLocked(dryRun)
}

func (r rewindSession) FindMessage(ctx context.Context, claudeID, uuid string) (history.Message, bool, error) {
	if r.s.env.findMessage == nil {
		return history.Message{}, false, nil
	}
	m, err := r.s.env.findMessage(ctx, claudeID, r.s.cfg.cwd, uuid)
	return m, true, err
}

func (r rewindSession) Begin(p rewind.Proc, claudeID, why string) error {
	s := r.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := r.refusalLocked(false); err != nil {
		return err
	}
	if s.proc.cur != p.(rewindProc).p || s.claudeID != claudeID {
		return rewind.Changed(s.id)
	}
	s.restarts.active = true
	s.turns.Reset()
	s.setStateLocked(protocol.StateRestarting, why)
	return nil
}

func (r rewindSession) Undo() {
	s := r.s
	s.mu.Lock()
	s.restarts.active = false
	if s.proc.gone() {
		held := s.restarts.held.Take()
		s.mu.Unlock()
		held.Reply(errHeldExited(s.id))
		return
	}
	s.setStateLocked(protocol.StateIdle, "")
	s.flushHeldLocked()
	s.mu.Unlock()
}

func (r rewindSession) Restart(rp rewind.Proc, to, at string, files []string) error {
	s, p := r.s, rp.(rewindProc).p
	s.mu.Lock()
	s.restarts.at, s.restarts.fresh = at, at == ""
	s.restarts.why = "rewound to before " + to
	if s.restarts.fresh {
		s.claudeID = "" // the new claude starts a new conversation and reports its id
	}
	s.mu.Unlock()
	s.appendEvent(p, rewind.Event(to, files))
	s.mu.Lock()
	if s.proc.closing != "" || s.proc.exited {
		// Closed meanwhile: close reports the exit (restarts.active does
		// not hide it while closing) and waits for nothing of ours.
		held := s.restarts.held.Take()
		s.restarts.active = false
		s.mu.Unlock()
		held.Reply(errHeldExited(s.id))
		return rewind.Exited(s.id)
	}
	s.wg.Add(1) // under mu, not closing: close has not begun to wait
	go func() { defer s.wg.Done(); s.restart(p) }()
	s.mu.Unlock()
	s.log.Info("rewound", "to", to, "files", len(files), "fresh", at == "")
	return nil
}

// rewindProc is a claude process of the session as a rewind sees it.
type rewindProc struct{ p *claudeProc }

func (rp rewindProc) Call(ctx context.Context, subtype string, fields any) (json.RawMessage, error) {
	resp, err := rp.p.cli.Call(ctx, subtype, fields)
	if err != nil {
		return nil, controlError("session/rewind", sessionErr(err))
	}
	return resp, nil
}
