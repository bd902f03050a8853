package proxy

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/proxy/remote"
	"github.com/ccproxy/ccproxy/webui"
)

func postLogin(t *testing.T, ts *testServer, code string, h http.Header) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest("POST", ts.url+remote.LoginPath, strings.NewReader(`{"code":"`+code+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range h {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// TestWebUILogin: the UI's files are public; a one-time code from the login
// link buys a cookie that authenticates the websocket and the HTTP
// endpoints from the proxy's own origin, once; the token never appears in
// a URL.
func TestWebUILogin(t *testing.T) {
	ts := startServer(t, Options{UI: webui.FS()})

	for _, path := range []string{"/", "/app.js", "/client.js", "/render.js", "/style.css", "/vendor/marked.esm.js", "/vendor/highlight/languages/go.min.js"} {
		resp, body := httpGet(t, "GET", ts.url+path, nil)
		if resp.StatusCode != 200 || len(body) == 0 {
			t.Fatalf("GET %s: %s", path, resp.Status)
		}
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") {
			t.Errorf("GET %s: CSP %q", path, csp)
		}
		if resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: no nosniff", path)
		}
	}
	if resp, _ := httpGet(t, "GET", ts.url+"/../go.mod", nil); resp.StatusCode == 200 {
		t.Errorf("a path outside the UI was served")
	}
	for _, dir := range []string{"/vendor", "/vendor/", "/vendor/highlight/"} {
		if resp, body := httpGet(t, "GET", ts.url+dir, nil); resp.StatusCode != 401 || strings.Contains(string(body), "marked") {
			t.Errorf("GET %s: %s %.100q, want a 401 and no listing of the UI's folder", dir, resp.Status, body)
		}
	}

	code := ts.srv.NewLoginCode(0)
	own := http.Header{"Origin": {ts.url}}

	// Wrong and foreign-origin logins fail.
	if resp, _ := postLogin(t, ts, "not-a-code", own); resp.StatusCode != 401 {
		t.Errorf("unknown code: %s", resp.Status)
	}
	if resp, _ := postLogin(t, ts, code, http.Header{"Origin": {"http://evil.example"}}); resp.StatusCode != 403 {
		t.Errorf("login from a foreign origin: %s", resp.Status)
	}

	resp, _ := postLogin(t, ts, code, own)
	if resp.StatusCode != 204 {
		t.Fatalf("login: %s", resp.Status)
	}
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if strings.HasPrefix(c.Name, "ccproxy_session_") {
			cookie = c
		}
	}
	if cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode || cookie.Value == testToken {
		t.Fatalf("login cookie %+v: want HttpOnly, SameSite=Strict, not the token", cookie)
	}
	if resp, _ := postLogin(t, ts, code, own); resp.StatusCode != 401 {
		t.Errorf("a code works once; second use: %s", resp.Status)
	}

	withCookie := http.Header{"Cookie": {cookie.Name + "=" + cookie.Value}}
	if resp, body := httpGet(t, "GET", ts.url+"/v1/mcp/status", withCookie); resp.StatusCode != 200 {
		t.Errorf("status with the cookie: %s %s", resp.Status, body)
	}
	foreign := http.Header{"Cookie": withCookie["Cookie"], "Origin": {"vscode-webview://x"}}
	if resp, _ := httpGet(t, "GET", ts.url+"/v1/mcp/status", foreign); resp.StatusCode != 401 {
		t.Errorf("the cookie must count only from the proxy's own origin; from a webview: %s", resp.Status)
	}
	bad := http.Header{"Cookie": {cookie.Name + "=forged"}}
	if resp, _ := httpGet(t, "GET", ts.url+"/v1/mcp/status", bad); resp.StatusCode != 401 {
		t.Errorf("forged cookie: %s", resp.Status)
	}

	// The websocket from the page: cookie and own origin, no token.
	d := websocket.Dialer{Subprotocols: []string{protocol.Subprotocol}, HandshakeTimeout: 5 * time.Second}
	wsURL := "ws" + strings.TrimPrefix(ts.url, "http") + "/v1/ws"
	conn, resp, err := d.Dial(wsURL, http.Header{"Cookie": withCookie["Cookie"], "Origin": {ts.url}})
	if err != nil {
		t.Fatalf("websocket with the cookie: %v (%v)", err, resp)
	}
	var hello protocol.Frame
	if err := conn.ReadJSON(&hello); err != nil || hello.Type != protocol.TypeHello {
		t.Errorf("first frame: %+v %v", hello, err)
	}
	conn.Close()

	// Minting a link needs the token.
	if resp, _ := httpGet(t, "POST", ts.url+"/v1/login/code", nil); resp.StatusCode != 401 {
		t.Errorf("minting without the token: %s", resp.Status)
	}
	resp, body := httpGet(t, "POST", ts.url+"/v1/login/code", http.Header{"Authorization": {"Bearer " + testToken}})
	var minted struct{ Code, URL string }
	mustUnmarshal(t, body, &minted)
	if resp.StatusCode != 200 || minted.URL != ts.url+"/#code="+minted.Code || strings.Contains(string(body), testToken) {
		t.Fatalf("mint: %s %s", resp.Status, body)
	}
	if resp, _ := postLogin(t, ts, minted.Code, own); resp.StatusCode != 204 {
		t.Errorf("minted code: %s", resp.Status)
	}
	if strings.Contains(ts.logBuf.String(), code) || strings.Contains(ts.logBuf.String(), cookie.Value) {
		t.Errorf("a login code or the cookie was logged")
	}
}

// TestLoginCodeWithCookie: POST /v1/login/code mints a link with the token
// (any Origin the proxy allows, or none), and with the login cookie only
// from the proxy's own origin or an --allow-origin one, said in the Origin
// header: the cookie with no Origin, a foreign one or a webview's is
// refused, and nothing is refused 401.
func TestLoginCodeWithCookie(t *testing.T) {
	ts := startServer(t, Options{RemoteOptions: RemoteOptions{AllowOrigins: []string{"https://front.example"}}})
	resp, body := postLogin(t, ts, ts.srv.NewLoginCode(0), http.Header{"Origin": {ts.url}})
	if resp.StatusCode != 204 || len(resp.Cookies()) != 1 {
		t.Fatalf("login: %s %s", resp.Status, body)
	}
	cookie := resp.Cookies()[0]
	jar := cookie.Name + "=" + cookie.Value
	for _, tc := range []struct {
		name   string
		h      http.Header
		status int
	}{
		{"cookie, own origin", http.Header{"Cookie": {jar}, "Origin": {ts.url}}, 200},
		{"cookie, an --allow-origin origin", http.Header{"Cookie": {jar}, "Origin": {"https://front.example"}}, 200},
		{"cookie, no origin", http.Header{"Cookie": {jar}}, 403},
		{"cookie, own origin with a slash", http.Header{"Cookie": {jar}, "Origin": {ts.url + "/"}}, 403},
		{"cookie, a foreign origin", http.Header{"Cookie": {jar}, "Origin": {"http://evil.example"}}, 403},
		{"cookie, a webview", http.Header{"Cookie": {jar}, "Origin": {"vscode-webview://abc"}}, 401},
		{"token, no origin", http.Header{"Authorization": {"Bearer " + testToken}}, 200},
		{"token, a webview", http.Header{"Authorization": {"Bearer " + testToken}, "Origin": {"vscode-webview://abc"}}, 200},
		{"nothing", nil, 401},
		{"nothing, own origin", http.Header{"Origin": {ts.url}}, 401},
	} {
		resp, body := httpGet(t, "POST", ts.url+"/v1/login/code", tc.h)
		if resp.StatusCode != tc.status {
			t.Errorf("%s: %s %s, want %d", tc.name, resp.Status, body, tc.status)
			continue
		}
		if tc.status != 200 {
			if strings.Contains(string(body), `"url"`) {
				t.Errorf("%s: a refusal carries a link: %s", tc.name, body)
			}
			continue
		}
		var minted struct{ Code, URL string }
		mustUnmarshal(t, body, &minted)
		if minted.URL != ts.url+"/#code="+minted.Code {
			t.Errorf("%s: minted %s", tc.name, body)
		}
		if resp, _ := postLogin(t, ts, minted.Code, http.Header{"Origin": {ts.url}}); resp.StatusCode != 204 {
			t.Errorf("%s: the minted code logs in: %s", tc.name, resp.Status)
		}
	}
}

// TestNoWebUI: without Options.UI (`serve --no-ui`, `ccproxy acp`) the UI's
// files are not served: / and /app.js are endpoints like any other, behind
// the token.
func TestNoWebUI(t *testing.T) {
	ts := startServer(t, Options{})
	for _, path := range []string{"/", "/app.js", "/index.html"} {
		if resp, body := httpGet(t, "GET", ts.url+path, nil); resp.StatusCode != 401 || strings.Contains(string(body), "<html") {
			t.Errorf("GET %s without a UI: %s %.100q, want a 401", path, resp.Status, body)
		}
	}
}
