package proxy

import (
	"context"
	"encoding/json"
	"os/exec"
	"slices"
	"strings"

	"github.com/ccproxy/ccproxy/mcpconfig"
	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/proxy/feature"
	"github.com/ccproxy/ccproxy/proxy/mcphub"
)

// The MCP features' adapters: what the feature table (features.go) calls
// for mcp/subscribe … mcp/logout. The logic is package mcphub's; these
// decode nothing new, call it and reply.

// mcpFeatures are the components of the MCP requests that change the
// configuration or act on sessions.
type mcpFeatures struct {
	manage *mcphub.Manage // mcp/add, mcp/update, mcp/remove, mcp/test, mcp/trust, persisted mcp/toggle
	live   *mcphub.Live   // mcp/toggle and mcp/reconnect in live sessions
	logins *mcphub.Logins // mcp/login, mcp/logout; Serve closes it
	prober *wireProber    // mcp/test probes through it (the calls' prober); nil: no mcp/test
}

func (s *Server) newMCPFeatures() mcpFeatures {
	manage := &mcphub.Manage{Source: s.opts.MCP, Hub: s.mcp, Apply: s.applyMCP}
	live := &mcphub.Live{
		Sessions: s.liveMCPSessions,
		Session: func(id string) (mcphub.LiveSession, error) {
			sess, err := s.session(id)
			if err != nil {
				return nil, err
			}
			return liveSession{sess}, nil
		},
		Timeout:      s.opts.ControlTimeout,
		ControlError: controlError,
		Log:          s.log,
	}
	logins := mcphub.NewLogins(mcphub.LoginConfig{Command: s.loginCommand, Manage: manage, Live: live, Scrub: s.mcp.Scrub, Timeout: s.opts.MCPLoginTimeout})
	return mcpFeatures{manage: manage, live: live, logins: logins}
}

// liveMCPSessions are the live sessions, for mcphub.Live.
func (s *Server) liveMCPSessions() []mcphub.LiveSession {
	live := s.liveSessions()
	out := make([]mcphub.LiveSession, len(live))
	for i, sess := range live {
		out[i] = liveSession{sess}
	}
	return out
}

// loginCommand builds `claude [prefix] mcp login --no-browser -- NAME` or
// `claude [prefix] mcp logout -- NAME` as sessions run claude: same
// binary, environment (without the proxy's token) and directory (the
// project). The name comes after "--", so that no configured name reads
// as an option (2.1.329 and 2.1.332 take a name after "--";
// docs/CLI-NOTES.md); AuthTarget has refused one starting with "-"
// already.
func (s *Server) loginCommand(typ string, args ...string) (*exec.Cmd, error) {
	claude, err := s.findClaude()
	if err != nil {
		return nil, protocol.Errorf(protocol.CodeClaudeUnavailable, "%s: %s", typ, strings.TrimPrefix(err.Error(), ErrClaudeUnavailable.Error()+": "))
	}
	argv := append(slices.Clone(s.opts.ClaudePrefixArgs), args...)
	cmd := exec.Command(claude.Path, argv...)
	cmd.Dir = s.opts.Project
	cmd.Env = s.opts.claudeEnv()
	return cmd, nil
}

// mcpSubscriber is a connection as a subscriber of the MCP hub
// (mcp/subscribe): its pushes are queued like any frame. Equal for the
// same connection, so mcp/unsubscribe and the connection's end remove it.
type mcpSubscriber struct{ c *client }

func (s mcpSubscriber) Push(frame []byte) bool { return s.c.enqueue(outFrame{data: frame}) }

// loginConn is a connection as the one a login answers (request id).
type loginConn struct {
	c  *client
	id json.RawMessage
}

func (l loginConn) Reply(res protocol.MCPLoginResult) { l.c.reply(l.id, res) }
func (l loginConn) Fail(err error)                    { l.c.replyErr(l.id, err) }
func (l loginConn) Push(ev protocol.MCPLoginEvent) {
	b, err := protocol.EncodePush(protocol.TypeMCPLoginEvent, ev)
	if err != nil {
		l.c.log.Error("mcp/login push cannot be encoded", "err", err)
		return
	}
	l.c.enqueue(outFrame{data: b})
}

// add, update and remove serve mcp/add, mcp/update and
// mcp/remove: the write, then mcp/config and mcp/status to subscribers,
// then the reply with the resulting configuration.
func (f *mcpFeatures) add(_ context.Context, c *client, d *protocol.MCPAdd) (protocol.Data, error) {
	return f.manage.Write(c.log, protocol.TypeMCPAdd, d.Name, func(m mcphub.Manager) (mcpconfig.Location, error) {
		return m.WriteServer(d.Name, d.Scope, d.Definition, mcpconfig.AddNew)
	})
}

func (f *mcpFeatures) update(_ context.Context, c *client, d *protocol.MCPUpdate) (protocol.Data, error) {
	return f.manage.Write(c.log, protocol.TypeMCPUpdate, d.Name, func(m mcphub.Manager) (mcpconfig.Location, error) {
		return m.WriteServer(d.Name, d.Scope, d.Definition, mcpconfig.ReplaceOnly)
	})
}

func (f *mcpFeatures) remove(_ context.Context, c *client, d *protocol.MCPRemove) (protocol.Data, error) {
	return f.manage.Write(c.log, protocol.TypeMCPRemove, d.Name, func(m mcphub.Manager) (mcpconfig.Location, error) {
		return m.RemoveServer(d.Name, d.Scope)
	})
}

func (f *mcpFeatures) trust(_ context.Context, c *client, _ *protocol.MCPTrust) (protocol.Data, error) {
	return f.manage.Trust(c.log)
}

// test serves mcp/test: probe an unsaved definition (under the calls'
// runner, sharing mcp/probe's limit). The result is not an observation
// (mcp/status does not change).
func (f *mcpFeatures) test(ctx context.Context, c *client, d *protocol.MCPTest) (protocol.Data, error) {
	name, cfg, err := f.manage.Unsaved(c.log, d)
	if err != nil {
		return nil, err
	}
	res, err := f.prober.Probe(ctx, cfg, name)
	if err != nil {
		return nil, err
	}
	return protocol.MCPProbeResult{Results: []protocol.ProbeResult{res}}, nil
}

// toggle serves mcp/toggle: live in sessions (Session.ToggleMCP), or
// with persist in the project's configuration (mcp.manage).
func (f *mcpFeatures) toggle(c *client, d *protocol.MCPToggle) (slowPart, error) {
	name, enabled := d.Name, *d.Enabled
	if d.Persist {
		persist, err := f.manage.Persist(name, enabled)
		if err != nil {
			return nil, err
		}
		return func(context.Context) (protocol.Data, error) { return persist(c.log) }, nil
	}
	return f.liveAction(protocol.TypeMCPToggle, name, d.Session, func(ctx context.Context, sess mcphub.LiveSession) error {
		return sess.ToggleMCP(ctx, name, enabled)
	})
}

// reconnect serves mcp/reconnect: claude's mcp_reconnect in sessions.
func (f *mcpFeatures) reconnect(c *client, d *protocol.MCPReconnect) (slowPart, error) {
	return f.liveAction(protocol.TypeMCPReconnect, d.Name, d.Session, func(ctx context.Context, sess mcphub.LiveSession) error {
		return sess.ReconnectMCP(ctx, d.Name)
	})
}

// liveAction checks a live action now; its slow part runs it in session (or
// every live session) and replies with each session's outcome.
func (f *mcpFeatures) liveAction(typ, name, session string, do func(context.Context, mcphub.LiveSession) error) (slowPart, error) {
	targets, err := f.live.Targets(f.manage, typ, name, session)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) (protocol.Data, error) {
		return protocol.MCPLiveResult{Name: name, Sessions: f.live.Each(ctx, typ, name, targets, do)}, nil
	}, nil
}

// login serves mcp/login: a login runs in a goroutine of the
// connection, replying with the URL and pushing how it ends; with
// redirect, the browser's redirect is delivered to the running login.
func (f *mcpFeatures) login(c *client, id json.RawMessage, d *protocol.MCPLogin) {
	if d.Redirect != "" {
		deliver, err := f.logins.Redirect(d.Name, d.Redirect)
		if err != nil {
			c.replyErr(id, err)
			return
		}
		c.async(func() {
			res, err := deliver(c.ctx, c.log)
			feature.ReplyWith(c, id, res, err)
		})
		return
	}
	run, err := f.logins.Login(d.Name)
	if err != nil {
		c.replyErr(id, err)
		return
	}
	c.async(func() { run(c.ctx, c.log, loginConn{c: c, id: id}) })
}

// logout serves mcp/logout.
func (f *mcpFeatures) logout(c *client, d *protocol.MCPLogout) (slowPart, error) {
	logout, err := f.logins.Logout(d.Name)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) (protocol.Data, error) { return logout(ctx, c.log) }, nil
}
