package mcpconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
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
// is needed to turn byte offsets into lines and columns.
type doc struct {
	file string
	data []byte // without a UTF-8 BOM
	root gjson.Result
}

// parseDoc checks that data is one JSON object. A syntax error is reported
// with the line and column computed from encoding/json's byte offset.
func parseDoc(file string, data []byte) (*doc, *FileError) {
	data = bytes.TrimPrefix(data, utf8BOM)
	d := &doc{file: file, data: data}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &FileError{File: file, Message: "file is empty (want a JSON object)"}
	}
	var raw json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			off := int(se.Offset) - 1
			if se.Offset >= int64(len(data)) {
				off = len(data)
			}
			e := d.errAt(off, "", "invalid JSON: %s", syntaxMessage(se))
			return nil, &e
		}
		return nil, &FileError{File: file, Message: "invalid JSON: " + err.Error()}
	}
	d.root = gjson.ParseBytes(data)
	if !d.root.IsObject() {
		e := d.errAt(firstNonSpace(data), "", "the top level must be a JSON object, not %s", kind(d.root))
		return nil, &e
	}
	return d, nil
}

// syntaxMessage is encoding/json's message without its "json: " style
// prefixes; it names at most one character of the input.
func syntaxMessage(se *json.SyntaxError) string {
	msg := se.Error()
	if msg == "unexpected end of JSON input" {
		return "unexpected end of file"
	}
	return msg
}

func firstNonSpace(b []byte) int {
	for i, c := range b {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return i
		}
	}
	return 0
}

// position turns a byte offset into a 1-based line and a 1-based column
// counted in characters.
func position(data []byte, off int) (line, col int) {
	if off < 0 {
		off = 0
	}
	if off > len(data) {
		off = len(data)
	}
	line = 1 + bytes.Count(data[:off], []byte{'\n'})
	start := bytes.LastIndexByte(data[:off], '\n') + 1
	col = 1 + utf8.RuneCount(data[start:off])
	return line, col
}

func (d *doc) errAt(off int, server, format string, args ...any) FileError {
	line, col := position(d.data, off)
	return FileError{File: d.file, Line: line, Column: col, Server: server, Message: fmt.Sprintf(format, args...)}
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

// members returns the members of object obj in order of first appearance,
// with the value of the last occurrence of each key.
func members(obj gjson.Result) (keys []string, vals map[string]gjson.Result) {
	vals = map[string]gjson.Result{}
	obj.ForEach(func(k, v gjson.Result) bool {
		if _, seen := vals[k.Str]; !seen {
			keys = append(keys, k.Str)
		}
		vals[k.Str] = v
		return true
	})
	return keys, vals
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
	redacted  json.RawMessage
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
		return nil, []FileError{d.errAt(obj.Index, "", "%s must be an object, not %s", path, kind(obj))}
	}
	var defs []definition
	var errs []FileError
	names, vals := members(obj)
	for _, name := range names {
		v := vals[name]
		def, ferr := d.server(name, v, lookup)
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
		e := d.errAt(off, name, format, args...)
		return definition{}, &e
	}
	if !v.IsObject() {
		return fail(v, "the definition must be an object, not %s", kind(v))
	}
	def := definition{name: name, source: d.file, raw: json.RawMessage(v.Raw)}
	def.line, def.col = position(d.data, v.Index)

	typ := member(v, "type")
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
		cmd := member(v, "command")
		if !cmd.Exists() {
			if member(v, "url").Exists() && !typ.Exists() {
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
		if e := d.checkStringArray(v, "args", name); e != nil {
			return definition{}, e
		}
		if e := d.checkStringMap(v, "env", name); e != nil {
			return definition{}, e
		}
	} else {
		u := member(v, "url")
		if !u.Exists() {
			return fail(v, `"url" is missing (a %s server needs one)`, def.typ)
		}
		if u.Type != gjson.String {
			return fail(u, `"url" must be a string, not %s`, kind(u))
		}
		if e := d.checkStringMap(v, "headers", name); e != nil {
			return definition{}, e
		}
	}

	var err error
	def.expanded, def.missing, err = expandDefinition(def.raw, def.typ, lookup)
	if err != nil {
		return fail(v, "cannot normalize the definition: %v", err)
	}
	def.redacted, err = redactDefinition(def.raw)
	if err != nil {
		return fail(v, "cannot redact the definition: %v", err)
	}
	return def, nil
}

func (d *doc) checkStringArray(v gjson.Result, key, server string) *FileError {
	a := member(v, key)
	if !a.Exists() {
		return nil
	}
	if !a.IsArray() {
		e := d.errAt(a.Index, server, "%q must be an array of strings, not %s", key, kind(a))
		return &e
	}
	var bad *FileError
	i := 0
	a.ForEach(func(_, el gjson.Result) bool {
		if el.Type != gjson.String {
			e := d.errAt(el.Index, server, "%s[%d] must be a string, not %s", key, i, kind(el))
			bad = &e
			return false
		}
		i++
		return true
	})
	return bad
}

func (d *doc) checkStringMap(v gjson.Result, key, server string) *FileError {
	m := member(v, key)
	if !m.Exists() {
		return nil
	}
	if !m.IsObject() {
		e := d.errAt(m.Index, server, "%q must be an object of strings, not %s", key, kind(m))
		return &e
	}
	var bad *FileError
	m.ForEach(func(k, el gjson.Result) bool {
		if el.Type != gjson.String {
			e := d.errAt(el.Index, server, "%s.%s must be a string, not %s", key, quoteShort(k.Str), kind(el))
			bad = &e
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
		return nil, []FileError{d.errAt(a.Index, "", "%s%s must be an array of strings, not %s", path, key, kind(a))}
	}
	var out []string
	var errs []FileError
	i := 0
	a.ForEach(func(_, el gjson.Result) bool {
		if el.Type != gjson.String {
			errs = append(errs, d.errAt(el.Index, "", "%s%s[%d] must be a string, not %s", path, key, i, kind(el)))
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
		return false, []FileError{d.errAt(b.Index, "", "%s%s must be true or false, not %s", path, key, kind(b))}
	}
	return b.Bool(), nil
}

// expandDefinition builds the definition ccproxy passes to claude: ${VAR}s
// expanded in command, args, env values, url and header values; "type"
// explicit; stdio "args" always present (mcp_set_servers rejects a stdio
// server without it); other keys kept as written. Keys come out sorted.
func expandDefinition(raw json.RawMessage, typ Transport, lookup LookupFunc) (json.RawMessage, []string, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, nil, err
	}
	var missing []string
	exp := func(s string) string {
		out, miss := Expand(s, lookup)
		for _, n := range miss {
			missing = appendUnique(missing, n)
		}
		return out
	}
	set := func(key string, v any) error {
		b, err := marshal(v)
		if err != nil {
			return err
		}
		m[key] = b
		return nil
	}
	if err := set("type", string(typ)); err != nil {
		return nil, nil, err
	}
	if typ == TransportStdio {
		var cmd string
		var args []string
		_ = json.Unmarshal(m["command"], &cmd)
		if a, ok := m["args"]; ok {
			_ = json.Unmarshal(a, &args)
		}
		outArgs := make([]string, len(args))
		cmd = exp(cmd)
		for i, a := range args {
			outArgs[i] = exp(a)
		}
		if err := set("command", cmd); err != nil {
			return nil, nil, err
		}
		if err := set("args", outArgs); err != nil {
			return nil, nil, err
		}
		if e, ok := m["env"]; ok {
			if err := expandMap(m, "env", e, exp, set); err != nil {
				return nil, nil, err
			}
		}
	} else {
		var u string
		_ = json.Unmarshal(m["url"], &u)
		if err := set("url", exp(u)); err != nil {
			return nil, nil, err
		}
		if h, ok := m["headers"]; ok {
			if err := expandMap(m, "headers", h, exp, set); err != nil {
				return nil, nil, err
			}
		}
	}
	out, err := marshal(m)
	return out, missing, err
}

func expandMap(m map[string]json.RawMessage, key string, raw json.RawMessage, exp func(string) string, set func(string, any) error) error {
	var in map[string]string
	if err := json.Unmarshal(raw, &in); err != nil {
		return err
	}
	out := make(map[string]string, len(in))
	keys := make([]string, 0, len(in))
	for k := range in {
		keys = append(keys, k)
	}
	sort.Strings(keys) // expand in a stable order so missing names are stable
	for _, k := range keys {
		out[k] = exp(in[k])
	}
	return set(key, out)
}

// marshal is json.Marshal without HTML escaping and without the trailing
// newline.
func marshal(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}
