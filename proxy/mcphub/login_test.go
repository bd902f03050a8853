package mcphub

import (
	"context"
	"log/slog"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ccproxy/ccproxy/internal/textutil"
	"github.com/ccproxy/ccproxy/protocol"
)

// TestLoginOutput: the URL is found on its own line (escapes removed),
// once; an overlong line is cut, not kept whole; the last line is kept.
func TestLoginOutput(t *testing.T) {
	long := strings.Repeat("x", 3*loginOutputBytes)
	for _, tc := range []struct {
		name, in, url, last string
	}{
		{"plain", "Starting…\nVisit this URL to authorize:\n  https://a.example/authorize?x=1\n\nWaiting…\nAuthenticated.\n", "https://a.example/authorize?x=1", "Authenticated."},
		{"osc8", "  \x1b]8;;http://h/a?b\x07http://h/a?b\x1b]8;;\x07\r\n", "http://h/a?b", "http://h/a?b"},
		{"first only", "  http://h/1\n  http://h/2\n", "http://h/1", "http://h/2"},
		{"not alone on its line", "see http://h/1 now\n", "", "see http://h/1 now"},
		{"overlong", long + "\n  http://h/after\nend", "http://h/after", "end"},
		{"none", "", "", ""},
	} {
		urls := make(chan string, 1)
		var o loginOutput
		o.read(strings.NewReader(tc.in), urls)
		got := ""
		select {
		case got = <-urls:
		default:
		}
		if got != tc.url || o.lastLine() != tc.last {
			t.Errorf("%s: url %q, last %q; want %q, %q", tc.name, got, textutil.Truncate(o.lastLine(), 40), tc.url, tc.last)
		}
	}
}

// TestLoginRedirectURI: mcp/login {redirect} may reach only the CLI's own
// loopback callback, the one redirect_uri of the URL it printed; an
// authorization URL with two (the endpoint's own first), or one that is
// not plain http on loopback with a port, gives none.
func TestLoginRedirectURI(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"https://a.example/authorize?client_id=c&redirect_uri=http%3A%2F%2Flocalhost%3A4711%2Fcallback&state=s", "http://localhost:4711/callback"},
		{"https://a.example/authorize?redirect_uri=http%3A%2F%2F127.0.0.1%3A4711%2Fcallback", "http://127.0.0.1:4711/callback"},
		{"https://a.example/authorize?redirect_uri=http%3A%2F%2F%5B%3A%3A1%5D%3A4711%2Fcallback", "http://[::1]:4711/callback"},
		// the endpoint's own redirect_uri first, the CLI's after it
		{"https://a.example/authorize?redirect_uri=http%3A%2F%2F127.0.0.1%3A6379%2F&client_id=c&redirect_uri=http%3A%2F%2Flocalhost%3A4711%2Fcallback", ""},
		{"https://a.example/authorize?client_id=c", ""},
		{"https://a.example/authorize?redirect_uri=http%3A%2F%2Fintranet.example%3A80%2Fcb", ""},
		{"https://a.example/authorize?redirect_uri=https%3A%2F%2Flocalhost%3A4711%2Fcb", ""},
		{"https://a.example/authorize?redirect_uri=http%3A%2F%2Flocalhost%2Fcb", ""},
		{"https://a.example/authorize?redirect_uri=http%3A%2F%2Fu%3Ap%40localhost%3A4711%2Fcb", ""},
		{"https://a.example/authorize?redirect_uri=http%3A%2F%2Flocalhost%3A4711%2Fcb%3Fnext%3D1", ""},
		{"https://a.example/authorize?redirect_uri=http%3A%2F%2Flocalhost%3A4711%2Fcb&x=1;y=2", ""},
	} {
		if got := loginRedirectURI(tc.in); got != tc.want {
			t.Errorf("loginRedirectURI(%s) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestLoginsClose: Close may be called more than once, and refuses new
// logins afterwards (shutting_down).
func TestLoginsClose(t *testing.T) {
	h := NewHub(slog.New(slog.DiscardHandler))
	h.SetConfig(&Config{View: protocol.MCPConfig{Servers: []protocol.MCPConfigServer{{Name: "oa", Type: "http", Scope: protocol.ScopeUser, Active: true}}}})
	m := NewLogins(LoginConfig{
		Command: func(string, ...string) (*exec.Cmd, error) { return exec.Command("true"), nil },
		Manage:  &Manage{Hub: h},
		Timeout: time.Minute,
	})
	for range 2 {
		if err := m.Close(context.Background()); err != nil {
			t.Fatalf("Close: %v", err)
		}
	}
	if _, err := m.Login("oa"); protocol.CodeOf(err) != protocol.CodeShuttingDown {
		t.Errorf("a login after Close: %v", err)
	}
}
