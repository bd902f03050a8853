package stream

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
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
	// call. It is called from the goroutine calling Normalize, once per
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

	tools     map[string]MCPRef // tool_use id -> MCP tool
	toolOrder []string          // ring of ids in tools, oldest at toolNext
	toolNext  int

	sessionID string // last session id, reused to avoid allocating
	buf       []byte // output of rewritten events
	scratch   []byte // decoded attachment data
	edits     []edit
	ev        eventState
}

// NewNormalizer returns a Normalizer with the given options.
func NewNormalizer(opts Options) *Normalizer {
	if opts.MaxToolIDs <= 0 {
		opts.MaxToolIDs = DefaultMaxToolIDs
	}
	if opts.Attachments == AttachSink && opts.Sink == nil {
		opts.Attachments = AttachInline
	}
	return &Normalizer{opts: opts, tools: make(map[string]MCPRef)}
}

// edit replaces line[start:end] with repl.
type edit struct {
	start, end int
	repl       []byte
}

// eventState collects what one event yields.
type eventState struct {
	atts []Attachment
}

const (
	// noiseTextBytes caps the text of a noise event.
	noiseTextBytes = 4096
	// depthCheckBytes: lines at least this long are checked for absurd
	// nesting before the (recursive) validator sees them.
	depthCheckBytes = 1 << 20
	// maxDepth is the deepest nesting accepted in a long line.
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
	line = bytes.TrimSpace(line)
	sanitized := false
	if !utf8.Valid(line) {
		line = bytes.ToValidUTF8(line, []byte("\uFFFD"))
		sanitized = true
	}
	if len(line) == 0 || line[0] != '{' ||
		(len(line) >= depthCheckBytes && tooDeep(line, maxDepth)) ||
		!gjson.Valid(bstr(line)) {
		return n.noise(line)
	}

	var ev Event
	var msg, tur, meta, servers, inner, request gjson.Result
	gjson.Parse(bstr(line)).ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "type":
			ev.Type = internOrClone(v)
		case "subtype":
			ev.Subtype = internOrClone(v)
		case "session_id":
			if v.Type == gjson.String {
				if v.Str != n.sessionID {
					n.sessionID = strings.Clone(v.Str)
				}
				ev.SessionID = n.sessionID
			}
		case "uuid":
			ev.UUID = cloneStr(v)
		case "parent_tool_use_id":
			ev.ParentToolUseID = cloneStr(v)
		case "message":
			msg = v
		case "tool_use_result":
			tur = v
		case "tool_use_meta":
			meta = v
		case "mcp_servers":
			servers = v
		case "event":
			inner = v
		case "request":
			request = v
		}
		return true
	})

	n.edits = n.edits[:0]
	n.ev.atts = n.ev.atts[:0]
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
		n.streamEvent(inner)
	case TypeControlRequest:
		n.controlRequest(request)
	}

	ev.JSON = line
	if len(n.edits) > 0 {
		ev.JSON = n.apply(line)
		ev.Rewritten = true
	} else if sanitized {
		ev.Rewritten = true
	}
	if len(n.ev.atts) > 0 {
		ev.Attachments = slices.Clone(n.ev.atts)
	}
	return ev
}

// noise wraps a line that is not a JSON object.
func (n *Normalizer) noise(line []byte) Event {
	b := n.buf[:0]
	b = append(b, `{"type":"ccproxy","subtype":"noise","text":`...)
	b = appendJSONString(b, truncateUTF8(line, noiseTextBytes))
	if len(line) > noiseTextBytes {
		b = append(b, `,"truncated":true,"bytes":`...)
		b = strconv.AppendInt(b, int64(len(line)), 10)
	}
	b = append(b, '}')
	n.buf = b
	return Event{Type: TypeCCProxy, Subtype: SubtypeNoise, JSON: b, Rewritten: true}
}

// apply builds the rewritten line from n.edits.
func (n *Normalizer) apply(line []byte) []byte {
	slices.SortFunc(n.edits, func(a, b edit) int { return a.start - b.start })
	size := len(line)
	for _, e := range n.edits {
		size += len(e.repl) - (e.end - e.start)
	}
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

// replace records that value v (a part of the current line) becomes repl.
func (n *Normalizer) replace(v gjson.Result, repl []byte) {
	n.edits = append(n.edits, edit{start: v.Index, end: v.Index + len(v.Raw), repl: repl})
}

// setServers remembers the MCP server names of a system/init event.
func (n *Normalizer) setServers(servers gjson.Result) {
	n.servers = n.servers[:0]
	n.serverNames = make(map[string]string)
	servers.ForEach(func(_, s gjson.Result) bool {
		name := s.Get("name").String()
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
	msg.Get("content").ForEach(func(_, block gjson.Result) bool {
		if block.Get("type").Str != "tool_use" {
			return true
		}
		id := block.Get("id").Str
		var metaTool string
		if meta.IsArray() {
			meta.ForEach(func(_, m gjson.Result) bool {
				if m.Get("id").Str == id {
					metaTool = m.Get("tool_name").Str
					return false
				}
				return true
			})
		}
		ref, ok := n.resolveMCP(block.Get("name").Str, metaTool, "")
		if !ok {
			return true
		}
		n.remember(id, ref)
		n.annotate(block, ref)
		return true
	})
}

// streamEvent annotates the start of a streamed MCP tool_use block.
func (n *Normalizer) streamEvent(inner gjson.Result) {
	if inner.Get("type").Str != "content_block_start" {
		return
	}
	cb := inner.Get("content_block")
	if cb.Get("type").Str != "tool_use" {
		return
	}
	ref, ok := n.resolveMCP(cb.Get("name").Str, "", "")
	if !ok {
		return
	}
	n.remember(cb.Get("id").Str, ref)
	n.annotate(cb, ref)
}

// controlRequest annotates a can_use_tool permission request for an MCP tool.
func (n *Normalizer) controlRequest(req gjson.Result) {
	if req.Get("subtype").Str != "can_use_tool" {
		return
	}
	ref, ok := n.resolveMCP(req.Get("tool_name").Str, "", req.Get("mcp_server.name").Str)
	if !ok {
		return
	}
	n.annotate(req, ref)
}

// user normalizes the tool results of a user message and its
// tool_use_result.
func (n *Normalizer) user(msg, tur gjson.Result) {
	msg.Get("content").ForEach(func(_, block gjson.Result) bool {
		if block.Get("type").Str == "tool_result" {
			n.toolResult(block)
		}
		return true
	})
	if tur.Exists() {
		n.toolUseResult(tur)
	}
}

// toolResult normalizes one tool_result block.
func (n *Normalizer) toolResult(block gjson.Result) {
	content := block.Get("content")
	ref, isMCP := n.tools[block.Get("tool_use_id").Str]
	var out []byte
	var err error
	switch {
	case content.Type == gjson.String:
		// Already text.
	case content.IsArray() || content.IsObject():
		text, atts := n.flatten(content)
		out, err = sjson.SetBytes(sbytes(block.Raw), "content", text)
		if err == nil && len(atts) > 0 {
			out, err = sjson.SetRawBytes(out, "attachments", attachmentsJSON(atts))
		}
	default: // null, missing, number, bool
		text := ""
		if content.Exists() && content.Type != gjson.Null {
			text = content.Raw
		}
		out, err = sjson.SetBytes(sbytes(block.Raw), "content", text)
	}
	if err != nil {
		return // cannot happen on a validated object; leave the block as is
	}
	if isMCP {
		if out == nil {
			n.annotate(block, ref)
			return
		}
		out = setMCP(out, ref)
	}
	if out != nil {
		n.replace(block, out)
	}
}

// toolUseResult normalizes the tool_use_result side field of a user event:
// an array of content blocks becomes {"content": text, "attachments": [...]};
// an object's content array becomes text; other shapes (strings such as
// "Error: ...", built-in tools' result objects) are left alone.
func (n *Normalizer) toolUseResult(tur gjson.Result) {
	switch {
	case tur.IsArray() && isBlockArray(tur):
		text, atts := n.flatten(tur)
		out := append([]byte(`{"content":`), appendJSONString(nil, text)...)
		if len(atts) > 0 {
			out = append(out, `,"attachments":`...)
			out = append(out, attachmentsJSON(atts)...)
		}
		out = append(out, '}')
		n.replace(tur, out)
	case tur.IsObject():
		content := tur.Get("content")
		if !content.IsArray() || !isBlockArray(content) {
			return
		}
		text, atts := n.flatten(content)
		out, err := sjson.SetBytes(sbytes(tur.Raw), "content", text)
		if err == nil && len(atts) > 0 {
			out, err = sjson.SetRawBytes(out, "attachments", attachmentsJSON(atts))
		}
		if err == nil {
			n.replace(tur, out)
		}
	}
}

// annotate records that object v gets "mcp": ref, unless it has it already.
func (n *Normalizer) annotate(v gjson.Result, ref MCPRef) {
	want := mcpJSON(ref)
	if have := v.Get("mcp"); have.Exists() && have.Raw == string(want) {
		return
	}
	out, err := sjson.SetRawBytes(sbytes(v.Raw), "mcp", want)
	if err == nil {
		n.replace(v, out)
	}
}

func setMCP(obj []byte, ref MCPRef) []byte {
	out, err := sjson.SetRawBytes(obj, "mcp", mcpJSON(ref))
	if err != nil {
		return obj
	}
	return out
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
	ref = MCPRef{Server: strings.Clone(ref.Server), Tool: strings.Clone(ref.Tool)}
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
func isBlockArray(arr gjson.Result) bool {
	ok := true
	arr.ForEach(func(_, v gjson.Result) bool {
		ok = v.IsObject() && v.Get("type").Type == gjson.String
		return ok
	})
	return ok
}

func internOrClone(v gjson.Result) string {
	if v.Type != gjson.String {
		return ""
	}
	if s, ok := intern(v.Str); ok {
		return s
	}
	return strings.Clone(v.Str)
}

func cloneStr(v gjson.Result) string {
	if v.Type != gjson.String {
		return ""
	}
	return strings.Clone(v.Str)
}

// bstr views b as a string without copying; b must not change while the
// string is in use.
func bstr(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// sbytes views s as bytes without copying; the bytes must not be written.
func sbytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// appendJSONString appends s as a JSON string; invalid UTF-8 becomes U+FFFD.
func appendJSONString[T string | []byte](dst []byte, s T) []byte {
	return gjson.AppendJSONString(dst, string(s))
}

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

// tooDeep reports whether JSON text b nests arrays and objects deeper than
// limit. It runs before the validator, which recurses once per level.
func tooDeep(b []byte, limit int) bool {
	depth := 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			for {
				j := bytes.IndexByte(b[i+1:], '"')
				if j < 0 {
					return false
				}
				i += j + 1
				bs := 0
				for k := i - 1; k >= 0 && b[k] == '\\'; k-- {
					bs++
				}
				if bs%2 == 0 {
					break
				}
			}
		case '{', '[':
			depth++
			if depth > limit {
				return true
			}
		case '}', ']':
			depth--
		}
	}
	return false
}
