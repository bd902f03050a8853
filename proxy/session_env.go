package proxy

// The environment of a session: all a Session reaches of the Server that
// made it. Server.newSession builds it; a session holds no *Server and
// calls nothing of the server but what is here.

import (
	"context"
	"log/slog"
	"time"

	"github.com/ccproxy/ccproxy/history"
	"github.com/ccproxy/ccproxy/mcpconfig"
	"github.com/ccproxy/ccproxy/proxy/broker"
	"github.com/ccproxy/ccproxy/proxy/claudecli"
	"github.com/ccproxy/ccproxy/proxy/mcphub"
	"github.com/ccproxy/ccproxy/stream"
)

// sessionEnv is what a session needs of its server: the options it reads
// (copied when the session is made; Options do not change after New), where
// its counts go, the MCP configuration in force and the status its claude
// reports to, the blob store of attachments, the call log, the memory budget
// of the replay logs, and the claude it launches. Every member is safe for
// concurrent use and takes no session lock; none is called with the
// session's mu held but metrics (a leaf: atomic counters and histograms).
type sessionEnv struct {
	opts    sessionOptions
	metrics sessionMetrics
	// mcp is the proxy's MCP configuration in force and its status feed
	// (mcpHub): a session spawns with config(), sends it live, and reports
	// what its claude says of its servers.
	mcp mcpTarget
	// envSecrets are the secret-named environment values of ccproxy and
	// claude, part of every session's secret set.
	envSecrets *mcpconfig.Secrets
	// blobs takes the attachments of claude's events (/v1/blobs).
	blobs stream.Sink
	// callLog returns the session's side of the MCP call log, nil without
	// a call log.
	callLog func(session string, log *slog.Logger) *sessionCalls
	// trimLogs frees replay-log memory when an append went over the budget
	// of all logs (eventlog.Budget.Trim); called without the session's lock.
	trimLogs func()
	// claudeEnv is the environment of a claude process (never the token),
	// read at each launch.
	claudeEnv func() []string
	// findClaude locates the CLI (cached by the server): a restart
	// launches it again.
	findClaude func() (Claude, error)
	// findMessage finds a message of a Claude session in its session
	// file (session/rewind: rewind.go); nil when history is off.
	findMessage func(ctx context.Context, claudeID, cwd, uuid string) (history.Message, error)
}

// sessionOptions are the Options a session reads.
type sessionOptions struct {
	claudePrefixArgs      []string
	maxLineBytes          int
	stderrTailBytes       int
	controlTimeout        time.Duration
	closeGrace, termGrace time.Duration
	permissionTimeout     time.Duration
	maxPendingPermissions int
	// rules writes "always" answers' rules (the MCP source, when it can);
	// nil when claude writes them itself.
	rules broker.RuleRecorder
	// toggles takes back the CLI's record of an mcp_toggle (the MCP
	// source, when it can); nil runs the toggle as is.
	toggles mcphub.ToggleRecorder
	// idleTimeout suspends an idle session (proxy/idle; ≤ 0: never);
	// idleAfter arms its timer (nil: time.AfterFunc).
	idleTimeout time.Duration
	idleAfter   func(time.Duration, func()) func() bool
}

// sessionMetrics are the counts a session makes (package proxy/metrics).
// Its methods take only the metrics' own locks: they may be called with a
// session's lock held.
type sessionMetrics interface {
	EventLogged(frame []byte)
	broker.Metrics
	ControlDone(subtype string, took time.Duration, err error)
	Normalized(took time.Duration)
	Restarted()
	ClaudeExited(reason string, ex claudecli.Exit)
	Suspended()
	Resumed()
}

// mcpTarget is the proxy's MCP configuration in force and its status feed
// (mcphub.Hub), as a session sees them. Its methods take the hub's own lock:
// they are called with no session lock held.
type mcpTarget interface {
	Config() *mcphub.Config
	Observe(reports []mcphub.Report, at time.Time)
	NeedsDetail(reports []mcphub.Report) bool
}

// newSessionEnv builds the environment of a new session of s (a function
// rather than one more method of Server).
func newSessionEnv(s *Server) sessionEnv {
	o := s.opts
	env := sessionEnv{
		opts: sessionOptions{
			claudePrefixArgs:      o.ClaudePrefixArgs,
			maxLineBytes:          o.MaxLineBytes,
			stderrTailBytes:       o.StderrTailBytes,
			controlTimeout:        o.ControlTimeout,
			closeGrace:            o.CloseGrace,
			termGrace:             o.TermGrace,
			permissionTimeout:     o.PermissionTimeout,
			maxPendingPermissions: o.MaxPendingPermissions,
			idleTimeout:           o.IdleTimeout,
			idleAfter:             o.IdleClock,
		},
		metrics:    s.metrics,
		mcp:        s.mcp,
		envSecrets: s.mcp.EnvSecrets(),
		blobs:      s.blobs,
		callLog:    s.calls.forSession,
		trimLogs:   s.logs.Trim,
		claudeEnv:  s.opts.sessionClaudeEnv,
		findClaude: s.findClaude,
	}
	if s.hist != nil {
		env.findMessage = s.hist.Store().Message
	}
	env.opts.rules, _ = o.MCP.(broker.RuleRecorder)
	env.opts.toggles, _ = o.MCP.(mcphub.ToggleRecorder)
	return env
}
