package proxy

// A Session built from a warm spare (package proxy/spare): instead of
// spawning claude, createSession claims a parked one for the session's
// directory and permission mode, and the session runs that process from
// then on exactly as one it spawned (its restarts spawn as usual). Fields:
// none of its own; what it sets is guarded as in process.go.

import (
	"context"
	"encoding/json"

	"github.com/ccproxy/ccproxy/proxy/spare"
	"github.com/ccproxy/ccproxy/stream"
)

// claimSpare claims sp for the session: claim_session with its cwd and
// permission mode, asking for what an initialize answer would carry. From
// claude's answer on, the process's output reaches the session's handlers
// (the same as a spawned process's). On an error sp is the caller's to
// close. The caller makes p s.proc.cur and calls runClaimed.
func (s *Session) claimSpare(ctx context.Context, sp *spare.Spare) (*claudeProc, *spare.Claimed, error) {
	launched, _ := sp.Data.(map[string]bool)
	p := &claudeProc{cli: sp.Cli, release: sp.Release, finished: make(chan struct{}), mcpLaunched: launched}
	calls := s.env.callLog(s.id, s.log) // nil without a call log
	if calls != nil {
		calls.scrub = s.mcp.scrub
	}
	s.mu.Lock()
	mode := s.broker.mode
	s.mu.Unlock()
	route := &spare.Route{
		OnEvent:          func(ev *stream.Event) { s.onEvent(p, ev, calls) },
		OnControlRequest: s.onControlRequest,
		OnControlCancel:  s.broker.onCancel,
	}
	claimed, err := sp.Claim(ctx, spare.Claim{Cwd: s.cfg.cwd, PermissionMode: mode, IncludeInitialize: true}, route)
	if err != nil {
		return nil, nil, err
	}
	s.log.Info("claude taken from the spares", "pid", sp.Cli.PID(), "cwd", s.cfg.cwd, "parked", sp.Parked().Round(1e6))
	return p, &claimed, nil
}

// runClaimed watches the exit of p, a claimed spare, and takes the
// initialize answer its claim carried (sending initialize only when the
// claim carried none). s.proc.cur is p already.
func (s *Session) runClaimed(p *claudeProc, c *spare.Claimed) {
	s.watchExit(p)
	if len(c.Initialize) == 0 || string(c.Initialize) == "null" {
		_, _ = s.control(p, "initialize", map[string]any{"hooks": nil}, func(r controlResult) { s.afterInitialize(p, r) })
		return
	}
	s.afterInitialize(p, controlResult{resp: json.RawMessage(c.Initialize)})
}
