package remote

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ccproxy/ccproxy/protocol"
)

// TestGateLoginTableBounded: failed logins through the Gate from more
// addresses than Config.MaxLoginClients leave it that many remembered
// (the proxy's TestLoginLimiterFull checks the rest through a server).
func TestGateLoginTableBounded(t *testing.T) {
	g := NewGate(Config{Token: "0123456789abcdef0123", LoginBurst: 2, LoginEvery: time.Hour, MaxLoginClients: 2,
		Log: slog.New(slog.DiscardHandler),
		WriteError: func(w http.ResponseWriter, status int, _ protocol.Code, msg string) {
			http.Error(w, msg, status)
		}})
	for i := 2; i < 8; i++ {
		for range 3 {
			r := httptest.NewRequest(http.MethodPost, "/v1/login", strings.NewReader(`{"code":"wrong-code"}`))
			r.RemoteAddr = fmt.Sprintf("127.0.0.%d:40000", i)
			w := httptest.NewRecorder()
			g.ServeLogin(w, r)
			if w.Code != http.StatusUnauthorized && w.Code != http.StatusTooManyRequests {
				t.Fatalf("a failed login from 127.0.0.%d: %d %s", i, w.Code, w.Body)
			}
		}
	}
	if n := g.limit.size(); n != 2 {
		t.Errorf("%d addresses remembered, want 2", n)
	}
}
