package mcphub

import (
	"encoding/json"

	"github.com/ccproxy/ccproxy/mcpconfig"
)

// Manager is an Source that can also change the configuration files
// (mcp/add, mcp/update, mcp/remove) and resolve an unsaved definition
// (mcp/test). The proxy offers capability mcp.manage when Options.MCP
// implements it. Its methods may be called from any goroutine.
type Manager interface {
	Source
	// WriteServer writes def as server name of scope ("" = local) as
	// mode says, and makes the resulting configuration Current before it
	// returns. Errors: see mcpError.
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
