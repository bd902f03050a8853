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
func (p *Prober) ProbeServer(ctx context.Context, s *mcpconfig.Server) protocol.ProbeResult {
	return p.probe(ctx, s, p.opts.Dir)
}
