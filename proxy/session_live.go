package proxy

import (
	"context"

	"github.com/ccproxy/ccproxy/proxy/mcphub"
)

// liveSession is a Session as an mcphub.LiveSession: what mcp/toggle,
// mcp/reconnect and the end of mcp/login and mcp/logout do in it. (A
// wrapper rather than methods of Session, which has enough.)
type liveSession struct{ s *Session }

var _ mcphub.LiveSession = liveSession{}

func (l liveSession) ID() string { return l.s.id }

// ReconnectMCP is claude's mcp_reconnect of server name.
func (l liveSession) ReconnectMCP(ctx context.Context, name string) error {
	_, err := l.s.controlWait(ctx, "mcp_reconnect", map[string]any{"serverName": name})
	return err
}

// ToggleMCP enables or disables server name in this session only
// (mcpsession.Part.ToggleRecorded), with the CLI's record of it taken back
// when the MCP source knows where it is (mcphub.ToggleRecorder).
func (l liveSession) ToggleMCP(ctx context.Context, name string, enabled bool) error {
	return l.s.mcp.ToggleRecorded(ctx, name, enabled)
}

// RefreshMCPStatus asks claude for mcp_status (Session.refreshMCPStatus).
func (l liveSession) RefreshMCPStatus() { l.s.refreshMCPStatus() }
