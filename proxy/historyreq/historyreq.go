package historyreq

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strconv"

	"github.com/ccproxy/ccproxy/history"
	"github.com/ccproxy/ccproxy/history/search"
	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/proxy/runner"
	"github.com/ccproxy/ccproxy/stream"
)

// MaxRequests bounds the history/list and history/read requests running
// at once, over all connections.
const MaxRequests = 8

// Options configure New.
type Options struct {
	// Home is the directory whose .claude/projects holds Claude Code's
	// session files.
	Home string
	// Project is the default project of history/list.
	Project string
	// MaxLine bounds a line of a session file (history.Options.MaxLine).
	MaxLine int
	// ReplyBytes bounds the events' bytes in one history/read reply.
	ReplyBytes int64
	// Sink stores the attachments of past tool results (the server's blob
	// store, served by /v1/blobs).
	Sink stream.Sink
	// ScrubEvent masks the secrets of the MCP configuration in force in a
	// stored event's JSON that holds a tool_result, as live ones are.
	ScrubEvent func(event []byte) []byte
	// TrashDir is where history/delete moves sessions (default
	// <Home>/.local/state/ccproxy/history-trash); it must be on the file
	// system of <Home>/.claude/projects.
	TrashDir string
	// Live returns the proxy's session running claude session id, or
	// nil (nil: none ever is).
	Live func(claudeID string) LiveSession
	// Scrub masks the same secrets in text: what history/search indexes
	// and shows.
	Scrub func(text string) string
	// IndexDir is where history/search keeps its index (default
	// DefaultIndexDir()); it is opened on the first search.
	IndexDir string
	Logger   *slog.Logger
}

// Requests serves history/list and history/read; see the package comment.
type Requests struct {
	scrubEvent func([]byte) []byte
	store      *history.Store
	sink       stream.Sink
	project    string // the default project of history/list
	replyBytes int64  // bound on the events' bytes in one history/read reply
	reqs       *runner.Runner
	trash      *history.Trash // nil when it could not be opened (logged)
	live       func(string) LiveSession
	search     *searcher // history/search's index, opened on first use
}

// New opens the history store under o.Home.
func New(o Options) (*Requests, error) {
	st, err := history.Open(history.Options{
		Root:    filepath.Join(o.Home, ".claude", "projects"),
		MaxLine: o.MaxLine,
		Logger:  o.Logger.With("part", "history"),
	})
	if err != nil {
		return nil, err
	}
	trashDir := o.TrashDir
	if trashDir == "" {
		trashDir = filepath.Join(o.Home, ".local", "state", "ccproxy", "history-trash")
	}
	if o.IndexDir == "" {
		o.IndexDir = DefaultIndexDir()
	}
	return &Requests{scrubEvent: o.ScrubEvent, store: st, sink: o.Sink, project: o.Project,
		replyBytes: o.ReplyBytes, reqs: runner.New(MaxRequests, "history requests", historyError),
		trash: openTrash(st, trashDir, o.Logger), live: o.Live,
		search: &searcher{opts: search.Options{Root: st.Root(), Dir: o.IndexDir, Scrub: o.Scrub,
			Logger: o.Logger.With("part", "history search")}}}, nil
}

// Store is the history store the requests read (session/rewind finds
// messages in it).
func (h *Requests) Store() *history.Store { return h.store }

// Runner is the runner the requests run under (at most MaxRequests at
// once; shut down by Shutdown and Close).
func (h *Requests) Runner() *runner.Runner { return h.reqs }

// Shutdown cancels the running requests and refuses new ones
// (shutting_down). It may be called more than once, and on nil.
func (h *Requests) Shutdown() {
	if h != nil {
		h.reqs.Shutdown()
	}
}

// Close shuts down and returns once every request has queued its reply
// (or ctx's error first). It may be called more than once, and on nil.
func (h *Requests) Close(ctx context.Context) error {
	if h == nil {
		return nil
	}
	err := h.reqs.Close(ctx)
	h.search.close() // after the requests: none is searching
	return err
}

// historyError maps package history's errors to protocol errors.
func historyError(log *slog.Logger, typ string, err error) error {
	var pe *protocol.Error
	if errors.As(err, &pe) {
		return pe // already a reply's error (a live session's rename, a conflict)
	}
	if perr, ok := manageError(typ, err); ok {
		return perr
	}
	switch {
	case errors.As(err, &pe):
		return pe
	case errors.Is(err, history.ErrNotFound):
		return protocol.Errorf(protocol.CodeNotFound, "%s: %v", typ, err)
	case errors.Is(err, history.ErrBadID), errors.Is(err, history.ErrBadCursor), errors.Is(err, history.ErrBadProject):
		return protocol.Errorf(protocol.CodeBadRequest, "%s: %v", typ, err)
	case errors.Is(err, history.ErrNotAllowed):
		return protocol.Errorf(protocol.CodeNotFound, "%s: %v", typ, err)
	}
	log.Error("reading the session history failed", "request", typ, "err", err)
	return protocol.Errorf(protocol.CodeInternal, "%s: reading the session history failed; see the proxy's log", typ)
}

// List serves history/list (under the runner).
func (h *Requests) List(ctx context.Context, d *protocol.HistoryList) (protocol.Data, error) {
	opts := history.ListOptions{Project: d.Project, Cursor: d.Cursor}
	switch {
	case d.All:
		opts.Project = ""
	case opts.Project == "":
		opts.Project = h.project
	}
	if d.Limit != nil {
		opts.Limit = int(*d.Limit)
	}
	page, err := h.store.List(ctx, opts)
	if err != nil {
		return nil, err
	}
	r := protocol.HistoryListResult{Sessions: make([]protocol.HistorySession, 0, len(page.Sessions)),
		Next: page.Next, Total: page.Total, Skipped: page.Skipped}
	for _, p := range page.Projects {
		r.Projects = append(r.Projects, protocol.HistoryProject(p))
	}
	for _, s := range page.Sessions {
		r.Sessions = append(r.Sessions, protocol.HistorySession(s)) // same fields: a mismatch does not compile
	}
	return r, nil
}

// Read serves history/read (under the runner).
func (h *Requests) Read(ctx context.Context, d *protocol.HistoryRead) (protocol.Data, error) {
	// MaxBytes: the store stops reading at the reply's budget, so a
	// page is held (and its attachments stored) at most one event past
	// it, or twice it while a tool use waits for its result.
	opts := history.ReadOptions{ID: d.ID, Project: d.Project, Agent: d.Agent, Cursor: d.Cursor, MaxBytes: h.replyBytes,
		Normalize: stream.Options{Attachments: stream.AttachSink, Sink: h.sink}}
	if d.Limit != nil {
		opts.Limit = int(*d.Limit)
	}
	page, err := h.store.Read(ctx, opts)
	if err != nil {
		return nil, err
	}
	return h.result(page), nil
}

// result turns a page into the reply, cut short when its events exceed
// replyBytes: at the last event the store marks as a place a page may end
// (history.Event.Break: an event of the file read, no tool use waiting for
// its result), whose offset is the next cursor. At least one such place's
// worth of events is always sent. The store stops reading at the budget
// already, so this drops at most the events after the last break, the one
// that took the page over the budget among them.
func (h *Requests) result(page history.ReadPage) protocol.HistoryReadResult {
	r := protocol.HistoryReadResult{ID: page.SessionID, Agent: page.Agent, Next: page.Next, More: page.More, Truncated: page.Truncated,
		Skipped: page.Skipped, Corrupt: page.Corrupt, Oversized: page.Oversized,
		Events: make([]protocol.HistoryEvent, 0, len(page.Events))}
	events, end := page.Events, len(page.Events)
	var size int64
	last := 0 // the last point events[:last] fit at
	for i, ev := range events {
		if i > 0 && ev.Break {
			if size > h.replyBytes {
				end = cmp.Or(last, i)
				break
			}
			last = i
		}
		size += int64(len(ev.JSON)) + 32
	}
	if end == len(events) && size > h.replyBytes && last > 0 {
		end = last
	}
	if end < len(events) {
		r.Next, r.More, r.Truncated = strconv.FormatInt(events[end].Offset, 10), true, true
		events = events[:end]
	}
	for _, ev := range events {
		js := ev.JSON
		if bytes.Contains(js, []byte(`"tool_result"`)) {
			js = h.scrubEvent(js)
		}
		r.Events = append(r.Events, protocol.HistoryEvent{Offset: ev.Offset, Event: js})
	}
	return r
}
