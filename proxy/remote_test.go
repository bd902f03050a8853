package proxy

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/ccproxy/ccproxy/webui"

	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/proxy/remote"
)

// TestHostHeaderCheck: a request whose Host names no served host is
// refused (DNS rebinding), whatever its path, before any other check; the
// served names, --host names and the hosts of --allow-origin pass.
func TestHostHeaderCheck(t *testing.T) {
	ts := startServer(t, Options{UI: webui.FS(), RemoteOptions: RemoteOptions{Hosts: []string{"Box.Example."}, AllowOrigins: []string{"https://front.example"}}})
	_, port, _ := net.SplitHostPort(ts.addr)
	auth := http.Header{"Authorization": {"Bearer " + testToken}}
	for _, tc := range []struct {
		host string
		want int
	}{
		{ts.addr, 200},
		{"localhost:" + port, 200},
		{"LOCALHOST", 200},
		{"[::1]:" + port, 200},
		{"box.example:" + port, 200},
		{"box.example.", 200},
		{"front.example", 200},
		{"evil.example:" + port, http.StatusMisdirectedRequest},
		{"127.0.0.1.evil.example", http.StatusMisdirectedRequest},
		{"box.example.evil", http.StatusMisdirectedRequest},
	} {
		for _, path := range []string{"/", "/v1/mcp/status", "/v1/health"} {
			req, _ := http.NewRequest("GET", ts.url+path, nil)
			req.Header = auth.Clone()
			req.Host = tc.host
			resp, body := doReq(t, http.DefaultClient, req)
			if resp.StatusCode != tc.want {
				t.Errorf("GET %s with Host %q: %s %s, want %d", path, tc.host, resp.Status, body, tc.want)
			}
			if tc.want != 200 && (errorCode(t, body) != protocol.CodeForbiddenOrigin || strings.Contains(string(body), "front.example")) {
				t.Errorf("Host %q: error %s must be forbidden_origin and not list the served names", tc.host, body)
			}
		}
	}
	// HTTP/1.0 without a Host header at all.
	c, err := net.Dial("tcp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET / HTTP/1.0\r\n\r\n")
	status, _ := io.ReadAll(io.LimitReader(c, 12))
	if !strings.HasPrefix(string(status), "HTTP/1.0 421") {
		t.Errorf("HTTP/1.0 without Host: %q, want 421", status)
	}
}

func doReq(t *testing.T, c *http.Client, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// TestLoginRateLimit: failed logins are counted per client address; past
// the burst they get 429 with a clear message and Retry-After, and another
// address is not affected. A valid code is accepted all the same, from the
// limited address too (on loopback it is every local process's).
func TestLoginRateLimit(t *testing.T) {
	ts := startServer(t, Options{RemoteOptions: RemoteOptions{LoginBurst: 3, LoginEvery: time.Hour}})
	own := http.Header{"Origin": {ts.url}}
	for i := range 3 {
		if resp, body := postLogin(t, ts, "wrong-code", own); resp.StatusCode != 401 {
			t.Fatalf("attempt %d: %s %s", i+1, resp.Status, body)
		}
	}
	resp, body := postLogin(t, ts, "wrong-code", own)
	if resp.StatusCode != http.StatusTooManyRequests || errorCode(t, body) != protocol.CodeLimitExceeded ||
		!strings.Contains(string(body), "too many failed login attempts from 127.0.0.1") || resp.Header.Get("Retry-After") != "3600" {
		t.Fatalf("4th failure: %s %s (Retry-After %q); want 429 limit_exceeded naming the address, Retry-After 3600", resp.Status, body, resp.Header.Get("Retry-After"))
	}
	if resp, _ := postLogin(t, ts, "wrong-code", own); resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("5th failure: %s, want 429", resp.Status)
	}
	if n := strings.Count(ts.logBuf.String(), "too many failures from one address"); n != 1 {
		t.Errorf("the refusal was logged %d times, want once", n)
	}

	// From 127.0.0.2 (loopback too, another address): its own bucket.
	other := clientFrom(net.IPv4(127, 0, 0, 2))
	if resp, body := postLoginWith(t, ts, other, "wrong-code"); resp.StatusCode != 401 {
		t.Errorf("a failure from another address: %s %s, want 401", resp.Status, body)
	}
	// The limited address with a valid code: logged in.
	if resp, body := postLogin(t, ts, ts.srv.NewLoginCode(0), own); resp.StatusCode != 204 {
		t.Errorf("a valid code from the limited address: %s %s, want 204", resp.Status, body)
	}
}

// TestLoginLimiterFull: with the table of failing addresses full, and
// addresses beyond it failing too, a new address with a valid code logs in
// (it got 429 when newcomers shared one bucket), and one failing anew has
// its own bucket.
func TestLoginLimiterFull(t *testing.T) {
	ts := startServer(t, Options{RemoteOptions: RemoteOptions{LoginBurst: 2, LoginEvery: time.Hour, MaxLoginClients: 2}})
	for i := byte(2); i < 8; i++ {
		c := clientFrom(net.IPv4(127, 0, 0, i))
		for range 3 {
			postLoginWith(t, ts, c, "wrong-code")
		}
	}
	// How many it remembers: remote's TestGateLoginTableBounded; that
	// MaxLoginClients reached the gate: the table was full at 2.
	if !strings.Contains(ts.logBuf.String(), "the table of failing addresses is full") {
		t.Error("the full table was not logged")
	}
	fresh := clientFrom(net.IPv4(127, 0, 0, 9))
	if resp, body := postLoginWith(t, ts, fresh, ts.srv.NewLoginCode(remote.LoginCodeTTL)); resp.StatusCode != 204 {
		t.Errorf("a new address with a valid code, the table full: %s %s, want 204", resp.Status, body)
	}
	late := clientFrom(net.IPv4(127, 0, 0, 10))
	for i, want := range []int{401, 401, 429} {
		if resp, body := postLoginWith(t, ts, late, "wrong-code"); resp.StatusCode != want {
			t.Errorf("failure %d of a new address, the table full: %s %s, want %d", i+1, resp.Status, body, want)
		}
	}
}

// clientFrom is an HTTP client whose connections come from ip (a loopback
// address other than 127.0.0.1 is another client address).
func clientFrom(ip net.IP) *http.Client {
	return &http.Client{Transport: &http.Transport{DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: ip}}).DialContext}}
}

func postLoginWith(t *testing.T, ts *testServer, c *http.Client, code string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest("POST", ts.url+remote.LoginPath, strings.NewReader(`{"code":"`+code+`"}`))
	req.Header.Set("Origin", ts.url)
	return doReq(t, c, req)
}

// tlsServer serves a proxy over TLS with a self-signed certificate on
// loopback, and returns it, its https URL and a client that trusts the
// certificate.
func tlsServer(t *testing.T, opts Options) (*testServer, string, *http.Client, *x509.CertPool) {
	cert, err := remote.SelfSignedCert([]string{"127.0.0.1", "localhost"})
	if err != nil {
		t.Fatal(err)
	}
	opts.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	ts := startServer(t, opts)
	pool := x509.NewCertPool()
	pool.AddCert(cert.Leaf)
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	return ts, "https://" + ts.addr, c, pool
}

// TestTLSLogin: under TLS the proxy speaks only TLS, its own origin is
// https://, the login cookie is Secure, minted links are https, and the
// websocket works with the cookie.
func TestTLSLogin(t *testing.T) {
	ts, base, c, pool := tlsServer(t, Options{})

	if resp, body := httpGet(t, "GET", ts.url+"/", nil); resp.StatusCode != 400 || !strings.Contains(string(body), "HTTPS server") {
		t.Errorf("plain HTTP on the TLS port: %s %q, want Go's 400 (an HTTP request to an HTTPS server)", resp.Status, body)
	}
	login := func(origin, code string) (*http.Response, []byte) {
		req, _ := http.NewRequest("POST", base+remote.LoginPath, strings.NewReader(`{"code":"`+code+`"}`))
		req.Header.Set("Origin", origin)
		return doReq(t, c, req)
	}
	code := ts.srv.NewLoginCode(0)
	if resp, _ := login("http://"+ts.addr, code); resp.StatusCode != 403 {
		t.Errorf("login from the http:// origin under TLS: %s, want 403", resp.Status)
	}
	resp, body := login(base, code)
	if resp.StatusCode != 204 {
		t.Fatalf("login: %s %s", resp.Status, body)
	}
	var cookie *http.Cookie
	for _, ck := range resp.Cookies() {
		if strings.HasPrefix(ck.Name, "ccproxy_session_") {
			cookie = ck
		}
	}
	if cookie == nil || !cookie.Secure || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode {
		t.Fatalf("cookie %+v: want Secure, HttpOnly, SameSite=Strict", cookie)
	}

	req, _ := http.NewRequest("POST", base+"/v1/login/code", nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, body = doReq(t, c, req)
	var minted struct{ Code, URL string }
	mustUnmarshal(t, body, &minted)
	if resp.StatusCode != 200 || minted.URL != base+"/#code="+minted.Code {
		t.Errorf("minted link %s %s, want %s/#code=…", resp.Status, body, base)
	}

	d := websocket.Dialer{Subprotocols: []string{protocol.Subprotocol}, TLSClientConfig: &tls.Config{RootCAs: pool}, HandshakeTimeout: waitTimeout}
	conn, resp, err := d.Dial("wss://"+ts.addr+"/v1/ws", http.Header{"Cookie": {cookie.Name + "=" + cookie.Value}, "Origin": {base}})
	if err != nil {
		t.Fatalf("wss with the cookie: %v (%v)", err, resp)
	}
	var hello protocol.Frame
	if err := conn.ReadJSON(&hello); err != nil || hello.Type != protocol.TypeHello {
		t.Errorf("first frame: %+v %v", hello, err)
	}
	conn.Close()
}

// TestServeOffLoopbackNeedsTLS: Serve refuses a listener off loopback
// unless Options.TLS is set (the command line refuses it earlier).
func TestServeOffLoopbackNeedsTLS(t *testing.T) {
	srv, err := New(Options{Token: testToken, Project: t.TempDir(), CLIOptions: CLIOptions{ClaudePath: fakeClaudePath}})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	err = srv.Serve(context.Background(), ln)
	if err == nil || !strings.Contains(err.Error(), "needs TLS") {
		t.Fatalf("Serve on %s without TLS: %v, want a refusal", ln.Addr(), err)
	}
	if _, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		t.Errorf("the refused listener is still open")
	}
}

// TestHealth: GET /v1/health needs the token and summarizes the proxy:
// version, uptime, sessions by state, clients, MCP servers by status.
func TestHealth(t *testing.T) {
	ts := startServer(t, Options{Version: "1.2.3"})
	if resp, _ := httpGet(t, "GET", ts.url+"/v1/health", nil); resp.StatusCode != 401 {
		t.Errorf("health without the token: %s", resp.Status)
	}
	c := ts.dial(t)
	id := c.create(nil)
	c.waitPush(0, protocol.TypeSessionState, nil, func(raw json.RawMessage) bool {
		return strings.Contains(string(raw), `"state":"idle"`) && strings.Contains(string(raw), id)
	})
	resp, body := httpGet(t, "GET", ts.url+"/v1/health", http.Header{"Authorization": {"Bearer " + testToken}})
	var h Health
	mustUnmarshal(t, body, &h)
	if resp.StatusCode != 200 || h.Version != "1.2.3" || h.Sessions != 1 || h.ByState["idle"] != 1 || h.Clients != 1 ||
		h.TLS || h.URL != ts.url || h.Started.IsZero() || h.UptimeSeconds < 0 || h.MCPByStatus == nil || h.Claude == nil {
		t.Errorf("health: %s %s", resp.Status, body)
	}
	if strings.Contains(string(body), testToken) {
		t.Errorf("health shows the token")
	}
}
