package mcphub

import (
	"encoding/json"
	"errors"
	"log/slog"
	"slices"

	"github.com/ccproxy/ccproxy/mcpconfig"
	"github.com/ccproxy/ccproxy/protocol"
)

// Manager is an Source that can also change the configuration files
// (mcp/add, mcp/update, mcp/remove) and resolve an unsaved definition
// (mcp/test). The proxy offers capability mcp.manage when Options.MCP
// implements it. Its methods may be called from any goroutine.
type Manager interface {
	Source
	// WriteServer writes def as server name of scope ("" = local) as
	// mode says, and makes the resulting configuration Current before it
	// returns. Errors: see Error.
	WriteServer(name, scope string, def json.RawMessage, mode mcpconfig.WriteMode) (mcpconfig.Location, error)
	// RemoveServer removes name from scope ("" = the one scope that has
	// it), then like WriteServer.
	RemoveServer(name, scope string) (mcpconfig.Location, error)
	// Unsaved resolves the configuration with def as an extra server
	// named name (mcpconfig.ResolveUnsaved), for probing; the masked
	// placeholders of def keep the values of the configured server name
	// (mcpconfig.KeepMasked).
	Unsaved(name string, def json.RawMessage) (*mcpconfig.Config, error)
	// SetDisabled records name as disabled (or not) in the project
	// (mcpconfig.SetServerDisabled), then like WriteServer.
	SetDisabled(name string, disabled bool) error
	// Trust records that the user trusts the project directory
	// (mcpconfig.TrustWorkspace), makes the result Current, and returns
	// the project and the file written.
	Trust() (project, file string, err error)
}

// WriteServer implements Manager with mcpconfig.AddServer (locked
// across processes, atomic) in the watched project and home.
func (s *ConfigSource) WriteServer(name, scope string, def json.RawMessage, mode mcpconfig.WriteMode) (mcpconfig.Location, error) {
	sc, err := mcpconfig.ParseScope(scope)
	if err != nil {
		return mcpconfig.Location{}, err
	}
	norm, _, _, err := mcpconfig.NormalizeDefinition("definition", name, def)
	if err != nil {
		return mcpconfig.Location{}, err
	}
	loc, err := mcpconfig.AddServer(s.opts, sc, name, norm, mode)
	if err != nil {
		return loc, err
	}
	return loc, s.reload()
}

// RemoveServer implements Manager with mcpconfig.RemoveServer.
func (s *ConfigSource) RemoveServer(name, scope string) (mcpconfig.Location, error) {
	var sc mcpconfig.Scope
	if scope != "" {
		var err error
		if sc, err = mcpconfig.ParseScope(scope); err != nil {
			return mcpconfig.Location{}, err
		}
	}
	loc, err := mcpconfig.RemoveServer(s.opts, sc, name)
	if err != nil {
		return loc, err
	}
	return loc, s.reload()
}

// Unsaved implements Manager. When name is a configured server, the
// masked placeholders of def keep that server's stored values
// (mcpconfig.KeepMasked), as in mcp/update: testing an edit before saving
// it probes the secrets the edit keeps.
func (s *ConfigSource) Unsaved(name string, def json.RawMessage) (*mcpconfig.Config, error) {
	s.mu.Lock()
	cfg := s.raw
	s.mu.Unlock()
	if cfg != nil {
		if srv, ok := cfg.Server(name); ok {
			kept, err := mcpconfig.KeepMasked(name, srv.Raw, def, cfg.Secrets())
			if err != nil {
				return nil, err
			}
			def = kept
		}
	}
	return mcpconfig.ResolveUnsaved(s.opts, name, def)
}

// SetDisabled implements Manager.
func (s *ConfigSource) SetDisabled(name string, disabled bool) error {
	cfg, err := mcpconfig.SetServerDisabled(s.opts, name, disabled)
	if err != nil {
		return err
	}
	s.install(cfg)
	return nil
}

// Trust implements Manager.
func (s *ConfigSource) Trust() (string, string, error) {
	loc, err := mcpconfig.LocationOf(s.opts, mcpconfig.ScopeLocal)
	if err != nil {
		return "", "", err
	}
	cfg, err := mcpconfig.TrustWorkspace(s.opts)
	if err != nil {
		return "", "", err
	}
	s.install(cfg)
	return loc.Project, loc.File, nil
}

// reload resolves the files again and installs the result at once, so the
// reply to a write carries the configuration with the write (the Watcher
// installs the same one again when its event arrives).
func (s *ConfigSource) reload() error {
	cfg, err := mcpconfig.Resolve(s.opts)
	if err != nil {
		return err
	}
	s.install(cfg)
	return nil
}

// ToggleRecorder is implemented by an MCP source that knows where the
// CLI records an mcp_toggle (ConfigSource): UnrecordedToggle runs
// toggle and takes that record back, so a live mcp/toggle changes only the
// session it ran in. Without it the toggle runs as is.
type ToggleRecorder interface {
	UnrecordedToggle(name string, enabled bool, toggle func() error) error
}

// UnrecordedToggle implements ToggleRecorder with
// mcpconfig.UnrecordedToggle in the watched project and home.
// The Watcher's events wait meanwhile (toggleMu), so the CLI's record
// never reaches mcp/config or other sessions.
func (s *ConfigSource) UnrecordedToggle(name string, enabled bool, toggle func() error) error {
	s.toggleMu.Lock()
	defer s.toggleMu.Unlock()
	s.toggled = true
	undone, err := mcpconfig.UnrecordedToggle(s.opts, name, enabled, toggle)
	if undone {
		s.log.Info("took back the CLI's record of a live mcp_toggle in ~/.claude.json")
	}
	return err
}

// Manage serves the requests that change the MCP configuration
// (mcp/add, mcp/update, mcp/remove, mcp/trust, mcp/test's resolution,
// mcp/toggle with persist) and checks the server names requests give.
// Each change is written through the Source's Manager, then Apply
// installs it, so mcp/config and mcp/status reach the subscribers before
// the reply. Its methods run in the request's goroutine; it has none.
type Manage struct {
	Source Source // Options.MCP; nil: no MCP configuration
	Hub    *Hub   // the configuration in force (names are checked against it)
	// Apply installs the source's configuration (the proxy's applyMCP:
	// Hub.Apply, then mcp_set_servers to live sessions).
	Apply func()
}

// Manager returns the source as a Manager, or nil: then mcp.manage is
// not offered.
func (m *Manage) Manager() Manager {
	mgr, _ := m.Source.(Manager)
	return mgr
}

// Write serves mcp/add, mcp/update and mcp/remove (typ) of server name:
// write, then Apply, then the reply with the resulting configuration.
// log gets the failures a client sees as internal.
func (m *Manage) Write(log *slog.Logger, typ, name string, write func(Manager) (mcpconfig.Location, error)) (protocol.Data, error) {
	mgr := m.Manager()
	loc, err := write(mgr)
	if err != nil {
		return nil, Error(log, typ, name, err)
	}
	m.Apply() // mcp/config and mcp/status reach subscribers before the reply
	cur := mgr.Current()
	var view protocol.MCPConfig
	if cur != nil {
		view = cur.View
	}
	if view.Servers == nil {
		view.Servers = []protocol.MCPConfigServer{}
	}
	return protocol.MCPManageResult{Name: name, Scope: string(loc.Scope), File: loc.File, Config: view}, nil
}

// Trust serves mcp/trust: record the trust, then Apply, then the reply
// naming the servers that became active.
func (m *Manage) Trust(log *slog.Logger) (protocol.Data, error) {
	mgr := m.Manager()
	active := map[string]bool{}
	if cur := mgr.Current(); cur != nil {
		for _, v := range cur.View.Servers {
			active[v.Name] = v.Active
		}
	}
	project, file, err := mgr.Trust()
	if err != nil {
		return nil, Error(log, protocol.TypeMCPTrust, "", err)
	}
	m.Apply() // mcp/config and mcp/status reach subscribers before the reply
	res := protocol.MCPTrustResult{Project: project, File: file, Enabled: []string{}}
	if cur := mgr.Current(); cur != nil {
		res.Config = cur.View
		for _, v := range cur.View.Servers {
			if v.Active && !active[v.Name] {
				res.Enabled = append(res.Enabled, v.Name)
			}
		}
	}
	if res.Config.Servers == nil {
		res.Config.Servers = []protocol.MCPConfigServer{}
	}
	return res, nil
}

// Unsaved resolves mcp/test's definition as server name ("test" when
// unnamed), to be probed; the result is not an observation.
func (m *Manage) Unsaved(log *slog.Logger, d *protocol.MCPTest) (name string, cfg *mcpconfig.Config, err error) {
	name = d.Name
	if name == "" {
		name = "test"
	}
	cfg, err = m.Manager().Unsaved(name, d.Definition)
	if err != nil {
		return name, nil, Error(log, protocol.TypeMCPTest, name, err)
	}
	return name, cfg, nil
}

// Persist checks mcp/toggle with persist; its slow part records name as
// disabled (or not) in the project's configuration (Manager.SetDisabled),
// then Applies it: live sessions get it through mcp_set_servers.
func (m *Manage) Persist(name string, enabled bool) (func(log *slog.Logger) (protocol.Data, error), error) {
	typ := protocol.TypeMCPToggle
	if _, err := m.Configured(typ, name); err != nil {
		return nil, err
	}
	mgr := m.Manager()
	if mgr == nil {
		return nil, protocol.Errorf(protocol.CodeBadRequest, "%s: persist needs a proxy that writes the MCP configuration (mcp.manage)", typ)
	}
	return func(log *slog.Logger) (protocol.Data, error) {
		if err := mgr.SetDisabled(name, !enabled); err != nil {
			return nil, Error(log, typ, name, err)
		}
		m.Apply() // mcp/config first; live sessions get it through mcp_set_servers
		return protocol.MCPLiveResult{Name: name, Sessions: []protocol.MCPLiveOutcome{}}, nil
	}, nil
}

// CheckName is the bad_request of request typ for a server name
// ccproxy refuses everywhere (mcpconfig.CheckNameRef: empty, or "-"
// first), naming the field; nil for any other name, as configured ones
// may break the rule of new names.
func CheckName(typ, name string) error {
	if err := mcpconfig.CheckNameRef(name); err != nil {
		return protocol.Errorf(protocol.CodeBadRequest, "%s: name: %s", typ, err.Error())
	}
	return nil
}

// Error turns an error of mcpconfig's writes into the reply error:
// mcp_server_exists, mcp_server_not_found, bad_request for bad input (a
// definition's field error, an invalid name or scope, a name in several
// scopes, a file that is not valid JSON: each message names what and
// where, never a value), internal for the rest (logged to log).
func Error(log *slog.Logger, typ, name string, err error) error {
	var (
		pe *protocol.Error
		ee *mcpconfig.ExistsError
		me *mcpconfig.MissingServerError
		se *mcpconfig.ScopesError
		fe *mcpconfig.FileError
		le *mcpconfig.LinkError
	)
	switch {
	case errors.As(err, &pe):
		return pe
	case errors.As(err, &le):
		return protocol.Errorf(protocol.CodeBadRequest, "%s: %s", typ, le.Error())
	case errors.As(err, &ee):
		return protocol.Errorf(protocol.CodeMCPServerExists, "%s: %s", typ, ee.Error())
	case errors.As(err, &me):
		return protocol.Errorf(protocol.CodeMCPServerNotFound, "%s: %s", typ, me.Error())
	case errors.As(err, &se):
		return protocol.Errorf(protocol.CodeBadRequest, "%s: %s", typ, se.Error())
	case errors.As(err, &fe):
		return protocol.Errorf(protocol.CodeBadRequest, "%s: %s", typ, fe.Error())
	case errors.Is(err, mcpconfig.ErrBadInput):
		return protocol.Errorf(protocol.CodeBadRequest, "%s: %s", typ, err.Error())
	}
	log.Error("MCP configuration write failed", "type", typ, "server", name, "err", err)
	return protocol.Errorf(protocol.CodeInternal, "%s %.80q failed; see the proxy's log", typ, name)
}

// Configured returns the view of server name in the MCP configuration in
// force, or the mcp_server_not_found error of request typ. A name that
// reads as an option is refused first (CheckName).
func (m *Manage) Configured(typ, name string) (*protocol.MCPConfigServer, error) {
	if err := CheckName(typ, name); err != nil {
		return nil, err
	}
	if cfg := m.Hub.Config(); cfg != nil {
		if i := slices.IndexFunc(cfg.View.Servers, func(v protocol.MCPConfigServer) bool { return v.Name == name }); i >= 0 {
			return &cfg.View.Servers[i], nil
		}
	}
	return nil, protocol.Errorf(protocol.CodeMCPServerNotFound, "%s: no MCP server named %.80q is configured", typ, name)
}

// AuthTarget checks that name can sign in with OAuth: configured, of
// type http or sse, in Claude Code's own configuration.
func (m *Manage) AuthTarget(typ, name string) error {
	srv, err := m.Configured(typ, name)
	switch {
	case err != nil:
		return err
	case srv.Type != "http" && srv.Type != "sse":
		return protocol.Errorf(protocol.CodeBadRequest, "%s: %.80q is a %s server: OAuth sign-in is only for http and sse servers", typ, name, srv.Type)
	case srv.Scope == string(mcpconfig.ScopeExtra):
		return protocol.Errorf(protocol.CodeBadRequest, "%s: %.80q is defined only in a file given to ccproxy (--mcp-config), which `claude mcp login` does not read: add it to Claude Code's configuration (mcp/add)", typ, name)
	}
	return nil
}
