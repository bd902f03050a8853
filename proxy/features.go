package proxy

import (
	"context"
	"encoding/json"

	"github.com/ccproxy/ccproxy/internal/childproc"
	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/proxy/feature"
	"github.com/ccproxy/ccproxy/proxy/files"
	"github.com/ccproxy/ccproxy/proxy/runner"
)

// The feature table: what the proxy offers. Its machinery (the forms a
// handler replies in: now, async, later, run, replies; hello's
// capabilities; the offered check; dispatch) is package proxy/feature;
// here are its forms for the proxy's connections (*client, a runner.Conn)
// and the table itself (newFeatures).

type (
	featureTable                 = feature.Table[*client]
	featureEntry                 = feature.Feature[*client]
	requestType                  = feature.Type[*client]
	slowPart                     = feature.SlowPart
	handlerFunc[T protocol.Data] = feature.Handler[*client, T]
)

func now[T protocol.Data](typ string, h handlerFunc[T]) requestType   { return feature.Now(typ, h) }
func async[T protocol.Data](typ string, h handlerFunc[T]) requestType { return feature.Async(typ, h) }
func later[T protocol.Data](typ string, h func(c *client, d T) (slowPart, error)) requestType {
	return feature.Later(typ, h)
}
func replies[T protocol.Data](typ string, h func(c *client, id json.RawMessage, d T)) requestType {
	return feature.Replies(typ, h)
}

// run: h runs under the runner r returns (its limit, its shutdown, its
// error mapping).
func run[T protocol.Data](typ string, r func() *asyncRunner, h handlerFunc[T]) requestType {
	return feature.Run(typ, func() *runner.Runner { return r().Runner }, h)
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
		{Capability: protocol.CapSessions, Types: []requestType{
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
					return runRewind(ctx, s.opts.Replay, sess, d) // proxy/rewind; rewind.go
				})
			}),
		}},
		{Capability: protocol.CapImages},
		{Capability: protocol.CapPartialMessages},
		{Capability: protocol.CapPermissions, Types: []requestType{
			now(protocol.TypePermissionRespond, s.reqPermissionRespond),
		}},
		{Capability: protocol.CapBlobs},
		{Capability: protocol.CapMCPStatus, Types: []requestType{
			replies(protocol.TypeMCPSubscribe, func(c *client, id json.RawMessage, _ *protocol.MCPSubscribe) {
				c.reply(id, nil)
				s.mcp.Subscribe(mcpSubscriber{c}) // the current status follows the reply
			}),
			now(protocol.TypeMCPUnsubscribe, func(_ context.Context, c *client, _ *protocol.MCPUnsubscribe) (protocol.Data, error) {
				s.mcp.Unsubscribe(mcpSubscriber{c})
				return nil, nil
			}),
		}},
		{Capability: protocol.CapMCPApproval, Offered: mcp, Types: []requestType{
			async(protocol.TypeMCPApprove, func(_ context.Context, c *client, d *protocol.MCPApprove) (protocol.Data, error) {
				return s.reqApproval(c, protocol.TypeMCPApprove, d.Name, s.opts.MCP.Approve)
			}),
			async(protocol.TypeMCPReject, func(_ context.Context, c *client, d *protocol.MCPReject) (protocol.Data, error) {
				return s.reqApproval(c, protocol.TypeMCPReject, d.Name, s.opts.MCP.Reject)
			}),
		}},
		// mcp.live: the name is checked against the MCP source's configuration.
		{Capability: protocol.CapMCPLive, Offered: mcp, Types: []requestType{
			later(protocol.TypeMCPToggle, s.mcpf.toggle),
			later(protocol.TypeMCPReconnect, s.mcpf.reconnect),
		}},
		// mcp.auth: where ccproxy can give the CLI a terminal.
		{Capability: protocol.CapMCPAuth, Offered: func() bool { return s.opts.MCP != nil && childproc.TerminalSupported }, Types: []requestType{
			replies(protocol.TypeMCPLogin, s.mcpf.login),
			later(protocol.TypeMCPLogout, s.mcpf.logout),
		}},
		{Capability: protocol.CapMCPProbe, Offered: prober, Types: []requestType{
			run(protocol.TypeMCPProbe, callsRunner, noConn(s.calls.Probe)),
		}},
		{Capability: protocol.CapMCPTools, Offered: prober, Types: []requestType{
			run(protocol.TypeMCPTools, callsRunner, noConn(s.calls.Tools)),
		}},
		{Capability: protocol.CapMCPCall, Offered: prober, Types: []requestType{
			run(protocol.TypeMCPCall, callsRunner, noConn(s.calls.Call)),
		}},
		{Capability: protocol.CapMCPLog, Offered: func() bool { return s.calls.Logging() }, Types: []requestType{
			run(protocol.TypeMCPLog, callsRunner, noConn(s.calls.Log)),
		}},
		{Capability: protocol.CapHistory, Offered: func() bool { return s.hist != nil }, Types: []requestType{
			run(protocol.TypeHistoryList, histRunner, func(ctx context.Context, _ *client, d *protocol.HistoryList) (protocol.Data, error) {
				return s.hist.List(ctx, d)
			}),
			run(protocol.TypeHistoryRead, histRunner, func(ctx context.Context, _ *client, d *protocol.HistoryRead) (protocol.Data, error) {
				return s.hist.Read(ctx, d)
			}),
		}},
		{Capability: protocol.CapHistorySearch, Offered: func() bool { return s.hist != nil }, Types: []requestType{
			run(protocol.TypeHistorySearch, histRunner, func(ctx context.Context, _ *client, d *protocol.HistorySearch) (protocol.Data, error) {
				return s.hist.Search(ctx, d)
			}),
		}},
		{Capability: protocol.CapMCPManage, Offered: func() bool { return s.mcpf.manage.Manager() != nil }, Types: []requestType{
			async(protocol.TypeMCPAdd, s.mcpf.add),
			async(protocol.TypeMCPUpdate, s.mcpf.update),
			async(protocol.TypeMCPRemove, s.mcpf.remove),
			withOffer(prober, run(protocol.TypeMCPTest, callsRunner, s.mcpf.test)), // it probes the definition
			async(protocol.TypeMCPTrust, s.mcpf.trust),
		}},
		historyManage(s, histRunner),
		// files: the listing runs in a goroutine of the connection, bounded
		// in entries, time and listings at once (proxy/files).
		{Capability: protocol.CapFiles, Types: []requestType{
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
	return feature.WithOffer(offered, rt)
}
