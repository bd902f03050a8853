package proxy

// The MCP part of a Session: package proxy/mcpsession (the configuration
// sent live, toggles, the client's servers, the secret set) behind its
// mcpsession.Session interface (mcpSessionOf), plus what is guarded by
// Session.mu: the pending-apply slot (markApply, its applier goroutine
// applyPending) and the one mcp_status request in flight
// (refreshMCPStatus). Fields (type sessionMCP): statusInFlight,
// applyWanted, applying, guarded by Session.mu (a part of the Session,
// not a lock of its own); the Part's own locks are in its doc.go
// (mcpsession.Part.mu before Session.mu).

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/ccproxy/ccproxy/proxy/mcphub"
	"github.com/ccproxy/ccproxy/proxy/mcpsession"
)

// sessionMCP is the MCP part of a session.
type sessionMCP struct {
	*mcpsession.Part

	statusInFlight bool // an mcp_status request is out (refreshMCPStatus); Session.mu
	applyWanted    bool // the MCP configuration in force changed since the applier last read it (markApply); Session.mu
	applying       bool // the applier goroutine runs (at most one: applyPending); Session.mu
}

// scrub masks the session's secrets in text (mcpsession.Part.Scrub).
func (m *sessionMCP) scrub(text string) string { return m.Scrub(text) }

// newSessionMCP makes the MCP part of s.
func newSessionMCP(s *Session) sessionMCP {
	return sessionMCP{Part: mcpsession.New(mcpSessionOf{s}, mcpsession.Config{
		Client: s.cfg.client, Target: s.env.mcp, EnvSecrets: s.env.envSecrets, Log: s.log,
		ControlTimeout: s.env.opts.controlTimeout, Toggles: s.env.opts.toggles,
	})}
}

// markApply is the session's pending-apply slot: the MCP configuration in
// force changed, so the session's applier (started here unless it runs
// already) applies the newest configuration (mcpsession.Part.Apply), and
// again as long as newer changes arrived meanwhile. However many changes
// come while a control request holds mcpsession.Part.mu, at most one
// goroutine waits for it, and the last configuration is the one applied.
// An exited or closing session is not marked. Called by Server.applyMCP
// (under Server.mu: Session.mu is taken under it).
func (s *Session) markApply() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc.gone() {
		return
	}
	s.mcp.applyWanted = true
	if s.mcp.applying {
		return
	}
	s.mcp.applying = true
	s.wg.Add(1)
	go func() { defer s.wg.Done(); s.applyPending() }()
}

// applyPending is the applier goroutine of markApply (owned by the
// session, joined by its wg): it applies the configuration in force while
// a change is wanted, and ends when none is, or when the session exits
// or closes.
func (s *Session) applyPending() {
	for {
		s.mu.Lock()
		if !s.mcp.applyWanted || s.proc.gone() {
			s.mcp.applyWanted, s.mcp.applying = false, false
			s.mu.Unlock()
			return
		}
		s.mcp.applyWanted = false
		s.mu.Unlock()
		s.mcp.Apply() // reads the configuration in force once it holds mcpsession.Part.mu
	}
}

// refreshMCPStatus asks claude for mcp_status (at most one request at a
// time) and feeds the answer to the MCP status.
func (s *Session) refreshMCPStatus() {
	s.mu.Lock()
	if s.mcp.statusInFlight || s.proc.exited || s.restarts.active || s.proc.cur == nil {
		s.mu.Unlock()
		return
	}
	s.mcp.statusInFlight = true
	p := s.proc.cur
	s.mu.Unlock()
	_, _ = s.control(p, "mcp_status", nil, func(r controlResult) {
		s.mu.Lock()
		s.mcp.statusInFlight = false
		s.mu.Unlock()
		if r.err != nil {
			if !errors.Is(r.err, errSessionExited) {
				s.log.Debug("mcp_status failed", "err", r.err)
			}
			return
		}
		s.env.mcp.Observe(mcphub.ParseMCPStatus(r.resp), time.Now())
	})
}

// mcpSessionOf is the session as its MCP part sees it
// (mcpsession.Session).
type mcpSessionOf struct{ s *Session }

func (m mcpSessionOf) Call(ctx context.Context, subtype string, fields any) (json.RawMessage, bool, error) {
	resp, err := m.s.controlWait(ctx, subtype, fields)
	return resp, errors.Is(err, errSessionExited), err
}

// Launched: the servers of the running process's --mcp-config, and
// whether a change may be sent now (not while the session exits, closes
// or restarts).
func (m mcpSessionOf) Launched() (map[string]bool, bool) {
	s := m.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc.gone() || s.restarts.active {
		return nil, false
	}
	if p := s.proc.cur; p != nil {
		return p.mcpLaunched, true
	}
	return nil, true
}

func (m mcpSessionOf) RequestRestart(why string) { m.s.requestRestart(why) }
func (m mcpSessionOf) RefreshStatus()            { m.s.refreshMCPStatus() }
