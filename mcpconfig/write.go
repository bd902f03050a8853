package mcpconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/ccproxy/ccproxy/internal/privdir"
)

// Writing server definitions, as `claude mcp add/add-json/remove` do
// (measured on 2.1.329, docs/CLI-NOTES.md): user → ~/.claude.json
// mcpServers, local → ~/.claude.json projects["<dir>"].mcpServers, project
// → <dir>/.mcp.json mcpServers. Every write goes through updateJSONFile
// (locked across processes, atomic, other keys and the formatting kept).

// ErrBadInput is matched (errors.Is) by the errors of bad input to the
// writing functions: an invalid name, scope, transport, flag value or
// definition value. Their text is the message for the user.
var ErrBadInput = errors.New("bad input")

type inputError string

func (e inputError) Error() string        { return string(e) }
func (e inputError) Is(target error) bool { return target == ErrBadInput }

func badInput(format string, args ...any) error { return inputError(fmt.Sprintf(format, args...)) }

// WritableScopes are the scopes AddServer and RemoveServer write, in the
// order the CLI lists them.
var WritableScopes = []Scope{ScopeLocal, ScopeProject, ScopeUser}

var nameRE = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)

// CheckName checks the name of a server being defined: written to a file
// (AddServer, so `ccproxy mcp add|add-json`, mcp/add, mcp/update),
// probed unsaved (ResolveUnsaved, mcp/test) or sent by a client
// (ParseClientServers: session/create's and ACP's mcpServers). The rule
// is the CLI's, measured on 2.1.329 and 2.1.332 (docs/CLI-NOTES.md): one
// or more ASCII letters, digits, hyphens and underscores, any length,
// with the CLI's message; and, stricter than the CLI, which accepts "-h"
// or "--version" given after "--", no "-" first (CheckNameRef): such a
// name reads as an option on every command line that carries it.
func CheckName(name string) error {
	if err := CheckNameRef(name); err != nil {
		return err
	}
	if !nameRE.MatchString(name) {
		return badInput("Invalid name %s. Names can only contain letters, numbers, hyphens, and underscores.", name)
	}
	return nil
}

// CheckNameRef checks the name of a server that is only referred to, as
// configured (removed, approved, rejected, disabled, signed in or out,
// toggled, reconnected): a name someone wrote in a file by hand may break
// CheckName's rule ("a.b") and is still accepted, but never an empty one
// or one starting with "-", which ccproxy refuses everywhere. (Command
// lines that carry a name put "--" before it all the same.)
func CheckNameRef(name string) error {
	switch {
	case name == "":
		return badInput("Invalid name: the server name is empty")
	case strings.HasPrefix(name, "-"):
		return badInput("Invalid name %s. A server name must not start with \"-\" (it would read as an option); rename the server", name)
	}
	return nil
}

// ParseScope parses a --scope value; "" is the CLI's default, local.
func ParseScope(s string) (Scope, error) {
	switch Scope(s) {
	case "":
		return ScopeLocal, nil
	case ScopeLocal, ScopeProject, ScopeUser:
		return Scope(s), nil
	}
	return "", badInput("Invalid scope: %s. Must be one of: local, user, project", s)
}

// ParseTransport parses a --transport value; "" is stdio. "streamable-http"
// is http, as in the CLI.
func ParseTransport(s string) (Transport, error) {
	switch s {
	case "", "stdio":
		return TransportStdio, nil
	case "http", "streamable-http":
		return TransportHTTP, nil
	case "sse":
		return TransportSSE, nil
	}
	return "", badInput("Invalid transport type: %s. Must be one of: stdio, sse, http (or streamable-http)", s)
}

// AddSpec is what `mcp add` is given on its command line.
type AddSpec struct {
	Transport    Transport // stdio, http or sse
	CommandOrURL string
	Args         []string // stdio only
	Env          []string // "KEY=VALUE", stdio only
	Headers      []string // "Name: value", http and sse only
}

// BuildDefinition makes the definition `claude mcp add` writes for spec:
// {"type":"stdio","command","args","env"} (env {} when none) or
// {"type","url"} plus "headers" when given. It refuses, more strictly than
// the CLI (which writes or ignores these): -H on a stdio server, -e on a
// remote one, a stdio command that is a URL or a relative path with a
// folder ("./srv.js": it would depend on the CLI's working directory), and
// a URL that is not absolute http(s).
func BuildDefinition(spec AddSpec) (json.RawMessage, error) {
	if spec.CommandOrURL == "" {
		return nil, badInput("missing the command (stdio) or URL (http, sse)")
	}
	type kv struct{ k, v string }
	var env, headers []kv
	for _, e := range spec.Env {
		k, v, ok := strings.Cut(e, "=")
		if !ok || k == "" {
			return nil, badInput("Invalid environment variable format: %s, environment variables should be added as: -e KEY1=value1 -e KEY2=value2", e)
		}
		env = append(env, kv{k, v})
	}
	for _, h := range spec.Headers {
		k, v, ok := strings.Cut(h, ":")
		k = strings.TrimSpace(k)
		if !ok || k == "" || strings.ContainsAny(k, " \t") {
			return nil, badInput("Invalid header format: %q. Expected format: \"Header-Name: value\"", h)
		}
		headers = append(headers, kv{k, strings.TrimSpace(v)})
	}
	// Objects are written in the order given (a Go map would sort them).
	object := func(list []kv) json.RawMessage {
		var b bytes.Buffer
		b.WriteByte('{')
		for i, p := range list {
			if i > 0 {
				b.WriteByte(',')
			}
			k, _ := json.Marshal(p.k)
			v, _ := json.Marshal(p.v)
			b.Write(k)
			b.WriteByte(':')
			b.Write(v)
		}
		b.WriteByte('}')
		return b.Bytes()
	}
	switch spec.Transport {
	case TransportStdio, "":
		if len(headers) > 0 {
			return nil, badInput("-H/--header is for http and sse servers; a stdio server takes -e KEY=VALUE")
		}
		cmd := spec.CommandOrURL
		if u, err := url.Parse(cmd); err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
			return nil, badInput("command %q is a URL: add --transport http (or sse) for a remote server", RedactURL(cmd))
		}
		if err := checkCommand(cmd); err != nil {
			return nil, err
		}
		args := spec.Args
		if args == nil {
			args = []string{}
		}
		return marshalOrdered([]kv2{{"type", "stdio"}, {"command", cmd}, {"args", args}, {"env", object(env)}}), nil
	case TransportHTTP, TransportSSE:
		if len(env) > 0 {
			return nil, badInput("-e/--env is for stdio servers; an http or sse server takes -H \"Header: value\"")
		}
		if len(spec.Args) > 0 {
			return nil, badInput("unexpected argument %q after the URL of a %s server", spec.Args[0], spec.Transport)
		}
		if err := checkURL(spec.CommandOrURL); err != nil {
			return nil, err
		}
		fields := []kv2{{"type", string(spec.Transport)}, {"url", spec.CommandOrURL}}
		if len(headers) > 0 {
			fields = append(fields, kv2{"headers", object(headers)})
		}
		return marshalOrdered(fields), nil
	}
	return nil, badInput("Invalid transport type: %s. Must be one of: stdio, sse, http (or streamable-http)", spec.Transport)
}

// checkCommand refuses a relative command path with a folder in it.
func checkCommand(cmd string) error {
	if strings.ContainsAny(cmd, `/\`) && !filepath.IsAbs(cmd) && !strings.HasPrefix(cmd, "${") {
		return badInput("command %q is a relative path: it would run relative to whatever directory claude starts in; give an absolute path (or a command on PATH)", cmd)
	}
	return nil
}

// checkURL accepts an absolute http(s) or ws(s) URL, or one built from ${VAR}.
func checkURL(raw string) error {
	if strings.HasPrefix(raw, "${") {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "ws" && u.Scheme != "wss") {
		return badInput("url %q is not an absolute http(s) URL", RedactURL(raw))
	}
	return nil
}

type kv2 struct {
	k string
	v any
}

func marshalOrdered(fields []kv2) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range fields {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(f.k)
		b.Write(k)
		b.WriteByte(':')
		if raw, ok := f.v.(json.RawMessage); ok {
			b.Write(raw)
		} else {
			v, _ := json.Marshal(f.v)
			b.Write(v)
		}
	}
	b.WriteByte('}')
	return b.Bytes()
}

// The keys the CLI keeps for each transport, in the order it writes them
// (its schema's; 2.1.329). Other keys are dropped, as `claude mcp add-json`
// drops them.
var keptKeys = map[Transport][]string{
	TransportStdio: {"type", "command", "args", "env", "timeout", "alwaysLoad", "bareElicitationCapability", "role"},
	TransportHTTP: {"type", "url", "headers", "headersHelper", "oauth", "timeout", "request_timeout_ms", "tools", "alwaysLoad",
		"displayName", "bareElicitationCapability", "discoveryCache", "role", "toolPermissions"},
	TransportWS: {"type", "url", "headers", "headersHelper", "timeout", "alwaysLoad", "bareElicitationCapability", "role"},
}

func init() { keptKeys[TransportSSE] = keptKeys[TransportHTTP] }

// NormalizeDefinition validates one server definition given as JSON (`mcp
// add-json`, the protocol's mcp/add) with the same checks and messages as a
// definition in a file (FileError with the line and column in data; the
// file is named source), and returns what the CLI writes for it: the known
// keys of its transport in the CLI's order ("type" "streamable-http"
// becomes "http"; a stdio server gets "args": [] when it has none), unknown
// keys dropped (their names in dropped). A stdio command that is a relative
// path with a folder, and a remote url that is not absolute, are refused.
func NormalizeDefinition(source, name string, data []byte) (def json.RawMessage, typ Transport, dropped []string, err error) {
	if strings.TrimSpace(string(data)) == "" {
		return nil, "", nil, &FileError{File: source, Server: name, Message: "the definition is empty (want a JSON object)"}
	}
	d, ferr := parseDoc(source, data)
	if ferr != nil {
		ferr.Server = name
		if strings.HasPrefix(ferr.Message, "the top level must be") {
			ferr.Message = strings.Replace(ferr.Message, "the top level", "the definition", 1)
		}
		return nil, "", nil, ferr
	}
	if e := d.duplicateKey(); e != nil {
		e.Server = name
		return nil, "", nil, e
	}
	parsed, ferr := d.server(name, d.root, func(string) (string, bool) { return "", false })
	if ferr != nil {
		return nil, "", nil, ferr
	}
	typ = parsed.typ
	fields := members(d.root)
	if typ == TransportStdio {
		if err := checkCommand(fields.get("command").Str); err != nil {
			return nil, "", nil, d.errAt(fields.get("command").Index, name, "%s", err.Error())
		}
	} else if err := checkURL(fields.get("url").Str); err != nil {
		return nil, "", nil, d.errAt(fields.get("url").Index, name, "%s", err.Error())
	}
	var out []kv2
	for _, k := range keptKeys[typ] {
		v := fields.get(k)
		switch {
		case k == "type" && v.Exists() && v.Str == "streamable-http":
			out = append(out, kv2{k, "http"})
		case v.Exists():
			out = append(out, kv2{k, json.RawMessage(v.Raw)})
		case k == "args" && typ == TransportStdio:
			out = append(out, kv2{k, []string{}})
		}
	}
	for _, f := range fields {
		if !slices.Contains(keptKeys[typ], f.key) {
			dropped = append(dropped, f.key)
		}
	}
	return marshalOrdered(out), typ, dropped, nil
}

// Location is where one scope keeps its servers.
type Location struct {
	Scope Scope  `json:"scope"`
	File  string `json:"file"`
	// Project is the projects key in ~/.claude.json (local scope only).
	Project string `json:"project,omitempty"`
}

// String is the CLI's "File modified:" text: the file, and for local
// "[project: <dir>]".
func (l Location) String() string {
	if l.Project != "" {
		return fmt.Sprintf("%s [project: %s]", l.File, l.Project)
	}
	return l.File
}

// Describe is the CLI's description of a scope in `mcp remove`'s list.
func (l Location) Describe() string {
	switch l.Scope {
	case ScopeLocal:
		return fmt.Sprintf("Local config (private to you in this project) (%s)", l)
	case ScopeProject:
		return fmt.Sprintf("Project config (shared via .mcp.json) (%s)", l)
	case ScopeUser:
		return fmt.Sprintf("User config (available in all your projects) (%s)", l)
	}
	return string(l.Scope)
}

// path returns the sjson path of the server object in the file.
func (l Location) serversPath() string {
	if l.Scope == ScopeLocal {
		return "projects." + pathKey(l.Project) + ".mcpServers"
	}
	return "mcpServers"
}

func (l Location) serversIn(root gjson.Result) gjson.Result {
	if l.Scope == ScopeLocal {
		return member(member(member(root, "projects"), l.Project), "mcpServers")
	}
	return member(root, "mcpServers")
}

// pathKey is key as one part of a gjson/sjson path: gjson.Escape, and a
// leading ':' escaped too (sjson reads it as "force an object key" and
// drops it, so a server named ":x" would be written as "x").
func pathKey(key string) string {
	e := gjson.Escape(key)
	if strings.HasPrefix(e, ":") {
		return `\` + e
	}
	return e
}

// LocationOf returns where scope keeps its servers for opts (ProjectDir
// with symlinks resolved, as the CLI keys projects).
func LocationOf(opts Options, scope Scope) (Location, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return Location{}, err
	}
	switch scope {
	case ScopeLocal:
		return Location{Scope: scope, File: filepath.Join(o.HomeDir, ".claude.json"), Project: o.ProjectDir}, nil
	case ScopeUser:
		return Location{Scope: scope, File: filepath.Join(o.HomeDir, ".claude.json")}, nil
	case ScopeProject:
		return Location{Scope: scope, File: filepath.Join(o.ProjectDir, ".mcp.json")}, nil
	}
	return Location{}, badInput("Invalid scope: %s. Must be one of: local, user, project", scope)
}

// styleFor is how the file of a scope's location is written when new: as the CLI
// writes ~/.claude.json and .mcp.json (two spaces, no final newline);
// ~/.claude.json private, and written under the CLI's own lock of it too
// (lockCLIConfig), so that a claude's save of it never overwrites ccproxy's
// change. A project's .mcp.json must not link outside the project (confine).
func styleFor(loc Location) fileStyle {
	if loc.Scope == ScopeProject {
		return fileStyle{newMode: 0o644, within: filepath.Dir(loc.File)}
	}
	return fileStyle{newMode: 0o600, cliLock: true}
}

// ExistsError is AddServer's refusal of a name already defined in the scope.
type ExistsError struct {
	Name  string
	Scope Scope
}

func (e *ExistsError) Error() string {
	return fmt.Sprintf("MCP server %s already exists in %s config", e.Name, e.Scope)
}

// newProjectEntry is what the CLI writes for a project key it creates in
// ~/.claude.json (2.1.329), with the servers.
func newProjectEntry(servers json.RawMessage) json.RawMessage {
	return marshalOrdered([]kv2{
		{"allowedTools", []string{}}, {"mcpContextUris", []string{}}, {"mcpServers", servers},
		{"enabledMcpjsonServers", []string{}}, {"disabledMcpjsonServers", []string{}},
		{"hasTrustDialogAccepted", false}, {"hasClaudeMdExternalIncludesApproved", false},
		{"hasClaudeMdExternalIncludesWarningShown", false},
	})
}

// WriteMode says what AddServer does with a name already in the scope.
type WriteMode int

// Write modes.
const (
	AddNew       WriteMode = iota // refuse a name already there (*ExistsError), as `claude mcp add`
	AddOrReplace                  // replace it (--force)
	// ReplaceOnly refuses a name not there (*MissingServerError): an
	// update. Masked placeholders in the new definition keep the stored
	// values they stand for (KeepMasked), read under the file's lock.
	ReplaceOnly
)

// AddServer writes definition def (BuildDefinition, NormalizeDefinition)
// of name into scope, as `claude mcp add` does, a name already there
// handled as mode says; the file is locked, read, checked
// (not valid JSON: error, file unchanged), edited and replaced atomically,
// every other key and its formatting kept. def is validated again as a file
// definition would be. It returns where it wrote.
func AddServer(opts Options, scope Scope, name string, def json.RawMessage, mode WriteMode) (Location, error) {
	if err := CheckName(name); err != nil {
		return Location{}, err
	}
	loc, err := LocationOf(opts, scope)
	if err != nil {
		return Location{}, err
	}
	norm, _, _, err := NormalizeDefinition("definition", name, def)
	if err != nil {
		return Location{}, err
	}
	if !bytes.Equal(compactJSON(norm), compactJSON(def)) {
		return Location{}, fmt.Errorf("server %q: the definition has keys the CLI drops (normalize it first)", name)
	}
	// The secrets every view masks, for KeepMasked to know what a client
	// was shown (read before the lock: they only widen what is accepted).
	var sec *Secrets
	if mode == ReplaceOnly && bytes.Contains(def, []byte(Mask)) {
		if cfg, err := Resolve(opts); err == nil {
			sec = cfg.Secrets()
		}
	}
	_, err = updateJSONFile(loc.File, styleFor(loc), func(d *doc, exists bool) ([]byte, error) {
		servers := loc.serversIn(d.root)
		if servers.Exists() && !servers.IsObject() {
			return nil, d.errAt(servers.Index, "", "mcpServers must be an object, not %s", kind(servers))
		}
		switch there := member(servers, name).Exists(); {
		case there && mode == AddNew:
			return nil, &ExistsError{Name: name, Scope: scope}
		case !there && mode == ReplaceOnly:
			return nil, &MissingServerError{Name: name, Scope: scope}
		case mode == ReplaceOnly:
			kept, err := KeepMasked(name, json.RawMessage(member(servers, name).Raw), def, sec)
			if err != nil {
				return nil, err
			}
			def = kept
		}
		text := []byte(d.text)
		if scope == ScopeLocal {
			entry, err := d.projectEntry(loc.Project)
			if err != nil {
				return nil, err
			}
			if !entry.Exists() {
				servers := marshalOrdered([]kv2{{name, def}})
				return sjson.SetRawBytes(text, "projects."+pathKey(loc.Project), newProjectEntry(servers))
			}
		}
		return sjson.SetRawBytes(text, loc.serversPath()+"."+pathKey(name), def)
	})
	if err != nil {
		var ee *ExistsError
		if errors.As(err, &ee) {
			return loc, ee
		}
		var me *MissingServerError
		if errors.As(err, &me) {
			return loc, me
		}
		return loc, err
	}
	return loc, nil
}

// ResolveUnsaved resolves the configuration of opts with def (checked and
// normalized by NormalizeDefinition) added as an extra server named name,
// as if given with --mcp-config (extra wins over every file scope): what
// "test connection" probes before saving. The definition is written to a
// private temporary file (0600) for the resolution only.
func ResolveUnsaved(opts Options, name string, def json.RawMessage) (*Config, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	norm, _, _, err := NormalizeDefinition("definition", name, def)
	if err != nil {
		return nil, err
	}
	// In the process's private directory, like MCPConfigFile: the
	// definition may hold secrets, and a killed ccproxy's leftovers are
	// removed at the next start (RemoveStale).
	f, err := createPrivate("ccproxy-mcp-test-*.json")
	if err != nil {
		return nil, fmt.Errorf("mcpconfig: test %q: %w", name, err)
	}
	defer os.Remove(f.Name())
	if err := privdir.OwnerOnly(f.Name()); err != nil { // Windows: an ACL for this user alone
		f.Close()
		return nil, fmt.Errorf("mcpconfig: test %q: %w", name, err)
	}
	_, err = f.Write(marshalOrdered([]kv2{{"mcpServers", marshalOrdered([]kv2{{name, norm}})}}))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("mcpconfig: test %q: %w", name, err)
	}
	opts.Extra = append(slices.Clone(opts.Extra), f.Name())
	return Resolve(opts)
}

func compactJSON(b []byte) []byte {
	var out bytes.Buffer
	if json.Compact(&out, b) != nil {
		return b
	}
	return out.Bytes()
}

// Found is one definition of a name in a writable scope.
type Found struct {
	Location
	Definition json.RawMessage `json:"definition"`
}

// FindServer returns the definitions of name in the writable scopes, in the
// CLI's order (local, project, user). A file that cannot be read or is not
// valid JSON is an error naming it.
func FindServer(opts Options, name string) ([]Found, error) {
	if err := CheckNameRef(name); err != nil {
		return nil, err
	}
	var out []Found
	for _, scope := range WritableScopes {
		loc, err := LocationOf(opts, scope)
		if err != nil {
			return nil, err
		}
		data, exists, err := readConfigFile(loc.File)
		if err != nil {
			return nil, fmt.Errorf("read %s: %s", loc.File, errorText(err))
		}
		if !exists {
			continue
		}
		d, ferr := parseDoc(loc.File, data)
		if ferr != nil {
			return nil, ferr
		}
		if v := member(loc.serversIn(d.root), name); v.Exists() {
			out = append(out, Found{Location: loc, Definition: json.RawMessage(v.Raw)})
		}
	}
	return out, nil
}

// ScopesError is RemoveServer's refusal, without a scope, of a name defined
// in several scopes.
type ScopesError struct {
	Name  string
	Found []Location
}

func (e *ScopesError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "MCP server %q exists in multiple scopes:\n", e.Name)
	for _, l := range e.Found {
		fmt.Fprintf(&b, "  - %s\n", l.Describe())
	}
	b.WriteString("\nTo remove from a specific scope, use:\n")
	for i, l := range e.Found {
		fmt.Fprintf(&b, "  claude mcp remove %s -s %s", e.Name, l.Scope)
		if i < len(e.Found)-1 {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// MissingServerError is RemoveServer's error for a name not defined (in scope,
// when given).
type MissingServerError struct {
	Name       string
	Scope      Scope    // "" when no scope was given
	Configured []string // the names configured, when no scope was given
}

func (e *MissingServerError) Error() string {
	if e.Scope != "" {
		return fmt.Sprintf("No MCP server named %q in %s scope", e.Name, e.Scope)
	}
	return fmt.Sprintf("No MCP server named %q. Configured servers: %s", e.Name, strings.Join(e.Configured, ", "))
}

// RemoveServer removes name from scope ("": the one scope that has it; a
// name in several scopes is refused with *ScopesError, a name in none with
// *MissingServerError), with the same locked, atomic write as AddServer.
func RemoveServer(opts Options, scope Scope, name string) (Location, error) {
	if err := CheckNameRef(name); err != nil {
		return Location{}, err
	}
	var loc Location
	if scope == "" {
		found, err := FindServer(opts, name)
		if err != nil {
			return Location{}, err
		}
		switch len(found) {
		case 0:
			return Location{}, &MissingServerError{Name: name, Configured: ConfiguredNames(opts)}
		case 1:
			loc = found[0].Location
		default:
			e := &ScopesError{Name: name}
			for _, f := range found {
				e.Found = append(e.Found, f.Location)
			}
			return Location{}, e
		}
	} else {
		var err error
		if loc, err = LocationOf(opts, scope); err != nil {
			return Location{}, err
		}
	}
	_, err := updateJSONFile(loc.File, styleFor(loc), func(d *doc, exists bool) ([]byte, error) {
		if !member(loc.serversIn(d.root), name).Exists() {
			return nil, &MissingServerError{Name: name, Scope: loc.Scope}
		}
		return sjson.DeleteBytes([]byte(d.text), loc.serversPath()+"."+pathKey(name))
	})
	if err != nil {
		var nf *MissingServerError
		if errors.As(err, &nf) {
			return loc, nf
		}
		return loc, err
	}
	return loc, nil
}

// ConfiguredNames lists the server names of the writable scopes, sorted.
func ConfiguredNames(opts Options) []string {
	seen := map[string]bool{}
	for _, scope := range WritableScopes {
		loc, err := LocationOf(opts, scope)
		if err != nil {
			continue
		}
		data, exists, err := readConfigFile(loc.File)
		if err != nil || !exists {
			continue
		}
		if d, ferr := parseDoc(loc.File, data); ferr == nil {
			loc.serversIn(d.root).ForEach(func(k, _ gjson.Result) bool { seen[k.Str] = true; return true })
		}
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// LiteralSecrets lists the env and header entries of def whose value is
// written literally (without any ${VAR} reference: "Bearer ${TOKEN}" is
// fine) under a secret-looking
// name ("API_KEY", "Authorization", …): what a project (.mcp.json, a
// committed file) definition should not hold. Entries are "env KEY" or
// "header NAME"; values never appear.
func LiteralSecrets(def json.RawMessage) []string {
	root := gjson.ParseBytes(def)
	var out []string
	for _, kv := range []struct{ key, label string }{{"env", "env"}, {"headers", "header"}} {
		member(root, kv.key).ForEach(func(k, v gjson.Result) bool {
			if v.Type == gjson.String && v.Str != "" && !strings.Contains(v.Str, "${") && looksSecret(k.Str) {
				out = append(out, kv.label+" "+k.Str)
			}
			return true
		})
	}
	return out
}

// SetServerDisabled records that server name is disabled (or no longer
// disabled) in the project, where the CLI records it: the list
// projects["<dir>"].disabledMcpServers of ~/.claude.json, which disables a
// server of any scope. Same locked, atomic write as AddServer; nothing is
// written when the list already says so. It returns the configuration
// resolved afterwards.
func SetServerDisabled(opts Options, name string, disabled bool) (*Config, error) {
	loc, err := LocationOf(opts, ScopeLocal)
	if err != nil {
		return nil, err
	}
	if err := CheckNameRef(name); err != nil {
		return nil, err
	}
	path := "projects." + pathKey(loc.Project) + ".disabledMcpServers"
	_, err = updateJSONFile(loc.File, styleFor(loc), func(d *doc, exists bool) ([]byte, error) {
		entry, err := d.projectEntry(loc.Project)
		if err != nil {
			return nil, err
		}
		list, errs := d.stringList(entry, "disabledMcpServers", "projects[dir].")
		if len(errs) > 0 {
			return nil, &errs[0]
		}
		if slices.Contains(list, name) == disabled {
			return nil, nil // recorded already
		}
		if disabled {
			list = append(list, name)
		} else {
			list = slices.DeleteFunc(list, func(s string) bool { return s == name })
		}
		return setKey([]byte(d.text), path, list)
	})
	if err != nil {
		return nil, fmt.Errorf("mcpconfig: record %q disabled=%v: %w", name, disabled, err)
	}
	return Resolve(opts)
}

// projectEntry is projects["<project>"] of ~/.claude.json (the zero
// Result when there is none), or an error at the place where projects or
// the entry is not an object.
func (d *doc) projectEntry(project string) (gjson.Result, error) {
	projects := member(d.root, "projects")
	if projects.Exists() && !projects.IsObject() {
		return gjson.Result{}, d.errAt(projects.Index, "", "projects must be an object, not %s", kind(projects))
	}
	entry := member(projects, project)
	if entry.Exists() && !entry.IsObject() {
		return gjson.Result{}, d.errAt(entry.Index, "", "projects[%q] must be an object, not %s", project, kind(entry))
	}
	return entry, nil
}

// TrustWorkspace records that the user trusts the project directory, where
// and as the CLI records an accepted trust dialog:
// projects["<dir>"].hasTrustDialogAccepted = true in ~/.claude.json (the
// directory with symlinks resolved; a new entry gets the CLI's defaults).
// The project's settings files then count, so servers they approve
// (Server.NeedsTrust) become active, and so do their permission rules.
// Same locked, atomic write as AddServer; nothing is written when the
// workspace is trusted already. It returns the configuration resolved
// afterwards.
func TrustWorkspace(opts Options) (*Config, error) {
	loc, err := LocationOf(opts, ScopeLocal)
	if err != nil {
		return nil, err
	}
	_, err = updateJSONFile(loc.File, styleFor(loc), func(d *doc, exists bool) ([]byte, error) {
		entry, err := d.projectEntry(loc.Project)
		if err != nil {
			return nil, err
		}
		text := []byte(d.text)
		if !entry.Exists() {
			e, err := sjson.SetBytes(newProjectEntry(json.RawMessage(`{}`)), "hasTrustDialogAccepted", true)
			if err != nil {
				return nil, err
			}
			return sjson.SetRawBytes(text, "projects."+pathKey(loc.Project), e)
		}
		trusted := member(entry, "hasTrustDialogAccepted")
		if trusted.Type == gjson.True {
			return nil, nil // recorded already
		}
		return sjson.SetBytes(text, "projects."+pathKey(loc.Project)+".hasTrustDialogAccepted", true)
	})
	if err != nil {
		return nil, fmt.Errorf("mcpconfig: trust %s: %w", loc.Project, err)
	}
	return Resolve(opts)
}
