package probe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"

	"github.com/ccproxy/ccproxy/mcpconfig"
	"github.com/ccproxy/ccproxy/stream"
)

// Defaults of ProberOptions.
const (
	DefaultProbeTimeout     = 5 * time.Second
	DefaultCallTimeout      = 2 * time.Minute
	DefaultProbeConcurrency = 16
	DefaultProbeGrace       = time.Second
	DefaultStderrTail       = 4 << 10
	// DefaultProtocolVersion is the MCP version a Prober asks for in
	// initialize; servers answer with the version they speak, and any
	// version the go-sdk supports is accepted.
	DefaultProtocolVersion = "2025-11-25"
	// maxListItems bounds the tools, resources and prompts read from one
	// server (pages are followed up to this many items).
	maxListItems = 10000
)

// Codes of failures that are not probe failures (Error.Code), for Tools and
// Call.
const (
	CodeToolNotFound     = "TOOL_NOT_FOUND"    // protocol code mcp_tool_not_found
	CodeInvalidArguments = "INVALID_ARGUMENTS" // protocol code mcp_invalid_arguments
)

// ProberOptions configure a Prober. The zero value is usable.
type ProberOptions struct {
	// Timeout bounds connecting to one server, initializing and listing
	// its tools, resources and prompts. Default: MCP_TIMEOUT (milliseconds,
	// as Claude Code reads it) when set, else DefaultProbeTimeout.
	Timeout time.Duration
	// CallTimeout bounds one tools/call of Call. Default: MCP_TOOL_TIMEOUT
	// (milliseconds) when set, else DefaultCallTimeout.
	CallTimeout time.Duration
	// Concurrency bounds the connections a Prober has open at once, over
	// all its calls (each stdio connection is a server process). Default
	// DefaultProbeConcurrency.
	Concurrency int
	// Grace is how long a stdio server gets to exit after its stdin is
	// closed, and again after SIGTERM, before SIGKILL. Default
	// DefaultProbeGrace.
	Grace time.Duration
	// Dir is the working directory of stdio servers. Default: the
	// mcpconfig.Config's ProjectDir (the directory claude runs them in).
	Dir string
	// Env looks up MCP_TIMEOUT and MCP_TOOL_TIMEOUT. Default os.LookupEnv.
	Env mcpconfig.LookupFunc
	// Environ is the base environment of stdio servers; a server's "env"
	// entries override it. Default os.Environ (servers inherit ccproxy's
	// environment, as they inherit claude's).
	Environ func() []string
	// StderrTail is how many bytes of a stdio server's stderr are kept for
	// failure reports. Default DefaultStderrTail.
	StderrTail int
	// Attachments says what becomes of the binary parts of Call results
	// (see stream.Options); the default keeps them inline.
	Attachments stream.Options
	// ClientName and ClientVersion are the clientInfo sent in initialize.
	// Default "ccproxy", "dev".
	ClientName, ClientVersion string
	// ProtocolVersion is the MCP version asked for in initialize. Default
	// DefaultProtocolVersion.
	ProtocolVersion string
	// Logger receives debug records and warnings. Default: discard.
	Logger *slog.Logger
	// Now is the clock of ProbedAt. Default time.Now.
	Now func() time.Time
}

// Prober connects to configured MCP servers with the official MCP Go SDK:
// it probes them (ProbeAll, Probe), lists their tools with parameter trees
// (Tools, ListTools) and calls tools directly (Call). Results have the
// shapes of the webview protocol (mcp/probe, mcp/tools, mcp/call), so the
// proxy forwards them as they are; failures are *Error values with a
// stable code.
//
// Transports: stdio (the Prober starts the command in its own process
// group, with the server's env over ccproxy's environment, in Dir),
// streamable HTTP ("http") and SSE ("sse"), with the configured headers;
// "ws" is reported as TRANSPORT_UNSUPPORTED. A server that is not active
// (awaiting approval, rejected, disabled) is never started: its probe
// result says NOT_ACTIVE.
//
// Concurrency: a Prober is safe for concurrent use. Each call opens its own
// connection (for stdio, its own server process), never shared, and closes
// it before returning; every process it started is then gone (the whole
// process group is killed and awaited). At most Concurrency connections are
// open at once over all calls; a call waits for a slot (its timeout starts
// once it has one) or gives up when its ctx is done. A Prober has no
// goroutines of its own and needs no Close.
type Prober struct {
	opts ProberOptions
	sem  chan struct{}
	log  *slog.Logger

	onStart func(pid int) // tests: told the pid of every stdio server started
}

// NewProber returns a Prober with opts, defaults filled in.
func NewProber(opts ProberOptions) *Prober {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Env == nil {
		opts.Env = os.LookupEnv
	}
	if opts.Timeout <= 0 {
		opts.Timeout = envMillis(opts.Env, "MCP_TIMEOUT", DefaultProbeTimeout, opts.Logger)
	}
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = envMillis(opts.Env, "MCP_TOOL_TIMEOUT", DefaultCallTimeout, opts.Logger)
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = DefaultProbeConcurrency
	}
	if opts.Grace <= 0 {
		opts.Grace = DefaultProbeGrace
	}
	if opts.Environ == nil {
		opts.Environ = os.Environ
	}
	if opts.StderrTail <= 0 {
		opts.StderrTail = DefaultStderrTail
	}
	if opts.ClientName == "" {
		opts.ClientName = "ccproxy"
	}
	if opts.ClientVersion == "" {
		opts.ClientVersion = "dev"
	}
	if opts.ProtocolVersion == "" {
		opts.ProtocolVersion = DefaultProtocolVersion
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Prober{opts: opts, sem: make(chan struct{}, opts.Concurrency), log: opts.Logger}
}

// envMillis reads a duration in milliseconds from the environment.
func envMillis(env mcpconfig.LookupFunc, name string, def time.Duration, log *slog.Logger) time.Duration {
	v, ok := env(name)
	if !ok || strings.TrimSpace(v) == "" {
		return def
	}
	ms, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || ms <= 0 || ms > int64(24*time.Hour/time.Millisecond) {
		log.Warn("ignoring an invalid timeout in the environment", "variable", name, "default", def)
		return def
	}
	return time.Duration(ms) * time.Millisecond
}

// Error is a failure of Probe, Tools or Call: a stable Code (one of the
// protocol's probe codes, CodeToolNotFound or CodeInvalidArguments) and a
// Message for people that names the server and never contains a configured
// secret. Package proxy/mcpcalls turns it into the reply error of the
// webview protocol.
type Error struct {
	Code    string
	Message string
	// Status is what a probe reports for this failure: failed, needs-auth
	// (an OAuth server), or for NOT_ACTIVE disabled, awaiting-approval or
	// rejected.
	Status string
	// StderrTail is the end of a stdio server's stderr (secrets masked),
	// when it wrote any.
	StderrTail string
	// Fields lists the invalid arguments (CodeInvalidArguments).
	Fields []FieldError
}

func (e *Error) Error() string { return e.Message }

func (e *Error) probeError() *Failure {
	return &Failure{Code: e.Code, Message: e.Message, StderrTail: e.StderrTail}
}

// ProbeAll probes every configured server, the active ones concurrently
// (within the Concurrency bound), and returns one result per server, in
// the mcpconfig.Config's order (by name). Servers that are not active get NOT_ACTIVE
// without being started.
func (p *Prober) ProbeAll(ctx context.Context, cfg *mcpconfig.Config) []Result {
	out := make([]Result, len(cfg.Servers))
	var wg sync.WaitGroup
	for i := range cfg.Servers {
		wg.Go(func() { out[i] = p.probe(ctx, &cfg.Servers[i], p.dir(cfg)) })
	}
	wg.Wait()
	return out
}

// Probe probes the server called name. The error is an *Error with code
// SERVER_NOT_FOUND when no server has that name; every other failure is in
// the result.
func (p *Prober) Probe(ctx context.Context, cfg *mcpconfig.Config, name string) (Result, error) {
	s, err := lookupServer(cfg, name)
	if err != nil {
		return Result{}, err
	}
	return p.probe(ctx, s, p.dir(cfg)), nil
}

func (p *Prober) dir(cfg *mcpconfig.Config) string {
	if p.opts.Dir != "" {
		return p.opts.Dir
	}
	return cfg.ProjectDir
}

// lookupServer finds the server called name, or fails with
// SERVER_NOT_FOUND listing the configured names.
func lookupServer(cfg *mcpconfig.Config, name string) (*mcpconfig.Server, error) {
	if s, ok := cfg.Server(name); ok {
		return &s, nil
	}
	names := make([]string, len(cfg.Servers))
	for i, s := range cfg.Servers {
		names[i] = s.Name
	}
	msg := fmt.Sprintf("no MCP server named %q is configured", name)
	if len(names) > 0 {
		msg += " (configured: " + truncateList(names, 20) + ")"
	}
	return nil, &Error{Code: CodeServerNotFound, Status: StatusFailed, Message: msg}
}

// notActive is the failure of a server that is not started.
func notActive(s *mcpconfig.Server) *Error {
	status, why := StatusDisabled, "it is not loaded"
	switch {
	case s.Approval == mcpconfig.ApprovalAwaiting:
		status, why = StatusAwaitingApproval, "it awaits approval"
	case s.Approval == mcpconfig.ApprovalRejected:
		status, why = StatusRejected, "it was rejected"
	case s.Disabled:
		why = "it is disabled for this project"
	}
	if s.Reason != "" {
		why = s.Reason
	}
	msg := fmt.Sprintf("server %q is not started: %s", s.Name, why)
	return &Error{Code: CodeNotActive, Status: status, Message: msg}
}

// activeServer finds the server called name and checks that it is active.
func activeServer(cfg *mcpconfig.Config, name string) (*mcpconfig.Server, error) {
	s, err := lookupServer(cfg, name)
	if err != nil {
		return nil, err
	}
	if !s.Active {
		return nil, notActive(s)
	}
	return s, nil
}

// acquire takes a connection slot, or fails when ctx is done first.
func (p *Prober) acquire(ctx context.Context, s *mcpconfig.Server) *Error {
	select {
	case p.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return &Error{Code: CodeTimeout, Status: StatusFailed,
			Message: MessagePrefix(s.Name) + fmt.Sprintf("gave up waiting for a free connection slot (%d in use)", cap(p.sem))}
	}
}

func (p *Prober) release() { <-p.sem }

// connection is one use of a connection slot: the session opened in it and
// the probe timeout, which runs from the moment the slot was taken.
type connection struct {
	ss      *session        // nil when opening failed before connecting
	ctx     context.Context // ends at the probe timeout
	start   time.Time       // when the slot was taken
	at      time.Time       // the same, by ProberOptions.Now
	release func()          // frees the slot; call it after closing ss
}

// connect takes a connection slot for s and opens a session within the
// probe timeout. When no slot was free before ctx ended, the connection is
// nil. When opening failed, the slot is already freed and the connection
// only tells what was measured (see latency); otherwise the caller closes
// the session and then calls release.
func (p *Prober) connect(ctx context.Context, s *mcpconfig.Server, dir string) (*connection, *Error) {
	if e := p.acquire(ctx, s); e != nil {
		return nil, e
	}
	c := &connection{start: time.Now(), at: p.opts.Now().UTC()}
	var cancel context.CancelFunc
	c.ctx, cancel = context.WithTimeout(ctx, p.opts.Timeout)
	c.release = func() { cancel(); p.release() }
	var e *Error
	if c.ss, e = p.open(c.ctx, s, dir); e != nil {
		c.release()
		c.release = func() {}
	}
	return c, e
}

// latency is the latency of each step so far, and the total since the
// slot was taken.
func (c *connection) latency() Latency {
	var lat Latency
	if c.ss != nil {
		lat = c.ss.lat
	}
	lat.Total = ms(time.Since(c.start))
	return lat
}

// probe runs one probe.
func (p *Prober) probe(ctx context.Context, s *mcpconfig.Server, dir string) Result {
	res := Result{Name: s.Name, Scope: string(s.Scope), Transport: string(s.Type),
		ProbedAt: p.opts.Now().UTC()}
	var c *connection
	fail := func(e *Error) Result {
		if c != nil {
			res.LatencyMs = c.latency()
		}
		res.OK, res.Status, res.Error = false, e.Status, e.probeError()
		p.log.Debug("mcp probe failed", "server", s.Name, "code", e.Code, "message", e.Message)
		return res
	}
	if !s.Active {
		return fail(notActive(s))
	}
	c, e := p.connect(ctx, s, dir)
	if c != nil {
		res.ProbedAt = c.at
	}
	if e != nil {
		return fail(e)
	}
	defer c.release()
	ss := c.ss
	healthy := false
	defer func() { ss.close(healthy) }()

	init := ss.cs.InitializeResult()
	if init.ServerInfo != nil && init.ServerInfo.Name != "" {
		res.ServerInfo = &ServerInfo{Name: init.ServerInfo.Name, Version: init.ServerInfo.Version, Title: init.ServerInfo.Title}
	}
	res.ProtocolVersion = init.ProtocolVersion
	caps := init.Capabilities
	if caps == nil {
		caps = &mcp.ServerCapabilities{}
	}
	if b, err := json.Marshal(caps); err == nil {
		res.Capabilities = b
	}
	res.Tools = []ToolSummary{}
	if caps.Tools != nil {
		t0 := time.Now()
		tools, err := ss.listTools(c.ctx)
		if err != nil {
			return fail(ss.failure(c.ctx, "tools/list", err))
		}
		ss.lat.Tools = msPtr(time.Since(t0))
		for _, t := range tools {
			res.Tools = append(res.Tools, ToolSummary{Name: t.Name, Title: toolTitle(t), Description: t.Description})
		}
	}
	res.ToolCount = int64(len(res.Tools))
	if caps.Resources != nil {
		t0 := time.Now()
		list, e := listOptional(c.ctx, ss, "resources/list", ss.cs.Resources(c.ctx, nil), func(r *mcp.Resource) ResourceSummary {
			return ResourceSummary{URI: r.URI, Name: r.Name, MimeType: r.MIMEType, Description: r.Description}
		})
		if e != nil {
			return fail(e)
		}
		ss.lat.Resources = msPtr(time.Since(t0))
		res.Resources = list
	}
	if caps.Prompts != nil {
		t0 := time.Now()
		list, e := listOptional(c.ctx, ss, "prompts/list", ss.cs.Prompts(c.ctx, nil), func(pr *mcp.Prompt) PromptSummary {
			return PromptSummary{Name: pr.Name, Description: pr.Description}
		})
		if e != nil {
			return fail(e)
		}
		ss.lat.Prompts = msPtr(time.Since(t0))
		res.Prompts = list
	}
	res.LatencyMs = c.latency()
	res.OK, res.Status = true, StatusConnected
	healthy = true
	return res
}

// collect reads a listing (following its pages) up to maxListItems items,
// converted by conv; the rest are logged as not listed. On an error it
// returns the items read so far.
func collect[T, R any](ss *session, step string, items iter.Seq2[T, error], conv func(T) R) ([]R, error) {
	var out []R
	for it, err := range items {
		if err != nil {
			return out, err
		}
		if len(out) >= maxListItems {
			ss.p.log.Warn("mcp: too many items; the rest are not listed", "server", ss.srv.Name, "step", step, "limit", maxListItems)
			break
		}
		out = append(out, conv(it))
	}
	return out, nil
}

// listOptional runs an optional listing (resources, prompts): a JSON-RPC
// error answer (the server does not really support it) is logged and
// ignored, keeping what was read; a timeout or a broken connection fails
// the probe.
func listOptional[T, R any](ctx context.Context, ss *session, step string, items iter.Seq2[T, error], conv func(T) R) ([]R, *Error) {
	list, err := collect(ss, step, items, conv)
	if err == nil {
		return list, nil
	}
	var rpc *jsonrpc.Error
	if errors.As(err, &rpc) && ctx.Err() == nil {
		ss.p.log.Warn("mcp probe: a listing failed", "server", ss.srv.Name, "step", step, "code", rpc.Code)
		return list, nil
	}
	return nil, ss.failure(ctx, step, err)
}

func toolTitle(t *mcp.Tool) string {
	if t.Title != "" {
		return t.Title
	}
	if t.Annotations != nil {
		return t.Annotations.Title
	}
	return ""
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func msPtr(d time.Duration) *float64 {
	v := ms(d)
	return &v
}

// session is one open connection to a server. Its owner calls close
// exactly once (close is idempotent anyway).
type session struct {
	p     *Prober
	srv   *mcpconfig.Server
	cs    *mcp.ClientSession
	proc  *proc
	diag  *httpDiag
	tr    *http.Transport
	tap   *toolTap
	scrub *mcpconfig.Secrets // what every text from the server is cleaned of
	url   string
	lat   Latency

	closeOnce sync.Once
}

// open connects to s and initializes. On failure everything is closed and
// the *Error says why.
func (p *Prober) open(ctx context.Context, s *mcpconfig.Server, dir string) (*session, *Error) {
	ss := &session{p: p, srv: s, scrub: p.secrets(s), tap: newToolTap()}
	cfg := gjson.ParseBytes(s.Expanded)
	var transport mcp.Transport
	var timed *timedTransport
	switch s.Type {
	case mcpconfig.TransportStdio:
		spec := stdioSpec{command: cfg.Get("command").String()}
		cfg.Get("args").ForEach(func(_, v gjson.Result) bool { spec.args = append(spec.args, v.String()); return true })
		cfg.Get("env").ForEach(func(k, v gjson.Result) bool {
			spec.env = append(spec.env, [2]string{k.String(), v.String()})
			return true
		})
		t0 := time.Now()
		pr, err := startProc(spec, dir, p.opts.Environ(), p.opts.StderrTail, p.log)
		if err != nil {
			var nf errCommandNotFound
			msg := fmt.Sprintf("cannot start command %q: %v", spec.command, err)
			if errors.As(err, &nf) {
				msg = nf.msg
			}
			return nil, ss.errorf(CodeCommandNotFound, "%s", msg)
		}
		ss.proc = pr
		if p.onStart != nil {
			p.onStart(pr.pgid)
		}
		ss.lat.Connect = msPtr(time.Since(t0))
		transport = &mcp.IOTransport{Reader: stdoutReader{pr}, Writer: stdinWriter{pr}}
		timed = &timedTransport{inner: transport, tap: ss.tap}
	case mcpconfig.TransportHTTP, mcpconfig.TransportSSE:
		ss.url = cfg.Get("url").String()
		if u, err := url.Parse(ss.url); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, ss.errorf(CodeConnectionRefused, "the url is not an http(s) URL: %s", mcpconfig.RedactURL(ss.url))
		}
		var headers [][2]string
		cfg.Get("headers").ForEach(func(k, v gjson.Result) bool {
			headers = append(headers, [2]string{k.String(), v.String()})
			return true
		})
		ss.diag = &httpDiag{}
		var client *http.Client
		client, ss.tr = newHTTPClient(headers, ss.diag, ss.tap)
		if s.Type == mcpconfig.TransportHTTP {
			transport = &mcp.StreamableClientTransport{Endpoint: ss.url, HTTPClient: client, MaxRetries: -1, DisableStandaloneSSE: true}
		} else {
			transport = &mcp.SSEClientTransport{Endpoint: ss.url, HTTPClient: client}
		}
		timed = &timedTransport{inner: transport}
	case mcpconfig.TransportWS:
		return nil, ss.errorf(CodeTransportUnsupported,
			"the ws transport is not supported by the prober (the MCP Go SDK has no websocket client); claude itself may still connect")
	default:
		return nil, ss.errorf(CodeTransportUnsupported, "unknown transport %q", s.Type)
	}

	client := mcp.NewClient(&mcp.Implementation{Name: p.opts.ClientName, Version: p.opts.ClientVersion},
		&mcp.ClientOptions{Logger: p.log, Capabilities: &mcp.ClientCapabilities{}})
	t0 := time.Now()
	cs, err := client.Connect(ctx, timed, &mcp.ClientSessionOptions{ProtocolVersion: p.opts.ProtocolVersion})
	total := time.Since(t0)
	switch {
	case ss.diag != nil && s.Type == mcpconfig.TransportHTTP:
		if dialed, dur, _, _, _, _ := ss.diag.snapshot(); dialed {
			ss.lat.Connect = msPtr(dur)
			total -= dur
		}
	case s.Type == mcpconfig.TransportSSE:
		ss.lat.Connect = msPtr(timed.dur)
		total -= timed.dur
	}
	if err != nil {
		e := ss.failure(ctx, "initialize", err)
		return ss, e
	}
	ss.lat.Initialize = msPtr(max(total, 0))
	ss.cs = cs
	return ss, nil
}

// secrets is what every text from server s is cleaned of before anyone
// sees it (messages, stderr tails, error results): its configured values
// and the values of the secret-looking variables of the servers'
// environment and of ccproxy's own (ANTHROPIC_API_KEY, say).
func (p *Prober) secrets(s *mcpconfig.Server) *mcpconfig.Secrets {
	return mcpconfig.MergeSecrets(s.Secrets(), mcpconfig.EnvSecrets(p.opts.Environ()), mcpconfig.EnvSecrets(os.Environ()))
}

// stderrTail is the scrubbed end of a stdio server's stderr; a secret cut
// by the start of the tail is masked too.
func (ss *session) stderrTail() string {
	text, truncated := ss.proc.stderrTail()
	if truncated {
		return "…" + ss.scrub.ScrubCut(text, true, false)
	}
	return ss.scrub.Scrub(text)
}

// MessagePrefix is how the message of a failure met while connecting to
// server begins (Error.Message, and Failure.Message in a probe
// result), for a caller that names the server already, in a column of a
// table say, and trims it.
func MessagePrefix(server string) string { return fmt.Sprintf("server %q: ", server) }

// errorf makes a failure of this server; the message is prefixed with the
// server's name and cleaned of its secrets.
func (ss *session) errorf(code, format string, args ...any) *Error {
	msg := MessagePrefix(ss.srv.Name) + fmt.Sprintf(format, args...)
	return &Error{Code: code, Status: StatusFailed, Message: ss.scrub.Scrub(msg)}
}

// failure classifies err, met during step, closes the session (killing a
// stdio server) and returns the *Error, with the stderr tail of a stdio
// server.
func (ss *session) failure(ctx context.Context, step string, err error) *Error {
	e := ss.classify(ctx, step, err)
	ss.close(false)
	if ss.proc != nil {
		e.StderrTail = ss.stderrTail()
	}
	return e
}

// classifying, when set (tests), is called by classify with the context
// of the failure, once it has noted whether that had expired.
var classifying func(ctx context.Context)

// classify finds the code of a failure, looking at what the process and
// the HTTP layer saw before the SDK's error.
func (ss *session) classify(ctx context.Context, step string, err error) *Error {
	deadline, hasDeadline := ctx.Deadline()
	// Whether the context had expired when the failure came, before any
	// wait below. The server's stdin stays open until stop (stdinWriter),
	// so when it had not, an exit of the server is the server's own, however
	// late the waiter goroutine saw it (exitAt, which may then be past the
	// deadline on a loaded machine).
	expired := ctx.Err() != nil
	if classifying != nil {
		classifying(ctx)
	}
	if pr := ss.proc; pr != nil {
		if line := pr.nonJSON(); line != "" {
			return ss.errorf(CodeProtocolError,
				"during %s the server wrote something that is not JSON-RPC to its stdout (servers must log to stderr): %q", step, ss.scrub.Scrub(line))
		}
		gone := pr.stdoutEOF.Load() || pr.writeEOF.Load() || pr.hasExited()
		if gone && pr.exitedByItself(ss.p.opts.Grace) && (!expired || !hasDeadline || pr.exitAt.Before(deadline)) {
			e := ss.errorf(CodeProcessExited, "the server process %s during %s", pr.exitText(), step)
			return e
		}
		if gone && !expired {
			return ss.errorf(CodeProtocolError, "the server closed its stdout during %s", step)
		}
	}
	if d := ss.diag; d != nil {
		host := hostOf(ss.url)
		_, _, dialErr, status, statusText, wwwAuth := d.snapshot()
		if status == http.StatusUnauthorized || status == http.StatusForbidden {
			octx, cancel := context.WithTimeout(context.WithoutCancel(ctx), min(ss.p.opts.Timeout, 5*time.Second))
			defer cancel()
			if oauthMetadata(octx, ss.url, wwwAuth) {
				e := ss.errorf(CodeAuthRequired,
					"the server requires OAuth authorization (HTTP %s; it publishes OAuth metadata): authenticate it in Claude Code (/mcp)", statusText)
				e.Status = StatusNeedsAuth
				return e
			}
			return ss.errorf(CodeAuthRequired,
				"the server answered HTTP %s to %s and publishes no OAuth metadata: check the credentials in its headers", statusText, step)
		}
		if dialErr != nil {
			msg, timeout := dialFailure(dialErr, host)
			if timeout {
				return ss.errorf(CodeTimeout, "%s", msg)
			}
			return ss.errorf(CodeConnectionRefused, "%s", msg)
		}
		if ctx.Err() == nil && status != 0 {
			return ss.errorf(CodeProtocolError, "the server answered HTTP %s to %s", statusText, step)
		}
	}
	if ctx.Err() != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return ss.errorf(CodeTimeout, "no answer to %s within %v", step, ss.timeoutFor(step))
		}
		return ss.errorf(CodeTimeout, "cancelled during %s", step)
	}
	var rpc *jsonrpc.Error
	if errors.As(err, &rpc) {
		return ss.errorf(CodeProtocolError, "%s failed: the server answered error %d: %s", step, rpc.Code, truncateText(ss.scrub.Scrub(rpc.Message), 300))
	}
	text := err.Error()
	if i := strings.Index(text, "unsupported protocol version"); i >= 0 {
		version := "an unknown version"
		if q := strings.SplitN(text[i:], `"`, 3); len(q) == 3 {
			version = strconv.Quote(truncateText(q[1], 40))
		}
		return ss.errorf(CodeProtocolError, "the server chose protocol version %s, which this client does not speak", version)
	}
	if errors.Is(err, mcp.ErrConnectionClosed) {
		return ss.errorf(CodeProtocolError, "the connection closed during %s", step)
	}
	return ss.errorf(CodeProtocolError, "%s failed: %s", step, truncateText(ss.scrub.Scrub(text), 300))
}

func (ss *session) timeoutFor(step string) time.Duration {
	if step == "tools/call" {
		return ss.p.opts.CallTimeout
	}
	return ss.p.opts.Timeout
}

func hostOf(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Host != "" {
		return u.Host
	}
	return "the server"
}

func truncateText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

// close ends the session: the MCP session, then the server process and
// its group (gracefully when healthy), then idle HTTP connections. It
// returns when every process of a stdio server is gone.
func (ss *session) close(healthy bool) {
	ss.closeOnce.Do(func() {
		if ss.proc != nil && !healthy {
			ss.proc.stop(false, ss.p.opts.Grace) // no point in waiting for a broken server
		}
		if ss.cs != nil {
			_ = ss.cs.Close()
		}
		if ss.proc != nil {
			ss.proc.stop(true, ss.p.opts.Grace)
		}
		if ss.tr != nil {
			ss.tr.CloseIdleConnections()
		}
	})
}

// listTools lists the server's tools, following pages, bounded.
func (ss *session) listTools(ctx context.Context) ([]*mcp.Tool, error) {
	tools, err := collect(ss, "tools/list", ss.cs.Tools(ctx, nil), func(t *mcp.Tool) *mcp.Tool { return t })
	if err != nil {
		return nil, err
	}
	return tools, nil
}

// timedTransport measures the transport's Connect and, for stdio, taps
// tools/list results off the connection (HTTP is tapped in its client).
type timedTransport struct {
	inner mcp.Transport
	tap   *toolTap
	dur   time.Duration
}

func (t *timedTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	t0 := time.Now()
	c, err := t.inner.Connect(ctx)
	t.dur = time.Since(t0)
	if err != nil || t.tap == nil {
		return c, err
	}
	return &tapConn{Connection: c, tap: t.tap}, nil
}

// tapConn hands every response with a "tools" result to a toolTap.
type tapConn struct {
	mcp.Connection
	tap *toolTap
}

func (c *tapConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if r, ok := m.(*jsonrpc.Response); ok && r.Error == nil && len(r.Result) > 0 {
		if bytes.Contains(r.Result, []byte(`"tools"`)) {
			c.tap.result(string(r.Result))
		}
	}
	return m, err
}
