package proxy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/ccproxy/ccproxy/mcpconfig"
	"github.com/ccproxy/ccproxy/mcpconfig/calllog"
	"github.com/ccproxy/ccproxy/mcpconfig/probe"
	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/stream"
)

// mcpCalls serves mcp/probe, mcp/tools, mcp/call and mcp/log (SPEC §3),
// runs the probes the proxy makes by itself (SPEC §8) and keeps the MCP
// call log.
//
// Goroutines: the requests (mcp/test too) run through reqs (an
// asyncRunner): each in a goroutine of its connection, at most
// MaxMCPRequests at once over all connections (limit_exceeded beyond),
// cancelled when its connection ends or the server shuts down
// (shutting_down); the auto-probe loop is owned by Serve (Server.wg). The call
// log is written by the sessions' stdout loops (one sessionCalls each) and by
// mcp/call; calllog.Log serializes them.
type mcpCalls struct {
	srv    *Server
	prober *probe.Prober // nil: mcp.probe, mcp.tools and mcp.call are not offered
	clog   *calllog.Log  // nil: mcp.log is not offered and no call is logged
	reqs   *asyncRunner  // mcp/probe, mcp/tools, mcp/call, mcp/log, mcp/test
	kick   chan struct{} // (cap 1) the auto-probe loop has work

	ctx    context.Context // the auto-probes': cancelled when the server shuts down
	cancel context.CancelFunc
}

// newMCPCalls sets up the prober and opens the call log, as s.opts say.
// s.mcp holds the first configuration already.
func newMCPCalls(s *Server) (*mcpCalls, error) {
	m := &mcpCalls{srv: s, kick: make(chan struct{}, 1)}
	m.reqs = newAsyncRunner(s.opts.MaxMCPRequests, "MCP requests (mcp/probe, mcp/tools, mcp/call, mcp/log, mcp/test)", m.protocolError)
	m.ctx, m.cancel = context.WithCancel(context.Background())
	if cfg := s.mcp.Config(); s.opts.MCP != nil && cfg != nil && cfg.Resolved != nil {
		po := s.opts.MCPProbe
		if po.Logger == nil {
			po.Logger = s.log.With("component", "probe")
		}
		if po.Environ == nil {
			po.Environ = s.claudeEnv // what claude's own MCP servers get: never the proxy's token
		}
		if po.ClientVersion == "" {
			po.ClientVersion = s.opts.Version
		}
		// Binary parts of direct calls go where the sessions' go: /v1/blobs.
		po.Attachments = stream.Options{Attachments: stream.AttachSink, Sink: s.blobs}
		m.prober = probe.NewProber(po)
	}
	if s.opts.CallLogDir != "" {
		path := calllog.ProjectFile(s.opts.CallLogDir, s.opts.Project)
		clog, err := calllog.Open(path, calllog.Options{StoreIO: s.opts.CallLogIO, Logger: s.log.With("component", "calllog")})
		if err != nil {
			m.cancel()
			return nil, fmt.Errorf("MCP call log: %w", err)
		}
		m.clog = clog
		s.log.Info("logging MCP tool calls", "file", path, "store_io", s.opts.CallLogIO)
	}
	return m, nil
}

// start starts the auto-probe loop (Options.AutoProbe), which probes the
// active servers at once and after every configuration change. Serve
// calls it once; the loop ends with shutdown.
func (m *mcpCalls) start() {
	if m.prober == nil || !m.srv.opts.AutoProbe {
		return
	}
	m.srv.wg.Add(1)
	go func() { defer m.srv.wg.Done(); m.autoLoop() }()
	m.configChanged()
}

// configChanged asks the auto-probe loop to probe the servers the new
// configuration has no observation of (new or changed definitions,
// servers just approved). It never blocks.
func (m *mcpCalls) configChanged() {
	select {
	case m.kick <- struct{}{}:
	default:
	}
}

// shutdown ends the auto-probe loop and cancels its probes (the requests
// are shut down with the Server's other runners); close closes the call
// log once nothing writes it any more (every session has ended).
func (m *mcpCalls) shutdown() { m.cancel() }

func (m *mcpCalls) close() {
	m.cancel()
	if m.clog != nil {
		if err := m.clog.Close(); err != nil {
			m.srv.log.Warn("closing the MCP call log", "err", err)
		}
	}
}

func (m *mcpCalls) autoLoop() {
	for {
		select {
		case <-m.ctx.Done():
			return
		case <-m.kick:
		}
		m.autoProbe()
	}
}

// autoProbe probes, concurrently (within the prober's bound), the active
// servers that have no definitive observation, and records each result as
// soon as it is in.
func (m *mcpCalls) autoProbe() {
	cfg, defs := m.srv.mcp.ProbeTarget()
	if cfg == nil || cfg.Resolved == nil {
		return
	}
	var active []string
	for _, srv := range cfg.Resolved.Servers {
		if srv.Active {
			active = append(active, srv.Name)
		}
	}
	names := m.srv.mcp.Unobserved(active)
	if len(names) == 0 {
		return
	}
	m.srv.log.Debug("probing MCP servers", "servers", names)
	var wg sync.WaitGroup
	for _, name := range names {
		wg.Go(func() {
			res, err := m.prober.Probe(m.ctx, cfg.Resolved, name)
			if err != nil || m.ctx.Err() != nil {
				return // gone from the configuration, or shutting down: not an observation
			}
			results := []protocol.ProbeResult{res}
			m.srv.metrics.probed(results)
			m.srv.mcp.ObserveProbes(results, defs)
		})
	}
	wg.Wait()
}

// protocolError turns a failure of package probe into its reply error,
// with the request type in front of the message.
func (m *mcpCalls) protocolError(c *client, typ string, err error) error {
	var pe *probe.Error
	if errors.As(err, &pe) {
		e := pe.ProtocolError()
		e.Message = typ + ": " + e.Message
		return e
	}
	var perr *protocol.Error
	if errors.As(err, &perr) {
		return perr
	}
	c.log.Error("MCP request failed", "type", typ, "err", err)
	return protocol.Errorf(protocol.CodeInternal, "%s failed; see the proxy's log", typ)
}

// resolved returns the configuration probes and calls connect to, with
// the fingerprints of its definitions.
func (m *mcpCalls) resolved(typ string) (*mcpconfig.Config, map[string][32]byte, error) {
	cfg, defs := m.srv.mcp.ProbeTarget()
	if cfg == nil || cfg.Resolved == nil {
		return nil, nil, fmt.Errorf("%s: the MCP configuration source gave no resolved configuration", typ)
	}
	return cfg.Resolved, defs, nil
}

// probe serves mcp/probe (under the runner m.reqs). The results are MCP status observations:
// mcp/status reflects them before the reply is queued.
func (m *mcpCalls) probe(ctx context.Context, _ *client, d *protocol.MCPProbe) (protocol.Data, error) {
	cfg, defs, err := m.resolved(protocol.TypeMCPProbe)
	if err != nil {
		return nil, err
	}
	var results []protocol.ProbeResult
	if d.Name != "" {
		res, err := m.prober.Probe(ctx, cfg, d.Name)
		if err != nil {
			return nil, err
		}
		results = []protocol.ProbeResult{res}
	} else {
		results = m.prober.ProbeAll(ctx, cfg)
	}
	if ctx.Err() != nil {
		return nil, ctx.Err() // cut short: not observations
	}
	m.srv.metrics.probed(results)
	m.srv.mcp.ObserveProbes(results, defs)
	if results == nil {
		results = []protocol.ProbeResult{}
	}
	return protocol.MCPProbeResult{Results: results}, nil
}

// tools serves mcp/tools (under the runner m.reqs).
func (m *mcpCalls) tools(ctx context.Context, _ *client, d *protocol.MCPTools) (protocol.Data, error) {
	cfg, _, err := m.resolved(protocol.TypeMCPTools)
	if err != nil {
		return nil, err
	}
	tools, err := m.prober.Tools(ctx, cfg, d.Name)
	if err != nil {
		return nil, err
	}
	if tools == nil {
		tools = []protocol.Tool{}
	}
	return protocol.MCPToolsResult{Server: d.Name, Tools: tools}, nil
}

// call serves mcp/call (under the runner m.reqs); a call that got a result goes to the call log.
func (m *mcpCalls) call(ctx context.Context, _ *client, d *protocol.MCPCall) (protocol.Data, error) {
	cfg, _, err := m.resolved(protocol.TypeMCPCall)
	if err != nil {
		return nil, err
	}
	res, err := m.prober.Call(ctx, cfg, d.Name, d.Tool, d.Arguments)
	if err != nil {
		return nil, err
	}
	m.logEntry(calllog.DirectEntry(res, d.Arguments, time.Now()))
	return res, nil
}

// callLog serves mcp/log (under the runner m.reqs).
func (m *mcpCalls) callLog(_ context.Context, _ *client, d *protocol.MCPLog) (protocol.Data, error) {
	limit := int64(protocol.DefaultLogLimit)
	if d.Limit != nil {
		limit = *d.Limit
	}
	entries, err := m.clog.Last(int(limit), d.Server)
	if err != nil {
		return nil, fmt.Errorf("reading the MCP call log: %w", err)
	}
	if entries == nil {
		entries = []protocol.LogEntry{}
	}
	for i := range entries { // a log written before a secret was known
		scrubEntry(&entries[i], m.srv.mcp.Scrub)
	}
	return protocol.MCPLogResult{Entries: entries}, nil
}

// sessionCalls pairs the MCP tool calls of one session's events for the
// call log. It belongs to the session's stdout loop (not safe for
// concurrent use).
type sessionCalls struct {
	m          *mcpCalls
	p          *calllog.Pairer
	maxPending int // the Pairer's MaxPending, for the log
	log        *slog.Logger
	dropped    int // p.Dropped() when last reported
	// scrub, when set, masks the session's secrets (Session.secrets: the
	// servers its client sent are not in the proxy's configuration).
	scrub func(string) string
}

// forSession returns the call pairing of a session's stdout loop, or nil
// when no call log is kept.
func (m *mcpCalls) forSession(session string, log *slog.Logger) *sessionCalls {
	if m.clog == nil {
		return nil
	}
	return m.newSessionCalls(session, calllog.PairerOptions{KeepIO: m.clog.StoresIO(), MaxPending: calllog.DefaultMaxPending}, log)
}

func (m *mcpCalls) newSessionCalls(session string, opts calllog.PairerOptions, log *slog.Logger) *sessionCalls {
	return &sessionCalls{m: m, p: calllog.NewPairer(session, opts), maxPending: opts.MaxPending, log: log}
}

// observe feeds an event of the session to its Pairer and logs the calls
// it completes. Only assistant and user events that package stream marked
// as holding MCP blocks (ev.MCP) are looked at: MCP calls start with an
// annotated tool_use and end with an annotated tool_result, and every
// other event (a 5 MB Bash result, say) is passed over unparsed.
func (sc *sessionCalls) observe(ev *stream.Event) {
	if !ev.MCP || (ev.Type != stream.TypeAssistant && ev.Type != stream.TypeUser) {
		return
	}
	for _, e := range sc.p.Observe(*ev, time.Now()) {
		if sc.scrub != nil {
			scrubEntry(&e, sc.scrub)
		}
		sc.m.logEntry(e)
	}
	if n := sc.p.Dropped(); n > sc.dropped {
		sc.dropped = n
		sc.log.Warn("MCP call log: too many tool calls awaited their results; the oldest were forgotten (their results are logged without a duration)",
			"dropped_total", n, "max_pending", sc.maxPending)
	}
}

// logEntry appends e to the call log; its input and output (a tool's or
// server's text) are scrubbed of secrets first (mcphub.Hub.Scrub), as
// everywhere else.
func (m *mcpCalls) logEntry(e protocol.LogEntry) {
	if m.clog == nil {
		return
	}
	scrubEntry(&e, m.srv.mcp.Scrub)
	if err := m.clog.Append(e); err != nil {
		m.srv.log.Warn("writing the MCP call log", "server", e.Server, "tool", e.Tool, "err", err)
	}
}

// scrubEntry masks secrets in a call log entry's input and output, the
// parts a tool, a server or the model wrote.
func scrubEntry(e *protocol.LogEntry, scrub func(string) string) {
	if e.Output != nil {
		if out := scrub(*e.Output); out != *e.Output {
			e.Output = &out
		}
	}
	if len(e.Input) > 0 {
		e.Input = scrubEventJSON(e.Input, scrub)
	}
}
