package remote

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/ccproxy/ccproxy/protocol"
)

// trustedGate is a Gate behind https://chat.example.com with
// --trusted-header Remote-User --trusted-proxy 127.0.0.1, logging to log.
func trustedGate(t *testing.T, log *bytes.Buffer) http.Handler {
	t.Helper()
	pub, err := ParsePublicURL("https://chat.example.com")
	if err != nil {
		t.Fatal(err)
	}
	th, err := ParseTrustedHeader("remote-user", []string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	g := NewGate(Config{Token: "0123456789abcdef0123", Public: pub, Trusted: th,
		LoginBurst: 2, LoginEvery: 1, MaxLoginClients: 2,
		Log: slog.New(slog.NewTextHandler(log, nil)),
		WriteError: func(w http.ResponseWriter, status int, _ protocol.Code, msg string) {
			http.Error(w, msg, status)
		}})
	return g.RequireAuth(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
}

// TestTrustedHeader: a request from the trusted peer with a non-empty
// user header is authenticated; the same header from another peer, the
// trusted peer without it, or with an empty value, needs the token. The
// untrusted peer is logged once, without the header's value.
func TestTrustedHeader(t *testing.T) {
	var log bytes.Buffer
	h := trustedGate(t, &log)
	for _, c := range []struct {
		name, peer, user, origin string
		token                    bool
		want                     int
	}{
		{"trusted peer with the header", "127.0.0.1:50000", "alice", "", false, http.StatusNoContent},
		{"trusted peer with the header, own origin", "127.0.0.1:50000", "alice", "https://chat.example.com", false, http.StatusNoContent},
		{"trusted peer with the header, a foreign origin", "127.0.0.1:50000", "alice", "https://evil.example", false, http.StatusUnauthorized},
		{"untrusted loopback peer with the header", "127.0.0.2:50000", "alice", "", false, http.StatusUnauthorized},
		{"untrusted IPv6 peer with the header", "[::1]:50000", "alice", "", false, http.StatusUnauthorized},
		{"remote peer with the header", "192.0.2.7:50000", "sk-secret-value-1234", "", false, http.StatusUnauthorized},
		{"remote peer again", "192.0.2.7:50001", "sk-secret-value-1234", "", false, http.StatusUnauthorized},
		{"trusted peer without the header", "127.0.0.1:50000", "", "", false, http.StatusUnauthorized},
		{"trusted peer without the header, with the token", "127.0.0.1:50000", "", "", true, http.StatusNoContent},
		{"trusted peer with an empty header", "127.0.0.1:50000", " ", "", false, http.StatusUnauthorized},
		{"trusted peer, IPv4-mapped", "[::ffff:127.0.0.1]:50000", "bob", "", false, http.StatusNoContent},
	} {
		r := httptest.NewRequest(http.MethodGet, "/v1/health", nil)
		r.RemoteAddr = c.peer
		if c.user != "" {
			r.Header.Set("Remote-User", c.user)
		}
		if c.origin != "" {
			r.Header.Set("Origin", c.origin)
		}
		if c.token {
			r.Header.Set("Authorization", "Bearer 0123456789abcdef0123")
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != c.want {
			t.Errorf("%s: %d, want %d", c.name, w.Code, c.want)
		}
	}
	got := log.String()
	if n := strings.Count(got, "peer=192.0.2.7"); n != 1 {
		t.Errorf("the untrusted peer 192.0.2.7 is logged %d times, want once:\n%s", n, got)
	}
	for _, p := range []string{"peer=127.0.0.2", "peer=::1"} {
		if !strings.Contains(got, p) {
			t.Errorf("the untrusted peer %s is not logged:\n%s", p, got)
		}
	}
	if strings.Contains(got, "sk-secret") || strings.Contains(got, "alice") {
		t.Errorf("the log holds a header value:\n%s", got)
	}
}

// TestParseTrustedHeader: the flags' rules.
func TestParseTrustedHeader(t *testing.T) {
	ok := []struct {
		name    string
		proxies []string
		n       int
	}{
		{"X-Forwarded-User", []string{"127.0.0.1"}, 1},
		{"Remote-User", []string{"127.0.0.1,::1", "127.0.0.0/8"}, 3},
		{"", nil, 0},
	}
	for _, c := range ok {
		th, err := ParseTrustedHeader(c.name, c.proxies)
		if err != nil {
			t.Errorf("%q %q: %v", c.name, c.proxies, err)
			continue
		}
		if c.name == "" {
			if th != nil {
				t.Errorf("no header: %+v, want nil", th)
			}
			continue
		}
		if len(th.Proxies) != c.n {
			t.Errorf("%q %q: %d proxies, want %d", c.name, c.proxies, len(th.Proxies), c.n)
		}
	}
	bad := []struct {
		name    string
		proxies []string
		want    string
	}{
		{"Remote-User", nil, "needs --trusted-proxy"},
		{"", []string{"127.0.0.1"}, "needs --trusted-header"},
		{"Remote User", []string{"127.0.0.1"}, "want a header name"},
		{"authorization", []string{"127.0.0.1"}, "standard request header"},
		{"Remote-User", []string{"192.0.2.1"}, "only loopback"},
		{"Remote-User", []string{"0.0.0.0/0"}, "only loopback"},
		{"Remote-User", []string{"::/0"}, "only loopback"},
		{"Remote-User", []string{"localhost"}, "no host names"},
		{"Remote-User", []string{"127.0.0.1:8080"}, "no host names"},
	}
	for _, c := range bad {
		_, err := ParseTrustedHeader(c.name, c.proxies)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q %q: error %v, want one saying %q", c.name, c.proxies, err, c.want)
		}
	}
}

// TestTrustedHeaderWarnedBounded: requests with the header from more
// untrusted peers than are remembered, at once from many goroutines, log
// each of the first maxWarnedPeers once, then one line saying the rest go
// unlogged; the set stays at its bound.
func TestTrustedHeaderWarnedBounded(t *testing.T) {
	var log syncBuffer
	pub, _ := ParsePublicURL("https://chat.example.com")
	th, err := ParseTrustedHeader("Remote-User", []string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	g := NewGate(Config{Token: "0123456789abcdef0123", Public: pub, Trusted: th,
		LoginBurst: 2, LoginEvery: 1, MaxLoginClients: 2,
		Log:        slog.New(slog.NewTextHandler(&log, nil)),
		WriteError: func(w http.ResponseWriter, status int, _ protocol.Code, msg string) { http.Error(w, msg, status) }})
	h := g.RequireAuth(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	const peers = maxWarnedPeers + 50
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range peers {
				r := httptest.NewRequest(http.MethodGet, "/v1/health", nil)
				r.RemoteAddr = fmt.Sprintf("10.0.%d.%d:4000%d", i/200, i%200, g)
				r.Header.Set("Remote-User", "alice")
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				if w.Code != http.StatusUnauthorized {
					t.Errorf("untrusted peer %s: %d", r.RemoteAddr, w.Code)
				}
			}
		}()
	}
	wg.Wait()
	got := log.String()
	if n := strings.Count(got, "peer not trusted ignored"); n != maxWarnedPeers {
		t.Errorf("%d peers logged, want %d", n, maxWarnedPeers)
	}
	if n := strings.Count(got, "the rest are not logged"); n != 1 {
		t.Errorf("the full set is said %d times, want once", n)
	}
	if len(th.warned) != maxWarnedPeers {
		t.Errorf("%d peers remembered, want %d", len(th.warned), maxWarnedPeers)
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
