package mcphub

import (
	"crypto/sha256"
	"encoding/json"
	"log/slog"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidwall/gjson"

	"github.com/ccproxy/ccproxy/mcpconfig"
	"github.com/ccproxy/ccproxy/protocol"
)

// Report is what a session (or a probe) reported of one MCP server.
type Report struct {
	Name       string
	Status     string
	Err        string
	ErrCode    string   // the probe failure code (probe results only)
	Tools      []string // nil when the report does not list tools
	ServerInfo *protocol.MCPServerInfo
	Scope      string // the CLI's scope name
	Transport  string
}

type observation struct {
	Report
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

// Subscriber receives the mcp/config and mcp/status pushes (encoded
// frames) of the hub. Push is called with the hub's lock held: it must not
// block nor call the hub; it reports whether the frame was queued. A
// Subscriber is a map key: two values subscribe the same receiver when
// they are equal.
type Subscriber interface {
	Push(frame []byte) bool
}

// Hub keeps the MCP configuration in force, the observations sessions
// and probes make of its servers, and the MCP status computed from them
// (SPEC §8); it pushes mcp/config and mcp/status to its subscribers.
// Its methods are safe for concurrent use; it runs no goroutine.
type Hub struct {
	log *slog.Logger

	applyMu sync.Mutex // serializes Apply: reading the source and installing its configuration

	// envSecrets are the secret-named environment values of ccproxy
	// (at start) and of claude's environment (mcpconfig.ProcessSecrets).
	envSecrets *mcpconfig.Secrets
	// secrets are cfg's configured secrets and envSecrets, scrubbed from
	// tool output and the errors servers report (see scrub). Written
	// under mu, read without it.
	secrets atomic.Pointer[mcpconfig.Secrets]

	mu          sync.Mutex
	cfg         *Config
	cfgFrame    []byte // mcp/config push
	defs        map[string][32]byte
	obs         map[string]*serverObs
	status      protocol.MCPStatus
	statusKey   string
	statusFrame []byte // mcp/status push
	subs        map[Subscriber]struct{}
	now         func() time.Time
}

// NewHub makes the hub; claudeEnv is the environment claude processes
// get, whose secret-named values are secrets as ccproxy's own are.
func NewHub(log *slog.Logger, claudeEnv ...string) *Hub {
	h := &Hub{log: log, defs: map[string][32]byte{}, obs: map[string]*serverObs{}, subs: map[Subscriber]struct{}{}, now: time.Now}
	h.envSecrets = mcpconfig.ProcessSecrets(claudeEnv)
	h.secrets.Store(h.envSecrets)
	h.status.Servers = []protocol.MCPServerStatus{}
	h.cfgFrame, _ = protocol.EncodePush(protocol.TypeMCPConfig, protocol.MCPConfig{Servers: []protocol.MCPConfigServer{}})
	h.recomputeLocked()
	return h
}

// Scrub masks in text, written by an MCP server or a tool, the secrets of
// the configuration in force and the secret-named environment values of
// ccproxy and claude. It takes no lock.
func (h *Hub) Scrub(text string) string { return h.secrets.Load().Scrub(text) }

// SetConfig installs cfg and reports what changed from the configuration
// in force: pushed when anything did (mcp/config and mcp/status were then
// pushed to subscribers), active when the active servers did, so live
// sessions need mcp_set_servers (never for the first configuration: the
// sessions started with it). When both configurations carry Resolved,
// mcpconfig.Diff decides (an inactive server or the error list changing
// is not an active change); otherwise any new configuration changed
// everything.
func (h *Hub) SetConfig(cfg *Config) (pushed, active bool) {
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
	if f, err := protocol.EncodePush(protocol.TypeMCPConfig, cfg.View); err != nil {
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
	at := h.now()
	for _, r := range cfg.Known {
		h.addLocked(r, at, protocol.OriginSession)
	}
	for sub := range h.subs {
		sub.Push(h.cfgFrame)
	}
	h.recomputeLocked()
	return true, active
}

// Apply installs src's current configuration (SetConfig), read and
// installed under applyMu, so that concurrent applications install the
// configurations in the order the source made them.
func (h *Hub) Apply(src Source) (pushed, active bool) {
	h.applyMu.Lock()
	defer h.applyMu.Unlock()
	return h.SetConfig(src.Current())
}

// EnvSecrets returns the secret-named environment values of ccproxy and of
// claude's environment, the part of every secret set that is not
// configured (a session's set adds its configuration's to it).
func (h *Hub) EnvSecrets() *mcpconfig.Secrets { return h.envSecrets }

// Config returns the configuration in force (nil before the first).
func (h *Hub) Config() *Config {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.cfg
}

// Observe records reports of a session made at time at.
func (h *Hub) Observe(reports []Report, at time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range reports {
		h.addLocked(r, at, protocol.OriginSession)
	}
	h.recomputeLocked()
}

// ProbeTarget returns the configuration in force and the fingerprints of
// its server definitions, to be handed back to observeProbes with the
// results of probing that configuration.
func (h *Hub) ProbeTarget() (*Config, map[string][32]byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.cfg, h.defs // SetConfig replaces defs, never modifies it
}

// Unobserved returns the names among names that have no definitive
// observation: those a probe of the proxy's own should look at.
func (h *Hub) Unobserved(names []string) []string {
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

// ObserveProbes records probe results of the configuration whose
// definitions were defs (from probeTarget). A result for a server whose
// definition changed meanwhile is discarded, and so are NOT_ACTIVE and
// SERVER_NOT_FOUND results: the configuration speaks for those servers.
// Each result counts as observed at its ProbedAt.
func (h *Hub) ObserveProbes(results []protocol.ProbeResult, defs map[string][32]byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, res := range results {
		if res.Error != nil && (res.Error.Code == protocol.ProbeNotActive || res.Error.Code == protocol.ProbeServerNotFound) {
			continue
		}
		if d, ok := h.defs[res.Name]; !ok || d != defs[res.Name] {
			continue // probed an older definition
		}
		r := Report{Name: res.Name, Status: res.Status, ServerInfo: res.ServerInfo, Transport: res.Transport}
		if res.Error != nil {
			r.Err, r.ErrCode = res.Error.Message, res.Error.Code
		}
		if res.Tools != nil {
			r.Tools = make([]string, 0, len(res.Tools))
			for _, t := range res.Tools {
				r.Tools = append(r.Tools, t.Name)
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
func (h *Hub) addLocked(r Report, at time.Time, origin string) {
	if r.Name == "" {
		return
	}
	// The error text is the server's (claude's mcp_status quotes it):
	// never shown with a secret in it.
	r.Err = h.Scrub(r.Err)
	o := h.obs[r.Name]
	if o == nil {
		o = &serverObs{withTools: map[string]*observation{}}
		h.obs[r.Name] = o
	}
	ob := &observation{Report: r, at: at, origin: origin}
	switch r.Status {
	case protocol.MCPPending:
		if ob.supersedes(o.pending) {
			o.pending = ob
		}
	default:
		if ob.supersedes(o.definitive) {
			o.definitive = ob
		}
	}
	if r.Tools != nil && ob.supersedes(o.withTools[r.Status]) {
		o.withTools[r.Status] = ob
	}
}

// NeedsDetail reports whether reports (from system/init, which carries
// statuses only) name a settled status for which no mcp_status answer has
// given tools and error text yet.
func (h *Hub) NeedsDetail(reports []Report) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range reports {
		if r.Status == protocol.MCPPending || r.Name == "" {
			continue
		}
		if o := h.obs[r.Name]; o == nil || o.withTools[r.Status] == nil {
			return true
		}
	}
	return false
}

// Subscribe adds sub to the MCP subscribers and pushes mcp/config and
// mcp/status to it (after the reply the caller queued).
func (h *Hub) Subscribe(sub Subscriber) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.subs[sub] = struct{}{}
	sub.Push(h.cfgFrame)
	sub.Push(h.statusFrame)
}

// Unsubscribe removes sub; nothing is pushed to it afterwards.
func (h *Hub) Unsubscribe(sub Subscriber) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.subs, sub)
}

// StatusBody returns the body of GET /v1/mcp/status.
func (h *Hub) StatusBody() []byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	b, _ := json.Marshal(h.status)
	return b
}

// AnyPending reports whether a server's status is pending, so sessions
// should be asked for mcp_status again.
func (h *Hub) AnyPending() bool {
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
func (h *Hub) recomputeLocked() {
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
			list = append(list, h.entryLocked(name, cliScope(r.Scope), protocol.ApprovalNotNeeded, r.Transport, true))
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
	f, err := protocol.EncodePush(protocol.TypeMCPStatus, st)
	if err != nil {
		h.log.Error("mcp status cannot be sent to clients", "err", err)
		return
	}
	h.statusKey, h.status, h.statusFrame = key, st, f
	for sub := range h.subs {
		sub.Push(h.statusFrame)
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

func (h *Hub) entryLocked(name, scope, approval, transport string, active bool) protocol.MCPServerStatus {
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
	e.Status = cliStatus(win.Status)
	e.Error, e.ErrorCode = win.Err, win.ErrCode
	e.Origin = win.origin
	e.ObservedAt = win.at.UTC()
	e.ServerInfo = win.ServerInfo
	tools := win.Tools
	if tools == nil {
		if wt := o.withTools[win.Status]; wt != nil {
			tools = wt.Tools
			if e.ServerInfo == nil {
				e.ServerInfo = wt.ServerInfo
			}
			if e.Error == "" {
				e.Error, e.ErrorCode = wt.Err, wt.ErrCode
			}
		}
	}
	if tools != nil {
		e.Tools = slices.Clone(tools)
		n := int64(len(tools))
		e.ToolCount = &n
	}
	if e.Transport == "" {
		e.Transport = transportName(win.Transport)
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

// ParseInitServers reads the mcp_servers of a system/init event.
func ParseInitServers(event []byte) []Report {
	var out []Report
	gjson.GetBytes(event, "mcp_servers").ForEach(func(_, v gjson.Result) bool {
		out = append(out, Report{Name: v.Get("name").String(), Status: v.Get("status").String(), Scope: v.Get("source").String()})
		return true
	})
	return out
}

// ParseMCPStatus reads the response of an mcp_status control request.
func ParseMCPStatus(resp []byte) []Report {
	var out []Report
	gjson.GetBytes(resp, "mcpServers").ForEach(func(_, v gjson.Result) bool {
		r := Report{
			Name:      v.Get("name").String(),
			Status:    v.Get("status").String(),
			Err:       v.Get("error").String(),
			Scope:     v.Get("scope").String(),
			Transport: v.Get("transport").String(),
		}
		if r.Transport == "" {
			r.Transport = v.Get("config.type").String()
		}
		if t := v.Get("tools"); t.IsArray() {
			r.Tools = []string{}
			t.ForEach(func(_, tool gjson.Result) bool {
				r.Tools = append(r.Tools, tool.Get("name").String())
				return true
			})
		}
		if si := v.Get("serverInfo"); si.IsObject() && si.Get("name").String() != "" {
			r.ServerInfo = &protocol.MCPServerInfo{Name: si.Get("name").String(), Version: si.Get("version").String(), Title: si.Get("title").String()}
		}
		out = append(out, r)
		return true
	})
	return out
}
