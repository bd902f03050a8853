package probe

import (
	"context"
	"time"

	"github.com/ccproxy/ccproxy/mcpconfig"
	"github.com/ccproxy/ccproxy/protocol"
)

// For tests only.

// Timeout is the per-server timeout in use.
func (p *Prober) Timeout() time.Duration { return p.opts.Timeout }

// CallTimeout is the tools/call timeout in use.
func (p *Prober) CallTimeout() time.Duration { return p.opts.CallTimeout }

// ProbeServer probes one server definition, with Dir (or the current
// directory) as the working directory of a stdio server.
func (p *Prober) ProbeServer(ctx context.Context, s *mcpconfig.Server) Result {
	return p.probe(ctx, s, p.opts.Dir)
}

// Wire maps what probe returns to the protocol's types, so that the tests
// keep checking it against the protocol. wire_test.go (package probe_test,
// which may import proxy/mcpcalls) sets it to mcpcalls' mapping, the one
// the proxy uses.
var Wire struct {
	Tools        func([]Tool) []protocol.Tool
	ProbeResults func([]Result) []protocol.ProbeResult
	CallResult   func(CallResult) protocol.MCPCallResult
	Error        func(*Error) *protocol.Error
}

// ProtocolError is the reply error of the webview protocol for e.
func (e *Error) ProtocolError() *protocol.Error { return Wire.Error(e) }
