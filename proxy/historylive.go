package proxy

// The live side of history/rename and history/delete (proxy/historyreq):
// which session of this proxy runs a Claude session id, and its rename
// through claude's rename_session control request (measured on 2.1.329
// and 2.1.332: claude appends the custom-title record itself;
// docs/CLI-NOTES.md). Locks: Server.mu, then the Session's mu (the lock
// order of proxy/doc.go).

import (
	"context"

	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/proxy/historyreq"
)

// historyManage is the history.manage feature: history/rename, delete,
// restore, trash and export (proxy/historyreq), offered with history.
func historyManage(s *Server, histRunner func() *asyncRunner) featureEntry {
	return featureEntry{Capability: protocol.CapHistoryManage, Offered: func() bool { return s.hist != nil }, Types: []requestType{
		// Closures: s.hist is nil when history is off.
		run(protocol.TypeHistoryRename, histRunner, func(ctx context.Context, _ *client, d *protocol.HistoryRename) (protocol.Data, error) {
			return s.hist.Rename(ctx, d)
		}),
		run(protocol.TypeHistoryDelete, histRunner, func(ctx context.Context, _ *client, d *protocol.HistoryDelete) (protocol.Data, error) {
			return s.hist.Delete(ctx, d)
		}),
		run(protocol.TypeHistoryRestore, histRunner, func(ctx context.Context, _ *client, d *protocol.HistoryRestore) (protocol.Data, error) {
			return s.hist.Restore(ctx, d)
		}),
		run(protocol.TypeHistoryTrash, histRunner, func(ctx context.Context, _ *client, d *protocol.HistoryTrash) (protocol.Data, error) {
			return s.hist.Trash(ctx, d)
		}),
		run(protocol.TypeHistoryExport, histRunner, func(ctx context.Context, _ *client, d *protocol.HistoryExport) (protocol.Data, error) {
			return s.hist.Export(ctx, d)
		}),
	}}
}

// liveHistorySession is historyreq's Options.Live: the session of r whose
// claude runs claudeID (or that resumes it and has not said its id yet),
// nil when there is none.
func liveHistorySession(r *registry, claudeID string) historyreq.LiveSession {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, sess := range r.sessions {
		if runsClaude(sess, claudeID) {
			return liveRenamer{sess}
		}
	}
	return nil
}

// runsClaude reports whether the session's claude runs (or is starting,
// resuming without a fork) Claude session id.
func runsClaude(s *Session, id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc.exited || s.proc.closing != "" {
		return false
	}
	return s.claudeID == id || s.claudeID == "" && s.cfg.resume == id && !s.cfg.fork
}

// liveRenamer renames a live session through its claude; the session
// keeps the title (session/list, session/state, the subscribe reply).
type liveRenamer struct{ s *Session }

func (l liveRenamer) ID() string { return l.s.id }

func (l liveRenamer) Rename(ctx context.Context, title string) error {
	const what = "history/rename"
	if _, err := l.s.controlWait(ctx, "rename_session", map[string]any{"title": title, "source": "host"}); err != nil {
		return controlError(what, err)
	}
	l.s.mu.Lock()
	if l.s.title != title {
		l.s.title = title
		l.s.pushStateLocked("")
	}
	l.s.mu.Unlock()
	l.s.log.Info("session renamed", "title", title)
	return nil
}
