package proxy

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/ccproxy/ccproxy/protocol"
)

// Health is the body of GET /v1/health (token or cookie required): a
// summary of a running proxy, as `ccproxy status` prints it.
type Health struct {
	Version       string         `json:"version"`
	Claude        *HealthClaude  `json:"claude,omitempty"` // the CLI found, once it was looked up
	Started       time.Time      `json:"started"`
	UptimeSeconds float64        `json:"uptimeSeconds"`
	TLS           bool           `json:"tls"`
	URL           string         `json:"url"`      // SCHEME://HOST:PORT, the first served host
	Sessions      int            `json:"sessions"` // live sessions, by state below
	ByState       map[string]int `json:"sessionsByState"`
	Clients       int            `json:"clients"` // websocket connections
	MCPServers    int            `json:"mcpServers"`
	MCPByStatus   map[string]int `json:"mcpServersByStatus"`
	Spares        int            `json:"spares"` // warm spares parked (serve --warm), each one idle claude
}

// HealthClaude is the Claude Code CLI the proxy runs, or (Name
// ReplayName) ccproxy's replay of a recorded session: Replay names what it
// replays, and Version is the version of the CLI that recorded it.
type HealthClaude struct {
	Name    string `json:"name"` // ClaudeCodeName or ReplayName
	Path    string `json:"path"`
	Version string `json:"version"`
	Replay  string `json:"replay,omitempty"`
}

// health gathers the Health of s. Lock order: Server.mu, then each
// Session.mu; mcphub.Hub.mu on its own.
func (s *Server) health() Health {
	h := Health{
		Version: s.opts.Version,
		Started: s.started.UTC().Truncate(time.Second),
		TLS:     s.gate.Policy().TLS(),
		URL:     s.gate.Policy().BaseURL(),
		ByState: map[string]int{}, MCPByStatus: map[string]int{},
	}
	h.UptimeSeconds = time.Since(s.started).Truncate(time.Second).Seconds()
	s.claudeMu.Lock()
	if s.claude != nil {
		h.Claude = &HealthClaude{Name: s.claudeName(), Path: s.claude.Path, Version: s.claude.Version, Replay: s.opts.Replay}
	}
	s.claudeMu.Unlock()
	s.mu.Lock()
	h.Clients = len(s.clients)
	for _, sess := range s.sessions {
		sess.mu.Lock()
		h.ByState[sess.state]++
		sess.mu.Unlock()
		h.Sessions++
	}
	s.mu.Unlock()
	h.Spares = s.spares.Ready()
	var st protocol.MCPStatus
	if err := json.Unmarshal(s.mcp.StatusBody(), &st); err == nil {
		for _, srv := range st.Servers {
			h.MCPByStatus[srv.Status]++
			h.MCPServers++
		}
	}
	return h
}

// serveHealth is GET /v1/health.
func (s *Server) serveHealth(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeHTTPError(w, http.StatusMethodNotAllowed, protocol.CodeBadRequest, "/v1/health takes GET")
		return
	}
	body, _ := json.Marshal(s.health())
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	if r.Method == http.MethodGet {
		w.Write(body)
	}
}
