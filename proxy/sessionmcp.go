package proxy

// The MCP part of a Session: the servers in force sent to claude
// (mcp_set_servers, a restart when it refuses) through one pending-apply
// slot, live toggles, its mcp_status reports, the servers its client sent
// (session/create mcpServers) and the session's secret set. Fields (type
// sessionMCP), by the lock that guards them:
//
//   - mu (Session.mcpMu before the split): off; it serializes
//     Session.applyCurrentServers and Session.toggleMCP, is held across
//     their control request (bounded by ControlTimeout) and is taken
//     before Session.mu.
//   - Session.mu (a part of the Session, not a lock of its own):
//     statusInFlight, applyWanted, applying.
//   - clientMu: clientBase, clientCfg, clientStatus, clientRetire,
//     clientDone; taken alone or under Session.mu, and nothing is locked
//     under it but a configFile's lock.
//   - none (set when the session is made): client, target, envSecrets,
//     log; secretsCache is an atomic pointer.

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidwall/gjson"

	"github.com/ccproxy/ccproxy/mcpconfig"
	"github.com/ccproxy/ccproxy/proxy/mcphub"
	"github.com/ccproxy/ccproxy/stream"
)

// sessionMCP is the MCP part of a session (see the file's comment for
// what guards each field).
type sessionMCP struct {
	mu  sync.Mutex      // serializes Session.applyCurrentServers and Session.toggleMCP
	off map[string]bool // servers toggled off in this session (mcp/toggle); guarded by mu

	statusInFlight bool // an mcp_status request is out (refreshMCPStatus); Session.mu
	applyWanted    bool // the MCP configuration in force changed since the applier last read it (markApply); Session.mu
	applying       bool // the applier goroutine runs (at most one: applyPending); Session.mu

	// The configuration with the servers the client sent (client), made
	// from the proxy's configuration clientBase; see config.
	clientMu     sync.Mutex
	clientBase   *mcphub.Config
	clientCfg    *mcphub.Config
	clientStatus []mcpconfig.ClientStatus
	clientRetire func()
	clientDone   bool // the session ended: nothing more is made

	client       *mcpconfig.ClientServers // session/create mcpServers; nil without
	target       mcpTarget                // the proxy's configuration in force and status feed (sessionEnv.mcp)
	envSecrets   *mcpconfig.Secrets       // sessionEnv.envSecrets
	log          *slog.Logger
	secretsCache atomic.Pointer[sessionSecrets] // see secrets
}

// markApply is the session's pending-apply slot: the MCP configuration in
// force changed, so the session's applier (started here unless it runs
// already) applies the newest configuration (applyCurrentServers), and
// again as long as newer changes arrived meanwhile. However many changes
// come while a control request holds sessionMCP.mu, at most one goroutine waits
// for it, and the last configuration is the one applied. An exited or
// closing session is not marked. Called by Server.applyMCP (under
// Server.mu: Session.mu is taken under it).
func (s *Session) markApply() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc.gone() {
		return
	}
	s.mcp.applyWanted = true
	if s.mcp.applying {
		return
	}
	s.mcp.applying = true
	s.wg.Add(1)
	go func() { defer s.wg.Done(); s.applyPending() }()
}

// applyPending is the applier goroutine of markApply (owned by the
// session, joined by its wg): it applies the configuration in force while
// a change is wanted, and ends when none is, or when the session exits
// or closes.
func (s *Session) applyPending() {
	for {
		s.mu.Lock()
		if !s.mcp.applyWanted || s.proc.gone() {
			s.mcp.applyWanted, s.mcp.applying = false, false
			s.mu.Unlock()
			return
		}
		s.mcp.applyWanted = false
		s.mu.Unlock()
		s.applyCurrentServers() // reads the configuration in force once it holds sessionMCP.mu
	}
}

// applyCurrentServers sends the full MCP server set now in force to
// claude, less the servers toggled off in this session (sessionMCP.off: sending
// them would enable them again), then asks for its status.
//
// claude's mcp_set_servers never removes a server of its --mcp-config
// (docs/CLI-NOTES.md): when the configuration no longer has one of the
// servers the running process was launched with (removed from a file,
// rejected, mcp/remove, disabled by policy), the session restarts between
// turns with the new configuration instead (requestRestart: turns sent
// meanwhile are held), and nothing is sent. A restart rather than
// mcp_toggle: a toggled-off server stays in the process with its old
// definition, comes back if a later mcp_set_servers lists the name again
// (the same server added back, maybe with another definition), and the
// CLI records the toggle in ~/.claude.json; the new process has exactly
// the servers in force. Servers that came only through mcp_set_servers
// are removed live.
//
// Otherwise, only when claude refuses the request (an error answer, or
// none in time) does the session restart between turns: per-server errors
// in a successful answer (a server that cannot connect, whose command is
// missing) are servers claude took and shows as failed, which a restart
// would start the same way (docs/CLI-NOTES.md), so they are logged only.
// Calls are serialized, and each sends the newest configuration, so the
// last one to run wins.
func (s *Session) applyCurrentServers() {
	s.mcp.mu.Lock()
	defer s.mcp.mu.Unlock()
	cfg := s.mcp.config()
	if cfg == nil {
		return
	}
	s.mu.Lock()
	skip := s.proc.gone() || s.restarts.active
	var gone []string // servers of the process's --mcp-config no longer in force
	if p := s.proc.cur; p != nil {
		for name := range p.mcpLaunched {
			if _, ok := cfg.Servers[name]; !ok {
				gone = append(gone, name)
			}
		}
	}
	s.mu.Unlock()
	if skip {
		return
	}
	if len(gone) > 0 {
		slices.Sort(gone)
		s.log.Info("MCP servers claude was launched with left the configuration; mcp_set_servers cannot remove them, so the session restarts between turns", "servers", gone)
		s.requestRestart("MCP servers removed: " + strings.Join(gone, ", "))
		return
	}
	servers := make(map[string]json.RawMessage, len(cfg.Servers))
	for name, def := range cfg.Servers {
		if !s.mcp.off[name] {
			servers[name] = def
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.env.opts.controlTimeout)
	defer cancel()
	resp, err := s.controlWait(ctx, "mcp_set_servers", map[string]any{"servers": servers})
	switch {
	case errors.Is(err, errSessionExited):
		return
	case err != nil:
		// claude's message may quote the configuration it refused.
		msg := s.mcp.scrub(err.Error())
		s.log.Warn("claude refused mcp_set_servers", "err", msg)
		s.requestRestart("mcp_set_servers failed: " + msg)
	default:
		errs := gjson.GetBytes(resp, "errors").Map()
		for _, name := range slices.Sorted(maps.Keys(errs)) {
			s.log.Warn("MCP server failed to start", "server", name, "err", s.mcp.scrub(errs[name].String()))
		}
		s.log.Info("MCP servers applied", "added", gjson.GetBytes(resp, "added").Raw, "removed", gjson.GetBytes(resp, "removed").Raw, "failed", len(errs))
	}
	s.refreshMCPStatus()
}

// toggleMCP enables or disables server name in this session only, with
// claude's mcp_toggle run through record (the MCP source's
// UnrecordedToggle, which takes back what the CLI writes to
// ~/.claude.json for it; nil runs it as is), and keeps the choice in
// sessionMCP.off so later mcp_set_servers leave a disabled server out.
// Serialized with applyCurrentServers.
func (s *Session) toggleMCP(ctx context.Context, name string, enabled bool, record func(name string, enabled bool, toggle func() error) error) error {
	s.mcp.mu.Lock()
	defer s.mcp.mu.Unlock()
	var (
		ran  bool  // the toggle was sent
		terr error // claude's answer
	)
	toggle := func() error {
		ran = true
		_, terr = s.controlWait(ctx, "mcp_toggle", map[string]any{"serverName": name, "enabled": enabled})
		return terr
	}
	var ferr error // the record could not be taken back
	if record != nil {
		if err := record(name, enabled, toggle); err != nil && err != terr {
			ferr = err
			s.log.Error("taking back the CLI's record of mcp_toggle in ~/.claude.json", "server", name, "err", err)
		}
	} else {
		toggle()
	}
	if !ran || terr != nil {
		return cmp.Or(terr, ferr)
	}
	// claude toggled it: the session keeps the choice even if the record
	// stayed (the reply then says internal; the log says why).
	if enabled {
		delete(s.mcp.off, name)
	} else {
		if s.mcp.off == nil {
			s.mcp.off = map[string]bool{}
		}
		s.mcp.off[name] = true
	}
	return ferr
}

// reapplyMCPOff disables again, in a new process of the session (a
// restart with --resume starts every configured server), the servers
// mcp/toggle disabled in it, as toggleMCP does; a server claude no longer
// knows is forgotten, and so is one no longer in the configuration (the
// restart applyCurrentServers asks for when it left). Run by the restart,
// after the process started.
func (s *Session) reapplyMCPOff() {
	var servers map[string]json.RawMessage
	if cfg := s.mcp.config(); cfg != nil {
		servers = cfg.Servers
	}
	s.mcp.mu.Lock()
	for name := range s.mcp.off {
		if _, ok := servers[name]; !ok {
			delete(s.mcp.off, name)
			s.log.Info("MCP server toggled off in this session is no longer configured; forgotten", "server", name)
		}
	}
	names := slices.Sorted(maps.Keys(s.mcp.off))
	s.mcp.mu.Unlock()
	if len(names) == 0 {
		return
	}
	var record func(string, bool, func() error) error
	if rec := s.env.opts.toggles; rec != nil {
		record = rec.UnrecordedToggle
	}
	for _, name := range names {
		ctx, cancel := context.WithTimeout(context.Background(), s.env.opts.controlTimeout)
		err := s.toggleMCP(ctx, name, false, record)
		cancel()
		if err != nil {
			s.log.Warn("MCP server toggled off in this session could not be disabled in the new process", "server", name, "err", s.mcp.scrub(err.Error()))
			s.mcp.mu.Lock()
			delete(s.mcp.off, name)
			s.mcp.mu.Unlock()
			continue
		}
		s.log.Info("MCP server disabled again in the new process", "server", name)
	}
	s.refreshMCPStatus()
}

// refreshMCPStatus asks claude for mcp_status (at most one request at a
// time) and feeds the answer to the MCP status.
func (s *Session) refreshMCPStatus() {
	s.mu.Lock()
	if s.mcp.statusInFlight || s.proc.exited || s.restarts.active || s.proc.cur == nil {
		s.mu.Unlock()
		return
	}
	s.mcp.statusInFlight = true
	p := s.proc.cur
	s.mu.Unlock()
	_, _ = s.control(p, "mcp_status", nil, func(r controlResult) {
		s.mu.Lock()
		s.mcp.statusInFlight = false
		s.mu.Unlock()
		if r.err != nil {
			if !errors.Is(r.err, errSessionExited) {
				s.log.Debug("mcp_status failed", "err", r.err)
			}
			return
		}
		s.mcp.target.Observe(mcphub.ParseMCPStatus(r.resp), time.Now())
	})
}

// config returns the MCP configuration of the session: the proxy's,
// or, when the client sent servers, the proxy's with them merged
// (mcphub.Config.ForClient), made again whenever the proxy's changes. A merge
// that fails (a source that cannot merge) leaves the client's servers out:
// they never start without the policy's say.
func (m *sessionMCP) config() *mcphub.Config {
	base := m.target.Config()
	if m.client == nil || base == nil {
		return base
	}
	m.clientMu.Lock()
	defer m.clientMu.Unlock()
	if m.clientBase == base || m.clientDone {
		if m.clientCfg != nil {
			return m.clientCfg
		}
		return base
	}
	without := func(why string) *mcphub.Config {
		var status []mcpconfig.ClientStatus
		for _, name := range m.client.Names() {
			status = append(status, mcpconfig.ClientStatus{Name: name, Approval: mcpconfig.ApprovalAwaiting, Reason: why})
		}
		m.setClientLocked(base, nil, status, nil)
		return base
	}
	if base.ForClient == nil {
		return without("not started: the proxy's MCP configuration takes no client servers")
	}
	cfg, status, retire, err := base.ForClient(m.client)
	if err != nil {
		m.log.Error("merging the client's MCP servers", "err", err)
		return without("not started: merging it into the proxy's MCP configuration failed (see the proxy's log)")
	}
	m.setClientLocked(base, cfg, status, retire)
	return cfg
}

// setClientLocked installs a new client configuration, retires the old
// one and logs what changed for the client's servers.
func (m *sessionMCP) setClientLocked(base, cfg *mcphub.Config, status []mcpconfig.ClientStatus, retire func()) {
	if m.clientRetire != nil {
		m.clientRetire()
	}
	old := m.clientStatus
	m.clientBase, m.clientCfg, m.clientStatus, m.clientRetire = base, cfg, status, retire
	for i, st := range status {
		if i < len(old) && old[i] == st {
			continue
		}
		if st.Active {
			m.log.Info("client MCP server in use", "server", st.Name)
		} else {
			m.log.Warn("client MCP server not started", "server", st.Name, "approval", st.Approval, "reason", st.Reason)
		}
	}
}

// clientStatuses says what became of the client's servers in the
// configuration last used (session/create's reply).
func (m *sessionMCP) clientStatuses() []mcpconfig.ClientStatus {
	m.clientMu.Lock()
	defer m.clientMu.Unlock()
	return m.clientStatus
}

// end retires the client configuration once the session has no process
// and will start none.
func (m *sessionMCP) end() {
	m.clientMu.Lock()
	defer m.clientMu.Unlock()
	m.clientDone = true
	if m.clientRetire != nil {
		m.clientRetire()
		m.clientRetire = nil
	}
}

// scrubToolResults masks in a user event that carries tool results the
// secrets of the session's MCP configuration (env and header values, URL
// and argument secrets): a tool may print them (the everything server's
// get-env prints its environment), and no frame, log or call log holds
// one (SPEC §10). The event's JSON text is scrubbed as it is (a secret in
// a string becomes *** in it); should that not leave JSON (a secret
// spanning JSON syntax), the event goes out as it was and the failure is
// logged. Other events are not read: a tool's output reaches clients
// only in tool results (the model's own text is streamed in pieces, which
// no scrub of a piece could catch).
func (m *sessionMCP) scrubToolResults(ev *stream.Event) {
	if ev.Type != stream.TypeUser || !bytes.Contains(ev.JSON, []byte(`"tool_result"`)) {
		return
	}
	if sec := m.secrets(); sec != nil {
		ev.JSON = scrubEventJSON(ev.JSON, sec.Scrub)
	}
}

// sessionSecrets is the secret set of a session made from one
// configuration.
type sessionSecrets struct {
	cfg *mcphub.Config
	sec *mcpconfig.Secrets
}

// secrets returns the secret set of the session: the configured secrets
// of its MCP configuration (the client's servers among them) and the
// secret-named environment values of ccproxy and claude (the mcphub.Hub's
// envSecrets). It is made again only when the configuration changes, so
// that Scrub's matcher is built once per set. Safe for concurrent use.
func (m *sessionMCP) secrets() *mcpconfig.Secrets {
	cfg := m.config()
	if c := m.secretsCache.Load(); c != nil && c.cfg == cfg {
		return c.sec
	}
	sec := m.envSecrets
	if cfg != nil && cfg.Resolved != nil {
		sec = mcpconfig.MergeSecrets(cfg.Resolved.Secrets(), sec)
	}
	m.secretsCache.Store(&sessionSecrets{cfg: cfg, sec: sec})
	return sec
}

// scrubEventJSON returns the JSON event b with scrub applied to its text
// (mcpconfig.ScrubJSON), or a user event saying it could not be read.
func scrubEventJSON(b []byte, scrub func(string) string) []byte {
	if out, ok := mcpconfig.ScrubJSON(b, scrub); ok {
		return out
	}
	return []byte(`{"type":"user","error":"a tool result could not be read to mask its secrets"}`)
}

// scrub masks in text the secrets of the session (see secrets), the
// client's servers among them (mcpHub.scrub knows the proxy's only).
func (m *sessionMCP) scrub(text string) string {
	return m.secrets().Scrub(text)
}
