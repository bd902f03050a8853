package metrics

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/proxy/claudecli"
	"github.com/ccproxy/ccproxy/proxy/wsconn"
)

// Metrics are the proxy's Prometheus metrics, in a registry of their own
// (never the global default one), served by Handler. The methods that
// count may be called on a nil *Metrics (they then count nothing).
type Metrics struct {
	reg *prometheus.Registry

	events, eventBytes       prometheus.Counter
	dropped                  *prometheus.CounterVec // reason
	fellBehind               prometheus.Counter
	permissions              *prometheus.CounterVec   // kind
	permissionWait           *prometheus.HistogramVec // kind
	control                  *prometheus.HistogramVec // subtype, result
	probes                   *prometheus.HistogramVec // status
	restarts                 prometheus.Counter
	suspends, resumes        prometheus.Counter
	exits                    *prometheus.CounterVec // reason, how
	normalize                prometheus.Histogram
	sessionsCreated, reapedN prometheus.Counter
	spillFails               prometheus.Counter
	log                      *slog.Logger
}

// Label values.
var (
	sessionStates  = []string{protocol.StateStarting, protocol.StateIdle, protocol.StateRunning, protocol.StateRestarting, protocol.StateExited, protocol.StateClosed, protocol.StateSuspended}
	mcpStatuses    = []string{protocol.MCPConnected, protocol.MCPFailed, protocol.MCPPending, protocol.MCPNeedsAuth, protocol.MCPDisabled, protocol.MCPAwaitingApproval, protocol.MCPRejected}
	permKinds      = []string{protocol.PermissionKindTool, protocol.PermissionKindQuestion, protocol.PermissionKindPlan}
	controlSubtype = []string{"initialize", "interrupt", "set_permission_mode", "set_model", "mcp_set_servers", "mcp_status", "claim_session"}
	exitReasons    = []string{protocol.ExitExited, protocol.ExitClosed, protocol.ExitShutdown, "restart", "suspend"}
)

// Why a client was dropped (ccproxy_clients_dropped_total): its queue of
// replies and pushes was twice over its bound (closed 1008), a write made
// no progress for WriteWait, nothing was read (not even a pong) for
// PongWait.
var dropReasons = []string{wsconn.DropQueueFull, wsconn.DropWriteTimeout, wsconn.DropPongTimeout}

// bounded returns v if it is one of allowed, else "other".
func bounded(v string, allowed []string) string {
	for _, a := range allowed {
		if v == a {
			return v
		}
	}
	return "other"
}

// Latency buckets, in seconds.
var (
	waitBuckets      = []float64{0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900, 3600}                         // a person answering
	controlBuckets   = []float64{0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}              // claude answering
	probeBuckets     = []float64{0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}                            // an MCP server starting
	normalizeBuckets = []float64{1e-6, 2.5e-6, 5e-6, 1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 1e-3, 5e-3, 0.025, 0.1} // one stdout line
)

// New returns the metrics; state is read at every scrape (the proxy's
// Server: see State), log gets the errors of a scrape (nil: discarded).
func New(state func() State, log *slog.Logger) *Metrics {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	m := &Metrics{reg: prometheus.NewRegistry(), log: log}
	counter := func(name, help string) prometheus.Counter {
		c := prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
		m.reg.MustRegister(c)
		return c
	}
	counterVec := func(name, help string, labels ...string) *prometheus.CounterVec {
		c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
		m.reg.MustRegister(c)
		return c
	}
	histVec := func(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
		h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, labels)
		m.reg.MustRegister(h)
		return h
	}
	m.events = counter("ccproxy_events_total", "Events read from claude processes and logged (seq numbered), all sessions.")
	m.eventBytes = counter("ccproxy_event_bytes_total", "Bytes of the session/event frames logged, all sessions.")
	m.dropped = counterVec("ccproxy_clients_dropped_total", "Websocket clients dropped, by reason: send_queue_full (1008), write_timeout, pong_timeout.", "reason")
	m.fellBehind = counter("ccproxy_subscriptions_fell_behind_total", "Live subscriptions whose client's send queue was full: they went back to catching up from the replay log (nothing lost).")
	m.permissions = counterVec("ccproxy_permission_requests_total", "Permission requests shown to clients, by kind (tool, question, plan).", "kind")
	m.permissionWait = histVec("ccproxy_permission_wait_seconds", "Time from a permission request to its resolution (answer, timeout, cancel, exit), by kind.", waitBuckets, "kind")
	m.control = histVec("ccproxy_control_request_duration_seconds", "Time until claude answered a control request ccproxy sent, by subtype and result (success, error, timeout, exited, failed).", controlBuckets, "subtype", "result")
	m.probes = histVec("ccproxy_mcp_probe_duration_seconds", "Duration of MCP server probes (mcp/probe and auto-probes), by the status found.", probeBuckets, "status")
	m.restarts = counter("ccproxy_claude_restarts_total", "Claude processes restarted with --resume (a live MCP change claude refused).")
	m.suspends = counter("ccproxy_sessions_suspended_total", "Idle sessions suspended: their claude stopped after IdleTimeout.")
	m.resumes = counter("ccproxy_sessions_resumed_total", "Suspended sessions resumed (claude --resume) by their next use.")
	m.exits = counterVec("ccproxy_claude_exits_total", "Claude processes that ended, by reason (exited: on its own or killed; closed; shutdown; restart; suspend) and how (code0, code_nonzero, signal).", "reason", "how")
	m.normalize = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "ccproxy_normalize_seconds", Help: "Time to normalize one line of claude's stdout (package stream), sampled: the first line of each claude process, then one in 64.", Buckets: normalizeBuckets})
	m.reg.MustRegister(m.normalize)
	m.sessionsCreated = counter("ccproxy_sessions_created_total", "Sessions created (session/create that started claude).")
	m.reapedN = counter("ccproxy_sessions_reaped_total", "Exited sessions forgotten SessionTTL after their exit.")
	m.spillFails = counter("ccproxy_replay_log_spill_failures_total", "Replay-log spills to disk that failed (a write or file creation error such as a full disk, or no spool directory): the session's events on disk were given up, and a subscriber behind them gets session/gap.")
	for _, r := range dropReasons {
		m.dropped.WithLabelValues(r)
	}
	for _, k := range permKinds {
		m.permissions.WithLabelValues(k)
		m.permissionWait.WithLabelValues(k)
	}
	m.reg.MustRegister(&stateCollector{state: state})
	m.reg.MustRegister(collectors.NewGoCollector())
	m.reg.MustRegister(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// ---------------------------------------------------------------- events

// SpillFailed counts failed spills of a replay log (hub.checkDiskLocked).
func (m *Metrics) SpillFailed(n int) {
	if m == nil {
		return
	}
	m.spillFails.Add(float64(n))
}

// EventLogged counts an event and its frame (Session.appendEvent).
func (m *Metrics) EventLogged(frame []byte) {
	if m == nil {
		return
	}
	m.events.Inc()
	m.eventBytes.Add(float64(len(frame)))
}

// WS are websocket counts: frames and payload bytes in (read from
// clients) and out (taken by the write pumps); wsconn.Conn.Counts gives a
// connection's.
type WS struct{ InFrames, InBytes, OutFrames, OutBytes int64 }

// Add adds a connection's counts (the order of wsconn.Conn.Counts).
func (t *WS) Add(inFrames, inBytes, outFrames, outBytes int64) {
	t.InFrames += inFrames
	t.InBytes += inBytes
	t.OutFrames += outFrames
	t.OutBytes += outBytes
}

// ---------------------------------------------------------------- clients

// ClientDropped counts a client dropped for reason (wsconn.Drop*).
func (m *Metrics) ClientDropped(reason string) {
	if m == nil {
		return
	}
	m.dropped.WithLabelValues(reason).Inc()
}

// SubscriptionBehind counts a live subscription that went back to catching up.
func (m *Metrics) SubscriptionBehind() {
	if m == nil {
		return
	}
	m.fellBehind.Inc()
}

// ---------------------------------------------------------------- sessions

// SessionCreated counts a session whose claude started.
func (m *Metrics) SessionCreated() {
	if m == nil {
		return
	}
	m.sessionsCreated.Inc()
}

// SessionReaped counts an exited session forgotten after SessionTTL.
func (m *Metrics) SessionReaped() {
	if m == nil {
		return
	}
	m.reapedN.Inc()
}

// PermissionAsked counts a permission request shown to clients (broker.Metrics).
func (m *Metrics) PermissionAsked(kind string) {
	if m == nil {
		return
	}
	m.permissions.WithLabelValues(bounded(kind, permKinds)).Inc()
}

// PermissionDone observes how long a permission request was pending (broker.Metrics).
func (m *Metrics) PermissionDone(kind string, waited time.Duration) {
	if m == nil {
		return
	}
	m.permissionWait.WithLabelValues(bounded(kind, permKinds)).Observe(waited.Seconds())
}

// ControlDone observes a control request's latency (claudecli.Config.OnControlDone).
func (m *Metrics) ControlDone(subtype string, took time.Duration, err error) {
	if m == nil {
		return
	}
	result := "success"
	var cliErr *claudecli.CLIError
	switch {
	case err == nil:
	case errors.As(err, &cliErr):
		result = "error"
	case errors.Is(err, claudecli.ErrTimeout):
		result = "timeout"
	case errors.Is(err, claudecli.ErrExited):
		result = "exited"
	default:
		result = "failed" // not written: stdin closed, queue full
	}
	m.control.WithLabelValues(bounded(subtype, controlSubtype), result).Observe(took.Seconds())
}

// Normalized observes one stdout line's normalization time (claudecli.Config.OnNormalized).
func (m *Metrics) Normalized(took time.Duration) {
	if m == nil {
		return
	}
	m.normalize.Observe(took.Seconds())
}

// Restarted counts a restart of claude with --resume.
func (m *Metrics) Restarted() {
	if m == nil {
		return
	}
	m.restarts.Inc()
}

// Suspended counts a suspend of an idle session.
func (m *Metrics) Suspended() {
	if m != nil {
		m.suspends.Inc()
	}
}

// Resumed counts the resume of a suspended session.
func (m *Metrics) Resumed() {
	if m != nil {
		m.resumes.Inc()
	}
}

// ClaudeExited counts a claude process that ended, for reason.
func (m *Metrics) ClaudeExited(reason string, ex claudecli.Exit) {
	if m == nil {
		return
	}
	how := "code0"
	switch {
	case ex.Signal != nil:
		how = "signal"
	case ex.Code == nil || *ex.Code != 0:
		how = "code_nonzero"
	}
	m.exits.WithLabelValues(bounded(reason, exitReasons), how).Inc()
}

// ---------------------------------------------------------------- MCP

// Probed observes probe results (latency by the status found); results
// for servers that are not active or not configured took no probe.
func (m *Metrics) Probed(results []protocol.ProbeResult) {
	if m == nil {
		return
	}
	for _, r := range results {
		if r.Error != nil && (r.Error.Code == protocol.ProbeNotActive || r.Error.Code == protocol.ProbeServerNotFound) {
			continue
		}
		m.probes.WithLabelValues(bounded(r.Status, mcpStatuses)).Observe(r.LatencyMs.Total / 1000)
	}
}

// ---------------------------------------------------------------- scrape-time state

// State is the proxy's state at a scrape, read by the function given to
// New (the proxy's Server: under Server.mu, then each Session.mu one at a
// time; then, with no session lock held, eventlog.Budget.mu and each
// hub's; the mcphub.Hub's status on its own).
type State struct {
	Sessions           map[string]int // by state (protocol.State*)
	Clients            int            // websocket connections
	PendingPermissions map[string]int // by kind (protocol.PermissionKind*)
	PendingControls    int            // control requests sent to claude, not answered yet
	WS                 WS             // of every connection, gone or not
	ReplayMemory       int64          // bytes of the replay logs in memory
	ReplayDisk         int64          // and on disk
	ReplayMemoryLimit  int64          // ReplayMemoryBytes
	Inbound            int64          // bytes of client frames being read and handled
	MCPStatus          []byte         // the mcp/status body (mcphub.Hub.StatusBody)
}

// stateCollector reads the State at scrape time.
type stateCollector struct{ state func() State }

var (
	descSessions    = prometheus.NewDesc("ccproxy_sessions", "Sessions the proxy holds, by state (exited ones until closed, reaped or evicted).", []string{"state"}, nil)
	descClients     = prometheus.NewDesc("ccproxy_clients", "Websocket connections.", nil, nil)
	descReplay      = prometheus.NewDesc("ccproxy_replay_log_bytes", "Bytes of the sessions' replay logs, by where they are kept (memory, disk).", []string{"where"}, nil)
	descReplayMax   = prometheus.NewDesc("ccproxy_replay_log_memory_limit_bytes", "The memory bound of all replay logs together (ReplayMemoryBytes).", nil, nil)
	descPermPending = prometheus.NewDesc("ccproxy_permission_requests_pending", "Permission requests waiting for an answer, by kind.", []string{"kind"}, nil)
	descControlPend = prometheus.NewDesc("ccproxy_control_requests_pending", "Control requests sent to claude and not answered yet.", nil, nil)
	descMCPServers  = prometheus.NewDesc("ccproxy_mcp_servers", "MCP servers of the configuration in force, by status (SPEC §8).", []string{"status"}, nil)
	descWSFrames    = prometheus.NewDesc("ccproxy_ws_frames_total", "Websocket frames: in (read from clients), out (taken by the write pumps to write to clients).", []string{"direction"}, nil)
	descWSBytes     = prometheus.NewDesc("ccproxy_ws_bytes_total", "Websocket payload bytes: in (read from clients), out (taken by the write pumps).", []string{"direction"}, nil)
	descInbound     = prometheus.NewDesc("ccproxy_inbound_bytes", "Memory taken by client frames being read and handled (bounded by InboundBytes).", nil, nil)
)

func (sc *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descSessions, descClients, descReplay, descReplayMax, descPermPending, descControlPend, descMCPServers, descInbound, descWSFrames, descWSBytes} {
		ch <- d
	}
}

func (sc *stateCollector) Collect(ch chan<- prometheus.Metric) {
	st := sc.state()
	gauge := func(d *prometheus.Desc, v int, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v), labels...)
	}
	for _, state := range sessionStates {
		gauge(descSessions, st.Sessions[state], state)
	}
	gauge(descClients, st.Clients)
	for _, k := range permKinds {
		gauge(descPermPending, st.PendingPermissions[k], k)
	}
	gauge(descControlPend, st.PendingControls)
	counter := func(d *prometheus.Desc, v int64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	counter(descWSFrames, st.WS.InFrames, "in")
	counter(descWSFrames, st.WS.OutFrames, "out")
	counter(descWSBytes, st.WS.InBytes, "in")
	counter(descWSBytes, st.WS.OutBytes, "out")

	gauge(descReplay, int(st.ReplayMemory), "memory")
	gauge(descReplay, int(st.ReplayDisk), "disk")
	gauge(descReplayMax, int(st.ReplayMemoryLimit))

	gauge(descInbound, int(st.Inbound))

	byStatus := map[string]int{}
	var mcp protocol.MCPStatus
	if err := json.Unmarshal(st.MCPStatus, &mcp); err == nil {
		for _, srv := range mcp.Servers {
			byStatus[bounded(srv.Status, mcpStatuses)]++
		}
	}
	for _, status := range append(mcpStatuses, "other") {
		gauge(descMCPServers, byStatus[status], status)
	}
}

// Handler serves the registry in Prometheus' text format (or what the
// scraper negotiates); errors of a collector are logged and the rest is
// served.
// Register adds a collector of another part (the warm spares' pool) to
// the registry /metrics serves.
func (m *Metrics) Register(c prometheus.Collector) { m.reg.MustRegister(c) }

func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		ErrorLog:      slogPrinter{m.log},
		ErrorHandling: promhttp.ContinueOnError,
		Registry:      m.reg, // promhttp_metric_handler_errors_total
	})
}

type slogPrinter struct{ log *slog.Logger }

func (p slogPrinter) Println(v ...any) { p.log.Warn("metrics", "err", v) }
