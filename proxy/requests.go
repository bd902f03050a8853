package proxy

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/ccproxy/ccproxy/internal/textutil"
	"github.com/ccproxy/ccproxy/mcpconfig"
	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/proxy/mcphub"
	"github.com/ccproxy/ccproxy/stream"
)

// handleFrame validates one client frame and executes it: the feature
// table (features.go) finds the request type's handler, which gets the
// decoded data. Requests are processed in the order received; the slow
// part of a request (waiting for claude, closing a process) runs in a
// goroutine of the connection so later requests are not held up. Every
// request gets exactly one reply.
func (s *Server) handleFrame(c *client, data []byte) {
	f, err := protocol.ParseFrame(data)
	if err != nil {
		c.replyErr(f.ID, err)
		return
	}
	if len(f.ID) == 0 {
		c.replyErr(protocol.Null, protocol.Errorf(protocol.CodeBadRequest, "%s: id: required (every request carries an id; a frame without one is not executed)", textutil.Truncate(f.Type, 60)))
		return
	}
	rt, ok := s.features.Lookup(f.Type)
	if !ok {
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
	rt.Serve(c, f.ID, d)
}

func (s *Server) reqCreate(_ context.Context, c *client, d *protocol.SessionCreate) (protocol.Data, error) {
	sess, err := s.createSession(d)
	if err != nil {
		return nil, err
	}
	res := protocol.SessionCreateResult{Session: sess.id, State: protocol.StateStarting, Cwd: sess.cfg.cwd}
	if sess.cfg.client != nil {
		for _, st := range sess.mcp.ClientStatuses() {
			res.MCPServers = append(res.MCPServers, protocol.ClientMCPServer{Name: st.Name, Active: st.Active, Approval: string(st.Approval), Reason: st.Reason})
		}
		sess.log.Info("session created", "conn", c.id, "cwd", sess.cfg.cwd, "client_mcp_servers", sess.cfg.client.Names())
	} else {
		sess.log.Info("session created", "conn", c.id, "cwd", sess.cfg.cwd)
	}
	return res, nil
}

func (s *Server) reqUnsubscribe(_ context.Context, c *client, d *protocol.SessionUnsubscribe) (protocol.Data, error) {
	sess, err := s.session(d.Session)
	if err != nil {
		return nil, err
	}
	sess.unsubscribe(c)
	return nil, nil
}

// reqClose forgets the session at once, in request order, and closes it
// in the background.
func (s *Server) reqClose(_ *client, d *protocol.SessionClose) (slowPart, error) {
	sess, err := s.forget(d.Session)
	if err != nil {
		return nil, err
	}
	return func(context.Context) (protocol.Data, error) {
		sess.close(protocol.ExitClosed)
		return nil, nil
	}, nil
}

func (s *Server) reqPermissionRespond(ctx context.Context, _ *client, d *protocol.PermissionRespond) (protocol.Data, error) {
	sess, err := s.session(d.Session)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.opts.ControlTimeout)
	defer cancel()
	return nil, sess.broker.Respond(ctx, d)
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

// controlError maps the failure of a control request to a protocol error.
func controlError(what string, err error) error {
	var ce *cliError
	switch {
	case errors.As(err, &ce):
		return protocol.Errorf(protocol.CodeCLIError, "%s: claude answered: %s", what, textutil.Truncate(ce.Msg, 500))
	case errors.Is(err, context.DeadlineExceeded):
		return protocol.Errorf(protocol.CodeTimeout, "%s: claude did not read the request in time", what)
	case errors.Is(err, errControlTimeout):
		return protocol.Errorf(protocol.CodeTimeout, "%s: claude did not answer in time", what)
	default:
		return protocol.Errorf(protocol.CodeSessionExited, "%s: the session's claude process has exited", what)
	}
}

// reqApproval serves mcp/approve and mcp/reject (typ; decide records the
// decision).
func (s *Server) reqApproval(c *client, typ, name string, decide func(string) (string, error)) (protocol.Data, error) {
	if err := mcphub.CheckName(typ, name); err != nil {
		return nil, err
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
		return nil, err
	}
	s.applyMCP() // mcp/config and mcp/status reach subscribers before the reply
	return protocol.MCPApprovalResult{Name: name, Approval: approval}, nil
}

// controlRequest serves a request that asks session's claude something
// (a control request): an unknown session is answered at once; else the
// slow part runs ask with the control timeout, and its result or error is
// the reply.
func (s *Server) controlRequest(session string, ask func(context.Context, *Session) (protocol.Data, error)) (slowPart, error) {
	sess, err := s.session(session)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) (protocol.Data, error) {
		ctx, cancel := context.WithTimeout(ctx, s.opts.ControlTimeout)
		defer cancel()
		return ask(ctx, sess)
	}, nil
}
