package rewind

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/ccproxy/ccproxy/history"
	"github.com/ccproxy/ccproxy/internal/textutil"
	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/stream"
)

const what = "session/rewind"

// FileCheckpointsEnv switches on claude's file checkpoints (rewind_files).
const FileCheckpointsEnv = "CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING"

// WithFileCheckpoints returns env with file checkpoints switched on,
// unless env sets the variable itself (a user who turned them off).
func WithFileCheckpoints(env []string) []string {
	for _, kv := range env {
		if strings.HasPrefix(kv, FileCheckpointsEnv+"=") {
			return env
		}
	}
	return append(env[:len(env):len(env)], FileCheckpointsEnv+"=1")
}

// Proc is the claude process a rewind began with.
type Proc interface {
	// Call sends it the control request subtype and waits for the
	// answer; a failure is a protocol error (cli_error with claude's
	// message, timeout, session_exited) naming session/rewind.
	Call(ctx context.Context, subtype string, fields any) (json.RawMessage, error)
}

// Session is the proxy session as a rewind sees it. Each method takes the
// session's lock itself, and none is called with it held.
type Session interface {
	// ID is the session's id.
	ID() string
	// Current returns the Claude session id claude reported ("" before
	// it did) and the process it runs, or why the session cannot rewind
	// now (see Refusal; a dry run changes nothing, so it may run during
	// a turn).
	Current(dryRun bool) (claudeID string, p Proc, err error)
	// FindMessage finds message uuid in the Claude session's file;
	// history.ErrNoMessage when there is none. ok is false when history
	// is off.
	FindMessage(ctx context.Context, claudeID, uuid string) (m history.Message, ok bool, err error)
	// Begin takes the session to restarting (turns sent from now on are
	// held for the new process; session/state restarting with why)
	// unless it can no longer rewind (Refusal), or its process or
	// conversation changed since Current.
	Begin(p Proc, claudeID, why string) error
	// Undo takes the session out of restarting when the rewind failed
	// before the process was replaced: the old process goes on, with the
	// held turns.
	Undo()
	// Restart logs the rewound marker (Event(to, files), with the next
	// seq, before anything of the new process) and replaces p by a new
	// claude resuming the conversation at the message at
	// (--resume-session-at; "": a new conversation, the rewind went to
	// its first message). An error when the session exited or was closed
	// meanwhile (Exited).
	Restart(p Proc, to, at string, files []string) error
}

// Run serves session/rewind d on sess.
func Run(ctx context.Context, sess Session, d *protocol.SessionRewind) (protocol.SessionRewindResult, error) {
	claudeID, p, err := sess.Current(d.DryRun)
	if err != nil {
		return protocol.SessionRewindResult{}, err
	}
	if claudeID == "" {
		return protocol.SessionRewindResult{}, protocol.FieldErrorf(what, "data.to", "session %s has no conversation yet (claude has not reported its session)", sess.ID())
	}
	msg, ok, err := sess.FindMessage(ctx, claudeID, d.To)
	switch {
	case !ok:
		return protocol.SessionRewindResult{}, protocol.Errorf(protocol.CodeBadRequest, "%s: history is off (--history-home -), so the message cannot be found", what)
	case errors.Is(err, history.ErrNoMessage):
		return protocol.SessionRewindResult{}, protocol.Errorf(protocol.CodeNotFound, "%s: to: no message %s in the conversation of session %s", what, d.To, sess.ID())
	case err != nil:
		return protocol.SessionRewindResult{}, protocol.Errorf(protocol.CodeNotFound, "%s: to: finding message %s: %v", what, d.To, err)
	case !msg.Prompt:
		return protocol.SessionRewindResult{}, protocol.FieldErrorf(what, "data.to", "message %s is a %s record, not a user message (a prompt)", d.To, describeMessage(msg))
	}

	if d.DryRun {
		rf, err := askRewindFiles(ctx, p, d.To, true)
		if err != nil {
			return protocol.SessionRewindResult{}, err
		}
		return protocol.SessionRewindResult{Files: capFiles(rf.FilesChanged), Insertions: rf.Insertions, Deletions: rf.Deletions, FilesError: rf.Error}, nil
	}

	// From here the session is restarting: turns sent meanwhile are held.
	if err := sess.Begin(p, claudeID, "rewinding to "+d.To); err != nil {
		return protocol.SessionRewindResult{}, err
	}
	var files []string
	if d.Files {
		files, err = restoreFiles(ctx, p, d.To)
		if err != nil {
			sess.Undo()
			return protocol.SessionRewindResult{}, err
		}
	}
	// The marker goes into the log before anything of the new process: a
	// client replaying the log drops what it showed from the message To
	// on when it reaches it.
	if err := sess.Restart(p, d.To, msg.Parent, files); err != nil {
		return protocol.SessionRewindResult{}, err
	}
	res := protocol.SessionRewindResult{Files: capFiles(files), Rewound: true}
	if msg.Parent != "" {
		res.ClaudeSessionID = claudeID
	}
	return res, nil
}

// State is what Refusal reads of a session (under its lock).
type State struct {
	ID, State   string // the session's id and state (for the message)
	Gone        bool   // exited or closing
	Ready       bool   // it runs a claude that answered initialize, and is not restarting
	TurnRunning bool   // a turn runs or waits: queued, held, being written
}

// ReplayRefusal is the error of a rewind in a session that replays a
// recording (serve --demo, --replay): the replay keeps no session file and
// no file checkpoints, so there is nothing to rewind to.
func ReplayRefusal() error {
	return protocol.Errorf(protocol.CodeBadRequest, "%s: this session replays a recording (serve --demo or --replay), and the demo cannot rewind; run ccproxy serve with the Claude Code CLI to rewind a conversation", what)
}

// Refusal says why a session in state st cannot rewind now (nil when it
// can). A dry run changes nothing, so it may run during a turn.
func Refusal(st State, dryRun bool) error {
	switch {
	case st.Gone:
		return protocol.Errorf(protocol.CodeSessionExited, "%s: session %s has exited", what, st.ID)
	case !st.Ready:
		return protocol.FieldErrorf(what, "data.session", "session %s is %s; try again once it is idle", st.ID, st.State)
	case dryRun:
		return nil
	case st.TurnRunning:
		return protocol.FieldErrorf(what, "data.session", "a turn of session %s is running; interrupt it (session/interrupt) or wait for its result, then rewind", st.ID)
	}
	return nil
}

// Changed is Begin's error when the session's process or conversation
// changed since the rewind began.
func Changed(id string) error {
	return protocol.Errorf(protocol.CodeBadRequest, "%s: session %s changed meanwhile; try again", what, id)
}

// Exited is Restart's error when the session exited meanwhile.
func Exited(id string) error {
	return protocol.Errorf(protocol.CodeSessionExited, "%s: session %s has exited", what, id)
}

// files is claude's answer to rewind_files.
type files struct {
	CanRewind    bool     `json:"canRewind"`
	Error        string   `json:"error"`
	FilesChanged []string `json:"filesChanged"`
	Insertions   int64    `json:"insertions"`
	Deletions    int64    `json:"deletions"`
}

// restoreFiles restores the files changed since the message to: a dry run
// first for the list, then the rewind itself. No checkpoint is an error
// (cli_error with claude's reason): the caller asked for files.
func restoreFiles(ctx context.Context, p Proc, to string) ([]string, error) {
	rf, err := askRewindFiles(ctx, p, to, true)
	if err != nil {
		return nil, err
	}
	if !rf.CanRewind {
		return nil, protocol.Errorf(protocol.CodeCLIError, "%s: claude cannot restore the files: %s", what, textutil.Truncate(rf.Error, 500))
	}
	if len(rf.FilesChanged) == 0 {
		return nil, nil
	}
	done, err := askRewindFiles(ctx, p, to, false)
	if err != nil {
		return nil, err
	}
	if !done.CanRewind {
		return nil, protocol.Errorf(protocol.CodeCLIError, "%s: claude did not restore the files: %s", what, textutil.Truncate(done.Error, 500))
	}
	return rf.FilesChanged, nil
}

// askRewindFiles sends rewind_files to p and waits for the answer.
func askRewindFiles(ctx context.Context, p Proc, to string, dryRun bool) (files, error) {
	fields := map[string]any{"user_message_id": to}
	if dryRun {
		fields["dry_run"] = true
	}
	resp, err := p.Call(ctx, "rewind_files", fields)
	if err != nil {
		return files{}, err
	}
	var rf files
	if err := json.Unmarshal(resp, &rf); err != nil {
		return files{}, protocol.Errorf(protocol.CodeCLIError, "%s: claude answered: %s", what, textutil.Truncate("unreadable rewind_files answer: "+err.Error(), 500))
	}
	return rf, nil
}

// Event is the synthetic event that marks a rewind in the log.
func Event(to string, files []string) *stream.Event {
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
