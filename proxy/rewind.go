package proxy

// session/rewind (SPEC §3): the conversation continues from just before a
// user message, and with files the files claude changed since then are
// restored first. What the CLI does, as measured (docs/CLI-NOTES.md):
// rewind_files {user_message_id, dry_run?} lists and restores the files
// changed since a user message when claude runs with
// CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING=1 (every claude ccproxy starts
// has it: withFileCheckpoints); --resume <id> --resume-session-at <uuid>
// resumes the conversation as it was at that record, whose uuid is the
// user message's parentUuid in the session file (history.Store.Message).
//
// The rewind runs in the request's goroutine (the requests component's
// runner). It takes the session through the restart part (restart.go):
// restarts.active is set before anything changes, so turns sent meanwhile
// are held for the new process, and the restart goroutine (the session's
// wg) replaces the process. Locks: Session.mu only, never held while
// waiting for claude or reading the session file.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/ccproxy/ccproxy/history"
	"github.com/ccproxy/ccproxy/internal/textutil"
	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/stream"
)

// fileCheckpointsEnv switches on claude's file checkpoints (rewind_files).
const fileCheckpointsEnv = "CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING"

// sessionClaudeEnv is the environment of every claude a session runs,
// spawned or taken from the spares (spares.go): claudeEnv with file
// checkpoints on. (Only these: claude mcp login and the MCP hub's CLI
// calls run no session.)
func (o *Options) sessionClaudeEnv() []string { return withFileCheckpoints(o.claudeEnv()) }

// withFileCheckpoints returns env with file checkpoints switched on,
// unless env sets the variable itself (a user who turned them off).
func withFileCheckpoints(env []string) []string {
	for _, kv := range env {
		if strings.HasPrefix(kv, fileCheckpointsEnv+"=") {
			return env
		}
	}
	return append(env[:len(env):len(env)], fileCheckpointsEnv+"=1")
}

// rewindFiles is claude's answer to rewind_files.
type rewindFiles struct {
	CanRewind    bool     `json:"canRewind"`
	Error        string   `json:"error"`
	FilesChanged []string `json:"filesChanged"`
	Insertions   int64    `json:"insertions"`
	Deletions    int64    `json:"deletions"`
}

// rewindSession serves session/rewind on s.
func rewindSession(ctx context.Context, s *Session, d *protocol.SessionRewind) (protocol.SessionRewindResult, error) {
	const what = "session/rewind"
	s.mu.Lock()
	claudeID, p := s.claudeID, s.proc.cur
	err := rewindRefusalLocked(s, d.DryRun)
	s.mu.Unlock()
	if err != nil {
		return protocol.SessionRewindResult{}, err
	}
	if claudeID == "" {
		return protocol.SessionRewindResult{}, protocol.FieldErrorf(what, "data.to", "session %s has no conversation yet (claude has not reported its session)", s.id)
	}
	if s.env.findMessage == nil {
		return protocol.SessionRewindResult{}, protocol.Errorf(protocol.CodeBadRequest, "%s: history is off (--history-home -), so the message cannot be found", what)
	}
	msg, err := s.env.findMessage(ctx, claudeID, s.cfg.cwd, d.To)
	switch {
	case errors.Is(err, history.ErrNoMessage):
		return protocol.SessionRewindResult{}, protocol.Errorf(protocol.CodeNotFound, "%s: to: no message %s in the conversation of session %s", what, d.To, s.id)
	case err != nil:
		return protocol.SessionRewindResult{}, protocol.Errorf(protocol.CodeNotFound, "%s: to: finding message %s: %v", what, d.To, err)
	case !msg.Prompt:
		return protocol.SessionRewindResult{}, protocol.FieldErrorf(what, "data.to", "message %s is a %s record, not a user message (a prompt)", d.To, describeMessage(msg))
	}

	if d.DryRun {
		rf, err := askRewindFiles(ctx, s, p, d.To, true)
		if err != nil {
			return protocol.SessionRewindResult{}, controlError(what, err)
		}
		return protocol.SessionRewindResult{Files: capFiles(rf.FilesChanged), Insertions: rf.Insertions, Deletions: rf.Deletions, FilesError: rf.Error}, nil
	}

	// From here the session is restarting: turns sent meanwhile are held.
	s.mu.Lock()
	if err := rewindRefusalLocked(s, false); err != nil || s.proc.cur != p || s.claudeID != claudeID {
		s.mu.Unlock()
		return protocol.SessionRewindResult{}, cmpErr(err, protocol.Errorf(protocol.CodeBadRequest, "%s: session %s changed meanwhile; try again", what, s.id))
	}
	s.restarts.active = true
	s.turns.Reset()
	s.setStateLocked(protocol.StateRestarting, "rewinding to "+d.To)
	s.mu.Unlock()

	var files []string
	if d.Files {
		files, err = restoreFiles(ctx, s, p, d.To)
		if err != nil {
			undoRewind(s)
			return protocol.SessionRewindResult{}, err
		}
	}

	s.mu.Lock()
	s.restarts.at, s.restarts.fresh = msg.Parent, msg.Parent == ""
	s.restarts.why = "rewound to before " + d.To
	if s.restarts.fresh {
		s.claudeID = "" // the new claude starts a new conversation and reports its id
	}
	s.mu.Unlock()
	// The marker goes into the log (with the next seq) before anything of
	// the new process: a client replaying the log drops what it showed
	// from the message To on when it reaches it.
	s.appendEvent(p, rewoundEvent(d.To, files))
	s.mu.Lock()
	if s.proc.closing != "" || s.proc.exited {
		// Closed meanwhile: close reports the exit (restarts.active does
		// not hide it while closing) and waits for nothing of ours.
		held := s.restarts.held
		s.restarts.held, s.restarts.active = nil, false
		s.mu.Unlock()
		refuseHeld(s, held)
		return protocol.SessionRewindResult{}, protocol.Errorf(protocol.CodeSessionExited, "%s: session %s has exited", what, s.id)
	}
	s.wg.Add(1) // under mu, not closing: close has not begun to wait
	go func() { defer s.wg.Done(); s.restart(p) }()
	s.mu.Unlock()
	s.log.Info("rewound", "to", d.To, "files", len(files), "fresh", msg.Parent == "")
	res := protocol.SessionRewindResult{Files: capFiles(files), Rewound: true}
	if msg.Parent != "" {
		res.ClaudeSessionID = claudeID
	}
	return res, nil
}

// rewindRefusalLocked says why s cannot rewind now (nil when it can).
// A dry run changes nothing, so it may run during a turn.
func rewindRefusalLocked(s *Session, dryRun bool) error {
	const what = "session/rewind"
	switch {
	case s.proc.gone():
		return protocol.Errorf(protocol.CodeSessionExited, "%s: session %s has exited", what, s.id)
	case s.restarts.active || s.proc.cur == nil || !s.proc.cur.initialized:
		return protocol.FieldErrorf(what, "data.session", "session %s is %s; try again once it is idle", s.id, s.state)
	case dryRun:
		return nil
	case s.turns.Busy() || len(s.restarts.held) > 0 || s.restarts.flushing:
		return protocol.FieldErrorf(what, "data.session", "a turn of session %s is running; interrupt it (session/interrupt) or wait for its result, then rewind", s.id)
	}
	return nil
}

// restoreFiles restores the files changed since the message to: a dry run
// first for the list, then the rewind itself. No checkpoint is an error
// (cli_error with claude's reason): the caller asked for files.
func restoreFiles(ctx context.Context, s *Session, p *claudeProc, to string) ([]string, error) {
	const what = "session/rewind"
	rf, err := askRewindFiles(ctx, s, p, to, true)
	if err != nil {
		return nil, controlError(what, err)
	}
	if !rf.CanRewind {
		return nil, protocol.Errorf(protocol.CodeCLIError, "%s: claude cannot restore the files: %s", what, textutil.Truncate(rf.Error, 500))
	}
	if len(rf.FilesChanged) == 0 {
		return nil, nil
	}
	done, err := askRewindFiles(ctx, s, p, to, false)
	if err != nil {
		return nil, controlError(what, err)
	}
	if !done.CanRewind {
		return nil, protocol.Errorf(protocol.CodeCLIError, "%s: claude did not restore the files: %s", what, textutil.Truncate(done.Error, 500))
	}
	return rf.FilesChanged, nil
}

// askRewindFiles sends rewind_files to p and waits for the answer.
func askRewindFiles(ctx context.Context, s *Session, p *claudeProc, to string, dryRun bool) (rewindFiles, error) {
	fields := map[string]any{"user_message_id": to}
	if dryRun {
		fields["dry_run"] = true
	}
	resp, err := p.cli.Call(ctx, "rewind_files", fields)
	if err != nil {
		return rewindFiles{}, sessionErr(err)
	}
	var rf rewindFiles
	if err := json.Unmarshal(resp, &rf); err != nil {
		return rewindFiles{}, &cliError{Msg: fmt.Sprintf("unreadable rewind_files answer: %v", err)}
	}
	return rf, nil
}

// undoRewind takes s out of restarting when the rewind failed before the
// process was replaced: the old process goes on, with the held turns.
func undoRewind(s *Session) {
	s.mu.Lock()
	s.restarts.active = false
	if s.proc.gone() {
		held := s.restarts.held
		s.restarts.held = nil
		s.mu.Unlock()
		refuseHeld(s, held)
		return
	}
	s.setStateLocked(protocol.StateIdle, "")
	s.flushHeldLocked()
	s.mu.Unlock()
}

// refuseHeld answers turns held for a process that will not come.
func refuseHeld(s *Session, held []heldTurn) {
	for _, h := range held {
		h.reply(protocol.Errorf(protocol.CodeSessionExited, "session/send: session %s has exited", s.id))
	}
}

// rewoundEvent is the synthetic event that marks a rewind in the log.
func rewoundEvent(to string, files []string) *stream.Event {
	b, _ := json.Marshal(struct {
		Type    string   `json:"type"`
		Subtype string   `json:"subtype"`
		To      string   `json:"to"`
		Files   []string `json:"files"`
	}{stream.TypeCCProxy, "rewound", to, capFiles(files)})
	return &stream.Event{Type: stream.TypeCCProxy, Subtype: "rewound", JSON: b}
}

// capFiles bounds a file list to what the reply may hold.
func capFiles(files []string) []string {
	if files == nil {
		return []string{}
	}
	return files[:min(len(files), protocol.MaxRewindFiles)]
}

func describeMessage(m history.Message) string {
	if m.Type == "user" {
		return "user (a tool result or a message of the CLI's own)"
	}
	return m.Type
}

func cmpErr(err, otherwise error) error {
	if err != nil {
		return err
	}
	return otherwise
}
