package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"

	"github.com/ccproxy/ccproxy/mcpconfig"
	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/proxy/mcphub"
)

// manager returns the MCP source as an mcphub.Manager, or nil.
func (s *Server) manager() mcphub.Manager {
	m, _ := s.opts.MCP.(mcphub.Manager)
	return m
}

// reqMCPWrite serves mcp/add, mcp/update and mcp/remove: the write, then
// mcp/config and mcp/status to subscribers, then the reply with the
// resulting configuration.
func (s *Server) reqMCPWrite(c *client, id json.RawMessage, typ, name string, write func(mcphub.Manager) (mcpconfig.Location, error)) {
	m := s.manager()
	c.async(func() {
		loc, err := write(m)
		if err != nil {
			c.replyErr(id, mcpError(c, typ, name, err))
			return
		}
		s.applyMCP() // mcp/config and mcp/status reach subscribers before the reply
		cur := m.Current()
		var view protocol.MCPConfig
		if cur != nil {
			view = cur.View
		}
		if view.Servers == nil {
			view.Servers = []protocol.MCPConfigServer{}
		}
		c.reply(id, protocol.MCPManageResult{Name: name, Scope: string(loc.Scope), File: loc.File, Config: view})
	})
}

// reqMCPTrust serves mcp/trust: record the trust, then mcp/config and
// mcp/status to subscribers, then the reply naming the servers that became
// active.
func (s *Server) reqMCPTrust(c *client, id json.RawMessage) {
	m := s.manager()
	c.async(func() {
		active := map[string]bool{}
		if cur := m.Current(); cur != nil {
			for _, v := range cur.View.Servers {
				active[v.Name] = v.Active
			}
		}
		project, file, err := m.Trust()
		if err != nil {
			c.replyErr(id, mcpError(c, protocol.TypeMCPTrust, "", err))
			return
		}
		s.applyMCP() // mcp/config and mcp/status reach subscribers before the reply
		res := protocol.MCPTrustResult{Project: project, File: file, Enabled: []string{}}
		if cur := m.Current(); cur != nil {
			res.Config = cur.View
			for _, v := range cur.View.Servers {
				if v.Active && !active[v.Name] {
					res.Enabled = append(res.Enabled, v.Name)
				}
			}
		}
		if res.Config.Servers == nil {
			res.Config.Servers = []protocol.MCPConfigServer{}
		}
		c.reply(id, res)
	})
}

// reqMCPTest serves mcp/test: probe an unsaved definition, sharing
// mcp/probe's limit. The result is not an observation (mcp/status does not
// change).
func (s *Server) reqMCPTest(c *client, id json.RawMessage, d *protocol.MCPTest) {
	name := d.Name
	if name == "" {
		name = "test"
	}
	m := s.manager()
	s.calls.reqs.run(c, id, protocol.TypeMCPTest, func(ctx context.Context) (protocol.Data, error) {
		cfg, err := m.Unsaved(name, d.Definition)
		if err != nil {
			return nil, mcpError(c, protocol.TypeMCPTest, name, err)
		}
		res, err := s.calls.prober.Probe(ctx, cfg, name)
		if err != nil {
			return nil, err
		}
		return protocol.MCPProbeResult{Results: []protocol.ProbeResult{res}}, nil
	})
}

// serverNameErr is the bad_request of request typ for a server name
// ccproxy refuses everywhere (mcpconfig.CheckNameRef: empty, or "-"
// first), naming the field; nil for any other name, as configured ones
// may break the rule of new names.
func serverNameErr(typ, name string) error {
	if err := mcpconfig.CheckNameRef(name); err != nil {
		return protocol.Errorf(protocol.CodeBadRequest, "%s: name: %s", typ, err.Error())
	}
	return nil
}

// mcpError turns an error of mcpconfig's writes into the reply error:
// mcp_server_exists, mcp_server_not_found, bad_request for bad input (a
// definition's field error, an invalid name or scope, a name in several
// scopes, a file that is not valid JSON: each message names what and
// where, never a value), internal for the rest (logged).
func mcpError(c *client, typ, name string, err error) error {
	var (
		pe *protocol.Error
		ee *mcpconfig.ExistsError
		me *mcpconfig.MissingServerError
		se *mcpconfig.ScopesError
		fe *mcpconfig.FileError
		le *mcpconfig.LinkError
	)
	switch {
	case errors.As(err, &pe):
		return pe
	case errors.As(err, &le):
		return protocol.Errorf(protocol.CodeBadRequest, "%s: %s", typ, le.Error())
	case errors.As(err, &ee):
		return protocol.Errorf(protocol.CodeMCPServerExists, "%s: %s", typ, ee.Error())
	case errors.As(err, &me):
		return protocol.Errorf(protocol.CodeMCPServerNotFound, "%s: %s", typ, me.Error())
	case errors.As(err, &se):
		return protocol.Errorf(protocol.CodeBadRequest, "%s: %s", typ, se.Error())
	case errors.As(err, &fe):
		return protocol.Errorf(protocol.CodeBadRequest, "%s: %s", typ, fe.Error())
	case errors.Is(err, mcpconfig.ErrBadInput):
		return protocol.Errorf(protocol.CodeBadRequest, "%s: %s", typ, err.Error())
	}
	c.log.Error("MCP configuration write failed", "type", typ, "server", name, "err", err)
	return protocol.Errorf(protocol.CodeInternal, "%s %.80q failed; see the proxy's log", typ, name)
}

// configuredServer returns the view of server name in the proxy's MCP
// configuration, or the mcp_server_not_found error of request typ. A name
// that reads as an option is refused first (serverNameErr).
func (s *Server) configuredServer(typ, name string) (*protocol.MCPConfigServer, error) {
	if err := serverNameErr(typ, name); err != nil {
		return nil, err
	}
	if cfg := s.mcp.Config(); cfg != nil {
		if i := slices.IndexFunc(cfg.View.Servers, func(v protocol.MCPConfigServer) bool { return v.Name == name }); i >= 0 {
			return &cfg.View.Servers[i], nil
		}
	}
	return nil, protocol.Errorf(protocol.CodeMCPServerNotFound, "%s: no MCP server named %.80q is configured", typ, name)
}

// mcpConfigured reports whether name is a server of the proxy's MCP
// configuration, else replies mcp_server_not_found.
func (s *Server) mcpConfigured(c *client, id json.RawMessage, typ, name string) bool {
	if _, err := s.configuredServer(typ, name); err != nil {
		c.replyErr(id, err)
		return false
	}
	return true
}

// reqMCPToggle serves mcp/toggle: live in sessions (Session.toggleMCP:
// mcp_toggle with the CLI's record in ~/.claude.json taken back, the
// choice kept by the session), or with persist recorded in the project's
// disabled servers (mcp.manage), which reaches live sessions through
// mcp_set_servers.
func (s *Server) reqMCPToggle(c *client, id json.RawMessage, d *protocol.MCPToggle) {
	typ, name, enabled := protocol.TypeMCPToggle, d.Name, *d.Enabled
	if !d.Persist {
		rec, _ := s.opts.MCP.(mcphub.ToggleRecorder)
		var record func(string, bool, func() error) error
		if rec != nil {
			record = rec.UnrecordedToggle
		}
		s.reqMCPLive(c, id, typ, name, d.Session, func(ctx context.Context, sess *Session) error {
			return sess.toggleMCP(ctx, name, enabled, record)
		})
		return
	}
	if !s.mcpConfigured(c, id, typ, name) {
		return
	}
	m := s.manager()
	if m == nil {
		c.replyErr(id, protocol.Errorf(protocol.CodeBadRequest, "%s: persist needs a proxy that writes the MCP configuration (mcp.manage)", typ))
		return
	}
	c.async(func() {
		if err := m.SetDisabled(name, !enabled); err != nil {
			c.replyErr(id, mcpError(c, typ, name, err))
			return
		}
		s.applyMCP() // mcp/config first; live sessions get it through mcp_set_servers
		c.reply(id, protocol.MCPLiveResult{Name: name, Sessions: []protocol.MCPLiveOutcome{}})
	})
}

// reconnectMCP is an mcpLiveEach action: claude's mcp_reconnect of name.
func reconnectMCP(name string) func(context.Context, *Session) error {
	return func(ctx context.Context, sess *Session) error {
		_, err := sess.controlWait(ctx, "mcp_reconnect", map[string]any{"serverName": name})
		return err
	}
}

// reqMCPLive serves mcp/toggle and mcp/reconnect live: do runs for session
// (or every live session), all at once; each session's result is one
// outcome of the reply, and each asks claude for mcp_status afterwards so
// mcp/status shows the result.
func (s *Server) reqMCPLive(c *client, id json.RawMessage, typ, name, session string, do func(context.Context, *Session) error) {
	if !s.mcpConfigured(c, id, typ, name) {
		return
	}
	var targets []*Session
	if session != "" {
		sess, err := s.session(session)
		if err != nil {
			c.replyErr(id, err)
			return
		}
		targets = []*Session{sess}
	} else {
		targets = s.liveSessions()
	}
	c.async(func() {
		c.reply(id, protocol.MCPLiveResult{Name: name, Sessions: s.mcpLiveEach(c.ctx, typ, name, targets, do)})
	})
}

// mcpLiveEach runs do for each of targets at once, from goroutines it owns
// and joins, each bounded by ControlTimeout and ctx, and returns each
// session's outcome; each session that answered is asked for mcp_status
// afterwards so mcp/status shows the result.
func (s *Server) mcpLiveEach(ctx context.Context, typ, name string, targets []*Session, do func(context.Context, *Session) error) []protocol.MCPLiveOutcome {
	out := make([]protocol.MCPLiveOutcome, len(targets))
	var wg sync.WaitGroup
	for i, sess := range targets {
		wg.Add(1)
		go func() { // owned by this call: joined below
			defer wg.Done()
			out[i].Session = sess.id
			ctx, cancel := context.WithTimeout(ctx, s.opts.ControlTimeout)
			defer cancel()
			err := do(ctx, sess)
			if err != nil {
				var pe *protocol.Error
				if !errors.As(controlError(typ, err), &pe) {
					pe = protocol.Errorf(protocol.CodeInternal, "%s failed", typ)
				}
				out[i].Error = pe
			} else {
				out[i].OK = true
				sess.log.Info("MCP server changed live", "request", typ, "server", name)
			}
			var ce *cliError
			if err == nil || errors.As(err, &ce) {
				sess.refreshMCPStatus()
			}
		}()
	}
	wg.Wait()
	return out
}
