package proxy

// A session's side of MCP: the servers in force sent to claude
// (mcp_set_servers, a restart when it refuses) and its mcp_status reports.

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/tidwall/gjson"
)

// applyCurrentServers sends the full MCP server set now in force to
// claude, then asks for its status; if claude refuses, the session restarts
// between turns. Calls are serialized, and each sends the newest
// configuration, so the last one to run wins.
func (s *Session) applyCurrentServers() {
	s.mcpMu.Lock()
	defer s.mcpMu.Unlock()
	cfg := s.srv.mcp.config()
	if cfg == nil {
		return
	}
	s.mu.Lock()
	skip := s.exited || s.closing != "" || s.restarting
	s.mu.Unlock()
	if skip {
		return
	}
	servers := cfg.Servers
	if servers == nil {
		servers = map[string]json.RawMessage{}
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.srv.opts.ControlTimeout)
	defer cancel()
	resp, err := s.controlWait(ctx, "mcp_set_servers", map[string]any{"servers": servers})
	switch {
	case errors.Is(err, errSessionExited):
		return
	case err != nil:
		s.log.Warn("claude refused mcp_set_servers", "err", err)
		s.requestRestart("mcp_set_servers failed: " + err.Error())
	default:
		if errs := gjson.GetBytes(resp, "errors"); errs.IsObject() && len(errs.Map()) > 0 {
			names := make([]string, 0)
			for k := range errs.Map() {
				names = append(names, k)
			}
			s.log.Warn("claude reported errors applying MCP servers", "servers", strings.Join(names, ","))
			s.requestRestart("mcp_set_servers reported errors for " + strings.Join(names, ", "))
		} else {
			s.log.Info("MCP servers applied", "added", gjson.GetBytes(resp, "added").Raw, "removed", gjson.GetBytes(resp, "removed").Raw)
		}
	}
	s.refreshMCPStatus()
}

// refreshMCPStatus asks claude for mcp_status (at most one request at a
// time) and feeds the answer to the MCP status.
func (s *Session) refreshMCPStatus() {
	s.mu.Lock()
	if s.statusInFlight || s.exited || s.restarting || s.proc == nil {
		s.mu.Unlock()
		return
	}
	s.statusInFlight = true
	p := s.proc
	s.mu.Unlock()
	_, _ = s.control(p, "mcp_status", nil, func(r controlResult) {
		s.mu.Lock()
		s.statusInFlight = false
		s.mu.Unlock()
		if r.err != nil {
			if !errors.Is(r.err, errSessionExited) {
				s.log.Debug("mcp_status failed", "err", r.err)
			}
			return
		}
		s.srv.mcp.observe(parseMCPStatus(r.resp), time.Now())
	})
}
