package mcpconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// MaxFileSize bounds every configuration file ccproxy reads. ~/.claude.json
// grows with the CLI's history, but not to this size; a larger file is
// reported as an error and not read.
const MaxFileSize = 64 << 20

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// readConfigFile reads path with the MaxFileSize bound. A missing file is
// (nil, false, nil).
func readConfigFile(path string) ([]byte, bool, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, true, err
	}
	if st.IsDir() {
		return nil, true, fmt.Errorf("is a directory")
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, true, err
	}
	if len(data) > MaxFileSize {
		return nil, true, fmt.Errorf("file is larger than %d MiB, not read", MaxFileSize>>20)
	}
	return data, true, nil
}

// doc is one JSON configuration file that passed the syntax check, with what
// is needed to turn byte offsets into lines and columns. The resolver keeps
// the last valid doc of each file, so it holds one copy of the text only
// (root's values point into it).
type doc struct {
	file  string
	text  string // without a UTF-8 BOM
	root  gjson.Result
	lines []int // offsets of the line starts, built on first use
}

// pos turns a byte offset into a 1-based line and a 1-based column counted
// in characters. A line index makes many positions in a large file cheap.
func (d *doc) pos(off int) (line, col int) {
	if d.lines == nil {
		d.lines = append(d.lines, 0)
		for i := 0; i < len(d.text); i++ {
			if d.text[i] == '\n' {
				d.lines = append(d.lines, i+1)
			}
		}
	}
	off = max(0, min(off, len(d.text)))
	line = sort.SearchInts(d.lines, off+1) // the first start after off
	return line, 1 + utf8.RuneCountInString(d.text[d.lines[line-1]:off])
}

// parseDoc checks that data is one JSON object. A syntax error is reported
// with the line and column computed from encoding/json's byte offset.
func parseDoc(file string, data []byte) (*doc, *FileError) {
	data = bytes.TrimPrefix(data, utf8BOM)
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &FileError{File: file, Message: "file is empty (want a JSON object)"}
	}
	d := &doc{file: file, text: string(data)}
	var raw json.RawMessage
	if gjson.Valid(d.text) {
		// fast path; encoding/json below finds the offset of an error
	} else if err := json.Unmarshal(data, &raw); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			off := int(se.Offset) - 1
			if se.Offset >= int64(len(data)) {
				off = len(data)
			}
			line, col := d.pos(off)
			return nil, &FileError{File: file, Line: line, Column: col,
				Message: fmt.Sprintf("not JSON at line %d, column %d: %s", line, col, syntaxMessage(se))}
		}
		return nil, &FileError{File: file, Message: "not JSON"}
	}
	d.root = gjson.Parse(d.text)
	if !d.root.IsObject() {
		return nil, d.errAt(firstNonSpace(data), "", "the top level must be a JSON object, not %s", kind(d.root))
	}
	return d, nil
}

// syntaxMessage is encoding/json's message without the character it
// quotes ("invalid character 'x' looking for beginning of value" becomes
// "invalid character looking for beginning of value"): a configuration
// file may hold secrets, and not even one of its bytes is shown.
func syntaxMessage(se *json.SyntaxError) string {
	msg := se.Error()
	if msg == "unexpected end of JSON input" {
		return "unexpected end of file"
	}
	if m := quotedChar.ReplaceAllString(msg, "invalid character"); m != msg {
		return m
	}
	if strings.Contains(msg, "'") || strings.Contains(msg, `"`) {
		return "syntax error" // a message that may quote the input
	}
	return msg
}

// quotedChar is the character encoding/json quotes in a syntax error,
// between single quotes: a character, or an escape (a quote, a backslash,
// a control character as \x01).
var quotedChar = regexp.MustCompile(`^invalid character '(?:\\.[^']*|[^'\\]+)'`)

func firstNonSpace(b []byte) int {
	for i, c := range b {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return i
		}
	}
	return 0
}

func (d *doc) errAt(off int, server, format string, args ...any) *FileError {
	line, col := d.pos(off)
	return &FileError{File: d.file, Line: line, Column: col, Server: server, Message: fmt.Sprintf(format, args...)}
}

// kind names a JSON value's type for messages; never its content.
func kind(r gjson.Result) string {
	switch r.Type {
	case gjson.Null:
		return "null"
	case gjson.False, gjson.True:
		return "a boolean"
	case gjson.Number:
		return "a number"
	case gjson.String:
		return "a string"
	}
	if r.IsArray() {
		return "an array"
	}
	return "an object"
}

// member returns the value of key in object obj, taking the last one when
// the key repeats (as JavaScript's JSON.parse does). Offsets stay absolute
// when obj came from the document root.
func member(obj gjson.Result, key string) gjson.Result {
	var out gjson.Result
	obj.ForEach(func(k, v gjson.Result) bool {
		if k.Str == key {
			out = v
		}
		return true
	})
	return out
}

// field is one member of a JSON object.
type field struct {
	key string
	val gjson.Result
}

// object is the members of a JSON object in order of first appearance, each
// with the value of its last occurrence (as JSON.parse keeps it).
type object []field

func members(obj gjson.Result) object {
	var o object
	var index map[string]int // for large objects only
	obj.ForEach(func(k, v gjson.Result) bool {
		if index == nil && len(o) >= 16 {
			index = make(map[string]int, 2*len(o))
			for i, f := range o {
				index[f.key] = i
			}
		}
		if index != nil {
			if i, ok := index[k.Str]; ok {
				o[i].val = v
				return true
			}
			index[k.Str] = len(o)
		} else {
			for i := range o {
				if o[i].key == k.Str {
					o[i].val = v
					return true
				}
			}
		}
		o = append(o, field{k.Str, v})
		return true
	})
	return o
}

// get returns the value of key, or a Result that does not Exist.
func (o object) get(key string) gjson.Result {
	for _, f := range o {
		if f.key == key {
			return f.val
		}
	}
	return gjson.Result{}
}

// definition is one valid server definition found in one file.
type definition struct {
	name      string
	scope     Scope
	source    string
	line, col int
	prio      int // within a scope: a higher value wins (later extra file, nearer .mcp.json)
	typ       Transport
	raw       json.RawMessage
	expanded  json.RawMessage
	secrets   *Secrets
	missing   []string
}

// serverList reads an "mcpServers" object: every valid server becomes a
// definition, every invalid one a FileError. path names the object in
// messages (for example `projects["/p"].mcpServers`).
func (d *doc) serverList(obj gjson.Result, path string, scope Scope, prio int, lookup LookupFunc) ([]definition, []FileError) {
	if !obj.Exists() {
		return nil, nil
	}
	if !obj.IsObject() {
		return nil, []FileError{*d.errAt(obj.Index, "", "%s must be an object, not %s", path, kind(obj))}
	}
	var defs []definition
	var errs []FileError
	for _, m := range members(obj) {
		def, ferr := d.server(m.key, m.val, lookup)
		if ferr != nil {
			errs = append(errs, *ferr)
			continue
		}
		def.scope, def.prio = scope, prio
		defs = append(defs, def)
	}
	return defs, errs
}

// server validates one server definition the way Claude Code 2.1.329 does
// (measured): no "type" or "stdio" needs a non-empty string "command",
// optional "args" (array of strings) and "env" (object of strings); "http",
// "streamable-http", "sse" and "ws" need a string "url" and optional
// "headers" (object of strings); any other "type" (including null) is
// invalid; a "url" without "type" and without "command" is invalid; other
// keys are allowed and kept.
func (d *doc) server(name string, v gjson.Result, lookup LookupFunc) (definition, *FileError) {
	fail := func(at gjson.Result, format string, args ...any) (definition, *FileError) {
		off := at.Index
		if !at.Exists() {
			off = v.Index
		}
		return definition{}, d.errAt(off, name, format, args...)
	}
	if !v.IsObject() {
		return fail(v, "the definition must be an object, not %s", kind(v))
	}
	def := definition{name: name, source: d.file, raw: json.RawMessage(v.Raw)}
	def.line, def.col = d.pos(v.Index)
	fields := members(v)

	typ := fields.get("type")
	switch {
	case !typ.Exists():
		def.typ = TransportStdio
	case typ.Type != gjson.String:
		return fail(typ, `"type" must be a string, not %s`, kind(typ))
	default:
		switch typ.Str {
		case "stdio":
			def.typ = TransportStdio
		case "http", "streamable-http":
			def.typ = TransportHTTP
		case "sse":
			def.typ = TransportSSE
		case "ws":
			def.typ = TransportWS
		default:
			return fail(typ, `unknown "type" %s (want "stdio", "http", "streamable-http", "sse" or "ws")`, quoteShort(typ.Str))
		}
	}

	if def.typ == TransportStdio {
		cmd := fields.get("command")
		if !cmd.Exists() {
			if fields.get("url").Exists() && !typ.Exists() {
				return fail(v, `has "url" but no "type"; add "type": "http", "sse" or "ws"`)
			}
			return fail(v, `"command" is missing (a stdio server needs one)`)
		}
		if cmd.Type != gjson.String {
			return fail(cmd, `"command" must be a string, not %s`, kind(cmd))
		}
		if cmd.Str == "" {
			return fail(cmd, `"command" is empty`)
		}
		if e := d.checkStringArray(fields.get("args"), "args", name); e != nil {
			return definition{}, e
		}
		if e := d.checkStringMap(fields.get("env"), "env", name); e != nil {
			return definition{}, e
		}
	} else {
		u := fields.get("url")
		if !u.Exists() {
			return fail(v, `"url" is missing (a %s server needs one)`, def.typ)
		}
		if u.Type != gjson.String {
			return fail(u, `"url" must be a string, not %s`, kind(u))
		}
		if e := d.checkStringMap(fields.get("headers"), "headers", name); e != nil {
			return definition{}, e
		}
	}

	def.expanded, def.missing = expandDefinition(fields, len(v.Raw), def.typ, lookup)
	def.secrets = definitionSecrets(fields, lookup)
	// Its redacted view is made by resolve, once the secrets of every
	// server are known.
	return def, nil
}

func (d *doc) checkStringArray(a gjson.Result, key, server string) *FileError {
	if !a.Exists() {
		return nil
	}
	if !a.IsArray() {
		return d.errAt(a.Index, server, "%q must be an array of strings, not %s", key, kind(a))
	}
	var bad *FileError
	i := 0
	a.ForEach(func(_, el gjson.Result) bool {
		if el.Type != gjson.String {
			bad = d.errAt(el.Index, server, "%s[%d] must be a string, not %s", key, i, kind(el))
			return false
		}
		i++
		return true
	})
	return bad
}

func (d *doc) checkStringMap(m gjson.Result, key, server string) *FileError {
	if !m.Exists() {
		return nil
	}
	if !m.IsObject() {
		return d.errAt(m.Index, server, "%q must be an object of strings, not %s", key, kind(m))
	}
	var bad *FileError
	m.ForEach(func(k, el gjson.Result) bool {
		if el.Type != gjson.String {
			bad = d.errAt(el.Index, server, "%s.%s must be a string, not %s", key, quoteShort(k.Str), kind(el))
			return false
		}
		return true
	})
	return bad
}

// quoteShort quotes a name or keyword for a message, cut to 40 characters.
func quoteShort(s string) string {
	if utf8.RuneCountInString(s) > 40 {
		r := []rune(s)
		s = string(r[:40]) + "…"
	}
	return fmt.Sprintf("%q", s)
}

// stringList reads an array of strings setting; invalid elements are
// reported and skipped.
func (d *doc) stringList(obj gjson.Result, key, path string) ([]string, []FileError) {
	a := member(obj, key)
	if !a.Exists() {
		return nil, nil
	}
	if !a.IsArray() {
		return nil, []FileError{*d.errAt(a.Index, "", "%s%s must be an array of strings, not %s", path, key, kind(a))}
	}
	var out []string
	var errs []FileError
	i := 0
	a.ForEach(func(_, el gjson.Result) bool {
		if el.Type != gjson.String {
			errs = append(errs, *d.errAt(el.Index, "", "%s%s[%d] must be a string, not %s", path, key, i, kind(el)))
		} else {
			out = append(out, el.Str)
		}
		i++
		return true
	})
	return out, errs
}

func (d *doc) boolean(obj gjson.Result, key, path string) (bool, []FileError) {
	b := member(obj, key)
	if !b.Exists() {
		return false, nil
	}
	if b.Type != gjson.True && b.Type != gjson.False {
		return false, []FileError{*d.errAt(b.Index, "", "%s%s must be true or false, not %s", path, key, kind(b))}
	}
	return b.Bool(), nil
}

// expandDefinition builds the definition ccproxy passes to claude: ${VAR}s
// expanded in command, args, env values, url and header values; "type"
// explicit and first; stdio "args" always present (mcp_set_servers rejects a
// stdio server without it); other keys kept as written, in their order. v
// must have passed validation.
func expandDefinition(fields object, size int, typ Transport, lookup LookupFunc) (json.RawMessage, []string) {
	var missing []string
	exp := func(s string) string {
		out, miss := Expand(s, lookup)
		for _, n := range miss {
			missing = appendUnique(missing, n)
		}
		return out
	}
	b := make([]byte, 0, size+32)
	b = append(b, `{"type":`...)
	b = appendString(b, string(typ))
	stdio := typ == TransportStdio
	for _, f := range fields {
		k, val := f.key, f.val
		if k == "type" {
			continue
		}
		b = append(b, ',')
		b = appendString(b, k)
		b = append(b, ':')
		switch {
		case stdio && k == "command", !stdio && k == "url":
			b = appendString(b, exp(val.Str))
		case stdio && k == "args":
			b = appendStrings(b, val, exp)
		case stdio && k == "env", !stdio && k == "headers":
			b = appendStringMap(b, val, exp)
		default:
			b = append(b, val.Raw...)
		}
	}
	if stdio && !fields.get("args").Exists() {
		b = append(b, `,"args":[]`...)
	}
	return append(b, '}'), missing
}

// appendStrings writes the array of strings arr, each passed through f.
func appendStrings(b []byte, arr gjson.Result, f func(string) string) []byte {
	b = append(b, '[')
	i := 0
	arr.ForEach(func(_, el gjson.Result) bool {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, f(el.Str))
		i++
		return true
	})
	return append(b, ']')
}

// appendStringMap writes the object of strings obj (the last value of a
// repeated key), each value passed through f.
func appendStringMap(b []byte, obj gjson.Result, f func(string) string) []byte {
	b = append(b, '{')
	for i, m := range members(obj) {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, m.key)
		b = append(b, ':')
		b = appendString(b, f(m.val.Str))
	}
	return append(b, '}')
}

// appendString writes s as a JSON string. Invalid UTF-8 becomes U+FFFD;
// U+2028 and U+2029 are escaped so that the output is one line everywhere.
func appendString(b []byte, s string) []byte {
	return gjson.AppendJSONString(b, s)
}
