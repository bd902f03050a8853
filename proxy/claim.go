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

// claimSpare claims sp for session s, which has no process yet, with
// want (sessionClaim): a spare claimed ahead of need for it is adopted,
// any other gets claim_session with its cwd and permission mode, asking for what an
// initialize answer would carry (returned: run takes it instead of
// asking). From claude's answer on, the process's output reaches the
// session's handlers, as a spawned process's does. On an error sp is the
// caller's to close. The caller makes p s.proc.cur and calls s.run(p,
// init). (A function, not a method: the session's constructor path.)
func claimSpare(ctx context.Context, s *Session, sp *spare.Spare, want spare.Claim) (p *claudeProc, init json.RawMessage, err error) {
	launched, _ := sp.Data.(map[string]bool)
	p = &claudeProc{cli: sp.Cli, release: sp.Release, finished: make(chan struct{}), mcpLaunched: launched}
	calls := s.env.callLog(s.id, s.log) // nil without a call log
	if calls != nil {
		calls.scrub = s.mcp.scrub
	}
	route := &spare.Route{
		OnEvent:          func(ev *stream.Event) { s.onEvent(p, ev, calls) },
		OnControlRequest: s.onControlRequest,
		OnControlCancel:  s.broker.Withdraw,
	}
	claimed, ahead, err := sp.Ahead(ctx)
	switch {
	case ahead && err == nil:
		sp.Adopt(route)
	case !ahead:
		want.IncludeInitialize = true
		claimed, err = sp.Claim(ctx, want, route)
	}
	if err != nil {
		return nil, nil, err
	}
	s.log.Info("claude taken from the spares", "pid", sp.Cli.PID(), "cwd", s.cfg.cwd, "parked", sp.Parked().Round(1e6), "claimed_ahead", ahead)
	return p, claimed.Initialize, nil
}

// sessionClaim is the claim session s would make of a spare: its cwd and
// permission mode (spare.Pool.Take matches spares claimed ahead with it).
func sessionClaim(s *Session) spare.Claim {
	s.mu.Lock()
	mode := s.broker.Mode()
	s.mu.Unlock()
	return spare.Claim{Cwd: s.cfg.cwd, PermissionMode: mode}
}
