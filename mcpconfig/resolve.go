package mcpconfig

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"
)

// Options say where to look for configuration. The zero value resolves for
// the current directory, $HOME and the platform's managed file.
type Options struct {
	// HomeDir holds .claude.json and .claude/settings.json. Default:
	// os.UserHomeDir (which reads $HOME).
	HomeDir string
	// ProjectDir is the directory claude runs in. Default: the working
	// directory. It is made absolute and symlinks are resolved, as the CLI
	// sees its working directory.
	ProjectDir string
	// ManagedPath is the managed-mcp.json to honour. Default:
	// DefaultManagedPath() for the platform. Tests point it into a temporary
	// directory.
	ManagedPath string
	// Extra are files given to ccproxy (its --mcp-config); a later file wins
	// over an earlier one, and all of them over every other scope but managed.
	Extra []string
	// TrustProject approves every project (.mcp.json) server not rejected by
	// disabledMcpjsonServers (ccproxy's --trust-project-mcp).
	TrustProject bool
	// TrustClient approves the servers a client sends with its session
	// (Config.WithClient; ccproxy's acp --trust-client-mcp). Without it they
	// await an approval nobody can give, and never start.
	TrustClient bool
	// AllowServerTools makes AllowedTools allow every tool of every active
	// server ("mcp__<name>"), as ccproxy did before MCP tool calls asked
	// (ccproxy's serve --allow-mcp-tools). Off: an MCP tool call is allowed
	// only by a permission rule, or by someone answering the prompt.
	AllowServerTools bool
	// Env looks up variables for ${VAR} expansion; it should see the
	// environment claude will get. Default: os.LookupEnv.
	Env LookupFunc
	// Logger receives debug and warning records. Default: discard.
	Logger *slog.Logger
	// Debounce is how long the Watcher waits for a burst of file events to
	// end before it resolves again. Default: DefaultDebounce.
	Debounce time.Duration

	// reloadHook, for tests, is called by the Watcher's goroutine after each
	// resolution with the result and whether an event is now waiting.
	reloadHook func(cfg *Config, pending bool)
}

// DefaultDebounce is the Watcher's default quiet period.
const DefaultDebounce = 100 * time.Millisecond

// DefaultManagedPath is where Claude Code looks for managed-mcp.json on this
// platform ("" where there is none).
func DefaultManagedPath() string {
	switch runtime.GOOS {
	case "linux":
		return "/etc/claude-code/managed-mcp.json"
	case "darwin":
		return "/Library/Application Support/ClaudeCode/managed-mcp.json"
	case "windows":
		return `C:\Program Files\ClaudeCode\managed-mcp.json`
	}
	return ""
}

// withDefaults fills in the defaults and canonicalizes the directories.
func (o Options) withDefaults() (Options, error) {
	var err error
	if o.HomeDir == "" {
		if o.HomeDir, err = os.UserHomeDir(); err != nil {
			return o, fmt.Errorf("mcpconfig: home directory: %w", err)
		}
	}
	if o.HomeDir, err = filepath.Abs(o.HomeDir); err != nil {
		return o, fmt.Errorf("mcpconfig: home directory: %w", err)
	}
	if o.ProjectDir == "" {
		if o.ProjectDir, err = os.Getwd(); err != nil {
			return o, fmt.Errorf("mcpconfig: project directory: %w", err)
		}
	}
	if o.ProjectDir, err = filepath.Abs(o.ProjectDir); err != nil {
		return o, fmt.Errorf("mcpconfig: project directory: %w", err)
	}
	if real, err := filepath.EvalSymlinks(o.ProjectDir); err == nil {
		o.ProjectDir = real
	}
	if o.ManagedPath == "" {
		o.ManagedPath = DefaultManagedPath()
	}
	extra := make([]string, len(o.Extra))
	for i, f := range o.Extra {
		if extra[i], err = filepath.Abs(f); err != nil {
			return o, fmt.Errorf("mcpconfig: extra file %s: %w", f, err)
		}
	}
	o.Extra = extra
	if o.Env == nil {
		o.Env = os.LookupEnv
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Debounce <= 0 {
		o.Debounce = DefaultDebounce
	}
	return o, nil
}

// Config is one resolution of the MCP configuration. It is immutable once
// returned: share it between goroutines freely, never modify it.
type Config struct {
	ProjectDir     string // absolute, symlinks resolved
	HomeDir        string
	Trusted        bool // projects["<dir>"].hasTrustDialogAccepted in ~/.claude.json
	ManagedPresent bool // a managed-mcp.json exists: only its servers load

	// Permissions are the permission rules of the settings files (see
	// Permissions); AllowedTools and DisallowedTools turn them into flags.
	Permissions Permissions

	// Servers has one entry per server name, sorted by name.
	Servers []Server
	// Errors has every problem found, sorted by file and position.
	Errors []FileError

	cli              []CLIServer
	payload          json.RawMessage
	allowServerTools bool
	asm              *assembly // what WithClient assembles again; nil for a Config not made by Resolve
}

// assembly is what a resolution assembled its servers from, kept for
// WithClient.
type assembly struct {
	defs        []definition
	ap          *approvals
	managedPath string
	env         LookupFunc
}

// Server returns the server called name.
func (c *Config) Server(name string) (Server, bool) {
	i := sort.Search(len(c.Servers), func(i int) bool { return c.Servers[i].Name >= name })
	if i < len(c.Servers) && c.Servers[i].Name == name {
		return c.Servers[i], true
	}
	return Server{}, false
}

// AwaitingApproval returns the names whose project definition awaits an
// approval that would change what loads: the name's winning definition is
// awaiting, or an awaiting project definition outranks the active one (a
// user server of the same name runs meanwhile).
func (c *Config) AwaitingApproval() []string {
	var out []string
	for _, s := range c.Servers {
		if s.Approval == ApprovalAwaiting {
			out = append(out, s.Name)
			continue
		}
		for _, o := range s.Shadows {
			if o.Approval == ApprovalAwaiting && o.Scope.Rank() > s.Scope.Rank() {
				out = append(out, s.Name)
				break
			}
		}
	}
	return out
}

// CLIServers returns what `claude -p` (without --strict-mcp-config, given
// the extra files as --mcp-config) would load from the same files, sorted by
// name: every valid definition except project ones named in
// disabledMcpjsonServers, approved or not, with the same precedence; only
// managed servers when managed-mcp.json is present.
func (c *Config) CLIServers() []CLIServer { return append([]CLIServer(nil), c.cli...) }

// ToolPrefix is the prefix of a server's tool names as claude builds them:
// "mcp__" and the name with every character outside [A-Za-z0-9_-] replaced
// by "_" (measured: server "my.srv x" has tools "mcp__my_srv_x__…").
func ToolPrefix(server string) string {
	var b strings.Builder
	b.WriteString("mcp__")
	for _, r := range server {
		if r == '_' || r == '-' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// AllowedTools returns the --allowedTools entries: the permissions.allow
// rules of the settings files and, with Options.AllowServerTools, every
// active server of a file ("mcp__<name>", which allows all its tools; not
// the servers a client sent, see WithClient), followed by
// extra entries, without duplicates.
func (c *Config) AllowedTools(extra ...string) []string {
	out := []string{}
	seen := map[string]bool{}
	add := func(s string) {
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, r := range c.Permissions.Allow {
		add(r)
	}
	if c.allowServerTools {
		for _, s := range c.Servers {
			if s.Active && s.Scope != ScopeClient { // a client's servers are always asked
				add(ToolPrefix(s.Name))
			}
		}
	}
	for _, e := range extra {
		add(e)
	}
	return out
}

// DisallowedTools returns the --disallowedTools entries: the
// permissions.deny rules of the settings files.
func (c *Config) DisallowedTools() []string {
	return append([]string{}, c.Permissions.Deny...)
}

// SetServersPayload returns the "servers" object of an mcp_set_servers
// control request: every active server's expanded definition, keyed by name.
// Stdio entries always carry "args".
func (c *Config) SetServersPayload() json.RawMessage { return c.payload }

// MCPConfigJSON returns {"mcpServers":{…}} of the active servers, expanded:
// the content of the file passed to claude with --mcp-config.
func (c *Config) MCPConfigJSON() []byte {
	return []byte(`{"mcpServers":` + string(c.payload) + "}")
}

// fileKind is the role of a configuration file.
type fileKind int

const (
	kindManaged         fileKind = iota
	kindExtra                    // an --mcp-config file
	kindClaudeJSON               // ~/.claude.json
	kindUserSettings             // ~/.claude/settings.json
	kindProjSettings             // <dir>/.claude/settings.json
	kindLocalSettings            // <dir>/.claude/settings.local.json
	kindManagedSettings          // managed-settings.json beside managed-mcp.json
	kindMCPJSON                  // .mcp.json in <dir> or a parent
)

type sourceFile struct {
	path string
	kind fileKind
	prio int
}

// resolver resolves repeatedly, remembering the last valid content of every
// file so that a broken edit keeps the last good version (for the Watcher).
// It is used by one goroutine at a time.
type resolver struct {
	opts     Options
	keys     []string          // keys of projects[…] in ~/.claude.json to try, in order
	lastGood map[string]*doc   // parsed once, used while the file is broken
	warned   map[string]string // the problem last logged for a file, logged again only when it changes
}

func newResolver(opts Options) (*resolver, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	keys := []string{o.ProjectDir}
	if opts.ProjectDir != "" {
		if abs, err := filepath.Abs(opts.ProjectDir); err == nil && abs != o.ProjectDir {
			keys = append(keys, abs)
		}
	}
	return &resolver{opts: o, keys: keys, lastGood: map[string]*doc{}, warned: map[string]string{}}, nil
}

// Resolve reads every configuration file and resolves the servers. Problems
// in the files are in Config.Errors; the error is only for unusable Options.
func Resolve(opts Options) (*Config, error) {
	r, err := newResolver(opts)
	if err != nil {
		return nil, err
	}
	return r.resolve(), nil
}

// sources lists every file that can hold configuration, most important first.
func (r *resolver) sources() []sourceFile {
	o := r.opts
	var out []sourceFile
	if o.ManagedPath != "" {
		out = append(out, sourceFile{o.ManagedPath, kindManaged, 0},
			sourceFile{filepath.Join(filepath.Dir(o.ManagedPath), "managed-settings.json"), kindManagedSettings, 0})
	}
	for i, f := range o.Extra {
		out = append(out, sourceFile{f, kindExtra, i})
	}
	out = append(out,
		sourceFile{filepath.Join(o.HomeDir, ".claude.json"), kindClaudeJSON, 0},
		sourceFile{filepath.Join(o.HomeDir, ".claude", "settings.json"), kindUserSettings, 0},
		sourceFile{filepath.Join(o.ProjectDir, ".claude", "settings.json"), kindProjSettings, 0},
		sourceFile{filepath.Join(o.ProjectDir, ".claude", "settings.local.json"), kindLocalSettings, 0},
	)
	// The CLI reads .mcp.json in its directory and in every parent; the
	// nearest wins (measured).
	depth := 0
	for dir := o.ProjectDir; ; dir = filepath.Dir(dir) {
		out = append(out, sourceFile{filepath.Join(dir, ".mcp.json"), kindMCPJSON, -depth})
		depth++
		if filepath.Dir(dir) == dir {
			break
		}
	}
	return out
}

// load reads and checks one file. It returns nil when the file is missing.
// When the file cannot be read or is not valid JSON the error is reported
// and the last valid content (if any) is used instead; the warning is
// logged once per problem, not at every resolution.
func (r *resolver) load(path string, settings bool, errs *[]FileError) *doc {
	data, exists, err := readConfigFile(path)
	if !exists && err == nil {
		delete(r.lastGood, path)
		delete(r.warned, path)
		return nil
	}
	var ferr *FileError
	var d *doc
	if err != nil {
		ferr = &FileError{File: path, Message: "cannot read: " + errorText(err)}
	} else if d, ferr = parseDoc(path, data); ferr == nil && settings {
		if ferr = d.duplicateKey(); ferr != nil {
			d = nil
		}
	}
	if ferr == nil {
		r.lastGood[path] = d
		delete(r.warned, path)
		return d
	}
	if good, ok := r.lastGood[path]; ok {
		ferr.Message += " (using the last valid version)"
		d = good
	}
	*errs = append(*errs, *ferr)
	if msg := ferr.Error(); r.warned[path] != msg {
		r.warned[path] = msg
		r.opts.Logger.Warn("mcpconfig: bad configuration file", "file", path, "error", msg)
	}
	return d
}

// errorText is an OS error without the path (FileError has it already).
func errorText(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// approvals gathers what the settings files say about project servers.
type approvals struct {
	trusted bool
	// always counts: ~/.claude/settings.json
	userAll     string
	userEnabled map[string]string
	// counts only in a trusted workspace: the project's settings files and
	// the legacy keys of projects["<dir>"] in ~/.claude.json
	projAll     string
	projEnabled map[string]string
	rejected    map[string]string // disabledMcpjsonServers anywhere: always counts
	disabled    map[string]string // projects["<dir>"].disabledMcpServers
	trustFlag   bool              // Options.TrustProject
	trustClient bool              // Options.TrustClient
	claudeJSON  string
}

func (a *approvals) read(d *doc, obj gjson.Result, path string, alwaysCounts bool, errs *[]FileError) {
	all, e1 := d.boolean(obj, "enableAllProjectMcpServers", path)
	enabled, e2 := d.stringList(obj, "enabledMcpjsonServers", path)
	rejected, e3 := d.stringList(obj, "disabledMcpjsonServers", path)
	*errs = append(append(append(*errs, e1...), e2...), e3...)
	en, allBy := a.projEnabled, &a.projAll
	if alwaysCounts {
		en, allBy = a.userEnabled, &a.userAll
	}
	if all && *allBy == "" {
		*allBy = d.file
	}
	for _, n := range enabled {
		if _, ok := en[n]; !ok {
			en[n] = d.file
		}
	}
	for _, n := range rejected {
		if _, ok := a.rejected[n]; !ok {
			a.rejected[n] = d.file
		}
	}
}

// approval decides one project server's approval, the way the interactive
// CLI does (measured on 2.1.329): disabledMcpjsonServers in any settings file
// rejects; enableAllProjectMcpServers or enabledMcpjsonServers approve, from
// ~/.claude/settings.json always, from the project's own settings files (and
// the legacy keys in ~/.claude.json, which the CLI migrates into
// .claude/settings.local.json) only once the workspace is trusted.
func (a *approvals) approval(name string) (Approval, string, string) {
	if f, ok := a.rejected[name]; ok {
		return ApprovalRejected, f, "rejected by disabledMcpjsonServers in " + f
	}
	if a.trustFlag {
		return ApprovalApproved, "--trust-project-mcp", ""
	}
	if f, ok := a.userEnabled[name]; ok {
		return ApprovalApproved, f, ""
	}
	if a.userAll != "" {
		return ApprovalApproved, a.userAll, ""
	}
	f, ok := a.projEnabled[name]
	if !ok && a.projAll != "" {
		f, ok = a.projAll, true
	}
	if ok && a.trusted {
		return ApprovalApproved, f, ""
	}
	if ok {
		return ApprovalAwaiting, "", "awaiting approval: approved in " + f +
			", but the CLI honours that file only in a trusted workspace (hasTrustDialogAccepted in " + a.claudeJSON + ")"
	}
	return ApprovalAwaiting, "", "awaiting approval: not in enabledMcpjsonServers (approve it, or run `claude` in the project)"
}

// needsTrust reports whether the project server name awaits approval only
// because the workspace is not trusted: a project settings file approves
// it, and nothing rejects it.
func (a *approvals) needsTrust(name string) bool {
	if _, ok := a.rejected[name]; ok || a.trusted || a.trustFlag {
		return false
	}
	_, ok := a.projEnabled[name]
	return ok || a.projAll != ""
}

// projectEntry finds projects["<dir>"] in ~/.claude.json: the key is the
// directory with symlinks resolved (measured), the path as given is tried
// second.
func projectEntry(root gjson.Result, keys []string) (gjson.Result, string) {
	projects := member(root, "projects")
	if !projects.IsObject() {
		return gjson.Result{}, ""
	}
	for _, k := range keys {
		if v := member(projects, k); v.Exists() {
			return v, k
		}
	}
	return gjson.Result{}, ""
}

func (r *resolver) resolve() *Config {
	o := r.opts
	cfg := &Config{ProjectDir: o.ProjectDir, HomeDir: o.HomeDir, allowServerTools: o.AllowServerTools}
	var errs []FileError
	var defs []definition
	ap := &approvals{
		userEnabled: map[string]string{}, projEnabled: map[string]string{},
		rejected: map[string]string{}, disabled: map[string]string{},
		trustFlag: o.TrustProject, trustClient: o.TrustClient, claudeJSON: filepath.Join(o.HomeDir, ".claude.json"),
	}

	for _, src := range r.sources() {
		settings := src.kind >= kindUserSettings && src.kind <= kindManagedSettings
		d := r.load(src.path, settings, &errs)
		if d == nil {
			continue
		}
		add := func(obj gjson.Result, path string, scope Scope) {
			ds, es := d.serverList(obj, path, scope, src.prio, o.Env)
			defs = append(defs, ds...)
			errs = append(errs, es...)
		}
		switch src.kind {
		case kindManaged:
			cfg.ManagedPresent = true
			add(member(d.root, "mcpServers"), "mcpServers", ScopeManaged)
		case kindExtra:
			add(member(d.root, "mcpServers"), "mcpServers", ScopeExtra)
		case kindMCPJSON:
			add(member(d.root, "mcpServers"), "mcpServers", ScopeProject)
		case kindClaudeJSON:
			add(member(d.root, "mcpServers"), "mcpServers", ScopeUser)
			entry, key := projectEntry(d.root, r.keys)
			if !entry.Exists() {
				break
			}
			path := fmt.Sprintf("projects[%q].", key)
			if !entry.IsObject() {
				errs = append(errs, *d.errAt(entry.Index, "", "%s must be an object, not %s", strings.TrimSuffix(path, "."), kind(entry)))
				break
			}
			add(member(entry, "mcpServers"), path+"mcpServers", ScopeLocal)
			trusted, es := d.boolean(entry, "hasTrustDialogAccepted", path)
			errs = append(errs, es...)
			cfg.Trusted = trusted
			disabled, es := d.stringList(entry, "disabledMcpServers", path)
			errs = append(errs, es...)
			for _, n := range disabled {
				ap.disabled[n] = d.file
			}
			ap.read(d, entry, path, false, &errs) // legacy keys, migrated by the CLI
		case kindUserSettings:
			ap.read(d, d.root, "", true, &errs)
			cfg.Permissions.read(d, true, &errs)
		case kindProjSettings:
			ap.read(d, d.root, "", false, &errs)
			cfg.Permissions.read(d, cfg.Trusted, &errs) // ~/.claude.json came first: Trusted is known
		case kindLocalSettings:
			ap.read(d, d.root, "", false, &errs)
			cfg.Permissions.read(d, true, &errs)
		case kindManagedSettings:
			cfg.Permissions.read(d, true, &errs)
		}
	}
	ap.trusted = cfg.Trusted
	cfg.asm = &assembly{defs: defs, ap: ap, managedPath: o.ManagedPath, env: o.Env}
	assemble(cfg, defs, ap, o.ManagedPath)
	sort.SliceStable(errs, func(i, j int) bool {
		a, b := errs[i], errs[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Column < b.Column
	})
	cfg.Errors = errs
	if cfg.Errors == nil {
		cfg.Errors = []FileError{}
	}
	return cfg
}

// assemble applies precedence, approval, disabling and the managed rule to
// the definitions, one name at a time. managedPath names managed-mcp.json
// in reasons.
func assemble(cfg *Config, defs []definition, ap *approvals, managedPath string) {
	byName := map[string][]*definition{}
	var names []string
	for i := range defs {
		d := &defs[i]
		if _, ok := byName[d.name]; !ok {
			names = append(names, d.name)
		}
		byName[d.name] = append(byName[d.name], d)
	}
	sort.Strings(names)
	payload := []byte{'{'}

	for _, name := range names {
		cands := byName[name]
		sort.SliceStable(cands, func(i, j int) bool {
			a, b := cands[i], cands[j]
			if a.scope.Rank() != b.scope.Rank() {
				return a.scope.Rank() > b.scope.Rank()
			}
			return a.prio > b.prio
		})
		appr := make([]Approval, len(cands))
		apprSrc := make([]string, len(cands))
		apprWhy := make([]string, len(cands))
		for i, c := range cands {
			appr[i] = ApprovalNotNeeded
			switch c.scope {
			case ScopeProject:
				appr[i], apprSrc[i], apprWhy[i] = ap.approval(name)
			case ScopeClient:
				appr[i], apprSrc[i], apprWhy[i] = ap.clientApproval()
			}
		}
		excluded := func(c *definition) bool { return cfg.ManagedPresent && c.scope != ScopeManaged }
		// What claude -p loads: rejected project definitions drop out.
		cliIdx, activeIdx := -1, -1
		for i, c := range cands {
			if excluded(c) || appr[i] == ApprovalRejected {
				continue
			}
			if cliIdx < 0 {
				cliIdx = i
			}
			if activeIdx < 0 && appr[i] != ApprovalAwaiting {
				activeIdx = i
			}
		}
		win := activeIdx
		if win < 0 {
			win = cliIdx
		}
		if win < 0 {
			win = 0
		}
		w := cands[win]
		disabledBy, disabled := ap.disabled[name]
		s := Server{
			Name: name, Scope: w.scope, Source: w.source, Line: w.line, Column: w.col, Type: w.typ,
			Approval: appr[win], ApprovalSource: apprSrc[win], Disabled: disabled,
			Shadows: []Origin{}, MissingEnv: append([]string{}, w.missing...),
			Raw: w.raw, Expanded: w.expanded, secrets: w.secrets,
		}
		switch {
		case excluded(w):
			s.Reason = "not loaded: " + managedPath + " is present, so only managed servers load"
		case appr[win] == ApprovalRejected:
			s.Reason = apprWhy[win]
		case appr[win] == ApprovalAwaiting:
			s.Reason = apprWhy[win]
			s.NeedsTrust = ap.needsTrust(name)
		case disabled:
			s.Reason = "disabled for this project (disabledMcpServers in " + disabledBy + ")"
		default:
			s.Active = true
		}
		for i, c := range cands {
			if i == win {
				continue
			}
			og := Origin{Scope: c.scope, Source: c.source}
			if c.scope == ScopeProject || c.scope == ScopeClient {
				og.Approval = appr[i]
			}
			s.Shadows = append(s.Shadows, og)
		}
		s.fingerprint = fingerprint(&s)
		cfg.Servers = append(cfg.Servers, s)
		if s.Active {
			if len(payload) > 1 {
				payload = append(payload, ',')
			}
			payload = appendString(payload, name)
			payload = append(payload, ':')
			payload = append(payload, w.expanded...)
		}
		if cliIdx >= 0 {
			c := cands[cliIdx]
			cfg.cli = append(cfg.cli, CLIServer{Name: name, Scope: c.scope, Source: c.source, Disabled: disabled})
		}
	}
	cfg.payload = append(payload, '}')
	// The redacted views. A value configured for one server is a secret in
	// every view: it is masked where another server's URL path or
	// arguments show it too.
	all := cfg.Secrets()
	for i := range cfg.Servers {
		s := &cfg.Servers[i]
		s.Redacted = redactDefinition(members(gjson.ParseBytes(s.Raw)), len(s.Raw), all)
	}
}

func fingerprint(s *Server) string {
	var b strings.Builder
	b.Grow(len(s.Expanded) + len(s.Source) + len(s.Reason) + 64)
	for _, f := range []string{string(s.Scope), s.Source, string(s.Type), strconv.FormatBool(s.Active),
		string(s.Approval), s.ApprovalSource, strconv.FormatBool(s.Disabled), s.Reason} {
		b.WriteString(f)
		b.WriteByte(0)
	}
	for _, m := range s.MissingEnv {
		b.WriteString(m)
		b.WriteByte(1)
	}
	b.WriteByte(0)
	for _, o := range s.Shadows {
		b.WriteString(string(o.Scope) + "\x01" + o.Source + "\x01" + string(o.Approval) + "\x02")
	}
	b.WriteByte(0)
	b.Write(s.Expanded)
	return b.String()
}
