package proxy

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/websocket"

	"github.com/ccproxy/ccproxy/internal/textutil"
	"github.com/ccproxy/ccproxy/proxy/remote"
	"github.com/ccproxy/ccproxy/proxy/toolfiles"
	"github.com/ccproxy/ccproxy/proxy/wsconn"

	"github.com/ccproxy/ccproxy/protocol"
)

// Handler returns the proxy's HTTP handler. Every request passes the Host
// check (its Host header names a served host, which Serve works out from
// its listener: before Serve every request is refused) and the Origin check. The web UI's static files (/, /app.js, …) and POST /v1/login are
// public: they hold no secret, and the page needs them to log in. Everything
// else needs the token, or the session cookie that /v1/login sets (from the
// proxy's own origin only): /v1/ws, /v1/blobs/<sha256>,
// /v1/tool-results/<claude session>/<name>, /v1/mcp/status,
// /v1/health, POST /v1/login/code. POST /v1/login is rate-limited per
// client address.
func (s *Server) Handler() http.Handler {
	private := http.NewServeMux()
	private.HandleFunc("/v1/ws", s.serveWS)
	private.Handle(toolfiles.BlobPath, s.blobs) // proxy/toolfiles
	private.Handle(toolfiles.ToolResultsPath, toolfiles.ToolResults{Home: s.opts.HistoryHome, Log: s.log, WriteError: writeHTTPError})
	private.HandleFunc("/v1/mcp/status", s.serveMCPStatus)
	private.HandleFunc("/v1/health", s.serveHealth)
	private.Handle("/metrics", s.metricsHandler)
	private.HandleFunc(remote.LoginPath+"/code", s.gate.ServeLoginCode)
	private.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeHTTPError(w, http.StatusNotFound, protocol.CodeNotFound, "no such endpoint: "+textutil.Truncate(r.URL.Path, 100))
	})
	authed := s.gate.RequireAuth(private)

	ui := s.uiHandler()
	mux := http.NewServeMux()
	mux.Handle("/v1/", authed)
	mux.HandleFunc(remote.LoginPath, s.gate.ServeLogin)
	mux.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ui != nil && s.isUIPath(r.URL.Path) {
			ui.ServeHTTP(w, r)
			return
		}
		authed.ServeHTTP(w, r)
	}))
	// Host, Origin, CORS (proxy/remote); under --public-url's prefix too.
	return s.gate.Public().StripPrefix(s.gate.Check(mux))
}

// NewLoginCode mints a one-time code for the web UI's login (see
// remote.Gate.NewLoginCode): the page at /#code=CODE exchanges it for a
// session cookie. ttl 0 means the code stays valid until used (the one
// printed at launch).
func (s *Server) NewLoginCode(ttl time.Duration) string { return s.gate.NewLoginCode(ttl) }

func (s *Server) serveWS(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", "GET")
		writeHTTPError(w, http.StatusMethodNotAllowed, protocol.CodeBadRequest, "the websocket endpoint takes GET")
		return
	}
	if !websocket.IsWebSocketUpgrade(r) {
		writeHTTPError(w, http.StatusBadRequest, protocol.CodeBadRequest, "this endpoint is a websocket: send an upgrade request")
		return
	}
	// Version negotiation (SPEC §1.4). The token subprotocol is never
	// echoed, nor named in an error.
	var offeredVersions []string
	offered := websocket.Subprotocols(r)
	selected := ""
	for _, p := range offered {
		if strings.HasPrefix(p, "ccproxy.v") {
			offeredVersions = append(offeredVersions, p)
			if p == protocol.Subprotocol && selected == "" {
				selected = p
			}
		}
	}
	if len(offered) > 0 && selected == "" {
		writeHTTPError(w, http.StatusBadRequest, protocol.CodeUnsupportedProtocol,
			fmt.Sprintf("this proxy speaks %s; the client offered %s", protocol.Subprotocol, describeOffer(offeredVersions)))
		return
	}

	s.mu.Lock()
	if s.shutting.Load() {
		s.mu.Unlock()
		writeHTTPError(w, http.StatusServiceUnavailable, protocol.CodeShuttingDown, "ccproxy is shutting down")
		return
	}
	s.connSeq++
	id := fmt.Sprintf("c-%06d", s.connSeq)
	s.handlers.Add(1) // under mu, before shutdown's snapshot: the connections component waits for it
	s.mu.Unlock()
	defer s.handlers.Done()

	var hdr http.Header
	if selected != "" {
		hdr = http.Header{"Sec-Websocket-Protocol": {selected}}
	}
	hj := &wsconn.Hijacker{ResponseWriter: w, Wait: s.opts.WriteWait}
	conn, err := s.upgrader.Upgrade(hj, r, hdr)
	if err != nil {
		s.log.Debug("websocket upgrade failed", "conn", id, "err", err)
		return
	}
	c := newClient(s, id, conn, hj.Conn)
	if !s.addClient(c) {
		c.closeGracefully()
	}
	s.log.Info("websocket client connected", "conn", id, "origin", textutil.Truncate(r.Header.Get("Origin"), 100))
	c.enqueue(outFrame{data: s.helloFrame(id)})
	c.serve()
	s.log.Info("websocket client gone", "conn", id)
}

func describeOffer(versions []string) string {
	if len(versions) == 0 {
		return "no ccproxy.vN subprotocol"
	}
	for i, v := range versions {
		versions[i] = textutil.Truncate(v, 40)
	}
	return strings.Join(versions, ", ")
}

func (s *Server) helloFrame(connID string) []byte {
	h := protocol.Hello{
		Protocol:     protocol.Version,
		Server:       protocol.Software{Name: "ccproxy", Version: s.opts.Version},
		Capabilities: s.features.Capabilities(), // the feature table (features.go)
		Limits: protocol.Limits{
			MaxFrameBytes:   s.opts.MaxFrameBytes,
			SendQueueFrames: int64(s.opts.SendQueueFrames),
			ReplayBytes:     s.opts.ReplayBytes,
			MaxSessions:     int64(s.opts.MaxSessions),
			MaxImageBytes:   s.opts.MaxImageBytes,
		},
		Connection: connID,
	}
	if s.opts.PermissionTimeout > 0 {
		h.Limits.PermissionTimeoutMs = s.opts.PermissionTimeout.Milliseconds()
	}
	s.claudeMu.Lock()
	if s.claude != nil {
		h.Claude = &protocol.Software{Name: s.claudeName(), Version: s.claude.Version}
	}
	s.claudeMu.Unlock()
	f, err := protocol.EncodePush(protocol.TypeHello, h)
	if err != nil {
		s.log.Error("hello", "err", err)
	}
	return f
}

func (s *Server) serveMCPStatus(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeHTTPError(w, http.StatusMethodNotAllowed, protocol.CodeBadRequest, "/v1/mcp/status takes GET")
		return
	}
	body := s.mcp.StatusBody()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	if r.Method == http.MethodGet {
		w.Write(body)
	}
}

// writeHTTPError writes {"error":{"code","message"}}.
func writeHTTPError(w http.ResponseWriter, status int, code protocol.Code, msg string) {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"code": code, "message": msg}})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	w.Write(b)
}
