package stream

import (
	"bytes"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/tidwall/gjson"
)

// AttachmentMode says what becomes of the data of an attachment.
type AttachmentMode int

const (
	// AttachInline keeps the base64 data in the attachment's "data" field.
	AttachInline AttachmentMode = iota
	// AttachStrip keeps only the attachment's description.
	AttachStrip
	// AttachSink hands the decoded data to Options.Sink and puts the URL it
	// returns in the attachment's "url" field. If the sink fails, the data
	// stays inline and the attachment's "error" says why, so nothing is lost.
	AttachSink
)

// String returns the mode's flag spelling.
func (m AttachmentMode) String() string {
	switch m {
	case AttachInline:
		return "inline"
	case AttachStrip:
		return "strip"
	case AttachSink:
		return "sink"
	}
	return "AttachmentMode(" + strconv.Itoa(int(m)) + ")"
}

// ParseAttachmentMode parses "inline", "strip" or "sink".
func ParseAttachmentMode(s string) (AttachmentMode, bool) {
	switch s {
	case "inline":
		return AttachInline, true
	case "strip":
		return AttachStrip, true
	case "sink":
		return AttachSink, true
	}
	return 0, false
}

// Sink stores attachment data so it can be served by URL.
type Sink interface {
	// PutAttachment stores data (the decoded bytes described by a) and
	// returns the URL it will be served at. data is valid only during the
	// call; a is the Sink's to keep (its strings are copies). It is called from the goroutine calling Normalize, once per
	// distinct sha256 per event.
	PutAttachment(a Attachment, data []byte) (url string, err error)
}

// DefaultMaxToolIDs bounds the tool_use ids a Normalizer remembers.
const DefaultMaxToolIDs = 4096

// Options configure a Normalizer.
type Options struct {
	// Attachments says what becomes of attachment data (default inline).
	Attachments AttachmentMode
	// Sink receives attachment data with AttachSink.
	Sink Sink
	// MaxToolIDs bounds how many tool_use ids are remembered to name the
	// MCP tool of a later tool_result (default DefaultMaxToolIDs); the
	// oldest is forgotten first.
	MaxToolIDs int
}

// MCPRef names the MCP server and tool a tool call went to.
type MCPRef struct {
	Server string `json:"server"`
	Tool   string `json:"tool"`
}

// Normalizer classifies and normalizes the events of one stream. It keeps
// per-stream state (the MCP server names of the last system/init and a
// bounded map from tool_use id to MCP tool), so use one per stream. It is not
// safe for concurrent use.
type Normalizer struct {
	opts Options

	servers     []string          // sanitized MCP server names from system/init
	serverNames map[string]string // sanitized -> configured name

	tools     map[string]MCPRef   // tool_use id -> MCP tool
	mcpRefs   map[MCPRef]mcpEntry // MCP tools seen, with their "mcp" value
	toolOrder []string            // ring of ids in tools, oldest at toolNext
	toolNext  int

	sessionID string // last session id, reused to avoid allocating
	arena     []byte // where keep copies short strings
	buf       []byte // output of rewritten events
	texts     []byte // flattened texts of the event
	scratch   []byte // decoded attachment data
	block     []byte // a block of it (hashBase64)
	edits     []edit
	ev        eventState

	// The line being normalized and how gjson sees it (skeleton.go).
	line  []byte
	skel  []byte
	spans []span
	view  string      // the view the validator read last
	conts []cont      // its large containers, sorted by start (scan.go)
	top   []topMember // the members of the top-level object (valid.go)
	topOK bool        // top holds all of them
	// badUTF8: a string of the view is not valid UTF-8 (valid.go).
	badUTF8 bool
	// sawCR: the validator skipped a raw '\r' between tokens (valid.go).
	sawCR bool
	// Lines of skelMin bytes or more are read through a skeleton without
	// their strings of longMin bytes or more (tests lower both).
	skelMin, longMin int
}

// NewNormalizer returns a Normalizer with the given options.
func NewNormalizer(opts Options) *Normalizer {
	if opts.MaxToolIDs <= 0 {
		opts.MaxToolIDs = DefaultMaxToolIDs
	}
	if opts.Attachments == AttachSink && opts.Sink == nil {
		opts.Attachments = AttachInline
	}
	return &Normalizer{opts: opts, tools: make(map[string]MCPRef), skelMin: skeletonBytes, longMin: longString}
}

// edit replaces view[start:end] with repl; apply maps it onto the line.
type edit struct {
	start, end int
	repl       []byte
}

// eventState collects what one event yields.
type eventState struct {
	atts []Attachment
	mcp  bool // an MCP block was annotated
	// decoded remembers the base64 data already turned into attachments
	// in this event: the CLI prints each image twice on a line.
	decoded []decoded
	// flats are the content arrays flattened in this event: the CLI
	// prints each tool result's twice on a line.
	flats []flat
}

type decoded struct {
	data string
	att  Attachment
}

const (
	// noiseTextBytes caps the text of a noise event.
	noiseTextBytes = 4096
	// maxDepth is the deepest nesting accepted in a long line: the
	// validator recurses once per level.
	maxDepth = 10000
)

// Normalize classifies line (one line of the CLI's stdout, or a synthetic
// event from Reader) and returns it normalized:
//
//   - in user events, every tool_result whose content is an array gets a
//     plain-text content (all text parts in order, joined with "\n";
//     non-text parts become a placeholder such as "[image image/png 1.2 KiB]"
//     and are described in an "attachments" list on the block); null
//     content becomes ""; tool_use_result is normalized the same way;
//   - tool_use and tool_result blocks of MCP tools (and can_use_tool
//     requests, and streamed tool_use starts) get "mcp":{"server","tool"};
//   - a line that is not a JSON object becomes a ccproxy/noise event;
//     invalid UTF-8 is replaced by U+FFFD.
//
// Everything else is passed through byte for byte. Normalizing a normalized
// stream again gives the same bytes. Normalize never fails: whatever the
// input, the result is one valid JSON object.
func (n *Normalizer) Normalize(line []byte) Event {
	ev := n.normalize(line)
	if len(n.edits) > 0 {
		ev.JSON = n.apply(ev.JSON)
	}
	n.done()
	return ev
}

// NormalizeTo is Normalize writing the event's JSON to w (without a
// newline) instead of returning it: the Event it returns has no JSON. A
// rewritten line is written in pieces — the runs of the line kept as they
// are, and the new values — with no buffer holding the whole event, so an
// image line of a hundred megabytes is not held twice. The error is w's.
func (n *Normalizer) NormalizeTo(w io.Writer, line []byte) (Event, error) {
	ev := n.normalize(line)
	var err error
	if len(n.edits) > 0 {
		err = n.writeEdits(w, ev.JSON)
	} else {
		_, err = w.Write(ev.JSON)
	}
	n.done()
	ev.JSON = nil
	return ev, err
}

// normalize classifies and reads line, returning its event with the line
// (or a noise event) as JSON and, in n.edits, the changes to make to it.
func (n *Normalizer) normalize(line []byte) Event {
	n.edits = n.edits[:0]
	if n.texts = n.texts[:0]; cap(n.texts) > retainBytes {
		n.texts = nil // let a huge buffer from an earlier event go
	}
	line, view, sanitized, ok := n.prepare(line)
	if !ok {
		return n.noise(line)
	}
	n.line = line

	var ev Event
	var msg, tur, meta, servers, inner, request gjson.Result
	// The "type" of the member being visited and of "event", when the
	// validator found them (see topMember.typ).
	curTyp, innerTyp := unknownType, unknownType
	visit := func(k string, rv rawValue) bool {
		switch k {
		case "type":
			ev.Type = n.internOrKeep(n.text(rv))
		case "subtype":
			ev.Subtype = n.internOrKeep(n.text(rv))
		case "session_id":
			if id, ok := n.text(rv); ok {
				if id != n.sessionID {
					n.sessionID = n.keep(id, true)
				}
				ev.SessionID = n.sessionID
			}
		case "uuid":
			ev.UUID = n.keep(n.text(rv))
		case "parent_tool_use_id":
			ev.ParentToolUseID = n.keep(n.text(rv))
		case "message":
			msg = rv.result()
		case "tool_use_result":
			tur = rv.result()
		case "tool_use_meta":
			meta = rv.result()
		case "mcp_servers":
			servers = rv.result()
		case "event":
			inner, innerTyp = rv.result(), curTyp
		case "request":
			request = rv.result()
		default:
			return false // for the caller: not a name looked for
		}
		return true
	}
	if n.topOK {
		// The validator found the top-level members.
		vs := bstr(view)
		for _, m := range n.top {
			// A key with escapes matches none of the names visit looks
			// for until it is unescaped.
			key := vs[m.key[0]+1 : m.key[1]-1]
			curTyp = m.typ
			if !visit(key, rawValue{vs[m.val[0]:m.val[1]], m.val[0]}) && strings.IndexByte(key, '\\') >= 0 {
				visit(gjson.Parse(vs[m.key[0]:m.key[1]]).Str, rawValue{vs[m.val[0]:m.val[1]], m.val[0]})
			}
		}
	} else {
		curTyp = unknownType
		n.eachMember(gjson.Parse(bstr(view)), func(k string, v rawValue) bool {
			visit(k, v)
			return true
		})
	}

	n.ev.atts = n.ev.atts[:0]
	n.ev.decoded = n.ev.decoded[:0]
	n.ev.flats = n.ev.flats[:0]
	n.ev.mcp = false
	switch ev.Type {
	case TypeSystem:
		if ev.Subtype == SubtypeInit && servers.IsArray() {
			n.setServers(servers)
		}
	case TypeAssistant:
		n.assistant(msg, meta)
	case TypeUser:
		n.user(msg, tur)
	case TypeStreamEvent:
		n.streamEvent(inner, innerTyp)
	case TypeControlRequest:
		n.controlRequest(request)
	}

	ev.JSON = line
	ev.MCP = n.ev.mcp
	ev.Rewritten = sanitized || len(n.edits) > 0
	if len(n.ev.atts) > 0 {
		// Their strings may point into the line or the view: copy them.
		// The data itself stays in the event's JSON only.
		ev.Attachments = make([]Attachment, len(n.ev.atts))
		for i, a := range n.ev.atts {
			ev.Attachments[i] = a.owned()
		}
	}
	return ev
}

// prepare trims line, reads its view (readView) and makes it safe to pass
// on: invalid UTF-8 replaced, a raw "\r" made a space. sanitized reports a
// change; ok false means line is not a JSON object (noise).
func (n *Normalizer) prepare(line []byte) (out, view []byte, sanitized, ok bool) {
	line = bytes.TrimSpace(line)
	view, ok = n.readView(line)
	// The validator checked the UTF-8 of every string of a line read
	// without a skeleton, so of the whole line if it is valid JSON.
	if !(ok && len(line) < n.skelMin && !n.badUTF8 || utf8.Valid(line)) {
		line = bytes.ToValidUTF8(line, []byte("\uFFFD"))
		sanitized = true
		if ok {
			view, ok = n.readView(line)
		}
	}
	if !ok {
		return line, nil, sanitized, false
	}
	// A raw "\r" inside a valid JSON line can only be whitespace between
	// tokens (the validator saw it there); readers that split on "\r"
	// would cut the line there.
	if n.sawCR {
		line = bytes.ReplaceAll(line, []byte{'\r'}, []byte{' '})
		if len(n.spans) == 0 {
			view = line // the same offsets
			n.view = bstr(view)
		}
		sanitized = true
	}
	return line, view, sanitized, true
}

// done lets go of what points into the line just normalized.
func (n *Normalizer) done() {
	n.line, n.view = nil, ""
	clear(n.ev.decoded)
	clear(n.ev.flats)
	clear(n.edits) // their pieces may point into the line
}

// Valid reports whether line is one JSON object, with the JSON check
// Normalize makes first (readView: long lines through a skeleton, then the
// validator of valid.go, which answers as gjson.Valid does; it scans the
// UTF-8 of strings, but that does not change the answer). It does nothing
// more: it is the floor a Normalizer's cost is
// measured against (internal/benchmix/cmd/bench).
func (n *Normalizer) Valid(line []byte) bool {
	_, ok := n.readView(bytes.TrimSpace(line))
	n.view = ""
	return ok
}

// readView checks that line (trimmed) is one JSON object and returns the
// view gjson and the walker read it through: the line itself, or for a long
// line its skeleton. The validator has recorded the view's top-level
// members and large containers on the way.
func (n *Normalizer) readView(line []byte) ([]byte, bool) {
	if len(line) == 0 || line[0] != '{' {
		return nil, false
	}
	view := line
	n.spans = n.spans[:0]
	if len(line) >= n.skelMin {
		var ok bool
		if view, ok = n.skeleton(line); !ok {
			return nil, false
		}
	}
	return view, n.valid(bstr(view))
}

// noise wraps a line that is not a JSON object.
func (n *Normalizer) noise(line []byte) Event {
	b := n.buf[:0]
	b = append(b, `{"type":"ccproxy","subtype":"noise","text":`...)
	b = appendJSONString(b, bstr(truncateUTF8(line, noiseTextBytes)))
	if len(line) > noiseTextBytes {
		b = append(b, `,"truncated":true,"bytes":`...)
		b = strconv.AppendInt(b, int64(len(line)), 10)
	}
	b = append(b, '}')
	n.buf = b
	return Event{Type: TypeCCProxy, Subtype: SubtypeNoise, JSON: b, Rewritten: true}
}

// layout sorts n.edits and maps their offsets from the view onto the line
// (edits at the same offset keep their order), and returns the length of
// the rewritten line.
func (n *Normalizer) layout(line []byte) int {
	slices.SortStableFunc(n.edits, func(a, b edit) int { return a.start - b.start })
	size := len(line)
	for i, e := range n.edits {
		e.start, e.end = n.orig(e.start), n.orig(e.end)
		n.edits[i] = e
		size += len(e.repl) - (e.end - e.start)
	}
	return size
}

// apply builds the rewritten line from n.edits.
func (n *Normalizer) apply(line []byte) []byte {
	size := n.layout(line)
	if cap(n.buf) > retainBytes && size <= retainBytes {
		n.buf = nil // let a huge buffer from an earlier event go
	}
	out := slices.Grow(n.buf[:0], size)
	pos := 0
	for _, e := range n.edits {
		out = append(out, line[pos:e.start]...)
		out = append(out, e.repl...)
		pos = e.end
	}
	out = append(out, line[pos:]...)
	n.buf = out
	return out
}

// writeEdits writes the rewritten line to w in pieces: the runs of line
// between the edits and their replacements.
func (n *Normalizer) writeEdits(w io.Writer, line []byte) error {
	n.layout(line)
	pos := 0
	for _, e := range n.edits {
		if err := writeAll(w, line[pos:e.start], e.repl); err != nil {
			return err
		}
		pos = e.end
	}
	return writeAll(w, line[pos:])
}

// writeAll writes each non-empty piece to w, stopping at the first error.
func writeAll(w io.Writer, pieces ...[]byte) error {
	for _, p := range pieces {
		if len(p) == 0 {
			continue
		}
		if _, err := w.Write(p); err != nil {
			return err
		}
	}
	return nil
}

// replace records that value v of the view becomes repl.
func (n *Normalizer) replace(v gjson.Result, repl []byte) {
	n.edits = append(n.edits, edit{start: v.Index, end: v.Index + len(v.Raw), repl: repl})
}

// setKey records that object obj gets key (a plain name) set to the JSON
// value made of pieces: its value is replaced when the key is there (and
// differs), or the member is added at the end of the object.
func (n *Normalizer) setKey(obj gjson.Result, key string, pieces ...[]byte) {
	if v := n.member(obj, key); v.Exists() {
		if !equalPieces(v.Raw, pieces) {
			n.replace(v, pieces[0])
			n.insert(v.Index+len(v.Raw), pieces[1:]...)
		}
		return
	}
	end := obj.Index + len(obj.Raw) - 1 // the closing brace
	repl := make([]byte, 0, len(key)+len(pieces[0])+4)
	if strings.TrimSpace(obj.Raw[1:len(obj.Raw)-1]) != "" {
		repl = append(repl, ',')
	}
	repl = append(repl, '"')
	repl = append(repl, key...)
	repl = append(repl, '"', ':')
	repl = append(repl, pieces[0]...)
	n.insert(end, repl)
	n.insert(end, pieces[1:]...)
}

// insert records that pieces go at offset off of the view, after what was
// inserted there before.
func (n *Normalizer) insert(off int, pieces ...[]byte) {
	for _, p := range pieces {
		n.edits = append(n.edits, edit{start: off, end: off, repl: p})
	}
}

// equalPieces reports whether s is the pieces joined.
func equalPieces(s string, pieces [][]byte) bool {
	for _, p := range pieces {
		if len(p) > len(s) || s[:len(p)] != string(p) {
			return false
		}
		s = s[len(p):]
	}
	return s == ""
}

// setServers remembers the MCP server names of a system/init event.
func (n *Normalizer) setServers(servers gjson.Result) {
	n.servers = n.servers[:0]
	n.serverNames = make(map[string]string)
	servers.ForEach(func(_, s gjson.Result) bool {
		name := strings.Clone(n.get(s, "name")) // kept beyond this line
		if name == "" {
			return true
		}
		san := sanitizeName(name)
		n.servers = append(n.servers, san)
		n.serverNames[san] = name
		return true
	})
}

// assistant annotates the MCP tool_use blocks of an assistant message.
func (n *Normalizer) assistant(msg, meta gjson.Result) {
	n.each(n.member(msg, "content"), func(block gjson.Result) bool {
		if n.blockType(block) != "tool_use" {
			return true
		}
		name := n.get(block, "name")
		if !strings.HasPrefix(name, "mcp__") {
			return true // not an MCP tool (resolveMCP would say so)
		}
		id := n.get(block, "id")
		var metaTool string
		if meta.IsArray() {
			n.eachElement(meta, func(m gjson.Result) bool {
				if n.get(m, "id") == id {
					metaTool = n.get(m, "tool_name")
					return false
				}
				return true
			})
		}
		ref, ok := n.resolveMCP(name, metaTool, "")
		if !ok {
			return true
		}
		n.remember(id, ref)
		n.annotate(block, ref)
		return true
	})
}

// streamEvent annotates the start of a streamed MCP tool_use block.
func (n *Normalizer) streamEvent(inner gjson.Result, typ [2]int) {
	// Most partial-message lines are deltas. The validator has found the
	// event's type on its way (typ), or a vectorized search rules them out
	// before any parsing (unless strings were taken out of the view).
	if typ == noType {
		return
	}
	if typ != unknownType {
		if t, ok := n.text(rawValue{n.view[typ[0]:typ[1]], typ[0]}); !ok || t != "content_block_start" {
			return
		}
	} else if typ, ok := leadingType(inner.Raw); ok && (typ != "" || len(n.spans) == 0) {
		// The type is the first member, as the CLI prints it (and not
		// taken out of a skeleton).
		if typ != "content_block_start" {
			return
		}
	} else if len(n.spans) == 0 && !strings.Contains(inner.Raw, "content_block_start") || n.get(inner, "type") != "content_block_start" {
		return
	}
	cb := n.member(inner, "content_block")
	if n.blockType(cb) != "tool_use" {
		return
	}
	ref, ok := n.resolveMCP(n.get(cb, "name"), "", "")
	if !ok {
		return
	}
	n.remember(n.get(cb, "id"), ref)
	n.annotate(cb, ref)
}

// blockType returns the "type" of object v (n.get(v, "type")), read
// without walking v when it is its first member, as the CLI prints it.
func (n *Normalizer) blockType(v gjson.Result) string {
	if typ, ok := leadingType(v.Raw); ok && (typ != "" || len(n.spans) == 0) {
		return typ
	}
	return n.get(v, "type")
}

// leadingType returns the value of obj's first member when that member is
// "type", printed without spaces, and its value a plain string.
func leadingType(obj string) (string, bool) {
	const prefix = `{"type":"`
	if !strings.HasPrefix(obj, prefix) {
		return "", false
	}
	rest := obj[len(prefix):]
	end := strings.IndexByte(rest, '"')
	if end < 0 || strings.IndexByte(rest[:end], '\\') >= 0 {
		return "", false
	}
	return rest[:end], true
}

// controlRequest annotates a can_use_tool permission request for an MCP tool.
func (n *Normalizer) controlRequest(req gjson.Result) {
	if n.get(req, "subtype") != "can_use_tool" {
		return
	}
	ref, ok := n.resolveMCP(n.get(req, "tool_name"), "", n.get(req, "mcp_server.name"))
	if !ok {
		return
	}
	n.annotate(req, ref)
}

// user normalizes the tool results of a user message and its
// tool_use_result.
func (n *Normalizer) user(msg, tur gjson.Result) {
	// Only blocks of an array (or an object's members) can be tool
	// results: a prompt's text is not unescaped to be looked at.
	content := n.rawMember(msg, "content")
	if !content.isContainer() {
		content = rawValue{}
	}
	n.each(content.result(), func(block gjson.Result) bool {
		if !block.IsObject() {
			return true
		}
		if n.blockType(block) != "tool_result" {
			return true
		}
		// The block's members are read once for all that follows.
		fl := n.members(block)
		n.toolResult(block, &fl)
		return true
	})
	if tur.Exists() {
		n.toolUseResult(tur)
	}
}

// toolResult normalizes one tool_result block, whose members are fl.
func (n *Normalizer) toolResult(block gjson.Result, fl *fields) {
	var content gjson.Result
	if !fl.content.isString() { // a string is already text: not unescaped
		content = fl.content.result()
	}
	switch {
	case fl.content.isString():
		// Already text.
	case content.IsArray() || content.IsObject():
		f := n.flatten(content)
		n.replace(content, f.text)
		if len(f.atts) > 0 {
			n.setKey(block, "attachments", f.attachmentsJSON()...)
		}
	case content.Exists() && content.Type != gjson.Null: // number, bool
		n.replace(content, appendJSONString(nil, content.Raw))
	case content.Exists(): // null
		n.replace(content, []byte(`""`))
	default:
		n.setKey(block, "content", []byte(`""`))
	}
	if ref, ok := n.tools[n.str(fl.toolUseID.result())]; ok {
		n.annotate(block, ref)
	}
}

// toolUseResult normalizes the tool_use_result side field of a user event:
// an array of content blocks becomes {"content": text, "attachments": [...]};
// an object's content array becomes text; other shapes (strings such as
// "Error: ...", built-in tools' result objects) are left alone.
func (n *Normalizer) toolUseResult(tur gjson.Result) {
	switch {
	case tur.IsArray():
		f := n.flattenBlocks(tur)
		if f == nil {
			return
		}
		out := make([]byte, 0, len(f.text)+32)
		out = append(out, `{"content":`...)
		out = append(out, f.text...)
		if len(f.atts) == 0 {
			n.replace(tur, append(out, '}'))
			return
		}
		// The attachments (their data, inline) are not copied again: they
		// follow as an edit of their own at the same place.
		n.replace(tur, append(out, `,"attachments":`...))
		end := tur.Index + len(tur.Raw)
		n.insert(end, f.attachmentsJSON()...)
		n.insert(end, []byte{'}'})
	case tur.IsObject():
		raw := n.rawMember(tur, "content")
		if !raw.isContainer() || raw.raw[0] != '[' {
			return
		}
		content := raw.result()
		f := n.flattenBlocks(content)
		if f == nil {
			return
		}
		n.replace(content, f.text)
		if len(f.atts) > 0 {
			n.setKey(tur, "attachments", f.attachmentsJSON()...)
		}
	}
}

// flattenBlocks flattens arr if it is an array of content blocks, and
// returns nil if it is not. The array a tool_result held in this event is
// not read again.
func (n *Normalizer) flattenBlocks(arr gjson.Result) *flat {
	raw := n.origRaw(arr)
	if f := n.flattened(raw); f != nil {
		if f.blocks {
			return f
		}
		return nil
	}
	if !n.isBlockArray(arr) {
		return nil
	}
	return n.flattenNew(arr, raw)
}

// annotate records that object v gets "mcp": ref.
func (n *Normalizer) annotate(v gjson.Result, ref MCPRef) {
	n.ev.mcp = true
	n.setKey(v, "mcp", n.mcpRef(ref).json)
}

// maxMCPRefs bounds the MCP tools whose annotation a Normalizer keeps.
const maxMCPRefs = 1024

// mcpEntry is an MCP tool seen in the stream, with strings of its own, and
// its "mcp" value.
type mcpEntry struct {
	ref  MCPRef
	json []byte
}

// mcpRef returns ref (whose strings may point into the line) with strings
// of its own, and its JSON, made once per tool (at most maxMCPRefs are
// kept; then they are made again).
func (n *Normalizer) mcpRef(ref MCPRef) mcpEntry {
	if e, ok := n.mcpRefs[ref]; ok {
		return e
	}
	if n.mcpRefs == nil || len(n.mcpRefs) >= maxMCPRefs {
		n.mcpRefs = make(map[MCPRef]mcpEntry)
	}
	ref = MCPRef{Server: strings.Clone(ref.Server), Tool: strings.Clone(ref.Tool)}
	e := mcpEntry{ref, mcpJSON(ref)}
	n.mcpRefs[ref] = e
	return e
}

func mcpJSON(ref MCPRef) []byte {
	b := append([]byte(`{"server":`), appendJSONString(nil, ref.Server)...)
	b = append(b, `,"tool":`...)
	b = appendJSONString(b, ref.Tool)
	return append(b, '}')
}

// remember maps a tool_use id to its MCP tool, forgetting the oldest id
// once MaxToolIDs are known.
func (n *Normalizer) remember(id string, ref MCPRef) {
	if id == "" {
		return
	}
	if old, ok := n.tools[id]; ok && old == ref {
		return
	}
	// id and ref may point into the line, which the caller reuses; and
	// assigning to an existing string key stores the new key too.
	id = strings.Clone(id)
	ref = n.mcpRef(ref).ref
	if _, ok := n.tools[id]; ok {
		n.tools[id] = ref
		return
	}
	if len(n.toolOrder) < n.opts.MaxToolIDs {
		n.toolOrder = append(n.toolOrder, id)
	} else {
		delete(n.tools, n.toolOrder[n.toolNext])
		n.toolOrder[n.toolNext] = id
		n.toolNext = (n.toolNext + 1) % len(n.toolOrder)
	}
	n.tools[id] = ref
}

// resolveMCP splits an MCP tool name "mcp__<server>__<tool>". metaTool is
// the tool's own name when the CLI gave it (tool_use_meta); server is the
// server's configured name when known (can_use_tool). Otherwise the server
// names of system/init decide, the longest match first, since server names
// may contain "_" and "-".
func (n *Normalizer) resolveMCP(name, metaTool, server string) (MCPRef, bool) {
	rest, ok := strings.CutPrefix(name, "mcp__")
	if !ok || rest == "" {
		return MCPRef{}, false
	}
	if server != "" {
		if tool, ok := strings.CutPrefix(rest, sanitizeName(server)+"__"); ok && tool != "" {
			return MCPRef{Server: server, Tool: orDefault(metaTool, tool)}, true
		}
	}
	if metaTool != "" {
		if srv, ok := strings.CutSuffix(rest, "__"+metaTool); ok && srv != "" {
			return MCPRef{Server: n.serverName(srv), Tool: metaTool}, true
		}
	}
	best := ""
	for _, s := range n.servers {
		if len(s) > len(best) && len(rest) > len(s)+2 && strings.HasPrefix(rest, s) && rest[len(s):len(s)+2] == "__" {
			best = s
		}
	}
	if best != "" {
		return MCPRef{Server: n.serverName(best), Tool: orDefault(metaTool, rest[len(best)+2:])}, true
	}
	if i := strings.Index(rest, "__"); i > 0 && i+2 < len(rest) {
		return MCPRef{Server: n.serverName(rest[:i]), Tool: orDefault(metaTool, rest[i+2:])}, true
	}
	return MCPRef{}, false
}

func (n *Normalizer) serverName(sanitized string) string {
	if name, ok := n.serverNames[sanitized]; ok {
		return name
	}
	return sanitized
}

// sanitizeName spells a server name the way it appears in tool names: every
// character other than ASCII letters, digits, '_' and '-' becomes '_'.
func sanitizeName(s string) string {
	clean := true
	for i := 0; i < len(s); i++ {
		if !nameChar(s[i]) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if r < utf8.RuneSelf && nameChar(byte(r)) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

func nameChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

func orDefault(s, def string) string {
	if s != "" {
		return s
	}
	return def
}

// isBlockArray reports whether every element of arr is an object with a
// string "type": an array of content blocks.
func (n *Normalizer) isBlockArray(arr gjson.Result) bool {
	// A type taken out of a skeleton is still a string: no need for str.
	ok := true
	n.eachElement(arr, func(v gjson.Result) bool {
		ok = v.IsObject() && n.member(v, "type").Type == gjson.String
		return ok
	})
	return ok
}

// text returns the text of v if it is a string (see str), reading a plain
// string token without making its Result.
func (n *Normalizer) text(v rawValue) (string, bool) {
	if !v.isString() {
		return "", false
	}
	if body := v.raw[1 : len(v.raw)-1]; (body != "" || len(n.spans) == 0) && strings.IndexByte(body, '\\') < 0 {
		return body, true
	}
	return n.str(v.result()), true
}

// internOrKeep returns s as a constant for the common types and subtypes,
// else as keep does.
func (n *Normalizer) internOrKeep(s string, ok bool) string {
	if !ok {
		return ""
	}
	if c, ok := intern(s); ok {
		return c
	}
	return n.keep(s, true)
}

// keepArena is the size of the blocks keep copies short strings into, and
// keepMax the longest string it copies there.
const (
	keepArena = 1 << 10
	keepMax   = 128
)

// keep returns a copy of s (which points into the line) that outlives the
// line. Short strings — the uuids and ids of every event — are copied into
// a shared block instead of an allocation each; a block is never written
// again where a string was taken from it, and is freed when no string
// taken from it is in use (so a kept id may hold up to keepArena bytes).
func (n *Normalizer) keep(s string, ok bool) string {
	if !ok || s == "" {
		return ""
	}
	if len(s) > keepMax {
		return strings.Clone(s)
	}
	if len(n.arena)+len(s) > cap(n.arena) {
		n.arena = make([]byte, 0, keepArena)
	}
	start := len(n.arena)
	n.arena = append(n.arena, s...)
	return bstr(n.arena[start:len(n.arena):len(n.arena)])
}

// bstr views b as a string without copying; b must not change while the
// string is in use.
func bstr(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// sbytes views s as bytes without copying; the bytes must not be written.
func sbytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// truncateUTF8 cuts b to at most n bytes without splitting a character.
func truncateUTF8(b []byte, n int) []byte {
	if len(b) <= n {
		return b
	}
	return trimPartialRune(b[:n])
}

// trimPartialRune drops an incomplete character from the end of b, left
// there by a cut.
func trimPartialRune(b []byte) []byte {
	for i := 0; i < utf8.UTFMax-1 && len(b) > 0; i++ {
		if r, size := utf8.DecodeLastRune(b); r != utf8.RuneError || size > 1 {
			break
		}
		if utf8.RuneStart(b[len(b)-1]) {
			return b[:len(b)-1]
		}
		b = b[:len(b)-1]
	}
	return b
}
