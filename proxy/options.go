package proxy

import (
	"crypto/tls"
	"errors"
	"fmt"
	"github.com/ccproxy/ccproxy/proxy/eventlog"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ccproxy/ccproxy/mcpconfig/probe"
	"github.com/ccproxy/ccproxy/proxy/mcphub"
	"github.com/ccproxy/ccproxy/proxy/remote"
	"github.com/ccproxy/ccproxy/stream"
)

// Defaults of the Options that cmd/ccproxy has flags for.
const (
	DefaultMaxFrameBytes     = 16 << 20
	DefaultSendQueueFrames   = 1024
	DefaultSendQueueBytes    = 16 << 20
	DefaultReplayBytes       = 64 << 20
	DefaultReplayDiskBytes   = 1 << 30
	DefaultReplayMemoryBytes = 256 << 20
	DefaultSessionTTL        = 10 * time.Minute
	DefaultInboundBytes      = 48 << 20
	DefaultMaxSessions       = 16
	DefaultBlobBytes         = 256 << 20
	DefaultPermissionTimeout = 5 * time.Minute

	// DefaultMaxPendingPermissions bounds a session's unanswered permission
	// requests: claude asks once per tool call, so more means trouble.
	DefaultMaxPendingPermissions = 64
	// DefaultIdleTimeout is how long a session stays idle before it is
	// suspended; MinIdleTimeout the shortest IdleTimeout accepted.
	DefaultIdleTimeout = 10 * time.Minute
	MinIdleTimeout     = time.Second
)

// Options configure a Server. Zero values take the defaults listed. The
// options are grouped by what they configure; the groups are embedded, so
// opts.MaxSessions reads SessionLimits.MaxSessions.
type Options struct {
	// Token authenticates clients (required): Authorization: Bearer T, or
	// the websocket subprotocol ccproxy.token.T. Characters A-Z a-z 0-9 . _ ~ -.
	Token string
	// Project is the default working directory of sessions (default: the
	// current directory).
	Project string
	// Logger receives the proxy's log (default: discard).
	Logger *slog.Logger
	// Version is ccproxy's version, announced in hello.
	Version string
	// UI is the reference web UI served at / (cmd/ccproxy passes
	// webui.FS()); nil serves none (and no login page).
	UI fs.FS

	CLIOptions
	SessionLimits
	ReplayOptions
	WebSocketOptions
	MCPOptions
	RemoteOptions
	HistoryOptions
}

// CLIOptions say which Claude Code CLI runs and how its processes are driven.
type CLIOptions struct {
	// ClaudePath is the Claude Code CLI to run (--claude). When empty it is
	// looked up with FindClaude: $CCPROXY_CLAUDE, then PATH.
	ClaudePath string
	// ClaudePrefixArgs go before claude's own arguments, also for its
	// --version check: a stand-in such as `ccproxy replay-claude` (the demo)
	// is ClaudePath = ccproxy, ClaudePrefixArgs = ["replay-claude"].
	ClaudePrefixArgs []string
	// Replay, when set, says that ClaudePath runs no Claude Code CLI but
	// ccproxy's replay of a recorded session (serve --demo, --replay FILE),
	// and names what it replays ("the built-in demo", a transcript's path).
	// hello, /v1/health and the log then say so (ReplayName, the recorded
	// CLI's version) instead of presenting it as a CLI.
	Replay string
	// Getenv reads $CCPROXY_CLAUDE for FindClaude (default os.Getenv).
	Getenv func(string) string
	// MinClaudeVersion is the oldest CLI accepted (default MinClaudeVersion).
	MinClaudeVersion string
	// ClaudeEnv is the environment of claude processes (default: this
	// process's environment). CCPROXY_TOKEN is always removed from it.
	ClaudeEnv       []string
	MaxLineBytes    int           // longest stdout line of claude kept whole (stream.DefaultMaxLine)
	ControlTimeout  time.Duration // wait for claude to answer a control request (15 s)
	CloseGrace      time.Duration // after stdin EOF, before SIGTERM (5 s)
	TermGrace       time.Duration // after SIGTERM, before SIGKILL (3 s)
	StderrTailBytes int           // claude stderr kept for the exit report (8 KiB)
	// WarmSpares is how many claudes are kept started ahead of need,
	// parked with --await-claim, for session/create to claim at once
	// (package proxy/spare; serve --warm, whose default is 1). 0 (the
	// zero value): none. Never with Replay. They do not count against
	// MaxSessions.
	WarmSpares int
	// beforeSpare, when set (tests), is called before each spare is launched.
	beforeSpare func()
}

// SessionLimits bound the sessions and what they hold.
type SessionLimits struct {
	MaxSessions       int           // live sessions at once (16)
	SessionTTL        time.Duration // an exited session is forgotten this long after its exit (10 min)
	PermissionTimeout time.Duration // unanswered permission requests are denied after it; <0: never (5 min)
	// MaxPendingPermissions bounds the permission requests of a session
	// waiting for an answer (default DefaultMaxPendingPermissions); beyond
	// it claude's further requests are denied at once, and it is logged.
	MaxPendingPermissions int
	BlobBytes             int64 // bytes of attachments kept for /v1/blobs (256 MiB)
	MaxImageBytes         int64 // largest decoded image in session/send (stream.MaxImageBytes)
	// IdleTimeout suspends a session idle this long (no turn running or
	// queued, no permission asked, no restart under way): its claude is
	// stopped, and its next session/send, setPermissionMode or setModel
	// resumes it with --resume (proxy/idle). Default DefaultIdleTimeout;
	// <0: never; otherwise at least MinIdleTimeout.
	IdleTimeout time.Duration
	// IdleClock, when set, arms the sessions' idle timers instead of
	// time.AfterFunc (it returns the timer's Stop): tests fire idleness on
	// demand with it (testkit.IdleClock).
	IdleClock func(d time.Duration, f func()) (stop func() bool)
}

// ReplayOptions bound the replay logs of sessions (proxy/eventlog): memory, disk, where they spill.
type ReplayOptions struct {
	ReplayBytes       int64 // bytes of each session's replay log kept in memory; older events go to disk (64 MiB)
	ReplayDiskBytes   int64 // bytes of each session's replay log kept on disk; older events are lost (1 GiB); <0: no disk
	ReplayMemoryBytes int64 // bytes of all replay logs kept in memory together (256 MiB)
	// SpoolDir is the private directory (0700) where replay logs spill to
	// disk, one subdirectory per ccproxy process (default DefaultSpoolDir()).
	// Subdirectories of ccproxy processes that are gone are removed at start.
	SpoolDir string
	// spillCreate, when set (by tests), creates the spill files instead of
	// eventlog.CreateSpillFile: a stand-in for a full disk.
	spillCreate func(path string) (eventlog.SpillFile, error)
}

// WebSocketOptions bound the clients' websocket connections (proxy/wsconn).
type WebSocketOptions struct {
	MaxFrameBytes   int64         // largest client frame (16 MiB)
	SendQueueFrames int           // frames queued per client; beyond, a subscription catches up from the log (1024)
	SendQueueBytes  int64         // bytes queued per client; beyond, a subscription catches up from the log (16 MiB)
	InboundBytes    int64         // bytes of client frames being read and handled at once, all connections (48 MiB, at least MaxFrameBytes)
	PingInterval    time.Duration // websocket pings (30 s)
	PongWait        time.Duration // drop a silent connection after it (60 s)
	WriteWait       time.Duration // deadline of one websocket write (10 s)
}

// MCPOptions configure the MCP features: the configuration source, probes, the call log, sign-ins.
type MCPOptions struct {
	// MCP supplies MCP configuration: flags at spawn, live changes,
	// approvals. Nil runs claude with no MCP flags (it then reads the
	// user's own configuration) and offers no mcp.approval capability.
	MCP mcphub.Source
	// MCPProbe configures the prober (package probe) behind mcp/probe,
	// mcp/tools and mcp/call. They are offered (capabilities mcp.probe,
	// mcp.tools, mcp.call) when MCP's configurations carry the resolved
	// configuration (mcphub.Config.Resolved), as mcphub.ConfigSource's do. The
	// proxy sets Attachments (binary results go to the blob store served
	// at /v1/blobs), and Logger, Environ (ClaudeEnv without the token) and
	// ClientVersion when they are unset.
	MCPProbe probe.ProberOptions
	// AutoProbe has the proxy probe the active MCP servers itself, at
	// start and after each configuration change, so that mcp/status knows
	// them before any session runs (SPEC §8). `ccproxy serve` turns it on.
	AutoProbe bool
	// CallLogDir is where the MCP call log is kept, one file per project
	// (calllog.ProjectFile(CallLogDir, Project)): every MCP tool call of
	// every session and every mcp/call. Empty keeps no log and offers no
	// mcp.log capability.
	CallLogDir string
	// CallLogIO keeps tool inputs and outputs in the call log (capped).
	CallLogIO bool
	// MaxMCPRequests bounds the mcp/probe, mcp/tools, mcp/call and mcp/log
	// requests running at once, over all connections (64).
	MaxMCPRequests int
	MCPRefresh     time.Duration // ask mcp_status this often while a server is pending (1 s)
	// MCPLoginTimeout bounds an mcp/login: the CLI is stopped if the
	// browser has not completed the sign-in by then (10 min).
	MCPLoginTimeout time.Duration
}

// RemoteOptions say how the proxy is reached from browsers and other machines (proxy/remote).
type RemoteOptions struct {
	// AllowOrigins are extra browser origins allowed besides the proxy's own
	// and vscode-webview://* (exact scheme://host[:port], or "null").
	AllowOrigins []string
	// PublicURL, when set (--public-url https://host[:port][/prefix]), is
	// where browsers reach the proxy through a reverse proxy that
	// terminates TLS in front of it (proxy/remote.PublicURL): its origin
	// and host are the proxy's own, the login cookie is Secure when it is
	// https, login links and /v1/health name it, and the proxy serves
	// under its path prefix as well as at its root.
	PublicURL string
	// TrustedHeader and TrustedProxies (--trusted-header NAME,
	// --trusted-proxy ADDR), with PublicURL: a request from one of the
	// TrustedProxies (loopback IPs or CIDR prefixes, comma-separated or
	// one per entry) carrying a non-empty TrustedHeader (the user the
	// reverse proxy authenticated) is let in as if it had the token
	// (proxy/remote.TrustedHeader). Both or neither.
	TrustedHeader  string
	TrustedProxies []string
	// TLS, when set, serves HTTPS with its certificates (TLS 1.2 or newer,
	// HTTP/1.1): the proxy's own origins are then https://, and the login
	// cookie is Secure. A listen address off loopback is served only with
	// TLS.
	TLS *tls.Config
	// Hosts are names (DNS names or IP addresses) clients reach the proxy
	// by, besides its listen address (see ServedHosts); the first is the
	// one put in login links. A request whose Host header names no served
	// host is refused (a DNS-rebinding defence).
	Hosts []string
	// LoginBurst and LoginEvery rate-limit failed POST /v1/login per
	// client address (IPv4 address or IPv6 /64): a token bucket of
	// LoginBurst failures (10), one more every LoginEvery (6 s). Beyond it:
	// 429. A valid code is always accepted.
	LoginBurst int
	LoginEvery time.Duration
	// MaxLoginClients bounds the failing addresses the login rate limit
	// remembers (4096; under 300 bytes each); when it is full, the one
	// whose last failure is oldest is forgotten, and it is logged once.
	MaxLoginClients int
}

// HistoryOptions configure session history (proxy/historyreq: history/list, history/read).
type HistoryOptions struct {
	// HistoryHome is the home directory whose .claude/projects holds the
	// CLI's session files (default: HOME of ClaudeEnv, else this process's
	// home directory). "-" turns history off: no history capability.
	HistoryHome string
	// HistoryReplyBytes bounds the events of one history/read reply
	// (default: half of SendQueueBytes, at most 8 MiB); a page is cut
	// short to stay within it, and the reply says so (truncated).
	HistoryReplyBytes int64
	// HistoryIndexDir is where history/search keeps its full-text index
	// (default: the user's cache directory, ccproxy/search).
	HistoryIndexDir string
}

func (o *Options) setDefaults() error {
	if err := remote.CheckToken(o.Token); err != nil {
		return fmt.Errorf("token: %w", err)
	}
	for _, ao := range o.AllowOrigins {
		if _, err := remote.ParseOrigin(ao); err != nil {
			return fmt.Errorf("allowed origin %q: %w", ao, err)
		}
	}
	if o.PublicURL != "" {
		if _, err := remote.ParsePublicURL(o.PublicURL); err != nil {
			return err
		}
	}
	if th, err := remote.ParseTrustedHeader(o.TrustedHeader, o.TrustedProxies); err != nil {
		return err
	} else if th != nil && o.PublicURL == "" {
		return errors.New("a trusted header (--trusted-header) is for a reverse proxy in front: give its URL with --public-url")
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.Project == "" {
		wd, err := os.Getwd()
		if err != nil {
			return fmt.Errorf("project directory: %w", err)
		}
		o.Project = wd
	}
	abs, err := filepath.Abs(o.Project)
	if err != nil {
		return fmt.Errorf("project directory: %w", err)
	}
	o.Project = abs
	if st, err := os.Stat(o.Project); err != nil || !st.IsDir() {
		return fmt.Errorf("project directory %s is not a directory", o.Project)
	}
	def64 := func(v *int64, d int64) {
		if *v <= 0 {
			*v = d
		}
	}
	defInt := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	defDur := func(v *time.Duration, d time.Duration) {
		if *v == 0 {
			*v = d
		}
	}
	def64(&o.MaxFrameBytes, DefaultMaxFrameBytes)
	defInt(&o.SendQueueFrames, DefaultSendQueueFrames)
	def64(&o.SendQueueBytes, DefaultSendQueueBytes)
	def64(&o.ReplayBytes, DefaultReplayBytes)
	if o.ReplayDiskBytes == 0 {
		o.ReplayDiskBytes = DefaultReplayDiskBytes
	}
	def64(&o.ReplayMemoryBytes, DefaultReplayMemoryBytes)
	defDur(&o.SessionTTL, DefaultSessionTTL)
	def64(&o.InboundBytes, DefaultInboundBytes)
	if o.InboundBytes < o.MaxFrameBytes {
		return fmt.Errorf("inbound bytes (%d) must be at least the largest frame (%d)", o.InboundBytes, o.MaxFrameBytes)
	}
	if o.SpoolDir == "" {
		o.SpoolDir = DefaultSpoolDir()
	}
	if o.WarmSpares < 0 {
		return fmt.Errorf("warm spares: %d is negative (0 keeps none)", o.WarmSpares)
	}
	defInt(&o.MaxSessions, DefaultMaxSessions)
	defInt(&o.MaxLineBytes, stream.DefaultMaxLine)
	def64(&o.BlobBytes, DefaultBlobBytes)
	def64(&o.MaxImageBytes, stream.MaxImageBytes)
	defDur(&o.PermissionTimeout, DefaultPermissionTimeout)
	defDur(&o.IdleTimeout, DefaultIdleTimeout)
	if o.IdleTimeout > 0 && o.IdleTimeout < MinIdleTimeout {
		return fmt.Errorf("idle timeout %v is too short: it must be at least %v (or negative: never)", o.IdleTimeout, MinIdleTimeout)
	}
	defDur(&o.ControlTimeout, 15*time.Second)
	defDur(&o.CloseGrace, 5*time.Second)
	defDur(&o.TermGrace, 3*time.Second)
	defDur(&o.PingInterval, 30*time.Second)
	defDur(&o.PongWait, 60*time.Second)
	defDur(&o.WriteWait, 10*time.Second)
	defDur(&o.MCPRefresh, time.Second)
	defDur(&o.MCPLoginTimeout, 10*time.Minute)
	defInt(&o.StderrTailBytes, 8<<10)
	defInt(&o.MaxMCPRequests, 64)
	defInt(&o.MaxPendingPermissions, DefaultMaxPendingPermissions)
	if err := o.remoteDefaults(); err != nil {
		return err
	}
	if err := o.historyDefaults(); err != nil {
		return err
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	return nil
}

// CheckToken reports whether t is acceptable as Options.Token
// (remote.CheckToken). Its error says what is wrong, not where the token
// came from (nor the token): the caller names the source ("--token: at
// least 16 ...").
func CheckToken(t string) error { return remote.CheckToken(t) }

// historyDefaults fills in HistoryHome and HistoryReplyBytes.
func (o *Options) historyDefaults() error {
	if o.HistoryHome == "" {
		for _, kv := range o.ClaudeEnv {
			if h, ok := strings.CutPrefix(kv, "HOME="); ok && h != "" {
				o.HistoryHome = h
			}
		}
	}
	if o.HistoryHome == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return fmt.Errorf("history: no home directory (set HistoryHome, or \"-\" to turn history off): %w", err)
		}
		o.HistoryHome = h
	}
	if o.HistoryHome != "-" && !filepath.IsAbs(o.HistoryHome) {
		return fmt.Errorf("history home %q: want an absolute path", o.HistoryHome)
	}
	if o.HistoryReplyBytes <= 0 {
		o.HistoryReplyBytes = min(o.SendQueueBytes/2, 8<<20)
	}
	return nil
}

// remoteDefaults checks and completes the remote-access Options.
func (o *Options) remoteDefaults() error {
	o.Hosts = append([]string(nil), o.Hosts...) // the caller's slice stays as it was
	for i, h := range o.Hosts {
		n, err := remote.NormalizeHost(h)
		if err != nil {
			return err
		}
		o.Hosts[i] = n
	}
	if o.TLS != nil && len(o.TLS.Certificates) == 0 && o.TLS.GetCertificate == nil {
		return errors.New("TLS: the configuration holds no certificate")
	}
	if o.LoginBurst <= 0 {
		o.LoginBurst = remote.DefaultLoginBurst
	}
	if o.LoginEvery <= 0 {
		o.LoginEvery = remote.DefaultLoginEvery
	}
	if o.MaxLoginClients <= 0 {
		o.MaxLoginClients = remote.DefaultMaxLoginClients
	}
	return nil
}

// DefaultSpoolDir is where spill files go when Options.SpoolDir is empty
// (eventlog.DefaultSpoolDir).
func DefaultSpoolDir() string { return eventlog.DefaultSpoolDir() }
