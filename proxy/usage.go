package proxy

// The usage part of a Session (proxy/usage: what its turns used) lives in
// Session.usage, guarded by Session.mu; after each turn the session asks
// claude how full the context window is.

import "github.com/ccproxy/ccproxy/proxy/usage"

// usageState is the usage part of a session. Guarded by Session.mu.
type usageState = usage.State

// askContextUsage asks p for the context window's use after a turn and
// tells the subscribers. Called without the session's lock.
func askContextUsage(s *Session, p *claudeProc) {
	_, _ = s.control(p, "get_context_usage", map[string]any{"detail": "summary"}, func(r controlResult) {
		if r.err != nil {
			s.log.Debug("get_context_usage", "err", r.err)
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.proc.cur == p && s.usage.NoteContext(r.resp) {
			s.pushStateLocked("")
		}
	})
}
