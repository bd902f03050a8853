package remote

import (
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ccproxy/ccproxy/protocol"
)

func TestParsePublicURL(t *testing.T) {
	for _, tc := range []struct{ in, origin, host, prefix string }{
		{"https://Chat.Example.com", "https://chat.example.com", "chat.example.com", ""},
		{"https://chat.example.com:443/", "https://chat.example.com", "chat.example.com", ""},
		{"https://chat.example.com:8443/ccp/", "https://chat.example.com:8443", "chat.example.com", "/ccp"},
		{"http://127.0.0.1:9000/a/b", "http://127.0.0.1:9000", "127.0.0.1", "/a/b"},
	} {
		p, err := ParsePublicURL(tc.in)
		if err != nil || p.Origin != tc.origin || p.Host != tc.host || p.Prefix != tc.prefix || p.Secure != strings.HasPrefix(tc.in, "https") {
			t.Errorf("%q: %+v, %v; want %s %s %q", tc.in, p, err, tc.origin, tc.host, tc.prefix)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"chat.example.com", "want https://host[:port][/prefix]"},
		{"ftp://chat.example.com", `got scheme "ftp"`},
		{"https://user@chat.example.com", "no user, query or fragment"},
		{"https://chat.example.com/?x=1", "no user, query or fragment"},
		{"https://chat.example.com/#top", "no user, query or fragment"},
		{"https://chat.example.com:99999", "is not a port number"},
		{"https://chat.example.com/a/../b", "not a plain prefix"},
		{"https://chat.example.com/v1", "would hide the proxy's own /v1/ paths"},
	} {
		if _, err := ParsePublicURL(tc.in); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v; want an error with %q", tc.in, err, tc.want)
		}
	}
}

// TestGatePublicURL: behind a reverse proxy, its host and origin are the
// proxy's own (and still nobody else's), the login cookie is Secure for
// https and scoped to the prefix, login links name the public URL, and
// the proxy answers under the prefix whether the reverse proxy strips it
// or not.
func TestGatePublicURL(t *testing.T) {
	pub, err := ParsePublicURL("https://chat.example.com/ccp")
	if err != nil {
		t.Fatal(err)
	}
	g := NewGate(Config{Token: "tok-0123456789abcdef", Public: pub, LoginBurst: 10, LoginEvery: 1, MaxLoginClients: 10,
		Log: slog.New(slog.DiscardHandler), WriteError: func(w http.ResponseWriter, status int, code protocol.Code, msg string) {
			http.Error(w, msg, status)
		}})
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	defer ln.Close()
	if _, err := g.Listen(ln, nil, nil); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc(LoginPath, g.ServeLogin)
	mux.Handle(LoginPath+"/code", g.RequireAuth(http.HandlerFunc(g.ServeLoginCode)))
	mux.Handle("/v1/whoami", g.RequireAuth(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, r.URL.Path) })))
	h := g.Public().StripPrefix(g.Check(mux))

	do := func(method, path, host, origin, body string, cookies ...*http.Cookie) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, path, strings.NewReader(body))
		r.Host = host
		if origin != "" {
			r.Header.Set("Origin", origin)
		}
		for _, c := range cookies {
			r.AddCookie(c)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	// A link is minted with the token; it names the public URL.
	r := httptest.NewRequest("POST", "/ccp/v1/login/code", nil)
	r.Host = "chat.example.com"
	r.Header.Set("Authorization", "Bearer tok-0123456789abcdef")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	var link struct{ Code, URL string }
	if err := json.Unmarshal(w.Body.Bytes(), &link); err != nil || link.URL != "https://chat.example.com/ccp/#code="+link.Code {
		t.Fatalf("login/code: %d %s; want a link under the public URL", w.Code, w.Body)
	}
	// The browser's login through the reverse proxy (prefix kept).
	w = do("POST", "/ccp/v1/login", "chat.example.com", "https://chat.example.com", `{"code":"`+link.Code+`"}`)
	res := w.Result()
	if w.Code != http.StatusNoContent || len(res.Cookies()) != 1 {
		t.Fatalf("login: %d %s, cookies %v", w.Code, w.Body, res.Cookies())
	}
	c := res.Cookies()[0]
	if !c.Secure || c.Path != "/ccp/" || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode {
		t.Errorf("cookie: Secure %v, Path %q, HttpOnly %v, SameSite %v; want Secure, /ccp/, HttpOnly, Strict", c.Secure, c.Path, c.HttpOnly, c.SameSite)
	}
	// The cookie works from the public origin, with the prefix stripped or not.
	for _, path := range []string{"/ccp/v1/whoami", "/v1/whoami"} {
		if w := do("GET", path, "chat.example.com", "https://chat.example.com", "", c); w.Code != 200 || w.Body.String() != "/v1/whoami" {
			t.Errorf("GET %s from the public origin: %d %q", path, w.Code, w.Body)
		}
	}
	// Other hosts and origins are still refused.
	if w := do("GET", "/v1/whoami", "evil.example.com", "", "", c); w.Code != http.StatusMisdirectedRequest {
		t.Errorf("another Host: %d, want 421", w.Code)
	}
	if w := do("GET", "/v1/whoami", "chat.example.com", "https://evil.example.com", "", c); w.Code != http.StatusForbidden {
		t.Errorf("another Origin: %d, want 403", w.Code)
	}
	if w := do("GET", "/v1/whoami", "chat.example.com", "http://chat.example.com", "", c); w.Code != http.StatusForbidden {
		t.Errorf("the public host over http (not its origin): %d, want 403", w.Code)
	}
	// The prefix alone redirects to the page's folder.
	if w := do("GET", "/ccp", "chat.example.com", "", ""); w.Code != http.StatusMovedPermanently || w.Header().Get("Location") != "/ccp/" {
		t.Errorf("GET /ccp: %d %q, want a redirect to /ccp/", w.Code, w.Header().Get("Location"))
	}
	if g.Policy().BaseURL() != "https://chat.example.com/ccp" {
		t.Errorf("BaseURL %q", g.Policy().BaseURL())
	}
}
