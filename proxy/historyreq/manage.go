package historyreq

import (
	"context"
	"errors"
	"log/slog"

	"github.com/ccproxy/ccproxy/history"
	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/stream"
)

// LiveSession is a session of the proxy whose claude runs (or is being
// started for) a Claude session id.
type LiveSession interface {
	// ID is the proxy's session id, for messages.
	ID() string
	// Rename asks its claude to rename the session (rename_session):
	// claude writes the custom-title record itself. Errors are protocol
	// errors (cli_error, timeout, session_exited).
	Rename(ctx context.Context, title string) error
}

// Rename serves history/rename: a live session's claude renames itself;
// otherwise the record is appended to the file.
func (h *Requests) Rename(ctx context.Context, d *protocol.HistoryRename) (protocol.Data, error) {
	title, err := history.CleanTitle(d.Title)
	if err != nil {
		return nil, protocol.Errorf(protocol.CodeBadRequest, "history/rename: title: %v", err)
	}
	if live := h.liveSession(d.ID); live != nil {
		if err := live.Rename(ctx, title); err != nil {
			return nil, err
		}
		return protocol.HistoryRenameResult{ID: d.ID, Title: title, Live: true}, nil
	}
	title, err = h.store.Rename(ctx, d.ID, d.Project, title)
	if err != nil {
		return nil, err
	}
	return protocol.HistoryRenameResult{ID: d.ID, Title: title}, nil
}

// Delete serves history/delete: never of a live session.
func (h *Requests) Delete(ctx context.Context, d *protocol.HistoryDelete) (protocol.Data, error) {
	if live := h.liveSession(d.ID); live != nil {
		return nil, protocol.Errorf(protocol.CodeConflict, "history/delete: session %s is live in this proxy (session %s): close it first", d.ID, live.ID())
	}
	tr, err := h.trashOrErr(protocol.TypeHistoryDelete)
	if err != nil {
		return nil, err
	}
	e, err := tr.Delete(ctx, d.ID, d.Project)
	if err != nil {
		return nil, err
	}
	return protocol.HistoryDeleteResult{Trashed: trashEntry(e)}, nil
}

// Restore serves history/restore.
func (h *Requests) Restore(_ context.Context, d *protocol.HistoryRestore) (protocol.Data, error) {
	tr, err := h.trashOrErr(protocol.TypeHistoryRestore)
	if err != nil {
		return nil, err
	}
	e, err := tr.Restore(d.ID)
	if err != nil {
		return nil, err
	}
	return protocol.HistoryRestoreResult{Restored: trashEntry(e)}, nil
}

// Trash serves history/trash.
func (h *Requests) Trash(_ context.Context, _ *protocol.HistoryTrash) (protocol.Data, error) {
	tr, err := h.trashOrErr(protocol.TypeHistoryTrash)
	if err != nil {
		return nil, err
	}
	var r protocol.HistoryTrashResult
	for _, e := range tr.List() {
		r.Entries = append(r.Entries, trashEntry(e))
	}
	return r, nil
}

// Export serves history/export: tool results masked as history/read
// masks them, every line of a JSONL export likewise.
func (h *Requests) Export(ctx context.Context, d *protocol.HistoryExport) (protocol.Data, error) {
	x, err := h.store.Export(ctx, history.ExportOptions{ID: d.ID, Project: d.Project, Format: d.Format, MaxBytes: h.replyBytes,
		Normalize: stream.Options{Attachments: stream.AttachSink, Sink: h.sink}, Scrub: h.scrubEvent})
	if err != nil {
		return nil, err
	}
	return protocol.HistoryExportResult{ID: d.ID, Format: d.Format, Filename: x.Filename, Text: x.Text, Truncated: x.Truncated}, nil
}

func (h *Requests) liveSession(id string) LiveSession {
	if h.live == nil {
		return nil
	}
	return h.live(id)
}

func (h *Requests) trashOrErr(typ string) (*history.Trash, error) {
	if h.trash == nil {
		return nil, protocol.Errorf(protocol.CodeInternal, "%s: the trash directory could not be opened; see the proxy's log", typ)
	}
	return h.trash, nil
}

func trashEntry(e history.TrashEntry) protocol.HistoryTrashEntry {
	return protocol.HistoryTrashEntry(e) // same fields: a mismatch does not compile
}

// manageError maps the errors of rename, trash and export; ok false when
// err is none of them.
func manageError(typ string, err error) (error, bool) {
	switch {
	case errors.Is(err, history.ErrBadTitle), errors.Is(err, history.ErrBadFormat):
		return protocol.Errorf(protocol.CodeBadRequest, "%s: %v", typ, err), true
	case errors.Is(err, history.ErrExists):
		return protocol.Errorf(protocol.CodeConflict, "%s: %v", typ, err), true
	}
	return nil, false
}

// openTrash opens the trash, or logs why it cannot (the other requests
// work without it).
func openTrash(st *history.Store, dir string, log *slog.Logger) *history.Trash {
	tr, err := st.OpenTrash(dir)
	if err != nil {
		log.Warn("history: no trash: history/delete and history/restore will fail", "dir", dir, "err", err)
		return nil
	}
	return tr
}
