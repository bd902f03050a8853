package mcpcalls

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
	"github.com/ccproxy/ccproxy/proxy/runner"
)

// Status is what Calls needs of the MCP status hub: the configuration
// probes connect to, and where their results go.
type Status interface {
	// ProbeTarget returns the resolved MCP configuration in force (nil
	// when there is none) and the fingerprints of its server definitions,
	// to be handed back to ObserveProbes with the results of probing it.
	ProbeTarget() (*mcpconfig.Config, map[string][32]byte)
	// Unobserved returns the names among names that have no definitive
	// observation: those an auto-probe should look at.
	Unobserved(names []string) []string
	// ObserveProbes records probe results of the configuration whose
	// definitions were defs (mcp/status reflects them once it returns).
	ObserveProbes(results []protocol.ProbeResult, defs map[string][32]byte)
}

// Options configure New.
type Options struct {
	Status Status
	// Prober talks to the servers; nil: mcp/probe, mcp/tools, mcp/call
	// (and mcp/test) are not offered, and nothing is auto-probed.
	Prober *probe.Prober
	// AutoProbe: Start probes the active servers at once and after every
	// configuration change (ConfigChanged).
	AutoProbe bool
	// MaxRequests bounds the requests running at once over all
	// connections (the Runner's limit).
	MaxRequests int
	// CallLogDir, when set, is where the call log of Project is kept
	// (calllog.ProjectFile); "": no call log, mcp/log is not offered.
	CallLogDir string
	Project    string
	CallLogIO  bool // the call log stores inputs and outputs
	// Scrub masks the secrets of the MCP configuration in force;
	// ScrubJSON applies a scrub to the text of a JSON value (a call's
	// input).
	Scrub     func(text string) string
	ScrubJSON func(b []byte, scrub func(string) string) []byte
	Logger    *slog.Logger
}

// Calls serves mcp/probe, mcp/tools, mcp/call and mcp/log, runs the
// auto-probes and keeps the call log; see the package comment.
type Calls struct {
	status    Status
	prober    *probe.Prober // nil: mcp.probe, mcp.tools and mcp.call are not offered
	clog      *calllog.Log  // nil: mcp.log is not offered and no call is logged
	reqs      *runner.Runner
	autoProbe bool
	scrub     func(string) string
	scrubJSON func([]byte, func(string) string) []byte
	log       *slog.Logger
	kick      chan struct{} // (cap 1) the auto-probe loop has work

	ctx    context.Context // the auto-probes': cancelled by Shutdown
	cancel context.CancelFunc
	wg     sync.WaitGroup // the auto-probe loop

	closeOnce sync.Once
	closeErr  error
}

// New opens the call log, as o says.
func New(o Options) (*Calls, error) {
	m := &Calls{status: o.Status, prober: o.Prober, autoProbe: o.AutoProbe, scrub: o.Scrub, scrubJSON: o.ScrubJSON,
		log: o.Logger, kick: make(chan struct{}, 1)}
	m.reqs = runner.New(o.MaxRequests, "MCP requests (mcp/probe, mcp/tools, mcp/call, mcp/log, mcp/test)", m.protocolError)
	m.ctx, m.cancel = context.WithCancel(context.Background())
	if o.CallLogDir != "" {
		path := calllog.ProjectFile(o.CallLogDir, o.Project)
		clog, err := calllog.Open(path, calllog.Options{StoreIO: o.CallLogIO, Logger: o.Logger.With("component", "calllog")})
		if err != nil {
			m.cancel()
			return nil, fmt.Errorf("MCP call log: %w", err)
		}
		m.clog = clog
		o.Logger.Info("logging MCP tool calls", "file", path, "store_io", o.CallLogIO)
	}
	return m, nil
}

// Prober is the prober of the requests (nil when they are not offered).
func (m *Calls) Prober() *probe.Prober { return m.prober }

// Logging reports whether a call log is kept (mcp/log is offered).
func (m *Calls) Logging() bool { return m.clog != nil }

// Runner is the runner the requests run under (mcp/test's too).
func (m *Calls) Runner() *runner.Runner { return m.reqs }

// Start starts the auto-probe loop (Options.AutoProbe), which probes the
// active servers at once and after every configuration change. The server
// calls it once; the loop ends with Shutdown.
func (m *Calls) Start() {
	if m.prober == nil || !m.autoProbe || m.ctx.Err() != nil {
		return
	}
	m.wg.Add(1)
	go func() { defer m.wg.Done(); m.autoLoop() }()
	m.ConfigChanged()
}

// ConfigChanged asks the auto-probe loop to probe the servers the new
// configuration has no observation of (new or changed definitions,
// servers just approved). It never blocks.
func (m *Calls) ConfigChanged() {
	select {
	case m.kick <- struct{}{}:
	default:
	}
}

// Shutdown cancels the running requests and auto-probes and refuses new
// requests (shutting_down). It may be called more than once.
func (m *Calls) Shutdown() {
	m.cancel()
	m.reqs.Shutdown()
}

// Close shuts down, waits for the requests' replies and the auto-probe
// loop, then closes the call log (call it once nothing writes it any
// more: every session has ended). It returns the error of closing the
// log, or ctx's when ctx ends first. It may be called more than once.
func (m *Calls) Close(ctx context.Context) error {
	m.Shutdown()
	if err := m.reqs.Close(ctx); err != nil {
		return err
	}
	m.wg.Wait() // the loop's probes were cancelled: it returns promptly
	m.closeOnce.Do(func() {
		if m.clog != nil {
			m.closeErr = m.clog.Close()
		}
	})
	return m.closeErr
}

func (m *Calls) autoLoop() {
	for {
		select {
		case <-m.ctx.Done():
			return
		case <-m.kick:
		}
		m.autoProbeOnce()
	}
}

// autoProbeOnce probes, concurrently (within the prober's bound), the
// active servers that have no definitive observation, and records each
// result as soon as it is in.
func (m *Calls) autoProbeOnce() {
	cfg, defs := m.status.ProbeTarget()
	if cfg == nil {
		return
	}
	var active []string
	for _, srv := range cfg.Servers {
		if srv.Active {
			active = append(active, srv.Name)
		}
	}
	names := m.status.Unobserved(active)
	if len(names) == 0 {
		return
	}
	m.log.Debug("probing MCP servers", "servers", names)
	var wg sync.WaitGroup
	for _, name := range names {
		wg.Go(func() {
			res, err := m.prober.Probe(m.ctx, cfg, name)
			if err != nil || m.ctx.Err() != nil {
				return // gone from the configuration, or shutting down: not an observation
			}
			m.status.ObserveProbes([]protocol.ProbeResult{ProbeResult(res)}, defs)
		})
	}
	wg.Wait()
}

// protocolError turns a failure of package probe into its reply error,
// with the request type in front of the message.
func (m *Calls) protocolError(log *slog.Logger, typ string, err error) error {
	var pe *probe.Error
	if errors.As(err, &pe) {
		e := Error(pe)
		e.Message = typ + ": " + e.Message
		return e
	}
	var perr *protocol.Error
	if errors.As(err, &perr) {
		return perr
	}
	log.Error("MCP request failed", "type", typ, "err", err)
	return protocol.Errorf(protocol.CodeInternal, "%s failed; see the proxy's log", typ)
}

// resolved returns the configuration probes and calls connect to, with
// the fingerprints of its definitions.
func (m *Calls) resolved(typ string) (*mcpconfig.Config, map[string][32]byte, error) {
	cfg, defs := m.status.ProbeTarget()
	if cfg == nil {
		return nil, nil, fmt.Errorf("%s: the MCP configuration source gave no resolved configuration", typ)
	}
	return cfg, defs, nil
}

// Probe serves mcp/probe (under the Runner). The results are MCP status
// observations: mcp/status reflects them before the reply is queued.
func (m *Calls) Probe(ctx context.Context, d *protocol.MCPProbe) (protocol.Data, error) {
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
		results = []protocol.ProbeResult{ProbeResult(res)}
	} else {
		results = ProbeResults(m.prober.ProbeAll(ctx, cfg))
	}
	if ctx.Err() != nil {
		return nil, ctx.Err() // cut short: not observations
	}
	m.status.ObserveProbes(results, defs)
	if results == nil {
		results = []protocol.ProbeResult{}
	}
	return protocol.MCPProbeResult{Results: results}, nil
}

// Tools serves mcp/tools (under the Runner).
func (m *Calls) Tools(ctx context.Context, d *protocol.MCPTools) (protocol.Data, error) {
	cfg, _, err := m.resolved(protocol.TypeMCPTools)
	if err != nil {
		return nil, err
	}
	tools, err := m.prober.Tools(ctx, cfg, d.Name)
	if err != nil {
		return nil, err
	}
	out := Tools(tools)
	if out == nil {
		out = []protocol.Tool{}
	}
	return protocol.MCPToolsResult{Server: d.Name, Tools: out}, nil
}

// Call serves mcp/call (under the Runner); a call that got a result goes
// to the call log.
func (m *Calls) Call(ctx context.Context, d *protocol.MCPCall) (protocol.Data, error) {
	cfg, _, err := m.resolved(protocol.TypeMCPCall)
	if err != nil {
		return nil, err
	}
	res, err := m.prober.Call(ctx, cfg, d.Name, d.Tool, d.Arguments)
	if err != nil {
		return nil, err
	}
	m.LogEntry(calllog.DirectEntry(res, d.Arguments, time.Now()))
	return CallResult(res), nil
}

// Log serves mcp/log (under the Runner).
func (m *Calls) Log(_ context.Context, d *protocol.MCPLog) (protocol.Data, error) {
	limit := int64(protocol.DefaultLogLimit)
	if d.Limit != nil {
		limit = *d.Limit
	}
	entries, err := m.clog.Last(int(limit), d.Server)
	if err != nil {
		return nil, fmt.Errorf("reading the MCP call log: %w", err)
	}
	for i := range entries { // a log written before a secret was known
		m.scrubEntry(&entries[i], m.scrub)
	}
	out := LogEntries(entries)
	if out == nil {
		out = []protocol.LogEntry{}
	}
	return protocol.MCPLogResult{Entries: out}, nil
}

// LogEntry appends e to the call log; its input and output (a tool's or
// server's text) are scrubbed of secrets first (Options.Scrub), as
// everywhere else.
func (m *Calls) LogEntry(e calllog.Entry) {
	if m.clog == nil {
		return
	}
	m.scrubEntry(&e, m.scrub)
	if err := m.clog.Append(e); err != nil {
		m.log.Warn("writing the MCP call log", "server", e.Server, "tool", e.Tool, "err", err)
	}
}

// scrubEntry masks secrets in a call log entry's input and output, the
// parts a tool, a server or the model wrote.
func (m *Calls) scrubEntry(e *calllog.Entry, scrub func(string) string) {
	if e.Output != nil {
		if out := scrub(*e.Output); out != *e.Output {
			e.Output = &out
		}
	}
	if len(e.Input) > 0 {
		e.Input = m.scrubJSON(e.Input, scrub)
	}
}
