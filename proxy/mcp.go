package proxy

import (
	"crypto/sha256"
	"encoding/json"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidwall/gjson"

	"github.com/ccproxy/ccproxy/mcpconfig"
	"github.com/ccproxy/ccproxy/protocol"
)

// MCPSource is where the proxy's MCP configuration comes from. Package
// mcpconfig provides the real one; tests use a fixed one.
//
// Current, Changes, Approve and Reject may be called from any goroutine, at
// any time, concurrently.
type MCPSource interface {
	// Current returns the configuration in force now. The proxy does not
	// modify it and may keep it.
	Current() *MCPConfig
	// Changes receives a value (sent without blocking, coalesced) whenever
	// Current changed: a config file was edited, a server approved, ...
	Changes() <-chan struct{}
	// Approve and Reject record a decision about a project (.mcp.json)
	// server and return its approval afterwards ("approved", "rejected").
	// Errors a client may see are *protocol.Error (mcp_server_not_found,
	// bad_request); others are logged and reported as internal.
	Approve(name string) (approval string, err error)
	Reject(name string) (approval string, err error)
}

// MCPConfig is one resolved MCP configuration, as the proxy uses it.
type MCPConfig struct {
	// Spawn returns the MCP flags of a new claude process, e.g.
	// --strict-mcp-config --mcp-config FILE --allowedTools mcp__a mcp__b
	// (they go last on the command line: the flags are variadic), and
	// release, called once that process has exited (the flags may name a
	// file that must exist until then). Nil means no flags. It may be
	// called concurrently.
	Spawn func() (args []string, release func(), err error)
	// Servers is the mcp_set_servers payload: every active server by name,
	// its definition as claude takes it (stdio entries always carry "args").
	Servers map[string]json.RawMessage
	// AllowedTools are the tool rules passed with --allowedTools: the
	// user's permissions.allow rules (and, with serve --allow-mcp-tools,
	// "mcp__<server>" for every active server). A permission request for a
	// tool they allow and DisallowedTools do not deny (a rule or a server
	// added after claude started) is allowed without asking anyone.
	AllowedTools []string
	// DisallowedTools are the rules passed with --disallowedTools: the
	// user's permissions.deny rules.
	DisallowedTools []string
	// View is the redacted configuration pushed as mcp/config.
	View protocol.MCPConfig
	// ForClient, when set, returns the configuration of a session whose
	// client sent MCP servers (session/create mcpServers): this one with
	// them merged by mcpconfig.Config.WithClient (below every file; started
	// only when the source trusts client servers), with a Spawn of its own,
	// and what became of each server. The session calls retire once it no
	// longer uses the result (a newer configuration, or its end); the
	// --mcp-config file goes once every process that read it has exited
	// too. Nil when the source takes no client servers: session/create
	// then refuses them. It may be called concurrently.
	ForClient func(cs *mcpconfig.ClientServers) (cfg *MCPConfig, status []mcpconfig.ClientStatus, retire func(), err error)
	// Resolved is the configuration package probe connects to for
	// mcp/probe, mcp/tools and mcp/call (SPEC §3), the same servers as
	// Servers and View. Nil when the source has none: then those requests
	// are not offered, and each new configuration counts as changed in
	// every way (with it, mcpconfig.Diff says what changed).
	Resolved *mcpconfig.Config
}

// allows reports whether the AllowedTools rules allow toolName of the MCP
// tool ref (nil for tools that are not MCP tools) and no DisallowedTools
// rule denies it. Forms understood (FACTS §4): the tool's exact name,
// mcp__srv, mcp__srv__tool, mcp__srv__*, mcp__srv(*). mcp__* and prefixes
// match nothing, as in the CLI; other rules (e.g. "Bash(npm test:*)") are
// left to claude, which applies them itself: the proxy then asks.
func (c *MCPConfig) allows(toolName string, ref *protocol.MCPRef) bool {
	if c == nil {
		return false
	}
	return ruleMatches(c.AllowedTools, toolName, ref) && !ruleMatches(c.DisallowedTools, toolName, ref)
}

// ruleMatches reports whether one of the rules (each entry may hold several,
// comma or space separated, as on claude's command line) names the tool.
// Without ref the server part is taken from the tool name.
func ruleMatches(rules []string, toolName string, ref *protocol.MCPRef) bool {
	srv, tool := "", ""
	if ref != nil {
		srv, tool = mcpconfig.ToolPrefix(ref.Server), ref.Tool // as claude names the server's tools
	}
	for _, entry := range rules {
		for _, rule := range strings.FieldsFunc(entry, func(r rune) bool { return r == ',' || r == ' ' }) {
			if rule == toolName {
				return true
			}
			base := strings.TrimSuffix(strings.TrimSuffix(rule, "__*"), "(*)")
			if !strings.HasPrefix(base, "mcp__") || len(base) <= len("mcp__") {
				continue // mcp__* matches nothing, as in the CLI
			}
			if ref != nil && (base == srv || rule == srv+"__"+tool) {
				return true
			}
			if ref == nil && strings.HasPrefix(toolName, base+"__") && !strings.Contains(toolName[len(base)+2:], "__") {
				return true
			}
		}
	}
	return false
}

// mcpReport is one observation of one MCP server: a session's report or
// a probe result.
type mcpReport struct {
	name       string
	status     string
	err        string
	errCode    string   // the probe failure code (probe results only)
	tools      []string // nil when the report does not list tools
	serverInfo *protocol.MCPServerInfo
	scope      string // the CLI's scope name
	transport  string
}

type observation struct {
	mcpReport
	at     time.Time
	origin string // protocol.OriginSession or protocol.OriginProbe
}

// supersedes reports whether ob wins over cur, the observation it would
// replace (SPEC §8): the newer one wins; at equal times a session report
// beats a probe, because sessions are what the chat actually uses.
func (ob *observation) supersedes(cur *observation) bool {
	switch {
	case cur == nil || ob.at.After(cur.at):
		return true
	case ob.at.Before(cur.at):
		return false
	}
	return ob.origin == protocol.OriginSession || cur.origin == protocol.OriginProbe
}

type serverObs struct {
	definitive *observation            // newest connected/failed/needs-auth/disabled
	pending    *observation            // newest pending
	withTools  map[string]*observation // newest report with tools, by status
}

// mcpHub keeps the MCP configuration in force, the observations sessions
// and probes make of its servers, and the MCP status computed from them
// (SPEC §8); it pushes mcp/config and mcp/status to the connections that
// subscribed.
type mcpHub struct {
	log *slog.Logger

	applyMu sync.Mutex // serializes applying configuration changes

	// envSecrets are the secret-named environment values of ccproxy
	// (at start) and of claude's environment (mcpconfig.ProcessSecrets).
	envSecrets *mcpconfig.Secrets
	// secrets are cfg's configured secrets and envSecrets, scrubbed from
	// tool output and the errors servers report (see scrub). Written
	// under mu, read without it.
	secrets atomic.Pointer[mcpconfig.Secrets]

	mu          sync.Mutex
	cfg         *MCPConfig
	cfgFrame    []byte // mcp/config push
	defs        map[string][32]byte
	obs         map[string]*serverObs
	status      protocol.MCPStatus
	statusKey   string
	statusFrame []byte // mcp/status push
	subs        map[*client]struct{}
	now         func() time.Time
}

// newMCPHub makes the hub; claudeEnv is the environment claude processes
// get, whose secret-named values are secrets as ccproxy's own are.
func newMCPHub(log *slog.Logger, claudeEnv ...string) *mcpHub {
	h := &mcpHub{log: log, defs: map[string][32]byte{}, obs: map[string]*serverObs{}, subs: map[*client]struct{}{}, now: time.Now}
	h.envSecrets = mcpconfig.ProcessSecrets(claudeEnv)
	h.secrets.Store(h.envSecrets)
	h.status.Servers = []protocol.MCPServerStatus{}
	h.cfgFrame, _ = encodePush(protocol.TypeMCPConfig, protocol.MCPConfig{Servers: []protocol.MCPConfigServer{}})
	h.recomputeLocked()
	return h
}

// scrub masks in text, written by an MCP server or a tool, the secrets of
// the configuration in force and the secret-named environment values of
// ccproxy and claude. It takes no lock.
func (h *mcpHub) scrub(text string) string { return h.secrets.Load().Scrub(text) }

// setConfig installs cfg and reports what changed from the configuration
// in force: pushed when anything did (mcp/config and mcp/status were then
// pushed to subscribers), active when the active servers did, so live
// sessions need mcp_set_servers (never for the first configuration: the
// sessions started with it). When both configurations carry Resolved,
// mcpconfig.Diff decides (an inactive server or the error list changing
// is not an active change); otherwise any new configuration changed
// everything.
func (h *mcpHub) setConfig(cfg *MCPConfig) (pushed, active bool) {
	if cfg == nil {
		return false, false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	old := h.cfg
	switch {
	case old == cfg:
		return false, false
	case old == nil:
		active = false
	case old.Resolved != nil && cfg.Resolved != nil:
		d := mcpconfig.Diff(old.Resolved, cfg.Resolved)
		if d.Empty() {
			h.cfg = cfg // the same servers, errors and states
			return false, false
		}
		active = d.ActiveChanged
	default:
		active = true
	}
	h.cfg = cfg
	if cfg.Resolved != nil {
		h.secrets.Store(mcpconfig.MergeSecrets(cfg.Resolved.Secrets(), h.envSecrets))
	} else {
		h.secrets.Store(h.envSecrets)
	}
	if f, err := encodePush(protocol.TypeMCPConfig, cfg.View); err != nil {
		h.log.Error("mcp config cannot be sent to clients", "err", err)
	} else {
		h.cfgFrame = f
	}
	defs := map[string][32]byte{}
	for _, s := range cfg.View.Servers {
		def := []byte(s.Config)
		if raw, ok := cfg.Servers[s.Name]; ok {
			def = raw
		}
		defs[s.Name] = sha256.Sum256(append([]byte(s.Scope+"\x00"+s.Approval+"\x00"), def...))
	}
	for name, d := range defs {
		if old, ok := h.defs[name]; !ok || old != d {
			delete(h.obs, name) // observations of an older definition
		}
	}
	for name := range h.defs {
		if _, ok := defs[name]; !ok {
			delete(h.obs, name)
		}
	}
	h.defs = defs
	for c := range h.subs {
		c.enqueue(outFrame{data: h.cfgFrame})
	}
	h.recomputeLocked()
	return true, active
}

func (h *mcpHub) config() *MCPConfig {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.cfg
}

// observe records reports of a session made at time at.
func (h *mcpHub) observe(reports []mcpReport, at time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range reports {
		h.addLocked(r, at, protocol.OriginSession)
	}
	h.recomputeLocked()
}

// probeTarget returns the configuration in force and the fingerprints of
// its server definitions, to be handed back to observeProbes with the
// results of probing that configuration.
func (h *mcpHub) probeTarget() (*MCPConfig, map[string][32]byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.cfg, h.defs // setConfig replaces defs, never modifies it
}

// unobserved returns the names among names that have no definitive
// observation: those a probe of the proxy's own should look at.
func (h *mcpHub) unobserved(names []string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, n := range names {
		if o := h.obs[n]; o == nil || o.definitive == nil {
			out = append(out, n)
		}
	}
	return out
}

// observeProbes records probe results of the configuration whose
// definitions were defs (from probeTarget). A result for a server whose
// definition changed meanwhile is discarded, and so are NOT_ACTIVE and
// SERVER_NOT_FOUND results: the configuration speaks for those servers.
// Each result counts as observed at its ProbedAt.
func (h *mcpHub) observeProbes(results []protocol.ProbeResult, defs map[string][32]byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, res := range results {
		if res.Error != nil && (res.Error.Code == protocol.ProbeNotActive || res.Error.Code == protocol.ProbeServerNotFound) {
			continue
		}
		if d, ok := h.defs[res.Name]; !ok || d != defs[res.Name] {
			continue // probed an older definition
		}
		r := mcpReport{name: res.Name, status: res.Status, serverInfo: res.ServerInfo, transport: res.Transport}
		if res.Error != nil {
			r.err, r.errCode = res.Error.Message, res.Error.Code
		}
		if res.Tools != nil {
			r.tools = make([]string, 0, len(res.Tools))
			for _, t := range res.Tools {
				r.tools = append(r.tools, t.Name)
			}
		}
		at := res.ProbedAt
		if at.IsZero() {
			at = h.now()
		}
		h.addLocked(r, at, protocol.OriginProbe)
	}
	h.recomputeLocked()
}

// addLocked records one observation made at time at.
func (h *mcpHub) addLocked(r mcpReport, at time.Time, origin string) {
	if r.name == "" {
		return
	}
	// The error text is the server's (claude's mcp_status quotes it):
	// never shown with a secret in it.
	r.err = h.scrub(r.err)
	o := h.obs[r.name]
	if o == nil {
		o = &serverObs{withTools: map[string]*observation{}}
		h.obs[r.name] = o
	}
	ob := &observation{mcpReport: r, at: at, origin: origin}
	switch r.status {
	case protocol.MCPPending:
		if ob.supersedes(o.pending) {
			o.pending = ob
		}
	default:
		if ob.supersedes(o.definitive) {
			o.definitive = ob
		}
	}
	if r.tools != nil && ob.supersedes(o.withTools[r.status]) {
		o.withTools[r.status] = ob
	}
}

// needsDetail reports whether reports (from system/init, which carries
// statuses only) name a settled status for which no mcp_status answer has
// given tools and error text yet.
func (h *mcpHub) needsDetail(reports []mcpReport) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range reports {
		if r.status == protocol.MCPPending || r.name == "" {
			continue
		}
		if o := h.obs[r.name]; o == nil || o.withTools[r.status] == nil {
			return true
		}
	}
	return false
}

// subscribe adds c to the MCP subscribers and queues mcp/config and
// mcp/status for it (after the reply the caller queued).
func (h *mcpHub) subscribe(c *client) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.subs[c] = struct{}{}
	c.enqueue(outFrame{data: h.cfgFrame})
	c.enqueue(outFrame{data: h.statusFrame})
}

func (h *mcpHub) unsubscribe(c *client) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.subs, c)
}

// statusBody returns the body of GET /v1/mcp/status.
func (h *mcpHub) statusBody() []byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	b, _ := json.Marshal(h.status)
	return b
}

// anyPending reports whether a server's status is pending, so sessions
// should be asked for mcp_status again.
func (h *mcpHub) anyPending() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, s := range h.status.Servers {
		if s.Status == protocol.MCPPending {
			return true
		}
	}
	return false
}

// recomputeLocked computes the status list and pushes it when it changed.
func (h *mcpHub) recomputeLocked() {
	var list []protocol.MCPServerStatus
	if h.cfg != nil {
		for _, cs := range h.cfg.View.Servers {
			list = append(list, h.entryLocked(cs.Name, cs.Scope, cs.Approval, cs.Type, cs.Active))
		}
	} else {
		// No configuration of our own: claude loads the user's; show what
		// sessions report.
		for name, o := range h.obs {
			var r *observation
			switch {
			case o.definitive != nil:
				r = o.definitive
			case o.pending != nil:
				r = o.pending
			default:
				continue
			}
			list = append(list, h.entryLocked(name, cliScope(r.scope), protocol.ApprovalNotNeeded, r.transport, true))
		}
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
	list = slices.CompactFunc(list, func(a, b protocol.MCPServerStatus) bool { return a.Name == b.Name })
	if list == nil {
		list = []protocol.MCPServerStatus{}
	}
	// Compare without times: a status is new only if something visible changed.
	key := statusKey(list)
	if key == h.statusKey && h.statusFrame != nil {
		return
	}
	st := protocol.MCPStatus{Servers: list, UpdatedAt: h.now().UTC()}
	f, err := encodePush(protocol.TypeMCPStatus, st)
	if err != nil {
		h.log.Error("mcp status cannot be sent to clients", "err", err)
		return
	}
	h.statusKey, h.status, h.statusFrame = key, st, f
	for c := range h.subs {
		c.enqueue(outFrame{data: h.statusFrame})
	}
}

func statusKey(list []protocol.MCPServerStatus) string {
	cp := slices.Clone(list)
	for i := range cp {
		cp[i].ObservedAt = time.Time{}
	}
	b, _ := json.Marshal(cp)
	return string(b)
}

func (h *mcpHub) entryLocked(name, scope, approval, transport string, active bool) protocol.MCPServerStatus {
	e := protocol.MCPServerStatus{Name: name, Scope: scope, Approval: approval, Transport: transportName(transport), Origin: protocol.OriginConfig}
	if e.Scope == "" {
		e.Scope = protocol.ScopeExtra
	}
	if e.Approval == "" {
		e.Approval = protocol.ApprovalNotNeeded
	}
	switch {
	case approval == protocol.ApprovalAwaiting:
		e.Status = protocol.MCPAwaitingApproval
		return e
	case approval == protocol.ApprovalRejected:
		e.Status = protocol.MCPRejected
		return e
	case !active:
		e.Status = protocol.MCPDisabled
		return e
	}
	o := h.obs[name]
	var win *observation
	if o != nil {
		win = o.definitive
		if win == nil {
			win = o.pending
		}
	}
	if win == nil {
		e.Status = protocol.MCPPending
		return e
	}
	e.Status = cliStatus(win.status)
	e.Error, e.ErrorCode = win.err, win.errCode
	e.Origin = win.origin
	e.ObservedAt = win.at.UTC()
	e.ServerInfo = win.serverInfo
	tools := win.tools
	if tools == nil {
		if wt := o.withTools[win.status]; wt != nil {
			tools = wt.tools
			if e.ServerInfo == nil {
				e.ServerInfo = wt.serverInfo
			}
			if e.Error == "" {
				e.Error, e.ErrorCode = wt.err, wt.errCode
			}
		}
	}
	if tools != nil {
		e.Tools = slices.Clone(tools)
		n := int64(len(tools))
		e.ToolCount = &n
	}
	if e.Transport == "" {
		e.Transport = transportName(win.transport)
	}
	return e
}

// cliStatus maps a status claude reports to a protocol status.
func cliStatus(s string) string {
	switch s {
	case protocol.MCPConnected, protocol.MCPFailed, protocol.MCPPending, protocol.MCPNeedsAuth, protocol.MCPDisabled:
		return s
	}
	return protocol.MCPFailed
}

// cliScope maps the CLI's scope names to protocol scopes.
func cliScope(s string) string {
	switch s {
	case "project":
		return protocol.ScopeProject
	case "user":
		return protocol.ScopeUser
	case "local":
		return protocol.ScopeLocal
	case "managed", "enterprise":
		return protocol.ScopeManaged
	}
	return protocol.ScopeExtra
}

func transportName(t string) string {
	switch t {
	case "stdio", "http", "sse", "ws":
		return t
	case "streamable-http":
		return "http"
	}
	return ""
}

// parseInitServers reads the mcp_servers of a system/init event.
func parseInitServers(event []byte) []mcpReport {
	var out []mcpReport
	gjson.GetBytes(event, "mcp_servers").ForEach(func(_, v gjson.Result) bool {
		out = append(out, mcpReport{name: v.Get("name").String(), status: v.Get("status").String(), scope: v.Get("source").String()})
		return true
	})
	return out
}

// parseMCPStatus reads the response of an mcp_status control request.
func parseMCPStatus(resp []byte) []mcpReport {
	var out []mcpReport
	gjson.GetBytes(resp, "mcpServers").ForEach(func(_, v gjson.Result) bool {
		r := mcpReport{
			name:      v.Get("name").String(),
			status:    v.Get("status").String(),
			err:       v.Get("error").String(),
			scope:     v.Get("scope").String(),
			transport: v.Get("transport").String(),
		}
		if r.transport == "" {
			r.transport = v.Get("config.type").String()
		}
		if t := v.Get("tools"); t.IsArray() {
			r.tools = []string{}
			t.ForEach(func(_, tool gjson.Result) bool {
				r.tools = append(r.tools, tool.Get("name").String())
				return true
			})
		}
		if si := v.Get("serverInfo"); si.IsObject() && si.Get("name").String() != "" {
			r.serverInfo = &protocol.MCPServerInfo{Name: si.Get("name").String(), Version: si.Get("version").String(), Title: si.Get("title").String()}
		}
		out = append(out, r)
		return true
	})
	return out
}
