package mcpsession

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidwall/gjson"

	"github.com/ccproxy/ccproxy/mcpconfig"
	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/proxy/mcphub"
	"github.com/ccproxy/ccproxy/stream"
)

// Session is the proxy session as its MCP part sees it. Its methods are
// called with Part.mu held or with no lock of the part held, never under
// Part.clientMu.
type Session interface {
	// Call sends the session's claude the control request subtype and
	// waits for its answer. exited is true (and err not nil) when the
	// session's claude has exited.
	Call(ctx context.Context, subtype string, fields any) (resp json.RawMessage, exited bool, err error)
	// Launched returns the servers of the running process's --mcp-config
	// (nil: none, or no process) and whether the session takes a change
	// now (not when it has exited, closes or restarts: a new process is
	// launched with the configuration then in force).
	Launched() (servers map[string]bool, ok bool)
	// RequestRestart restarts claude with --resume between turns.
	RequestRestart(why string)
	// RefreshStatus asks claude for mcp_status (at most one at a time)
	// and feeds it to the MCP status.
	RefreshStatus()
}

// Target is the proxy's MCP configuration in force (mcphub.Hub).
type Target interface {
	Config() *mcphub.Config
}

// Config is what a Part is made with.
type Config struct {
	Client     *mcpconfig.ClientServers // session/create mcpServers; nil without
	Target     Target                   // the proxy's configuration in force
	EnvSecrets *mcpconfig.Secrets       // the secret-named environment values of ccproxy and claude (mcphub.Hub.EnvSecrets)
	Log        *slog.Logger
	// ControlTimeout bounds each control request of Apply and ReapplyOff.
	ControlTimeout time.Duration
	// Toggles takes back the CLI's record of an mcp_toggle (the MCP
	// source, when it can); nil runs the toggle as is.
	Toggles mcphub.ToggleRecorder
}

// Part is the MCP part of a session (see the package's doc for what
// guards each field).
type Part struct {
	sess Session
	cfg  Config

	mu  sync.Mutex      // serializes Apply and Toggle
	off map[string]bool // servers toggled off in this session (mcp/toggle); guarded by mu

	// The configuration with the servers the client sent (cfg.Client),
	// made from the proxy's configuration clientBase; see Config.
	clientMu     sync.Mutex
	clientBase   *mcphub.Config
	clientCfg    *mcphub.Config
	clientStatus []mcpconfig.ClientStatus
	clientRetire func()
	clientDone   bool // the session ended: nothing more is made

	secretsCache atomic.Pointer[secretsOf] // see Secrets
}

// New returns the MCP part of sess.
func New(sess Session, cfg Config) *Part {
	return &Part{sess: sess, cfg: cfg}
}

// Apply sends the full MCP server set now in force to claude, less the
// servers toggled off in this session (off: sending them would enable them
// again), then asks for its status.
//
// claude's mcp_set_servers never removes a server of its --mcp-config
// (docs/CLI-NOTES.md): when the configuration no longer has one of the
// servers the running process was launched with (removed from a file,
// rejected, mcp/remove, disabled by policy), the session restarts between
// turns with the new configuration instead (RequestRestart: turns sent
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
func (m *Part) Apply() {
	m.mu.Lock()
	defer m.mu.Unlock()
	cfg := m.Config()
	if cfg == nil {
		return
	}
	launched, ok := m.sess.Launched()
	if !ok {
		return
	}
	var gone []string // servers of the process's --mcp-config no longer in force
	for name := range launched {
		if _, ok := cfg.Servers[name]; !ok {
			gone = append(gone, name)
		}
	}
	if len(gone) > 0 {
		slices.Sort(gone)
		m.cfg.Log.Info("MCP servers claude was launched with left the configuration; mcp_set_servers cannot remove them, so the session restarts between turns", "servers", gone)
		m.sess.RequestRestart("MCP servers removed: " + strings.Join(gone, ", "))
		return
	}
	servers := make(map[string]json.RawMessage, len(cfg.Servers))
	for name, def := range cfg.Servers {
		if !m.off[name] {
			servers[name] = def
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), m.cfg.ControlTimeout)
	defer cancel()
	resp, exited, err := m.sess.Call(ctx, "mcp_set_servers", map[string]any{"servers": servers})
	switch {
	case exited:
		return
	case err != nil:
		// claude's message may quote the configuration it refused.
		msg := m.Scrub(err.Error())
		m.cfg.Log.Warn("claude refused mcp_set_servers", "err", msg)
		m.sess.RequestRestart("mcp_set_servers failed: " + msg)
	default:
		errs := gjson.GetBytes(resp, "errors").Map()
		for _, name := range slices.Sorted(maps.Keys(errs)) {
			m.cfg.Log.Warn("MCP server failed to start", "server", name, "err", m.Scrub(errs[name].String()))
		}
		m.cfg.Log.Info("MCP servers applied", "added", gjson.GetBytes(resp, "added").Raw, "removed", gjson.GetBytes(resp, "removed").Raw, "failed", len(errs))
	}
	m.sess.RefreshStatus()
}

// Toggle enables or disables server name in this session only, with
// claude's mcp_toggle run through record (the MCP source's
// UnrecordedToggle, which takes back what the CLI writes to
// ~/.claude.json for it; nil runs it as is), and keeps the choice in off
// so later mcp_set_servers leave a disabled server out. Serialized with
// Apply.
func (m *Part) Toggle(ctx context.Context, name string, enabled bool, record func(name string, enabled bool, toggle func() error) error) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	var (
		ran  bool  // the toggle was sent
		terr error // claude's answer
	)
	toggle := func() error {
		ran = true
		_, _, terr = m.sess.Call(ctx, "mcp_toggle", map[string]any{"serverName": name, "enabled": enabled})
		return terr
	}
	var ferr error // the record could not be taken back
	if record != nil {
		if err := record(name, enabled, toggle); err != nil && err != terr {
			ferr = err
			m.cfg.Log.Error("taking back the CLI's record of mcp_toggle in ~/.claude.json", "server", name, "err", err)
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
		delete(m.off, name)
	} else {
		if m.off == nil {
			m.off = map[string]bool{}
		}
		m.off[name] = true
	}
	return ferr
}

// ToggleRecorded is Toggle with the record of Config.Toggles (mcp/toggle
// in a live session).
func (m *Part) ToggleRecorded(ctx context.Context, name string, enabled bool) error {
	return m.Toggle(ctx, name, enabled, m.record())
}

func (m *Part) record() func(string, bool, func() error) error {
	if m.cfg.Toggles == nil {
		return nil
	}
	return m.cfg.Toggles.UnrecordedToggle
}

// ReapplyOff disables again, in a new process of the session (a restart
// with --resume starts every configured server), the servers mcp/toggle
// disabled in it, as Toggle does; a server claude no longer knows is
// forgotten, and so is one no longer in the configuration (the restart
// Apply asks for when it left). Run by the restart, after the process
// started.
func (m *Part) ReapplyOff() {
	var servers map[string]json.RawMessage
	if cfg := m.Config(); cfg != nil {
		servers = cfg.Servers
	}
	m.mu.Lock()
	for name := range m.off {
		if _, ok := servers[name]; !ok {
			delete(m.off, name)
			m.cfg.Log.Info("MCP server toggled off in this session is no longer configured; forgotten", "server", name)
		}
	}
	names := slices.Sorted(maps.Keys(m.off))
	m.mu.Unlock()
	if len(names) == 0 {
		return
	}
	for _, name := range names {
		ctx, cancel := context.WithTimeout(context.Background(), m.cfg.ControlTimeout)
		err := m.ToggleRecorded(ctx, name, false)
		cancel()
		if err != nil {
			m.cfg.Log.Warn("MCP server toggled off in this session could not be disabled in the new process", "server", name, "err", m.Scrub(err.Error()))
			m.mu.Lock()
			delete(m.off, name)
			m.mu.Unlock()
			continue
		}
		m.cfg.Log.Info("MCP server disabled again in the new process", "server", name)
	}
	m.sess.RefreshStatus()
}

// Config returns the MCP configuration of the session: the proxy's, or,
// when the client sent servers, the proxy's with them merged
// (mcphub.Config.ForClient), made again whenever the proxy's changes. A
// merge that fails (a source that cannot merge) leaves the client's
// servers out: they never start without the policy's say.
func (m *Part) Config() *mcphub.Config {
	base := m.cfg.Target.Config()
	if m.cfg.Client == nil || base == nil {
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
		for _, name := range m.cfg.Client.Names() {
			status = append(status, mcpconfig.ClientStatus{Name: name, Approval: mcpconfig.ApprovalAwaiting, Reason: why})
		}
		m.setClientLocked(base, nil, status, nil)
		return base
	}
	if base.ForClient == nil {
		return without("not started: the proxy's MCP configuration takes no client servers")
	}
	cfg, status, retire, err := base.ForClient(m.cfg.Client)
	if err != nil {
		m.cfg.Log.Error("merging the client's MCP servers", "err", err)
		return without("not started: merging it into the proxy's MCP configuration failed (see the proxy's log)")
	}
	m.setClientLocked(base, cfg, status, retire)
	return cfg
}

// setClientLocked installs a new client configuration, retires the old
// one and logs what changed for the client's servers.
func (m *Part) setClientLocked(base, cfg *mcphub.Config, status []mcpconfig.ClientStatus, retire func()) {
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
			m.cfg.Log.Info("client MCP server in use", "server", st.Name)
		} else {
			m.cfg.Log.Warn("client MCP server not started", "server", st.Name, "approval", st.Approval, "reason", st.Reason)
		}
	}
}

// ClientStatuses says what became of the client's servers in the
// configuration last used (session/create's reply).
func (m *Part) ClientStatuses() []mcpconfig.ClientStatus {
	m.clientMu.Lock()
	defer m.clientMu.Unlock()
	return m.clientStatus
}

// End retires the client configuration once the session has no process
// and will start none.
func (m *Part) End() {
	m.clientMu.Lock()
	defer m.clientMu.Unlock()
	m.clientDone = true
	if m.clientRetire != nil {
		m.clientRetire()
		m.clientRetire = nil
	}
}

// ScrubToolResults masks in a user event that carries tool results the
// secrets of the session's MCP configuration (env and header values, URL
// and argument secrets): a tool may print them (the everything server's
// get-env prints its environment), and no frame, log or call log holds
// one (SPEC §10). The event's JSON text is scrubbed as it is (a secret in
// a string becomes *** in it); should that not leave JSON (a secret
// spanning JSON syntax), the event goes out as it was and the failure is
// logged. Other events are not read: a tool's output reaches clients
// only in tool results (the model's own text is streamed in pieces, which
// no scrub of a piece could catch).
func (m *Part) ScrubToolResults(ev *stream.Event) {
	if ev.Type != stream.TypeUser || !bytes.Contains(ev.JSON, []byte(`"tool_result"`)) {
		return
	}
	if sec := m.Secrets(); sec != nil {
		ev.JSON = ScrubEventJSON(ev.JSON, sec.Scrub)
	}
}

// secretsOf is the secret set of a session made from one configuration.
type secretsOf struct {
	cfg *mcphub.Config
	sec *mcpconfig.Secrets
}

// Secrets returns the secret set of the session: the configured secrets
// of its MCP configuration (the client's servers among them) and the
// secret-named environment values of ccproxy and claude
// (Config.EnvSecrets). It is made again only when the configuration
// changes, so that Scrub's matcher is built once per set. Safe for
// concurrent use.
func (m *Part) Secrets() *mcpconfig.Secrets {
	cfg := m.Config()
	if c := m.secretsCache.Load(); c != nil && c.cfg == cfg {
		return c.sec
	}
	sec := m.cfg.EnvSecrets
	if cfg != nil && cfg.Resolved != nil {
		sec = mcpconfig.MergeSecrets(cfg.Resolved.Secrets(), sec)
	}
	m.secretsCache.Store(&secretsOf{cfg: cfg, sec: sec})
	return sec
}

// ScrubEventJSON returns the JSON event b with scrub applied to its text
// (mcpconfig.ScrubJSON), or a user event saying it could not be read.
func ScrubEventJSON(b []byte, scrub func(string) string) []byte {
	if out, ok := mcpconfig.ScrubJSON(b, scrub); ok {
		return out
	}
	return []byte(`{"type":"user","error":"a tool result could not be read to mask its secrets"}`)
}

// Scrub masks in text the secrets of the session (see Secrets), the
// client's servers among them (mcphub.Hub.Scrub knows the proxy's only).
func (m *Part) Scrub(text string) string {
	return m.Secrets().Scrub(text)
}

// ClientServers checks the MCP servers a client sent with session/create
// (raw; nil for none). They go through the proxy's MCP configuration
// (merge and approval, mcphub.Config.ForClient); a proxy whose
// configuration takes none (accepted false) refuses them.
func ClientServers(raw json.RawMessage, accepted bool) (*mcpconfig.ClientServers, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	cs, err := mcpconfig.ParseClientServers("session/create", raw)
	if err != nil {
		var fe *mcpconfig.FileError
		if errors.As(err, &fe) {
			field := "data.mcpServers"
			if fe.Server != "" {
				field += fmt.Sprintf("[%q]", fe.Server)
			}
			return nil, protocol.Errorf(protocol.CodeBadRequest, "session/create: %s: %s", field, fe.Message)
		}
		return nil, protocol.Errorf(protocol.CodeBadRequest, "session/create: data.mcpServers: %v", err)
	}
	if len(cs.Names()) == 0 {
		return nil, nil
	}
	if !accepted {
		return nil, protocol.Errorf(protocol.CodeBadRequest, "session/create: data.mcpServers: this proxy has no MCP configuration of its own (--demo, --replay) and takes no MCP servers from clients")
	}
	return cs, nil
}
