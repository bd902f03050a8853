package proxy

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/ccproxy/ccproxy/mcpconfig"
	"github.com/ccproxy/ccproxy/stream"
	protocol "github.com/ccproxy/ccproxy/webview-protocol"
)

// handleFrame validates one client frame and executes it. Requests are
// processed in the order received; the slow part of a request (waiting
// for claude, closing a process) runs in a goroutine of the connection so
// later requests are not held up. Every request gets exactly one reply.
func (s *Server) handleFrame(c *client, data []byte) {
	f, err := protocol.ParseFrame(data)
	if err != nil {
		c.replyErr(f.ID, err)
		return
	}
	if len(f.ID) == 0 {
		c.replyErr(protocol.Null, protocol.Errorf(protocol.CodeBadRequest, "%s: id: required (every request carries an id; a frame without one is not executed)", truncate(f.Type, 60)))
		return
	}
	if !s.offers(f.Type) {
		c.replyErr(f.ID, protocol.Errorf(protocol.CodeUnknownType, "unknown request type %.60q (see hello.capabilities)", f.Type))
		return
	}
	if s.isShuttingDown() {
		c.replyErr(f.ID, protocol.Errorf(protocol.CodeShuttingDown, "%s: ccproxy is shutting down", f.Type))
		return
	}
	d, err := protocol.DecodeRequest(f)
	if err != nil {
		c.replyErr(f.ID, err)
		return
	}
	id := f.ID
	switch d := d.(type) {
	case *protocol.SessionCreate:
		s.reqCreate(c, id, d)
	case *protocol.SessionSend:
		s.reqSend(c, id, d)
	case *protocol.SessionSubscribe:
		s.reqSubscribe(c, id, d)
	case *protocol.SessionUnsubscribe:
		sess, err := s.session(d.Session)
		if err != nil {
			c.replyErr(id, err)
			return
		}
		sess.unsubscribe(c)
		c.reply(id, nil)
	case *protocol.SessionInterrupt:
		s.reqInterrupt(c, id, d)
	case *protocol.SessionClose:
		sess, err := s.forget(d.Session)
		if err != nil {
			c.replyErr(id, err)
			return
		}
		c.async(func() {
			sess.close(protocol.ExitClosed)
			c.reply(id, nil)
		})
	case *protocol.SessionList:
		c.reply(id, protocol.SessionListResult{Sessions: s.sessionList()})
	case *protocol.SessionSetPermissionMode:
		s.controlRequest(c, id, d.Session, func(ctx context.Context, sess *Session) (protocol.Data, error) {
			mode, err := sess.setPermissionMode(ctx, d.Mode)
			return protocol.SessionSetPermissionModeResult{Mode: mode}, err
		})
	case *protocol.SessionSetModel:
		s.controlRequest(c, id, d.Session, func(ctx context.Context, sess *Session) (protocol.Data, error) {
			return sess.setModel(ctx, d.Model)
		})
	case *protocol.PermissionRespond:
		sess, err := s.session(d.Session)
		if err != nil {
			c.replyErr(id, err)
			return
		}
		ctx, cancel := context.WithTimeout(c.ctx, s.opts.ControlTimeout)
		defer cancel()
		if err := sess.respondPermission(ctx, d); err != nil {
			c.replyErr(id, err)
			return
		}
		c.reply(id, nil)
	case *protocol.MCPSubscribe:
		c.reply(id, nil)
		s.mcp.subscribe(c)
	case *protocol.MCPUnsubscribe:
		s.mcp.unsubscribe(c)
		c.reply(id, nil)
	case *protocol.MCPApprove:
		c.async(func() { s.reqApproval(c, id, f.Type, d.Name, s.opts.MCP.Approve) })
	case *protocol.MCPReject:
		c.async(func() { s.reqApproval(c, id, f.Type, d.Name, s.opts.MCP.Reject) })
	case *protocol.MCPProbe:
		s.calls.reqProbe(c, id, d)
	case *protocol.MCPTools:
		s.calls.reqTools(c, id, d)
	case *protocol.MCPCall:
		s.calls.reqCall(c, id, d)
	case *protocol.MCPLog:
		s.calls.reqLog(c, id, d)
	case *protocol.HistoryList:
		s.hist.reqList(c, id, d)
	case *protocol.HistoryRead:
		s.hist.reqRead(c, id, d)
	case *protocol.MCPAdd:
		s.reqMCPWrite(c, id, f.Type, d.Name, func(m MCPManager) (mcpconfig.Location, error) {
			return m.WriteServer(d.Name, d.Scope, d.Definition, mcpconfig.AddNew)
		})
	case *protocol.MCPUpdate:
		s.reqMCPWrite(c, id, f.Type, d.Name, func(m MCPManager) (mcpconfig.Location, error) {
			return m.WriteServer(d.Name, d.Scope, d.Definition, mcpconfig.ReplaceOnly)
		})
	case *protocol.MCPRemove:
		s.reqMCPWrite(c, id, f.Type, d.Name, func(m MCPManager) (mcpconfig.Location, error) {
			return m.RemoveServer(d.Name, d.Scope)
		})
	case *protocol.MCPTest:
		s.reqMCPTest(c, id, d)
	case *protocol.MCPTrust:
		s.reqMCPTrust(c, id)
	case *protocol.MCPToggle:
		s.reqMCPToggle(c, id, d)
	case *protocol.MCPReconnect:
		s.reqMCPLive(c, id, f.Type, d.Name, d.Session, reconnectMCP(d.Name))
	case *protocol.MCPLogin:
		s.reqMCPLogin(c, id, d)
	case *protocol.MCPLogout:
		s.reqMCPLogout(c, id, d.Name)
	default:
		c.replyErr(id, protocol.Errorf(protocol.CodeUnknownType, "unknown request type %.60q", f.Type))
	}
}

// offers reports whether the request type belongs to a capability this
// proxy announces.
func (s *Server) offers(typ string) bool {
	switch typ {
	case protocol.TypeSessionCreate, protocol.TypeSessionSend, protocol.TypeSessionSubscribe,
		protocol.TypeSessionUnsubscribe, protocol.TypeSessionInterrupt, protocol.TypeSessionClose,
		protocol.TypeSessionList, protocol.TypeSessionSetMode, protocol.TypeSessionSetModel, protocol.TypePermissionRespond,
		protocol.TypeMCPSubscribe, protocol.TypeMCPUnsubscribe:
		return true
	case protocol.TypeMCPApprove, protocol.TypeMCPReject:
		return s.opts.MCP != nil
	case protocol.TypeMCPProbe, protocol.TypeMCPTools, protocol.TypeMCPCall, protocol.TypeMCPLog:
		return s.calls.offers(typ)
	case protocol.TypeHistoryList, protocol.TypeHistoryRead:
		return s.hist != nil
	case protocol.TypeMCPAdd, protocol.TypeMCPUpdate, protocol.TypeMCPRemove, protocol.TypeMCPTest, protocol.TypeMCPTrust:
		return s.offersManage(typ)
	case protocol.TypeMCPToggle, protocol.TypeMCPReconnect:
		return s.offersLive()
	case protocol.TypeMCPLogin, protocol.TypeMCPLogout:
		return s.offersAuth()
	}
	return false
}

func (s *Server) reqCreate(c *client, id json.RawMessage, d *protocol.SessionCreate) {
	sess, err := s.createSession(d)
	if err != nil {
		c.replyErr(id, err)
		return
	}
	res := protocol.SessionCreateResult{Session: sess.id, State: protocol.StateStarting, Cwd: sess.cfg.cwd}
	if sess.cfg.client != nil {
		for _, st := range sess.clientMCPStatus() {
			res.MCPServers = append(res.MCPServers, protocol.ClientMCPServer{Name: st.Name, Active: st.Active, Approval: string(st.Approval), Reason: st.Reason})
		}
		sess.log.Info("session created", "conn", c.id, "cwd", sess.cfg.cwd, "client_mcp_servers", sess.cfg.client.Names())
	} else {
		sess.log.Info("session created", "conn", c.id, "cwd", sess.cfg.cwd)
	}
	c.reply(id, res)
}

func (s *Server) reqSend(c *client, id json.RawMessage, d *protocol.SessionSend) {
	sess, err := s.session(d.Session)
	if err != nil {
		c.replyErr(id, err)
		return
	}
	images := make([]stream.Image, 0, len(d.Images))
	for _, img := range d.Images {
		images = append(images, stream.Image{MediaType: img.MediaType, Data: img.Data})
	}
	line, err := stream.UserTurnLimit(d.Text, images, int(s.opts.MaxImageBytes))
	switch {
	case errors.Is(err, stream.ErrImageTooLarge):
		c.replyErr(id, protocol.Errorf(protocol.CodeLimitExceeded, "session/send: %v (limits.maxImageBytes)", err))
		return
	case err != nil:
		c.replyErr(id, protocol.Errorf(protocol.CodeBadRequest, "session/send: %v", err))
		return
	}
	ctx, cancel := context.WithTimeout(c.ctx, s.opts.ControlTimeout)
	defer cancel()
	sess.sendTurn(ctx, line, func(err error) {
		if err != nil {
			c.replyErr(id, err)
			return
		}
		c.reply(id, nil)
	})
}

func (s *Server) reqSubscribe(c *client, id json.RawMessage, d *protocol.SessionSubscribe) {
	sess, err := s.session(d.Session)
	if err != nil {
		c.replyErr(id, err)
		return
	}
	var after int64
	if d.AfterSeq != nil {
		after = *d.AfterSeq
	}
	// The reply is queued by subscribe itself, atomically with the start
	// of the replay.
	if err := sess.subscribe(c, id, after); err != nil {
		c.replyErr(id, err)
	}
}

func (s *Server) reqInterrupt(c *client, id json.RawMessage, d *protocol.SessionInterrupt) {
	sess, err := s.session(d.Session)
	if err != nil {
		c.replyErr(id, err)
		return
	}
	sess.mu.Lock()
	p, exited, restarting := sess.proc, sess.exited || sess.closing != "", sess.restarting
	sess.mu.Unlock()
	switch {
	case exited:
		c.replyErr(id, protocol.Errorf(protocol.CodeSessionExited, "session/interrupt: session %s has exited", sess.id))
		return
	case restarting:
		c.reply(id, nil) // between turns: nothing runs
		return
	}
	ch := make(chan controlResult, 1)
	// Written now, in request order; the answer is awaited in the background.
	rid, err := sess.control(p, "interrupt", nil, func(r controlResult) { ch <- r })
	if err != nil {
		c.replyErr(id, controlError("session/interrupt", err))
		return
	}
	c.async(func() {
		select {
		case r := <-ch:
			switch {
			case errors.Is(r.err, errControlTimeout):
				c.replyErr(id, protocol.Errorf(protocol.CodeTimeout, "session/interrupt: claude did not acknowledge the interrupt within %v", s.opts.ControlTimeout))
			case r.err != nil:
				c.replyErr(id, controlError("session/interrupt", r.err))
			default:
				c.reply(id, nil)
			}
		case <-c.ctx.Done():
			sess.forgetControl(p, rid) // nobody to answer
		}
	})
}

// controlError maps the failure of a control request to a protocol error.
func controlError(what string, err error) error {
	var ce *cliError
	switch {
	case errors.As(err, &ce):
		return protocol.Errorf(protocol.CodeCLIError, "%s: claude answered: %s", what, truncate(ce.Msg, 500))
	case errors.Is(err, context.DeadlineExceeded):
		return protocol.Errorf(protocol.CodeTimeout, "%s: claude did not read the request in time", what)
	case errors.Is(err, errControlTimeout):
		return protocol.Errorf(protocol.CodeTimeout, "%s: claude did not answer in time", what)
	default:
		return protocol.Errorf(protocol.CodeSessionExited, "%s: the session's claude process has exited", what)
	}
}

func (s *Server) reqApproval(c *client, id json.RawMessage, typ, name string, decide func(string) (string, error)) {
	if err := serverNameErr(typ, name); err != nil {
		c.replyErr(id, err)
		return
	}
	approval, err := decide(name)
	if err != nil {
		var pe *protocol.Error
		var le *mcpconfig.LinkError
		if errors.As(err, &le) { // a project file linking outside the project: the user's to fix
			err = protocol.Errorf(protocol.CodeBadRequest, "%s", le.Error())
		} else if !errors.As(err, &pe) {
			c.log.Error("recording an MCP approval failed", "server", name, "err", err)
			err = protocol.Errorf(protocol.CodeInternal, "recording the decision about %.80q failed; see the proxy's log", name)
		}
		c.replyErr(id, err)
		return
	}
	s.applyMCP() // mcp/config and mcp/status reach subscribers before the reply
	c.reply(id, protocol.MCPApprovalResult{Name: name, Approval: approval})
}

// controlRequest serves a request that asks session's claude something
// (a control request): run, in the background with the control timeout,
// then its result or error as the reply. An unknown session is answered
// at once.
func (s *Server) controlRequest(c *client, id json.RawMessage, session string, run func(context.Context, *Session) (protocol.Data, error)) {
	sess, err := s.session(session)
	if err != nil {
		c.replyErr(id, err)
		return
	}
	c.async(func() {
		ctx, cancel := context.WithTimeout(c.ctx, s.opts.ControlTimeout)
		defer cancel()
		res, err := run(ctx, sess)
		if err != nil {
			c.replyErr(id, err)
			return
		}
		c.reply(id, res)
	})
}
