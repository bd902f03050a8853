package proxy

import (
	"context"
	"encoding/json"
	"log/slog"

	"github.com/ccproxy/ccproxy/mcpconfig"
	"github.com/ccproxy/ccproxy/mcpconfig/probe"
	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/proxy/historyreq"
	"github.com/ccproxy/ccproxy/proxy/mcpcalls"
	"github.com/ccproxy/ccproxy/proxy/mcpsession"
	"github.com/ccproxy/ccproxy/proxy/runner"
	"github.com/ccproxy/ccproxy/stream"
)

// The adapters of the request packages that do not import proxy:
// proxy/mcpcalls (mcp/probe, mcp/tools, mcp/call, mcp/log, auto-probes,
// the call log), proxy/historyreq (history/list, history/read, the
// history.manage requests; their live side in historylive.go) and the
// proxy/runner they run their requests under. The feature table
// (features.go) registers their handlers; Serve shuts them down and
// closes them (closeRequests).

// mcpCalls is the server's mcpcalls.Calls.
type mcpCalls struct {
	*mcpcalls.Calls
	reqs   *asyncRunner // the Calls' runner; mcp/test runs under it too (mcpmanage.go)
	prober *wireProber  // nil: mcp.probe, mcp.tools and mcp.call are not offered
}

// wireProber is the prober as mcp/test (mcpmanage.go) uses it: its
// results in the protocol's types (mcpcalls' mapping).
type wireProber struct{ p *probe.Prober }

func (w *wireProber) Probe(ctx context.Context, cfg *mcpconfig.Config, name string) (protocol.ProbeResult, error) {
	r, err := w.p.Probe(ctx, cfg, name)
	if err != nil {
		return protocol.ProbeResult{}, err
	}
	return mcpcalls.ProbeResult(r), nil
}

// historyReqs is the server's historyreq.Requests.
type historyReqs struct {
	*historyreq.Requests
	reqs *asyncRunner
}

// newMCPCalls sets up the prober and opens the call log, as s.opts say.
// s.mcp holds the first configuration already.
func newMCPCalls(s *Server) (*mcpCalls, error) {
	var prober *probe.Prober
	if cfg := s.mcp.Config(); s.opts.MCP != nil && cfg != nil && cfg.Resolved != nil {
		po := s.opts.MCPProbe
		if po.Logger == nil {
			po.Logger = s.log.With("component", "probe")
		}
		if po.Environ == nil {
			po.Environ = s.opts.claudeEnv // what claude's own MCP servers get: never the proxy's token
		}
		if po.ClientVersion == "" {
			po.ClientVersion = s.opts.Version
		}
		// Binary parts of direct calls go where the sessions' go: /v1/blobs.
		po.Attachments = stream.Options{Attachments: stream.AttachSink, Sink: s.blobs}
		prober = probe.NewProber(po)
	}
	calls, err := mcpcalls.New(mcpcalls.Options{
		Status: callsStatus{s}, Prober: prober, AutoProbe: s.opts.AutoProbe, MaxRequests: s.opts.MaxMCPRequests,
		CallLogDir: s.opts.CallLogDir, Project: s.opts.Project, CallLogIO: s.opts.CallLogIO,
		Scrub: s.mcp.Scrub, ScrubJSON: mcpsession.ScrubEventJSON, Logger: s.log,
	})
	if err != nil {
		return nil, err
	}
	m := &mcpCalls{Calls: calls, reqs: &asyncRunner{calls.Runner()}}
	if prober != nil {
		m.prober = &wireProber{prober}
	}
	return m, nil
}

// newHistoryReqs returns nil when history is turned off (HistoryHome "-").
func newHistoryReqs(s *Server) (*historyReqs, error) {
	if s.opts.HistoryHome == "-" {
		return nil, nil
	}
	h, err := historyreq.New(historyreq.Options{
		Home: s.opts.HistoryHome, Project: s.opts.Project, MaxLine: s.opts.MaxLineBytes, ReplyBytes: s.opts.HistoryReplyBytes,
		Sink: s.blobs, ScrubEvent: func(b []byte) []byte { return mcpsession.ScrubEventJSON(b, s.mcp.Scrub) }, Logger: s.log,
		Live:  func(id string) historyreq.LiveSession { return liveHistorySession(&s.registry, id) },
		Scrub: s.mcp.Scrub, IndexDir: s.opts.HistoryIndexDir,
	})
	if err != nil {
		return nil, err
	}
	return &historyReqs{Requests: h, reqs: &asyncRunner{h.Runner()}}, nil
}

// closeRequests cancels the running requests of calls and hist (and the
// auto-probes), refuses new ones, and returns once the cancelled ones have
// queued their replies (shutting_down) and the auto-probe loop has ended;
// it closes the call log. The requests component of Serve calls it
// (lifecycle.go), before the sessions and the connections close.
func closeRequests(log *slog.Logger, calls *mcpCalls, hist *historyReqs) {
	ctx := context.Background()
	if err := calls.Close(ctx); err != nil {
		log.Warn("closing the MCP call log", "err", err)
	}
	if hist != nil {
		hist.Close(ctx) // no error but ctx's
	}
}

// callsStatus is the MCP status hub as mcpcalls sees it; the probes'
// results are counted (metrics) before the hub records them.
type callsStatus struct{ s *Server }

func (st callsStatus) ProbeTarget() (*mcpconfig.Config, map[string][32]byte) {
	cfg, defs := st.s.mcp.ProbeTarget()
	if cfg == nil || cfg.Resolved == nil {
		return nil, nil
	}
	return cfg.Resolved, defs
}

func (st callsStatus) Unobserved(names []string) []string { return st.s.mcp.Unobserved(names) }

func (st callsStatus) ObserveProbes(results []protocol.ProbeResult, defs map[string][32]byte) {
	st.s.metrics.Probed(results)
	st.s.mcp.ObserveProbes(results, defs)
}

// sessionCalls is a session's mcpcalls.SessionCalls; the session sets
// scrub (its own secrets) before its stdout loop starts.
type sessionCalls struct {
	*mcpcalls.SessionCalls
	scrub func(string) string
}

// forSession returns the call pairing of a session's stdout loop, or nil
// when no call log is kept.
func (m *mcpCalls) forSession(session string, log *slog.Logger) *sessionCalls {
	sc := m.ForSession(session, log)
	if sc == nil {
		return nil
	}
	return &sessionCalls{SessionCalls: sc}
}

// observe is SessionCalls.Observe with the session's scrub.
func (sc *sessionCalls) observe(ev *stream.Event) {
	if sc.SessionCalls.Scrub == nil && sc.scrub != nil {
		sc.SessionCalls.Scrub = sc.scrub
	}
	sc.Observe(ev)
}

// asyncRunner runs the requests of a connection under a runner.Runner.
type asyncRunner struct{ *runner.Runner }

func (r *asyncRunner) run(c *client, id json.RawMessage, typ string, do func(ctx context.Context) (protocol.Data, error)) {
	r.Run(c, id, typ, do)
}

// noConn adapts a handler that does not need the connection.
func noConn[T protocol.Data](h func(ctx context.Context, d T) (protocol.Data, error)) handlerFunc[T] {
	return func(ctx context.Context, _ *client, d T) (protocol.Data, error) { return h(ctx, d) }
}
