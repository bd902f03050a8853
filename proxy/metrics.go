package proxy

import (
	"net/http"

	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/proxy/metrics"
)

// metricsEndpoint is GET /metrics: the registry of package proxy/metrics
// (h) in Prometheus' text format (or what the scraper negotiates), never
// cached; another method is refused.
func metricsEndpoint(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			writeHTTPError(w, http.StatusMethodNotAllowed, protocol.CodeBadRequest, "/metrics takes GET")
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		h.ServeHTTP(w, r)
	})
}

// metricsState is the state of s at a scrape (metrics.State). Lock order
// as everywhere: Server.mu, then each Session.mu (state, pending
// permissions and control requests); then, with no session lock held,
// eventlog.Budget.mu and each hub's (replay bytes); the mcphub.Hub's
// status on its own.
func metricsState(s *Server) metrics.State {
	st := metrics.State{Sessions: map[string]int{}, PendingPermissions: map[string]int{}}
	s.mu.Lock()
	st.Clients = len(s.clients)
	st.WS = s.retired
	for c := range s.clients {
		st.WS.Add(c.conn.Counts())
	}
	st.Sessions[protocol.StateStarting] += s.starting
	for _, sess := range s.sessions {
		sess.mu.Lock()
		st.Sessions[sess.state]++
		sess.broker.CountPending(st.PendingPermissions)
		if p := sess.proc.cur; p != nil && p.cli != nil && !sess.proc.exited {
			st.PendingControls += p.cli.Pending()
		}
		sess.mu.Unlock()
	}
	s.mu.Unlock()
	st.ReplayMemory, st.ReplayDisk = s.logs.Bytes()
	st.ReplayMemoryLimit = s.logs.Max()
	st.Inbound = s.inbound.Used()
	st.MCPStatus = s.mcp.StatusBody()
	return st
}
