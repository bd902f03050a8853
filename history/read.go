package history

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/ccproxy/ccproxy/stream"
)

// Defaults of ReadOptions.
const (
	DefaultReadLimit = 200
	MaxReadLimit     = 5000
	// DefaultReadBytes is ReadOptions.MaxBytes when it is not set.
	DefaultReadBytes = 8 << 20
)

// ReadOptions select a page of one session's conversation.
type ReadOptions struct {
	// ID is the session id.
	ID string
	// Project, when set, is the session's project directory: the file is
	// looked for in its folder only. Otherwise every project folder is
	// searched.
	Project string
	// Agent, when set, reads the subagent of that id (from the session's
	// subagents folder) instead of the main conversation; its events
	// carry the parent_tool_use_id of the tool use that started it when a
	// meta file names it (else their own, usually null: the history_more
	// event that gave the cursor names the tool use).
	Agent string
	// Cursor is the Next of the previous page: a byte offset in the file.
	// "" starts at the beginning.
	Cursor string
	// Limit caps the conversation events of the page (default
	// DefaultReadLimit, at most MaxReadLimit). The events of subagents
	// nested in the page count against a limit of their own, as large.
	Limit int
	// MaxBytes bounds the page in bytes (default DefaultReadBytes): the
	// events' JSON, inline attachment data and 32 bytes of framing each,
	// subagents' events included. Once it is reached the page ends at the
	// next line with no tool use of its file awaiting a result (or at once
	// past twice MaxBytes), so a page is at most MaxBytes plus one event
	// when no tool use is pending; Next resumes exactly there, and the
	// lines after it are not read (nor their attachments normalized). A
	// nested subagent cut short gets its history_more event.
	MaxBytes int64
	// Normalize configures the stream.Normalizer the events go through,
	// as live events do: set Attachments to stream.AttachSink and Sink
	// to the proxy's blob store to have images served by URL.
	Normalize stream.Options
}

// ReadPage is one page of a session as events shaped like the CLI's live
// stream-json output.
type ReadPage struct {
	SessionID string  `json:"sessionId"`
	Agent     string  `json:"agent,omitempty"`
	Events    []Event `json:"events"`
	// Next is the cursor after the last line read: pass it to read on
	// (also when More is false, to poll a session still being written).
	Next string `json:"next"`
	// More reports that the file has more lines after Next.
	More bool `json:"more"`
	// Truncated reports that ReadOptions.MaxBytes ended the page before
	// Limit did, with lines left (More).
	Truncated bool `json:"truncated,omitempty"`
	// Skipped counts records that are not conversation (attachments,
	// api-request, queue-operation, cost-state, …) and the conversation a
	// rewind left behind (rewound.go); Corrupt counts lines
	// that were not JSON objects; Oversized lines over the line cap. All
	// were skipped.
	Skipped   int `json:"skipped"`
	Corrupt   int `json:"corrupt"`
	Oversized int `json:"oversized"`
}

// Event is one conversation event in live form: JSON is a stream-json
// event ({"type":"user"|"assistant"|"system", "message", "uuid",
// "session_id", "parent_tool_use_id", "tool_use_result", "timestamp"})
// normalized by stream.Normalizer exactly as a live one is: tool_result
// content as text, attachments taken out (to the Sink when one is set),
// MCP blocks annotated with "mcp". A subagent's events follow the assistant
// event holding its tool use (or, when no meta file names that tool use, the
// tool's result naming the agent), marked as on the live stream:
// parent_tool_use_id (the tool use), agent_id, subagent_type and
// task_description; its first event is the prompt it was given, which the
// live stream does not show. If it has more events than fit, a
// {"type":"ccproxy","subtype":"history_more","agent","parent_tool_use_id","cursor"}
// event says how to read on (ReadOptions.Agent and Cursor).
type Event struct {
	Type            string              `json:"type"`
	Subtype         string              `json:"subtype,omitempty"`
	UUID            string              `json:"uuid,omitempty"`
	ParentToolUseID string              `json:"parentToolUseId,omitempty"`
	JSON            json.RawMessage     `json:"event"`
	Attachments     []stream.Attachment `json:"attachments,omitempty"`
	// Offset is where the event's line starts in its file (the main
	// file, or the subagent's).
	Offset int64 `json:"offset"`
	// Break reports that a page may end before the event, with Offset as
	// the next cursor: it is of the file read (not a nested subagent's),
	// and no tool use before it in the page waits for its result (the
	// result is annotated from its tool use, so they go together).
	Break bool `json:"-"`
}

// conversation record types: everything else in a session file is the
// CLI's bookkeeping.
var conversation = map[string]bool{"user": true, "assistant": true, "system": true}

// Read returns a page of a session's conversation. The first page reads
// only as far as its events need, whatever the size of the file.
func (s *Store) Read(ctx context.Context, opts ReadOptions) (ReadPage, error) {
	if !validID(opts.ID) {
		return ReadPage{}, fmt.Errorf("%w %q: ids are letters, digits, '-' and '_'", ErrBadID, opts.ID)
	}
	if opts.Agent != "" && !validID(opts.Agent) {
		return ReadPage{}, fmt.Errorf("%w: agent id %q: ids are letters, digits, '-' and '_'", ErrBadID, opts.Agent)
	}
	if err := checkProject(opts.Project); err != nil {
		return ReadPage{}, err
	}
	var off int64
	if opts.Cursor != "" {
		n, err := strconv.ParseInt(opts.Cursor, 10, 64)
		if err != nil || n < 0 {
			return ReadPage{}, fmt.Errorf("%w %q: want the byte offset a page returned as next", ErrBadCursor, opts.Cursor)
		}
		off = n
	}
	limit := opts.Limit
	if limit <= 0 {
		limit = DefaultReadLimit
	}
	limit = min(limit, MaxReadLimit)
	path, err := s.find(opts.ID, opts.Project)
	if err != nil {
		return ReadPage{}, err
	}
	maxBytes := opts.MaxBytes
	if maxBytes <= 0 {
		maxBytes = DefaultReadBytes
	}
	r := &reader{s: s, ctx: ctx, nested: map[string]bool{}, norm: stream.NewNormalizer(opts.Normalize), dir: strings.TrimSuffix(path, ".jsonl"), limit: limit, maxBytes: maxBytes}
	page := ReadPage{SessionID: opts.ID, Agent: opts.Agent}
	var parent *subagent
	if opts.Agent != "" {
		agents, err := r.agents()
		if err != nil {
			return ReadPage{}, err
		}
		for _, a := range agents {
			if a.id == opts.Agent {
				parent = a
			}
		}
		var ok bool
		if path, ok = r.agentFile(opts.Agent); !ok {
			return ReadPage{}, fmt.Errorf("%w: session %s has no subagent %s", ErrNotFound, opts.ID, opts.Agent)
		}
		if parent == nil {
			// No meta file names it (the main file's tool result does,
			// toolUseResult.agentId): its tool use is not known here.
			parent = &subagent{id: opts.Agent}
		}
	}
	next, more, err := r.file(&page, path, off, limit, parent, opts.Agent == "")
	if err != nil {
		return ReadPage{}, err
	}
	page.Next, page.More = strconv.FormatInt(next, 10), more
	page.Truncated = r.cut && more
	return page, nil
}

// find returns the path of a session's main file.
func (s *Store) find(id, project string) (string, error) {
	var folders []string
	if project != "" {
		folders = []string{ProjectFolder(filepath.Clean(project))}
	} else {
		s.mu.Lock()
		for p, e := range s.index {
			if e.info.ID == id {
				folders = append(folders, filepath.Base(filepath.Dir(p)))
			}
		}
		s.mu.Unlock()
		if len(folders) == 0 {
			ents, err := os.ReadDir(s.root)
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return "", fmt.Errorf("history: reading %s: %w", s.root, err)
			}
			for _, e := range ents {
				if e.IsDir() && e.Type()&fs.ModeSymlink == 0 {
					folders = append(folders, e.Name())
				}
			}
		}
	}
	for _, folder := range folders {
		if !s.isFolder(folder) {
			continue
		}
		p := filepath.Join(s.root, folder, id+".jsonl")
		fi, err := os.Lstat(p)
		if err != nil {
			continue
		}
		if err := s.allowed(fi); err != nil {
			return "", fmt.Errorf("history: session %s: %w", id, err)
		}
		return p, nil
	}
	where := "any project"
	if project != "" {
		where = "project " + project
	}
	return "", fmt.Errorf("%w: no session %s in %s under %s", ErrNotFound, id, where, s.root)
}

// reader is the state of one Read.
type reader struct {
	s     *Store
	ctx   context.Context
	norm  *stream.Normalizer
	dir   string // the session's folder (subagents/, tool-results/)
	limit int    // events per subagent
	// maxBytes bounds the page's events in bytes; used is what they take
	// so far (all files of the Read).
	maxBytes, used int64
	cut            bool                 // maxBytes ended a file's part of the page
	agentM         map[string]*subagent // tool_use id -> its subagent, loaded on first need
	nested         map[string]bool      // tool_use ids whose subagent is in the page
	buf            []byte
}

// subagent is what is known of a subagent.
type subagent struct {
	toolUseID string // the tool use that started it: its events' parent_tool_use_id
	id        string // its agent id (subagents/agent-<id>.jsonl)
	typ       string // its type ("general-purpose", …), "" if unknown
	desc      string // the task's description, "" if unknown
}

// agents maps the tool_use ids that started subagents to the subagents,
// from their meta files (agent-<id>.meta.json {"toolUseId", "agentType",
// "description"}).
func (r *reader) agents() (map[string]*subagent, error) {
	if r.agentM != nil {
		return r.agentM, nil
	}
	r.agentM = map[string]*subagent{}
	sub := filepath.Join(r.dir, "subagents")
	if !realDir(r.dir) || !realDir(sub) {
		return r.agentM, nil // none, or a symlink: never followed
	}
	ents, err := os.ReadDir(sub)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return r.agentM, nil
		}
		return nil, fmt.Errorf("history: reading %s: %w", sub, err)
	}
	for _, e := range ents {
		id, ok := strings.CutSuffix(e.Name(), ".meta.json")
		if !ok || !e.Type().IsRegular() {
			continue
		}
		id, ok = strings.CutPrefix(id, "agent-")
		if !ok || !validID(id) {
			continue
		}
		b, err := readSmall(filepath.Join(sub, e.Name()), 64<<10)
		if err != nil {
			r.s.log.Warn("history: skipping a subagent meta file", "path", filepath.Join(sub, e.Name()), "err", err)
			continue
		}
		m := gjson.ParseBytes(b)
		if tool := m.Get("toolUseId").Str; tool != "" {
			r.agentM[tool] = &subagent{toolUseID: tool, id: id, typ: m.Get("agentType").Str, desc: m.Get("description").Str}
		}
	}
	return r.agentM, nil
}

// realDir reports whether path is a directory and not a symlink.
func realDir(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.IsDir()
}

// agentFile returns the path of subagent id's file and whether it is there
// to be read: a regular file in the session's subagents folder, neither
// folder a symlink (O_NOFOLLOW guards only the file itself).
func (r *reader) agentFile(id string) (string, bool) {
	sub := filepath.Join(r.dir, "subagents")
	path := filepath.Join(sub, "agent-"+id+".jsonl")
	if !realDir(r.dir) || !realDir(sub) {
		return path, false
	}
	fi, err := os.Lstat(path)
	return path, err == nil && fi.Mode().IsRegular()
}

// readSmall reads a regular file of the current user of at most max bytes.
func readSmall(path string, max int64) ([]byte, error) {
	f, err := openNoFollow(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s is over %d bytes", path, max)
	}
	return b, nil
}

// file reads events from path at off into page until limit events, and
// returns the offset to go on from and whether lines remain. parent is the
// subagent whose file it is (nil for the main file); nest says whether
// subagents are nested in (only in the main file).
func (r *reader) file(page *ReadPage, path string, off int64, limit int, parent *subagent, nest bool) (next int64, more bool, err error) {
	f, err := openNoFollow(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return 0, false, fmt.Errorf("%w: %s", ErrNotFound, path)
		}
		return 0, false, fmt.Errorf("history: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, false, fmt.Errorf("history: %w", err)
	}
	if err := r.s.allowed(fi); err != nil {
		return 0, false, fmt.Errorf("history: %s: %w", path, err)
	}
	if off > fi.Size() {
		return 0, false, fmt.Errorf("%w %d: %s has only %d bytes", ErrBadCursor, off, path, fi.Size())
	}
	var rewound map[string]bool // of the main file: what a rewind left behind
	if nest {
		if rewound, err = r.s.rewound(path, fi); err != nil {
			return 0, false, fmt.Errorf("history: reading %s: %w", path, err)
		}
	}
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return 0, false, fmt.Errorf("history: %w", err)
	}
	lr := newLineReader(f, off, fi.Size()-off, r.s.maxLine, &r.s.bytesRead)
	over := 0
	n := 0
	next = off
	// A page does not end between a tool use and its result: it may run
	// past limit by as much again to take the results in.
	pending := map[string]bool{}
	for n < limit || len(pending) > 0 && n < 2*limit {
		if err := r.ctx.Err(); err != nil {
			return 0, false, err
		}
		if r.used >= r.maxBytes && len(pending) == 0 || r.used >= 2*r.maxBytes {
			r.cut = true
			break // the byte bound: next is where the next line starts
		}
		start := next
		line, end, complete, err := lr.next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return next, false, nil
			}
			return 0, false, fmt.Errorf("history: reading %s: %w", path, err)
		}
		if o := lr.r.Oversized(); o != over {
			if !complete {
				return next, false, nil // a last line still being written
			}
			over = o
			page.Oversized++
			next = end
			continue
		}
		if len(line) == 0 || line[0] != '{' || !gjson.ValidBytes(line) {
			if !complete {
				return next, false, nil // a last line still being written
			}
			page.Corrupt++
			next = end
			continue
		}
		next = end
		ev, refs, ok := r.event(line, parent)
		if !ok || rewound[ev.UUID] {
			page.Skipped++
			continue
		}
		ev.Offset, ev.Break = start, len(pending) == 0
		page.Events = append(page.Events, ev)
		r.used += eventBytes(ev)
		n++
		for _, id := range refs.uses {
			pending[id] = true
		}
		for _, id := range refs.results {
			delete(pending, id)
		}
		if !nest {
			continue
		}
		// A subagent goes after the tool use that started it, as known
		// from its meta file, or else after the tool's result naming it.
		agents, err := r.agents()
		if err != nil {
			return 0, false, err
		}
		if a := refs.agent; a != nil && validID(a.id) {
			if _, ok := agents[a.toolUseID]; !ok { // its copied id: r.agentM and r.nested outlive the line
				agents[a.toolUseID] = a
				refs.uses = append(refs.uses, a.toolUseID)
			}
		}
		for _, id := range refs.uses {
			if err := r.nest(page, id); err != nil {
				return 0, false, err
			}
		}
	}
	return next, next < fi.Size(), nil
}

// nest appends the events of the subagent started by tool use id, if any.
func (r *reader) nest(page *ReadPage, toolUseID string) error {
	agents, err := r.agents()
	if err != nil {
		return err
	}
	agent, ok := agents[toolUseID]
	if !ok || r.nested[toolUseID] {
		return nil
	}
	r.nested[toolUseID] = true
	path, ok := r.agentFile(agent.id)
	if !ok {
		return nil
	}
	sub := ReadPage{}
	next, more, err := r.file(&sub, path, 0, r.limit, agent, false)
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		return err
	}
	for i := range sub.Events {
		sub.Events[i].Break = false // within this page, a subagent's events are not the file read
	}
	page.Events = append(page.Events, sub.Events...)
	page.Skipped += sub.Skipped
	page.Corrupt += sub.Corrupt
	page.Oversized += sub.Oversized
	if more {
		b, _ := json.Marshal(map[string]string{"type": stream.TypeCCProxy, "subtype": "history_more",
			"agent": agent.id, "parent_tool_use_id": toolUseID, "cursor": strconv.FormatInt(next, 10)})
		ev := Event{Type: stream.TypeCCProxy, Subtype: "history_more", ParentToolUseID: toolUseID, JSON: b, Offset: next}
		page.Events = append(page.Events, ev)
		r.used += eventBytes(ev)
	}
	return nil
}

// toolRefs are the tool calls an event mentions.
type toolRefs struct {
	uses    []string  // tool_use ids of an assistant event
	results []string  // tool_use ids answered by a user event's tool_results
	agent   *subagent // the subagent a tool result names (toolUseResult.agentId), with its tool use id
}

// event turns a conversation record into a live-shaped event and
// normalizes it; it also returns the tool calls it mentions. ok is false
// for records that are not conversation.
func (r *reader) event(line []byte, parent *subagent) (ev Event, refs toolRefs, ok bool) {
	var typ, sub, uuid, sid, ts, ptu gjson.Result
	var msg, tur, meta gjson.Result
	isMeta := false
	gjson.Parse(bstr(line)).ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "type":
			typ = v
		case "subtype":
			sub = v
		case "uuid":
			uuid = v
		case "sessionId":
			sid = v
		case "timestamp":
			ts = v
		case "parent_tool_use_id", "parentToolUseID":
			ptu = v
		case "message":
			msg = v
		case "toolUseResult":
			tur = v
		case "mcpMeta":
			meta = v
		case "isMeta":
			isMeta = v.Bool()
		}
		return true
	})
	if !conversation[typ.Str] || isMeta {
		return Event{}, refs, false
	}
	if typ.Str != "system" && !msg.IsObject() {
		return Event{}, refs, false
	}
	b := r.buf[:0]
	b = append(b, `{"type":`...)
	b = append(b, typ.Raw...)
	if sub.Exists() {
		b = append(b, `,"subtype":`...)
		b = append(b, sub.Raw...)
	}
	if msg.Exists() {
		b = append(b, `,"message":`...)
		b = append(b, msg.Raw...)
	}
	b = append(b, `,"parent_tool_use_id":`...)
	switch {
	case parent != nil && parent.toolUseID != "":
		b = appendJSON(b, parent.toolUseID)
	case ptu.Type == gjson.String:
		b = append(b, ptu.Raw...)
	default:
		b = append(b, "null"...)
	}
	for _, f := range [...]struct {
		key string
		v   gjson.Result
	}{{"tool_use_result", tur}, {"tool_use_meta", meta}, {"uuid", uuid}, {"session_id", sid}, {"timestamp", ts}} {
		if f.v.Exists() {
			b = append(b, ',', '"')
			b = append(b, f.key...)
			b = append(b, '"', ':')
			b = append(b, f.v.Raw...)
		}
	}
	if parent != nil {
		// As the live stream marks a subagent's events.
		b = append(b, `,"agent_id":`...)
		b = appendJSON(b, parent.id)
		if parent.typ != "" {
			b = append(b, `,"subagent_type":`...)
			b = appendJSON(b, parent.typ)
		}
		if parent.desc != "" {
			b = append(b, `,"task_description":`...)
			b = appendJSON(b, parent.desc)
		}
	}
	if typ.Str == "system" {
		// The other fields of a system record (content, level, …) matter.
		gjson.Parse(bstr(line)).ForEach(func(k, v gjson.Result) bool {
			switch k.Str {
			case "type", "subtype", "message", "uuid", "sessionId", "timestamp", "parentUuid", "cwd", "userType", "version", "gitBranch", "entrypoint", "isSidechain":
			default:
				b = append(b, ',')
				b = append(b, k.Raw...)
				b = append(b, ':')
				b = append(b, v.Raw...)
			}
			return true
		})
	}
	b = append(b, '}')
	r.buf = b
	msg.Get("content").ForEach(func(_, blk gjson.Result) bool {
		switch blk.Get("type").Str {
		case "tool_use":
			if id := blk.Get("id").Str; id != "" {
				refs.uses = append(refs.uses, strings.Clone(id))
			}
		case "tool_result":
			if id := blk.Get("tool_use_id").Str; id != "" {
				refs.results = append(refs.results, id)
				if agent := tur.Get("agentId").Str; agent != "" {
					refs.agent = &subagent{toolUseID: strings.Clone(id), id: strings.Clone(agent), desc: strings.Clone(tur.Get("description").Str)}
				}
			}
		}
		return true
	})
	out := r.norm.Normalize(b)
	return Event{Type: out.Type, Subtype: out.Subtype, UUID: out.UUID, ParentToolUseID: out.ParentToolUseID,
		JSON: bytes.Clone(out.JSON), Attachments: out.Attachments}, refs, true
}

// eventBytes is what an event takes of ReadOptions.MaxBytes.
func eventBytes(ev Event) int64 {
	n := int64(len(ev.JSON)) + 32
	for _, a := range ev.Attachments {
		n += int64(len(a.Data) + len(a.URL) + len(a.URI) + len(a.SHA256) + len(a.MediaType) + len(a.Kind) + 32)
	}
	return n
}

// appendJSON appends s as a JSON string.
func appendJSON(b []byte, s string) []byte {
	q, _ := json.Marshal(s)
	return append(b, q...)
}
