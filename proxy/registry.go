package proxy

import (
	"crypto/rand"
	"encoding/base32"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ccproxy/ccproxy/internal/textutil"
	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/proxy/metrics"
)

// registry is the server's record of its sessions and its connections:
// who is there, who is being started, and whether the server is shutting
// down. Server embeds it; Serve takes its snapshot at shutdown under mu.
//
// mu guards every field but shutting; it is the first lock of the lock
// order (Server.mu in proxy/doc.go): a Session's, a client's and the
// hubs' locks are taken under it, never the reverse.
type registry struct {
	// shutting is set once, under mu, when shutdown begins: a check under
	// mu orders a registration before or after Serve's snapshot; a check
	// without it (every client frame) is only a fast refusal.
	shutting atomic.Bool

	mu       sync.Mutex
	sessions map[string]*Session
	starting int // sessions whose claude is being started, not yet in sessions
	clients  map[*client]struct{}
	retired  metrics.WS // the websocket counts of clients gone (/metrics)
	served   bool
	connSeq  int64

	// handlers counts the running websocket handlers (http.go), each
	// added under mu while shutting is unset; the connections component
	// waits for them when it closes.
	handlers sync.WaitGroup
}

func newRegistry() registry {
	return registry{sessions: map[string]*Session{}, clients: map[*client]struct{}{}}
}

// liveSessions are the sessions whose claude runs or is being started.
func (s *registry) liveSessions() []*Session {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*Session, 0, len(s.sessions))
	for _, sess := range s.sessions {
		if sess.isLive() {
			out = append(out, sess)
		}
	}
	return out
}

// session is the session id, or unknown_session.
func (s *registry) session(id string) (*Session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sess := s.sessions[id]
	if sess == nil {
		return nil, protocol.Errorf(protocol.CodeUnknownSession, "no session %q (never created, closed, or the proxy restarted)", textutil.Truncate(id, 80))
	}
	return sess, nil
}

// sessionList is session/list's reply: every session, oldest first.
func (s *registry) sessionList() []protocol.SessionInfo {
	s.mu.Lock()
	sessions := make([]*Session, 0, len(s.sessions))
	for _, sess := range s.sessions {
		sessions = append(sessions, sess)
	}
	s.mu.Unlock()
	sort.Slice(sessions, func(i, j int) bool { return sessions[i].createdAt.Before(sessions[j].createdAt) })
	out := make([]protocol.SessionInfo, 0, len(sessions))
	for _, sess := range sessions {
		out = append(out, sess.info())
	}
	return out
}

// forget removes a session from the registry (session/close).
// forget takes session id out of the registry (session/close).
func (s *registry) forget(id string) (*Session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sess := s.sessions[id]
	if sess == nil {
		return nil, protocol.Errorf(protocol.CodeUnknownSession, "session/close: no session %q", textutil.Truncate(id, 80))
	}
	delete(s.sessions, id)
	return sess, nil
}

// addClient records a connection; false once shutdown began.
func (s *registry) addClient(c *client) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shutting.Load() {
		return false
	}
	s.clients[c] = struct{}{}
	return true
}

// removeClient forgets a connection, keeping its counts for /metrics.
func (s *registry) removeClient(c *client) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.clients, c)
	s.retired.Add(c.conn.Counts())
}

// isShuttingDown is a check without the lock, for refusing new work early.
func (s *registry) isShuttingDown() bool { return s.shutting.Load() }

// newID returns prefix + 16 random base32 characters.
func newID(prefix string) string {
	var b [10]byte
	rand.Read(b[:])
	return prefix + strings.ToLower(base32.StdEncoding.EncodeToString(b[:]))
}
