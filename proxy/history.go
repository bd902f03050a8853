package proxy

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"path/filepath"
	"strconv"

	"github.com/ccproxy/ccproxy/history"
	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/stream"
)

// maxHistoryRequests bounds the history/list and history/read requests
// running at once, over all connections.
const maxHistoryRequests = 8

// historyReqs serves history/list and history/read (SPEC §3) from package
// history's Store over <HistoryHome>/.claude/projects. Attachments of past
// tool results go to the server's blob store, as live ones do, and are
// served by /v1/blobs.
//
// Goroutines: the requests run through reqs (an asyncRunner): each in a
// goroutine of its connection, at most maxHistoryRequests at once
// (limit_exceeded beyond), cancelled when its connection ends or the
// server shuts down (shutting_down). The Store is safe for concurrent use
// and starts no goroutines.
type historyReqs struct {
	scrub      func(string) string // the secrets of the MCP configuration in force (mcphub.Hub.Scrub): tool results of stored sessions are masked as live ones are
	store      *history.Store
	blobs      *blobStore
	project    string // the default project of history/list
	replyBytes int64  // bound on the events' bytes in one history/read reply
	reqs       *asyncRunner
}

// newHistoryReqs returns nil when history is turned off (HistoryHome "-").
func newHistoryReqs(s *Server) (*historyReqs, error) {
	if s.opts.HistoryHome == "-" {
		return nil, nil
	}
	st, err := history.Open(history.Options{
		Root:    filepath.Join(s.opts.HistoryHome, ".claude", "projects"),
		MaxLine: s.opts.MaxLineBytes,
		Logger:  s.log.With("part", "history"),
	})
	if err != nil {
		return nil, err
	}
	return &historyReqs{scrub: s.mcp.Scrub, store: st, blobs: s.blobs, project: s.opts.Project,
		replyBytes: s.opts.HistoryReplyBytes, reqs: newAsyncRunner(maxHistoryRequests, "history requests", historyError)}, nil
}

// historyError maps package history's errors to protocol errors.
func historyError(c *client, typ string, err error) error {
	switch {
	case errors.Is(err, history.ErrNotFound):
		return protocol.Errorf(protocol.CodeNotFound, "%s: %v", typ, err)
	case errors.Is(err, history.ErrBadID), errors.Is(err, history.ErrBadCursor), errors.Is(err, history.ErrBadProject):
		return protocol.Errorf(protocol.CodeBadRequest, "%s: %v", typ, err)
	case errors.Is(err, history.ErrNotAllowed):
		return protocol.Errorf(protocol.CodeNotFound, "%s: %v", typ, err)
	}
	c.log.Error("reading the session history failed", "request", typ, "err", err)
	return protocol.Errorf(protocol.CodeInternal, "%s: reading the session history failed; see the proxy's log", typ)
}

// list serves history/list (under the runner h.reqs).
func (h *historyReqs) list(ctx context.Context, _ *client, d *protocol.HistoryList) (protocol.Data, error) {
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
	for _, s := range page.Sessions {
		r.Sessions = append(r.Sessions, protocol.HistorySession(s)) // same fields: a mismatch does not compile
	}
	return r, nil
}

// read serves history/read (under the runner h.reqs).
func (h *historyReqs) read(ctx context.Context, _ *client, d *protocol.HistoryRead) (protocol.Data, error) {
	// MaxBytes: the store stops reading at the reply's budget, so a
	// page is held (and its attachments stored) at most one event past
	// it, or twice it while a tool use waits for its result.
	opts := history.ReadOptions{ID: d.ID, Project: d.Project, Agent: d.Agent, Cursor: d.Cursor, MaxBytes: h.replyBytes,
		Normalize: stream.Options{Attachments: stream.AttachSink, Sink: h.blobs}}
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
func (h *historyReqs) result(page history.ReadPage) protocol.HistoryReadResult {
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
			js = scrubEventJSON(js, h.scrub)
		}
		r.Events = append(r.Events, protocol.HistoryEvent{Offset: ev.Offset, Event: js})
	}
	return r
}
