package mcphub

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"sync"

	"github.com/ccproxy/ccproxy/mcpconfig"
	"github.com/ccproxy/ccproxy/protocol"
)

// ConfigSource is the Source of package mcpconfig: a Watcher keeps
// the resolved configuration current, approvals are recorded where the
// interactive CLI reads them, and each configuration gets a private
// --mcp-config file, written when a claude process first needs it and
// removed when no process uses it and a newer configuration is in force.
//
// It owns one goroutine, which forwards the Watcher's events; Close stops
// the Watcher, joins the goroutine and removes the files. Its methods are
// safe for concurrent use.
type ConfigSource struct {
	opts mcpconfig.Options
	dir  string // where --mcp-config files go ("" = os.TempDir)
	log  *slog.Logger
	w    *mcpconfig.Watcher
	ch   chan struct{}
	wg   sync.WaitGroup

	// toggleMu is held (written) by UnrecordedToggle from before a live
	// mcp_toggle until the CLI's record of it is taken back, and read by
	// installEvent: the Watcher's configurations are not installed
	// meanwhile. toggled (under toggleMu) says a toggle ran since the last
	// event: the next event's configuration may have been read in that
	// window, so it is resolved again.
	toggleMu sync.RWMutex
	toggled  bool

	mu     sync.Mutex
	cur    *Config
	raw    *mcpconfig.Config
	file   *configFile // of cur
	closed bool
}

// NewConfigSource resolves the configuration for opts and starts
// watching it. dir is where the private --mcp-config files are written
// ("" for the system's temporary directory).
func NewConfigSource(opts mcpconfig.Options, dir string, log *slog.Logger) (*ConfigSource, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	w, err := mcpconfig.NewWatcher(opts)
	if err != nil {
		return nil, fmt.Errorf("watching the MCP configuration: %w", err)
	}
	s := &ConfigSource{opts: opts, dir: dir, log: log, w: w, ch: make(chan struct{}, 1)}
	s.install(w.Initial())
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for ev := range w.Events() {
			s.log.Info("MCP configuration files changed", "added", ev.Changes.Added, "removed", ev.Changes.Removed, "changed", ev.Changes.Changed, "coalesced", ev.Coalesced)
			s.installEvent(ev.Config)
		}
	}()
	return s, nil
}

// installEvent installs the configuration of a Watcher event, or, when a
// live mcp_toggle ran since the last event (its record in ~/.claude.json
// may have been read before it was taken back), the configuration resolved
// again.
func (s *ConfigSource) installEvent(cfg *mcpconfig.Config) {
	s.toggleMu.Lock()
	defer s.toggleMu.Unlock()
	if s.toggled {
		s.toggled = false
		again, err := mcpconfig.Resolve(s.opts)
		if err != nil {
			s.log.Warn("resolving the MCP configuration after a live mcp_toggle", "err", err)
		} else {
			cfg = again
		}
	}
	s.install(cfg)
}

// Close stops watching and removes the --mcp-config files. Call it after
// the proxy (and so every claude) has stopped. It may be called more than once.
func (s *ConfigSource) Close() error {
	err := s.w.Close()
	s.wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		if s.file != nil {
			s.file.retire()
		}
	}
	return err
}

// Current implements Source.
func (s *ConfigSource) Current() *Config {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur
}

// Changes implements Source.
func (s *ConfigSource) Changes() <-chan struct{} { return s.ch }

// Approve implements Source.
func (s *ConfigSource) Approve(name string) (string, error) {
	return s.decide(name, "approve", mcpconfig.Approve)
}

// Reject implements Source.
func (s *ConfigSource) Reject(name string) (string, error) {
	return s.decide(name, "reject", mcpconfig.Reject)
}

func (s *ConfigSource) decide(name, verb string, fn func(mcpconfig.Options, string) (*mcpconfig.Config, error)) (string, error) {
	s.mu.Lock()
	raw := s.raw
	s.mu.Unlock()
	srv, ok := raw.Server(name)
	if !ok {
		return "", protocol.Errorf(protocol.CodeMCPServerNotFound, "mcp/%s: no MCP server named %q is configured", verb, name)
	}
	if _, ok := srv.ProjectApproval(); !ok {
		return "", protocol.Errorf(protocol.CodeBadRequest, "mcp/%s: %q is a %s server; only project (.mcp.json) servers need approval", verb, name, srv.Scope)
	}
	cfg, err := fn(s.opts, name)
	if err != nil {
		return "", err
	}
	s.install(cfg)
	srv, _ = cfg.Server(name)
	approval, _ := srv.ProjectApproval()
	return string(approval), nil
}

// AllowRules records "allow, and don't ask again" rules in
// <dir>/.claude/settings.local.json (mcpconfig.AllowRules: locked across
// processes, atomic). When dir is the watched project the Watcher then
// installs the configuration with the new rules.
func (s *ConfigSource) AllowRules(dir string, rules []string) error {
	opts := s.opts
	opts.ProjectDir = dir
	_, err := mcpconfig.AllowRules(opts, rules...)
	return err
}

// install makes cfg current and signals the change.
func (s *ConfigSource) install(cfg *mcpconfig.Config) {
	if cfg == nil {
		return
	}
	cur, file := s.prepare(cfg)
	cur.ForClient = func(cs *mcpconfig.ClientServers) (*Config, []mcpconfig.ClientStatus, func(), error) {
		merged, err := cfg.WithClient(cs)
		if err != nil {
			return nil, nil, nil, err
		}
		out, f := s.prepare(merged)
		return out, merged.ClientStatus(cs), f.retire, nil
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	if s.file != nil {
		s.file.retire()
	}
	s.cur, s.raw, s.file = cur, cfg, file
	s.mu.Unlock()
	select {
	case s.ch <- struct{}{}:
	default:
	}
}

// prepare converts cfg and gives it its --mcp-config file (written on the
// first Spawn).
func (s *ConfigSource) prepare(cfg *mcpconfig.Config) (*Config, *configFile) {
	cur := Convert(cfg)
	file := &configFile{cfg: cfg, tools: cur.AllowedTools, denied: cur.DisallowedTools, dir: s.dir, log: s.log}
	cur.Spawn = file.acquire
	return cur, file
}

// Convert turns a resolved configuration into what the proxy uses
// (without Spawn and ForClient, which ConfigSource adds).
func Convert(cfg *mcpconfig.Config) *Config {
	out := &Config{Servers: map[string]json.RawMessage{}, AllowedTools: cfg.AllowedTools(), DisallowedTools: cfg.DisallowedTools(), Resolved: cfg}
	for _, srv := range cfg.Servers {
		if srv.Active {
			out.Servers[srv.Name] = srv.Expanded // as mcp_set_servers takes it (stdio "args" always there)
		}
	}
	v := cfg.Redacted()
	out.View = protocol.MCPConfig{Project: v.ProjectDir, Servers: []protocol.MCPConfigServer{}, AllowedTools: slices.Clone(v.AllowedTools), Trusted: v.Trusted}
	for _, srv := range v.Servers {
		ps := protocol.MCPConfigServer{
			Name:       srv.Name,
			Scope:      string(srv.Scope),
			Source:     srv.Source,
			Type:       string(srv.Type),
			Active:     srv.Active,
			Approval:   string(srv.Approval), // never empty: not-needed but for project servers
			MissingEnv: slices.Clone(srv.MissingEnv),
			Config:     srv.Redacted,
			Reason:     srv.Reason,
			NeedsTrust: srv.NeedsTrust,
		}
		for _, o := range srv.Shadows {
			ps.Shadows = append(ps.Shadows, protocol.MCPShadow{Scope: string(o.Scope), Source: o.Source})
		}
		out.View.Servers = append(out.View.Servers, ps)
	}
	for _, e := range v.Errors {
		out.View.Errors = append(out.View.Errors, protocol.MCPConfigError{File: e.File, Line: int64(e.Line), Column: int64(e.Column), Message: e.Message})
	}
	return out
}

// configFile is the --mcp-config file of one configuration: written on the
// first acquire, removed once retired and released by every process.
type configFile struct {
	cfg    *mcpconfig.Config
	tools  []string // --allowedTools (Config.AllowedTools)
	denied []string // --disallowedTools (Config.DisallowedTools)
	dir    string
	log    *slog.Logger

	mu      sync.Mutex
	f       *mcpconfig.ConfigFile
	refs    int
	retired bool
}

func (c *configFile) acquire() ([]string, func(), error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.f == nil {
		f, err := c.cfg.MCPConfigFile(c.dir)
		if err != nil {
			return nil, nil, err
		}
		c.f = f
	}
	c.refs++
	args := c.f.Args()
	if len(c.tools) > 0 {
		args = append(append(args, "--allowedTools"), c.tools...)
	}
	if len(c.denied) > 0 {
		args = append(append(args, "--disallowedTools"), c.denied...)
	}
	var once sync.Once
	return args, func() { once.Do(c.release) }, nil
}

func (c *configFile) release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.refs--
	c.closeIfUnusedLocked()
}

func (c *configFile) retire() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.retired = true
	c.closeIfUnusedLocked()
}

func (c *configFile) closeIfUnusedLocked() {
	if c.retired && c.refs == 0 && c.f != nil {
		if err := c.f.Close(); err != nil {
			c.log.Warn("removing an --mcp-config file", "err", err)
		}
		c.f = nil
	}
}
