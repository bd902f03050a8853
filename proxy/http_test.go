package proxy

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/gorilla/websocket"

	"github.com/ccproxy/ccproxy/internal/testkit/mcptest"
	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/stream"
)

func httpGet(t *testing.T, method, url string, h http.Header) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
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

func errorCode(t *testing.T, body []byte) protocol.Code {
	t.Helper()
	var e struct {
		Error protocol.Error `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil || e.Error.Message == "" {
		t.Errorf("error body %q is not {\"error\":{\"code\",\"message\"}}", body)
	}
	return e.Error.Code
}

// The websocket upgrade: token by header or subprotocol, never by URL;
// origin checked; version negotiated; the token never echoed or logged.
func TestWebsocketAuthAndOrigin(t *testing.T) {
	ts := startServer(t, Options{RemoteOptions: RemoteOptions{AllowOrigins: []string{"https://App.Example:8443"}}})
	port := ts.addr[strings.LastIndexByte(ts.addr, ':')+1:]
	bearer := "Bearer " + testToken
	type result struct {
		status   int
		code     protocol.Code
		protocol string
	}
	dial := func(h http.Header, protos []string, url string) result {
		t.Helper()
		d := websocket.Dialer{Subprotocols: protos}
		if url == "" {
			url = ts.wsURL()
		}
		conn, resp, err := d.Dial(url, h)
		if err == nil {
			defer conn.Close()
			return result{status: resp.StatusCode, protocol: conn.Subprotocol()}
		}
		if resp == nil {
			t.Fatalf("dial: %v", err)
		}
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode == http.StatusUnauthorized && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("401 without WWW-Authenticate: Bearer")
		}
		if bytes.Contains(b, []byte(testToken)) {
			t.Errorf("an error body holds the token: %s", b)
		}
		return result{status: resp.StatusCode, code: errorCode(t, b)}
	}
	for _, tc := range []struct {
		name   string
		h      http.Header
		protos []string
		url    string
		want   result
	}{
		{"no token", nil, nil, "", result{status: 401, code: protocol.CodeUnauthorized}},
		{"wrong token", http.Header{"Authorization": {"Bearer wrong-token-0123456789abcdef"}}, nil, "", result{status: 401, code: protocol.CodeUnauthorized}},
		{"prefix of the token", http.Header{"Authorization": {"Bearer " + testToken[:20]}}, nil, "", result{status: 401, code: protocol.CodeUnauthorized}},
		{"basic scheme", http.Header{"Authorization": {"Basic " + testToken}}, nil, "", result{status: 401, code: protocol.CodeUnauthorized}},
		{"token in the query", nil, nil, ts.wsURL() + "?token=" + testToken, result{status: 401, code: protocol.CodeUnauthorized}},
		{"bearer", http.Header{"Authorization": {bearer}}, nil, "", result{status: 101}},
		{"bearer lower-case scheme", http.Header{"Authorization": {"bearer " + testToken}}, nil, "", result{status: 101}},
		{"subprotocol token", nil, []string{"ccproxy.v1", "ccproxy.token." + testToken}, "", result{status: 101, protocol: "ccproxy.v1"}},
		{"wrong subprotocol token", nil, []string{"ccproxy.v1", "ccproxy.token.nope-nope-nope-nope"}, "", result{status: 401, code: protocol.CodeUnauthorized}},
		{"only the token subprotocol", nil, []string{"ccproxy.token." + testToken}, "", result{status: 400, code: protocol.CodeUnsupportedProtocol}},
		{"unknown version only", http.Header{"Authorization": {bearer}}, []string{"ccproxy.v9"}, "", result{status: 400, code: protocol.CodeUnsupportedProtocol}},
		{"v9 then v1", http.Header{"Authorization": {bearer}}, []string{"ccproxy.v9", "ccproxy.v1"}, "", result{status: 101, protocol: "ccproxy.v1"}},
		{"evil origin", http.Header{"Authorization": {bearer}, "Origin": {"https://evil.example"}}, nil, "", result{status: 403, code: protocol.CodeForbiddenOrigin}},
		{"evil origin without token", http.Header{"Origin": {"https://evil.example"}}, nil, "", result{status: 403, code: protocol.CodeForbiddenOrigin}},
		{"null origin", http.Header{"Authorization": {bearer}, "Origin": {"null"}}, nil, "", result{status: 403, code: protocol.CodeForbiddenOrigin}},
		{"own origin", http.Header{"Authorization": {bearer}, "Origin": {"http://127.0.0.1:" + port}}, nil, "", result{status: 101}},
		{"localhost origin", http.Header{"Authorization": {bearer}, "Origin": {"http://localhost:" + port}}, nil, "", result{status: 101}},
		{"own host, other port", http.Header{"Authorization": {bearer}, "Origin": {"http://127.0.0.1:1"}}, nil, "", result{status: 403, code: protocol.CodeForbiddenOrigin}},
		{"vscode webview", http.Header{"Authorization": {bearer}, "Origin": {"vscode-webview://1abc2def"}}, nil, "", result{status: 101}},
		{"allowed origin, other case", http.Header{"Authorization": {bearer}, "Origin": {"https://app.example:8443"}}, nil, "", result{status: 101}},
		{"allowed origin, other port", http.Header{"Authorization": {bearer}, "Origin": {"https://app.example"}}, nil, "", result{status: 403, code: protocol.CodeForbiddenOrigin}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := dial(tc.h, tc.protos, tc.url); got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
	if strings.Contains(ts.logBuf.String(), testToken) {
		t.Error("the token appears in the proxy's log")
	}
}

func TestHTTPEndpoints(t *testing.T) {
	ts := startServer(t, Options{})
	auth := http.Header{"Authorization": {"Bearer " + testToken}}

	resp, body := httpGet(t, "GET", ts.url+"/v1/mcp/status", auth)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("mcp status: %s %s", resp.Status, body)
	}
	var st protocol.MCPStatus
	mustUnmarshal(t, body, &st)

	for _, tc := range []struct {
		method, path string
		h            http.Header
		status       int
		code         protocol.Code
	}{
		{"GET", "/v1/mcp/status", nil, 401, protocol.CodeUnauthorized},
		{"POST", "/v1/mcp/status", auth, 405, protocol.CodeBadRequest},
		{"GET", "/v1/blobs/" + strings.Repeat("a", 64), auth, 404, protocol.CodeNotFound},
		{"GET", "/v1/blobs/" + strings.Repeat("A", 64), auth, 400, protocol.CodeBadRequest},
		{"GET", "/v1/blobs/xyz", auth, 400, protocol.CodeBadRequest},
		{"GET", "/nope", auth, 404, protocol.CodeNotFound},
		{"GET", "/v1/ws", auth, 400, protocol.CodeBadRequest},
		{"GET", "/v1/mcp/status", http.Header{"Authorization": auth["Authorization"], "Origin": {"https://evil.example"}}, 403, protocol.CodeForbiddenOrigin},
	} {
		resp, body := httpGet(t, tc.method, ts.url+tc.path, tc.h)
		if resp.StatusCode != tc.status || errorCode(t, body) != tc.code || resp.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s %s: %s %s, want %d %s", tc.method, tc.path, resp.Status, body, tc.status, tc.code)
		}
	}

	// CORS for an allowed origin, preflight without a token.
	resp, _ = httpGet(t, "OPTIONS", ts.url+"/v1/mcp/status", http.Header{"Origin": {"vscode-webview://x"}, "Access-Control-Request-Method": {"GET"}})
	if resp.StatusCode != 204 || resp.Header.Get("Access-Control-Allow-Origin") != "vscode-webview://x" || !strings.Contains(resp.Header.Get("Access-Control-Allow-Headers"), "Authorization") {
		t.Errorf("preflight: %s %v", resp.Status, resp.Header)
	}
	resp, _ = httpGet(t, "GET", ts.url+"/v1/mcp/status", http.Header{"Origin": {"vscode-webview://x"}, "Authorization": auth["Authorization"]})
	if resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Origin") != "vscode-webview://x" || resp.Header.Get("Vary") != "Origin" {
		t.Errorf("CORS GET: %s %v", resp.Status, resp.Header)
	}
}

// An image in a tool result is taken out of the event and served at its
// URL, with the token, with the right headers.
func TestBlobServed(t *testing.T) {
	ts := startServer(t, Options{})
	c := ts.dial(t)
	s := c.create(nil)
	var url, sha string
	for _, ev := range c.turn(s, "image") {
		if eventType(ev) != "user" {
			continue
		}
		if bytes.Contains(ev.Event, []byte("iVBOR")) {
			t.Errorf("base64 left in the event: %.300s", ev.Event)
		}
		var u struct {
			Message struct {
				Content []struct {
					Content     string                `json:"content"`
					Attachments []protocol.Attachment `json:"attachments"`
				} `json:"content"`
			} `json:"message"`
		}
		mustUnmarshal(t, ev.Event, &u)
		tr := u.Message.Content[0]
		if len(tr.Attachments) != 1 || !strings.HasPrefix(tr.Content, "a picture\n[image image/png") {
			t.Fatalf("tool result not normalized: %s", ev.Event)
		}
		url, sha = tr.Attachments[0].URL, tr.Attachments[0].SHA256
	}
	png := mcptest.SmallPNG()
	sum := sha256.Sum256(png)
	if sha != hex.EncodeToString(sum[:]) || url != "/v1/blobs/"+sha {
		t.Fatalf("attachment sha %s url %s", sha, url)
	}
	auth := http.Header{"Authorization": {"Bearer " + testToken}}
	resp, body := httpGet(t, "GET", ts.url+url, auth)
	if resp.StatusCode != 200 || !bytes.Equal(body, png) {
		t.Fatalf("GET blob: %s, %d bytes", resp.Status, len(body))
	}
	for k, v := range map[string]string{
		"Content-Type":            "image/png",
		"Content-Length":          itoa(len(png)),
		"Etag":                    `"` + sha + `"`,
		"Cache-Control":           "private, max-age=31536000, immutable",
		"X-Content-Type-Options":  "nosniff",
		"Content-Security-Policy": "default-src 'none'; sandbox",
		"Content-Disposition":     "inline",
	} {
		if got := resp.Header.Get(k); got != v {
			t.Errorf("%s: %q, want %q", k, got, v)
		}
	}
	resp, body = httpGet(t, "HEAD", ts.url+url, auth)
	if resp.StatusCode != 200 || len(body) != 0 || resp.Header.Get("Content-Length") != itoa(len(png)) {
		t.Errorf("HEAD blob: %s %d", resp.Status, len(body))
	}
	resp, _ = httpGet(t, "GET", ts.url+url, http.Header{"Authorization": auth["Authorization"], "If-None-Match": {`"` + sha + `"`}})
	if resp.StatusCode != 304 {
		t.Errorf("conditional GET: %s", resp.Status)
	}
	if resp, _ = httpGet(t, "GET", ts.url+url, nil); resp.StatusCode != 401 {
		t.Errorf("GET blob without token: %s", resp.Status)
	}
}

func attachment(sha, mt string) stream.Attachment {
	return stream.Attachment{Kind: "image", MediaType: mt, SHA256: sha}
}

// TestOriginExactMatch: an Origin header is the proxy's own only when it
// is exactly scheme://host:port (a trailing "/" or a path is refused, 403);
// scheme and host in other cases match; an own origin on the scheme's
// default port matches without the port, as browsers send it (the policy
// alone: remote.TestPolicyDefaultPort).
func TestOriginExactMatch(t *testing.T) {
	ts := startServer(t, Options{})
	auth := http.Header{"Authorization": {"Bearer " + testToken}}
	for origin, want := range map[string]int{
		ts.url:                  200,
		strings.ToUpper(ts.url): 200,
		ts.url + "/":            403,
		ts.url + "/v1":          403,
		"http://u@" + ts.addr:   403,
		ts.url + "?":            403,
		"http://127.0.0.1:1/":   403,
		"https://" + ts.addr:    403,
		"vscode-webview://abc":  200,
		"vscode-webview://abc/": 403,
	} {
		h := auth.Clone()
		h.Set("Origin", origin)
		resp, body := httpGet(t, "GET", ts.url+"/v1/mcp/status", h)
		if resp.StatusCode != want {
			t.Errorf("Origin %q: %s %s, want %d", origin, resp.Status, body, want)
		}
	}
}
