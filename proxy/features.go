package proxy

import (
	"context"
	"encoding/json"
	"reflect"

	"github.com/ccproxy/ccproxy/internal/childproc"
	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/proxy/files"
	"github.com/ccproxy/ccproxy/proxy/rewind"
)

// The feature table: what the proxy offers. Each feature registers once
// its capability (the name hello announces), whether the server offers it
// (under its Options and what is wired), and the request types it serves
// with their handlers. hello's capabilities (capabilities), the check that
// a request's type is offered (lookup) and dispatch (handleFrame) all read
// it, so adding a request type is one entry here.
//
// A handler gets the request's data decoded and validated into its
// protocol type (protocol.DecodeRequest). Its form says how it replies:
//
//   - now: it returns the reply (or an error with a code) at once;
//   - async: all of it runs in a goroutine of the connection (client.async),
//     and what it returns is the reply;
//   - later: its quick part runs now, in request order (looking the session
//     up, say), and returns either an error answered at once or the slow
//     part, which runs in a goroutine of the connection;
//   - run: it runs under a feature's asyncRunner (a limit on the requests
//     running at once, shut down with the server);
//   - replies: it replies through the connection itself (a subscription's
//     reply goes out atomically with the start of its replay; session/send
//     replies when claude has read the turn; mcp/login, which replies with
//     the URL and pushes how the login ends).

// featureTable is the proxy's features, in the order hello announces
// their capabilities. It is built once (Server.newFeatures) and never
// changed; what it offers is decided at each call, from the server's
// Options and what is wired.
type featureTable []feature

// A feature is one capability and the request types it serves.
type feature struct {
	capability string
	// offered reports whether the server offers the feature; nil: always.
	offered func() bool
	types   []requestType
}

// requestType is one request type of a feature.
type requestType struct {
	typ string
	// offered, when set, narrows the feature's offer for this type (mcp/test
	// needs a prober besides mcp.manage).
	offered func() bool
	serve   serveFunc
	data    reflect.Type // the protocol type serve takes (for the tests)
}

// serveFunc serves one decoded request of connection c; it sees that the
// request gets exactly one reply.
type serveFunc func(c *client, id json.RawMessage, req protocol.Data)

// handlerFunc takes a request and returns its reply's data or an error
// (a *protocol.Error is sent as it is; any other is logged and sent as
// internal). ctx ends with the connection.
type handlerFunc[T protocol.Data] func(ctx context.Context, c *client, d T) (protocol.Data, error)

// slowPart is the part of a request that runs in a goroutine of the
// connection; ctx ends with the connection.
type slowPart func(ctx context.Context) (protocol.Data, error)

// typeOf is the request type's serve form's data type.
func typeOf[T protocol.Data]() reflect.Type { return reflect.TypeFor[T]() }

// as converts the decoded data to the handler's type; a mismatch (a table
// entry and the protocol's decoding disagreeing) is answered as an unknown
// type, as dispatch did before the table.
func as[T protocol.Data](c *client, id json.RawMessage, typ string, req protocol.Data) (T, bool) {
	d, ok := req.(T)
	if !ok {
		c.replyErr(id, protocol.Errorf(protocol.CodeUnknownType, "unknown request type %.60q", typ))
	}
	return d, ok
}

func replyWith(c *client, id json.RawMessage, res protocol.Data, err error) {
	if err != nil {
		c.replyErr(id, err)
		return
	}
	c.reply(id, res)
}

// now: h replies at once.
func now[T protocol.Data](typ string, h handlerFunc[T]) requestType {
	return requestType{typ: typ, data: typeOf[T](), serve: func(c *client, id json.RawMessage, req protocol.Data) {
		if d, ok := as[T](c, id, typ, req); ok {
			res, err := h(c.ctx, c, d)
			replyWith(c, id, res, err)
		}
	}}
}

// async: h runs in a goroutine of the connection.
func async[T protocol.Data](typ string, h handlerFunc[T]) requestType {
	return requestType{typ: typ, data: typeOf[T](), serve: func(c *client, id json.RawMessage, req protocol.Data) {
		if d, ok := as[T](c, id, typ, req); ok {
			c.async(func() {
				res, err := h(c.ctx, c, d)
				replyWith(c, id, res, err)
			})
		}
	}}
}

// later: h's quick part runs now and returns the slow part, which runs in
// a goroutine of the connection (or an error, answered at once).
func later[T protocol.Data](typ string, h func(c *client, d T) (slowPart, error)) requestType {
	return requestType{typ: typ, data: typeOf[T](), serve: func(c *client, id json.RawMessage, req protocol.Data) {
		d, ok := as[T](c, id, typ, req)
		if !ok {
			return
		}
		slow, err := h(c, d)
		if err != nil {
			c.replyErr(id, err)
			return
		}
		c.async(func() {
			res, err := slow(c.ctx)
			replyWith(c, id, res, err)
		})
	}}
}

// run: h runs under the runner r returns (asyncRunner.run: its limit,
// its shutdown, its error mapping).
func run[T protocol.Data](typ string, r func() *asyncRunner, h handlerFunc[T]) requestType {
	return requestType{typ: typ, data: typeOf[T](), serve: func(c *client, id json.RawMessage, req protocol.Data) {
		if d, ok := as[T](c, id, typ, req); ok {
			r().run(c, id, typ, func(ctx context.Context) (protocol.Data, error) { return h(ctx, c, d) })
		}
	}}
}

// replies: h replies through c itself, exactly once.
func replies[T protocol.Data](typ string, h func(c *client, id json.RawMessage, d T)) requestType {
	return requestType{typ: typ, data: typeOf[T](), serve: func(c *client, id json.RawMessage, req protocol.Data) {
		if d, ok := as[T](c, id, typ, req); ok {
			h(c, id, d)
		}
	}}
}

// newFeatures returns s's feature table, in the order hello announces the
// capabilities. It refers to s.calls and s.hist: New calls it once they
// are set.
func (s *Server) newFeatures() featureTable {
	mcp := func() bool { return s.opts.MCP != nil }
	prober := func() bool { return s.calls.prober != nil }
	callsRunner := func() *asyncRunner { return s.calls.reqs }
	histRunner := func() *asyncRunner { return s.hist.reqs }
	lister := files.New(files.Options{})
	return featureTable{
		{capability: protocol.CapSessions, types: []requestType{
			now(protocol.TypeSessionCreate, s.reqCreate),
			replies(protocol.TypeSessionSend, s.reqSend),
			replies(protocol.TypeSessionSubscribe, s.reqSubscribe),
			now(protocol.TypeSessionUnsubscribe, s.reqUnsubscribe),
			replies(protocol.TypeSessionInterrupt, s.reqInterrupt),
			later(protocol.TypeSessionClose, s.reqClose),
			now(protocol.TypeSessionList, func(context.Context, *client, *protocol.SessionList) (protocol.Data, error) {
				return protocol.SessionListResult{Sessions: s.sessionList()}, nil
			}),
			later(protocol.TypeSessionSetMode, func(c *client, d *protocol.SessionSetPermissionMode) (slowPart, error) {
				return s.controlRequest(d.Session, func(ctx context.Context, sess *Session) (protocol.Data, error) {
					mode, err := sess.setPermissionMode(ctx, d.Mode)
					return protocol.SessionSetPermissionModeResult{Mode: mode}, err
				})
			}),
			later(protocol.TypeSessionSetModel, func(c *client, d *protocol.SessionSetModel) (slowPart, error) {
				return s.controlRequest(d.Session, func(ctx context.Context, sess *Session) (protocol.Data, error) {
					return sess.setModel(ctx, d.Model)
				})
			}),
			later(protocol.TypeSessionRewind, func(c *client, d *protocol.SessionRewind) (slowPart, error) {
				return s.controlRequest(d.Session, func(ctx context.Context, sess *Session) (protocol.Data, error) {
					return rewind.Run(ctx, rewindSession{sess}, d) // proxy/rewind; rewind.go
				})
			}),
		}},
		{capability: protocol.CapImages},
		{capability: protocol.CapPartialMessages},
		{capability: protocol.CapPermissions, types: []requestType{
			now(protocol.TypePermissionRespond, s.reqPermissionRespond),
		}},
		{capability: protocol.CapBlobs},
		{capability: protocol.CapMCPStatus, types: []requestType{
			replies(protocol.TypeMCPSubscribe, func(c *client, id json.RawMessage, _ *protocol.MCPSubscribe) {
				c.reply(id, nil)
				s.mcp.Subscribe(mcpSubscriber{c}) // the current status follows the reply
			}),
			now(protocol.TypeMCPUnsubscribe, func(_ context.Context, c *client, _ *protocol.MCPUnsubscribe) (protocol.Data, error) {
				s.mcp.Unsubscribe(mcpSubscriber{c})
				return nil, nil
			}),
		}},
		{capability: protocol.CapMCPApproval, offered: mcp, types: []requestType{
			async(protocol.TypeMCPApprove, func(_ context.Context, c *client, d *protocol.MCPApprove) (protocol.Data, error) {
				return s.reqApproval(c, protocol.TypeMCPApprove, d.Name, s.opts.MCP.Approve)
			}),
			async(protocol.TypeMCPReject, func(_ context.Context, c *client, d *protocol.MCPReject) (protocol.Data, error) {
				return s.reqApproval(c, protocol.TypeMCPReject, d.Name, s.opts.MCP.Reject)
			}),
		}},
		// mcp.live: the name is checked against the MCP source's configuration.
		{capability: protocol.CapMCPLive, offered: mcp, types: []requestType{
			later(protocol.TypeMCPToggle, s.mcpf.toggle),
			later(protocol.TypeMCPReconnect, s.mcpf.reconnect),
		}},
		// mcp.auth: where ccproxy can give the CLI a terminal.
		{capability: protocol.CapMCPAuth, offered: func() bool { return s.opts.MCP != nil && childproc.TerminalSupported }, types: []requestType{
			replies(protocol.TypeMCPLogin, s.mcpf.login),
			later(protocol.TypeMCPLogout, s.mcpf.logout),
		}},
		{capability: protocol.CapMCPProbe, offered: prober, types: []requestType{
			run(protocol.TypeMCPProbe, callsRunner, noConn(s.calls.Probe)),
		}},
		{capability: protocol.CapMCPTools, offered: prober, types: []requestType{
			run(protocol.TypeMCPTools, callsRunner, noConn(s.calls.Tools)),
		}},
		{capability: protocol.CapMCPCall, offered: prober, types: []requestType{
			run(protocol.TypeMCPCall, callsRunner, noConn(s.calls.Call)),
		}},
		{capability: protocol.CapMCPLog, offered: func() bool { return s.calls.Logging() }, types: []requestType{
			run(protocol.TypeMCPLog, callsRunner, noConn(s.calls.Log)),
		}},
		{capability: protocol.CapHistory, offered: func() bool { return s.hist != nil }, types: []requestType{
			run(protocol.TypeHistoryList, histRunner, func(ctx context.Context, _ *client, d *protocol.HistoryList) (protocol.Data, error) {
				return s.hist.List(ctx, d)
			}),
			run(protocol.TypeHistoryRead, histRunner, func(ctx context.Context, _ *client, d *protocol.HistoryRead) (protocol.Data, error) {
				return s.hist.Read(ctx, d)
			}),
		}},
		{capability: protocol.CapHistorySearch, offered: func() bool { return s.hist != nil }, types: []requestType{
			run(protocol.TypeHistorySearch, histRunner, func(ctx context.Context, _ *client, d *protocol.HistorySearch) (protocol.Data, error) {
				return s.hist.Search(ctx, d)
			}),
		}},
		{capability: protocol.CapMCPManage, offered: func() bool { return s.mcpf.manage.Manager() != nil }, types: []requestType{
			async(protocol.TypeMCPAdd, s.mcpf.add),
			async(protocol.TypeMCPUpdate, s.mcpf.update),
			async(protocol.TypeMCPRemove, s.mcpf.remove),
			withOffer(prober, run(protocol.TypeMCPTest, callsRunner, s.mcpf.test)), // it probes the definition
			async(protocol.TypeMCPTrust, s.mcpf.trust),
		}},
		historyManage(s, histRunner),
		// files: the listing runs in a goroutine of the connection, bounded
		// in entries, time and listings at once (proxy/files).
		{capability: protocol.CapFiles, types: []requestType{
			later(protocol.TypeSessionFiles, func(_ *client, d *protocol.SessionFiles) (slowPart, error) {
				sess, err := s.session(d.Session)
				if err != nil {
					return nil, err
				}
				return func(ctx context.Context) (protocol.Data, error) { return lister.List(ctx, sess.cfg.cwd, d) }, nil
			}),
		}},
	}
}

// withOffer narrows rt's offer to when offered holds.
func withOffer(offered func() bool, rt requestType) requestType {
	rt.offered = offered
	return rt
}

// capabilities lists the capabilities offered, for hello.
func (ft featureTable) capabilities() []string {
	var caps []string
	for _, f := range ft {
		if f.offered == nil || f.offered() {
			caps = append(caps, f.capability)
		}
	}
	return caps
}

// lookup returns the request type typ and whether it is offered: its
// feature is, and the type itself (requestType.offered).
func (ft featureTable) lookup(typ string) (*requestType, bool) {
	for i := range ft {
		f := &ft[i]
		for j := range f.types {
			rt := &f.types[j]
			if rt.typ != typ {
				continue
			}
			ok := (f.offered == nil || f.offered()) && (rt.offered == nil || rt.offered())
			return rt, ok
		}
	}
	return nil, false
}
