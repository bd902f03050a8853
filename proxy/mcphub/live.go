package mcphub

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/proxy/claudecli"
)

// LiveSession is a session whose claude runs: what mcp/toggle,
// mcp/reconnect, and the end of mcp/login and mcp/logout do in it. Its
// methods may be called from any goroutine, concurrently.
type LiveSession interface {
	ID() string
	// ReconnectMCP asks claude to reconnect server name (mcp_reconnect).
	ReconnectMCP(ctx context.Context, name string) error
	// ToggleMCP enables or disables server name in this session only.
	ToggleMCP(ctx context.Context, name string, enabled bool) error
	// RefreshMCPStatus asks claude for mcp_status, whose answer the Hub
	// observes; it does not wait for it.
	RefreshMCPStatus()
}

// Live runs MCP actions in live sessions: mcp/toggle and mcp/reconnect,
// and mcp_reconnect everywhere after a login or logout. Each runs in
// goroutines Each owns and joins before it returns.
type Live struct {
	Sessions func() []LiveSession                 // every live session
	Session  func(id string) (LiveSession, error) // one, or unknown_session
	Timeout  time.Duration                        // of each session's action (Options.ControlTimeout)
	// ControlError maps a session's failed control request to the
	// protocol error of request typ.
	ControlError func(typ string, err error) error
	Log          *slog.Logger
}

// Targets checks mcp/toggle or mcp/reconnect (typ) of name against the
// configuration (m.Configured) and returns the sessions it is for:
// session, or every live session when it is "".
func (l *Live) Targets(m *Manage, typ, name, session string) ([]LiveSession, error) {
	if _, err := m.Configured(typ, name); err != nil {
		return nil, err
	}
	if session == "" {
		return l.Sessions(), nil
	}
	sess, err := l.Session(session)
	if err != nil {
		return nil, err
	}
	return []LiveSession{sess}, nil
}

// Reconnect is mcp_reconnect of name in every live session, after
// request typ (mcp/login, mcp/logout).
func (l *Live) Reconnect(ctx context.Context, typ, name string) []protocol.MCPLiveOutcome {
	return l.Each(ctx, typ, name, l.Sessions(), func(ctx context.Context, sess LiveSession) error {
		return sess.ReconnectMCP(ctx, name)
	})
}

// Each runs do for each of targets at once, each bounded by Timeout and
// ctx, and returns each session's outcome; each session that answered
// (done, or claude's own error) is asked for mcp_status afterwards so
// mcp/status shows the result.
func (l *Live) Each(ctx context.Context, typ, name string, targets []LiveSession, do func(context.Context, LiveSession) error) []protocol.MCPLiveOutcome {
	out := make([]protocol.MCPLiveOutcome, len(targets))
	var wg sync.WaitGroup
	for i, sess := range targets {
		wg.Add(1)
		go func() { // owned by this call: joined below
			defer wg.Done()
			out[i] = l.one(ctx, typ, name, sess, do)
		}()
	}
	wg.Wait()
	return out
}

func (l *Live) one(ctx context.Context, typ, name string, sess LiveSession, do func(context.Context, LiveSession) error) protocol.MCPLiveOutcome {
	o := protocol.MCPLiveOutcome{Session: sess.ID()}
	ctx, cancel := context.WithTimeout(ctx, l.Timeout)
	defer cancel()
	err := do(ctx, sess)
	if err != nil {
		var pe *protocol.Error
		if !errors.As(l.ControlError(typ, err), &pe) {
			pe = protocol.Errorf(protocol.CodeInternal, "%s failed", typ)
		}
		o.Error = pe
	} else {
		o.OK = true
		l.Log.Info("MCP server changed live", "session", sess.ID(), "request", typ, "server", name)
	}
	var ce *claudecli.CLIError
	if err == nil || errors.As(err, &ce) {
		sess.RefreshMCPStatus()
	}
	return o
}
