package proxy

import (
	"context"
	"errors"
	"fmt"
	"github.com/ccproxy/ccproxy/internal/textutil"
	"github.com/ccproxy/ccproxy/proxy/eventlog"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/proxy/mcphub"
	"github.com/ccproxy/ccproxy/proxy/mcpsession"
	"github.com/ccproxy/ccproxy/proxy/metrics"
	"github.com/ccproxy/ccproxy/proxy/remote"
	"github.com/ccproxy/ccproxy/proxy/spare"
	"github.com/ccproxy/ccproxy/proxy/toolfiles"
	"github.com/ccproxy/ccproxy/proxy/wsconn"
)

// Server runs sessions and serves them to websocket clients.
//
// Goroutines: Serve owns the HTTP server's accept loop, the MCP loop
// (configuration changes, status refresh) and, through wg, every
// connection handler and background configuration push; each Session owns
// its own. Serve returns only when all of them have ended.
type Server struct {
	opts     Options
	log      *slog.Logger
	blobs    *toolfiles.Blobs
	logs     *eventlog.Budget // the memory of every session's replay log
	spool    *eventlog.Spool  // where replay logs spill to disk
	inbound  *wsconn.Budget
	mcp      *mcphub.Hub
	calls    *mcpCalls    // mcp/probe, mcp/tools, mcp/call, mcp/log, auto-probes, the call log (proxy/mcpcalls; calls.go)
	hist     *historyReqs // history/list, history/read (proxy/historyreq; calls.go); nil when HistoryHome is "-"
	features featureTable // what the proxy offers: hello, offers and dispatch (features.go)
	gate     *remote.Gate // Host and Origin rules, the token, login codes and cookie (proxy/remote)
	mcpf     mcpFeatures  // mcp/add … mcp/logout: management, live actions, logins (mcpfeatures.go)
	upgrader websocket.Upgrader

	metrics        *metrics.Metrics // GET /metrics (package proxy/metrics; metrics.go)
	metricsHandler http.Handler     // of metrics' own registry

	claudeMu sync.Mutex
	claude   *Claude

	spares *spare.Pool // warm spares (spares.go)

	registry // the sessions and the connections (registry.go)

	started time.Time // when Serve began (/v1/health); written before the HTTP server starts

	// lineRead, when set (benchmarks only), is called by the benchmark's
	// reading loop as soon as a line has been read, before it is handled.
	lineRead func()
}

// New checks opts and returns a Server; Serve runs it.
func New(opts Options) (*Server, error) {
	if err := opts.setDefaults(); err != nil {
		return nil, err
	}
	s := &Server{
		opts:     opts,
		log:      opts.Logger,
		blobs:    toolfiles.NewBlobs(opts.BlobBytes, writeHTTPError),
		logs:     eventlog.NewBudget(opts.ReplayMemoryBytes),
		spool:    eventlog.NewSpool(opts.SpoolDir, opts.Logger),
		inbound:  wsconn.NewBudget(opts.InboundBytes),
		registry: newRegistry(),
	}
	s.mcp = mcphub.NewHub(s.log, s.opts.claudeEnv()...)
	s.mcpf = s.newMCPFeatures()
	s.metrics = metrics.New(func() metrics.State { return metricsState(s) }, s.log)
	s.spares = newSparePool(s)
	s.metrics.Register(s.spares.Collector())
	s.metricsHandler = metricsEndpoint(s.metrics.Handler())
	if opts.MCP != nil {
		s.mcp.SetConfig(opts.MCP.Current())
	}
	calls, err := newMCPCalls(s)
	if err != nil {
		return nil, err
	}
	s.calls = calls
	s.mcpf.prober = calls.prober
	if s.hist, err = newHistoryReqs(s); err != nil {
		return nil, err
	}
	s.features = s.newFeatures() // after calls and hist, which it refers to
	var public *remote.PublicURL
	if opts.PublicURL != "" {
		public, _ = remote.ParsePublicURL(opts.PublicURL) // checked by setDefaults
	}
	trusted, _ := remote.ParseTrustedHeader(opts.TrustedHeader, opts.TrustedProxies) // checked by setDefaults
	s.gate = remote.NewGate(remote.Config{
		Token: opts.Token, AllowOrigins: opts.AllowOrigins, Public: public, Trusted: trusted,
		LoginBurst: opts.LoginBurst, LoginEvery: opts.LoginEvery, MaxLoginClients: opts.MaxLoginClients,
		Log: s.log, WriteError: writeHTTPError,
	})
	s.upgrader = websocket.Upgrader{
		ReadBufferSize: 16 << 10,
		// Each connection keeps a small write buffer of its own: the
		// library copies a frame's start into it on the way to the
		// connection's wsconn.BatchConn, which gathers the frames; larger frames
		// pass the rest through without a copy. (A shared pool of larger
		// buffers cost an allocation per frame sent: 650,000 in a
		// BenchmarkFanout op.)
		WriteBufferSize: 4 << 10,
		CheckOrigin:     func(r *http.Request) bool { return s.gate.Policy().Allowed(r.Header.Get("Origin")) },
		Error: func(w http.ResponseWriter, r *http.Request, status int, reason error) {
			writeHTTPError(w, status, protocol.CodeBadRequest, "websocket upgrade failed: "+reason.Error())
		},
	}
	return s, nil
}

// Serve serves on ln until ctx is done (or the listener fails), then shuts
// down: new work is refused, the requests of calls and hist (MCP probes
// and calls, history reads) are cancelled and answered shutting_down,
// every session is closed (subscribers get session/exited with reason
// shutdown), every connection is closed with 1001, and Serve returns once
// every goroutine has ended and no claude process (nor MCP server it
// probed) is left.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	s.mu.Lock()
	if s.served {
		s.mu.Unlock()
		return errors.New("proxy: Serve called twice")
	}
	s.served = true
	s.mu.Unlock()
	// TLS, served hosts, own origins (proxy/remote); the start time for
	// /v1/health.
	served, err := s.gate.Listen(ln, s.opts.TLS, s.opts.Hosts)
	if err != nil {
		ln.Close()
		return err
	}
	s.started = time.Now()
	ln = served

	switch c, err := s.findClaude(); {
	case err != nil && s.opts.Replay != "":
		s.log.Warn("the replay of a recorded session does not start; session/create fails", "replay", s.opts.Replay, "err", err)
	case err != nil:
		s.log.Warn("Claude Code CLI unavailable; session/create fails until it is fixed", "err", err)
	case s.opts.Replay != "":
		s.log.Info("replaying a recorded session instead of running a Claude Code CLI", "replay", s.opts.Replay, "recorded_with", "Claude Code "+c.Version)
	default:
		s.log.Info("using Claude Code CLI", "path", c.Path, "version", c.Version)
	}

	hs := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
	}
	web := &httpComponent{hs: hs, ln: ln, log: s.log}
	comps := s.components(web)
	opened, err := openAll(comps)
	if err != nil {
		closeAll(s.log, comps[:opened])
		return err
	}

	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-web.errc:
		web.errc = nil
	}
	s.log.Info("shutting down")
	s.mu.Lock()
	s.shutting.Store(true) // no connection, session or request starts from now on
	s.mu.Unlock()
	if err := closeAll(s.log, comps); serveErr == nil {
		serveErr = err
	}
	if errors.Is(serveErr, http.ErrServerClosed) {
		serveErr = nil
	}
	if serveErr != nil {
		return fmt.Errorf("proxy: serving: %w", serveErr)
	}
	return nil
}

func (s *Server) findClaude() (Claude, error) {
	s.claudeMu.Lock()
	defer s.claudeMu.Unlock()
	if s.claude != nil {
		return *s.claude, nil
	}
	c, err := findClaude(context.Background(), s.opts.ClaudePath, s.opts.ClaudePrefixArgs, s.opts.Getenv, s.opts.MinClaudeVersion)
	if err != nil {
		return Claude{}, err
	}
	s.claude = &c
	return c, nil
}

// Names of what runs sessions, in hello's claude (SPEC §4 hello) and in
// /v1/health: the Claude Code CLI, or ccproxy's replay of a recorded session
// (Options.Replay), whose version is that of the CLI that recorded it.
const (
	ClaudeCodeName = "claude-code"
	ReplayName     = "ccproxy-replay"
)

func (s *Server) claudeName() string {
	if s.opts.Replay != "" {
		return ReplayName
	}
	return ClaudeCodeName
}

// claudeEnv is the environment of claude processes: never the proxy's token.
func (o *Options) claudeEnv() []string {
	env := o.ClaudeEnv
	if env == nil {
		env = os.Environ()
	}
	return envWithout(env, "CCPROXY_TOKEN")
}

// mcpLoop applies configuration changes and refreshes the MCP status
// while a server is pending.
func (s *Server) mcpLoop(ctx context.Context) {
	var changes <-chan struct{}
	if s.opts.MCP != nil {
		changes = s.opts.MCP.Changes()
	}
	tick := time.NewTicker(s.opts.MCPRefresh)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-changes:
			s.applyMCP()
		case <-tick.C:
			if s.mcp.AnyPending() {
				for _, sess := range s.liveSessions() {
					sess.refreshMCPStatus()
				}
			}
		}
	}
}

// applyMCP installs the source's current configuration: if anything
// changed, MCP subscribers get mcp/config and mcp/status before it
// returns; if the active servers changed, each live session is marked
// (Session.markApply) and its one applier sends it the newest
// configuration with mcp_set_servers (then mcp_status) in the background.
func (s *Server) applyMCP() {
	if s.opts.MCP == nil {
		return
	}
	pushed, active := s.mcp.Apply(s.opts.MCP)
	s.spares.Refresh() // a spare launched with an older configuration is replaced
	if pushed {
		s.calls.ConfigChanged()
	}
	if !active {
		return
	}
	s.log.Info("the active MCP servers changed; updating live sessions")
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shutting.Load() {
		return
	}
	for _, sess := range s.sessions {
		sess.markApply() // live sessions only; at most one applier each
	}
}

// reapLoop forgets sessions that exited SessionTTL ago, checking every
// tenth of the TTL (at least every minute).
func (s *Server) reapLoop(ctx context.Context) {
	every := min(max(s.opts.SessionTTL/10, time.Millisecond), time.Minute)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			s.reapExited(now)
		}
	}
}

// reapExited forgets the sessions that exited SessionTTL before now.
func (s *Server) reapExited(now time.Time) {
	var due []*Session
	s.mu.Lock()
	if s.shutting.Load() {
		s.mu.Unlock()
		return
	}
	for id, sess := range s.sessions {
		if at, ok := sess.exitTime(); ok && now.Sub(at) >= s.opts.SessionTTL {
			delete(s.sessions, id)
			due = append(due, sess)
		}
	}
	s.mu.Unlock()
	for _, sess := range due {
		sess.log.Info("forgetting the exited session", "ttl", s.opts.SessionTTL)
		s.metrics.SessionReaped()
		sess.reap(protocol.ReasonReaped)
	}
}

// createSession starts a session.
func (s *Server) createSession(d *protocol.SessionCreate) (*Session, error) {
	claude, err := s.findClaude()
	if err != nil {
		return nil, protocol.Errorf(protocol.CodeClaudeUnavailable, "session/create: %s", strings.TrimPrefix(err.Error(), ErrClaudeUnavailable.Error()+": "))
	}
	cwd := d.Cwd
	if cwd == "" {
		cwd = s.opts.Project
	}
	if st, err := os.Stat(cwd); err != nil || !st.IsDir() {
		if d.Cwd == "" {
			return nil, protocol.Errorf(protocol.CodeBadRequest, "session/create: the proxy's project directory %q is no longer an existing directory; give data.cwd", textutil.Truncate(cwd, 200))
		}
		return nil, protocol.FieldErrorf(protocol.TypeSessionCreate, "data.cwd", "%q is not an existing directory", textutil.Truncate(cwd, 200))
	}
	cfg := s.mcp.Config()
	client, err := mcpsession.ClientServers(d.MCPServers, s.opts.MCP != nil && cfg != nil && cfg.ForClient != nil)
	if err != nil {
		return nil, err
	}

	// The slot is reserved under the lock; claude is started without it
	// (fork/exec, the --mcp-config file), so other requests, connections
	// and the shutdown are not held up meanwhile.
	// Exited sessions do not count; the one that exited longest ago is
	// evicted when the room is needed (evict.go).
	s.mu.Lock()
	if s.shutting.Load() {
		s.mu.Unlock()
		return nil, protocol.Errorf(protocol.CodeShuttingDown, "session/create: ccproxy is shutting down")
	}
	evicted, err := makeRoom(s.sessions, s.starting, s.opts.MaxSessions)
	if err != nil {
		s.mu.Unlock()
		return nil, err
	}
	s.starting++
	s.mu.Unlock()
	evict(evicted)

	sess := s.newSession(sessionConfig{cwd: cwd, model: d.Model, permissionMode: d.PermissionMode, resume: d.Resume, fork: d.Fork, client: client})
	id := sess.id
	p, claimed, err := s.startClaude(sess, claude, d) // a warm spare when one fits (spares.go)

	s.mu.Lock()
	defer s.mu.Unlock()
	s.starting--
	if err != nil {
		sess.log.Error("starting claude", "err", err)
		return nil, protocol.Errorf(spawnErrorCode(err), "session/create: %s", spawnErrorMessage(err))
	}
	if s.shutting.Load() {
		// Serve took its list of sessions to close while this one started:
		// nobody would close it.
		sess.log.Info("ccproxy is shutting down; stopping the claude just started", "pid", p.cli.PID())
		reap(p)
		return nil, protocol.Errorf(protocol.CodeShuttingDown, "session/create: ccproxy is shutting down")
	}
	sess.mu.Lock() // its handlers read proc already
	sess.proc.cur = p
	sess.mu.Unlock()
	s.sessions[id] = sess
	s.metrics.SessionCreated()
	sess.run(p, claimed) // a claimed spare's initialize answer came with the claim
	return sess, nil
}

// newSession returns a session in state starting, with no process yet.
func (s *Server) newSession(cfg sessionConfig) *Session {
	id := newID("s-")
	return makeSession(id, newSessionEnv(s), s.log.With("session", id), cfg, s.newSessionHub(id))
}

// spawnErrorCode and spawnErrorMessage say what a client may see of a
// failure of Session.spawn: the detail of an MCP configuration failure
// (paths, the system's words) stays in the log.
func spawnErrorCode(err error) protocol.Code {
	if errors.Is(err, errMCPSpawn) {
		return protocol.CodeInternal
	}
	return protocol.CodeClaudeUnavailable
}

func spawnErrorMessage(err error) string {
	if errors.Is(err, errMCPSpawn) {
		return "the MCP configuration could not be prepared; see the proxy's log"
	}
	return fmt.Sprintf("starting the Claude Code CLI failed: %v", err)
}
