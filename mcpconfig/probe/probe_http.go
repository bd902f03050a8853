package probe

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/tidwall/gjson"
)

// httpDiag records what the HTTP layer saw while the SDK spoke to a remote
// server: the first dial (its duration or error) and the first failing
// response. The SDK's own errors do not carry these reliably.
type httpDiag struct {
	mu         sync.Mutex
	dialed     bool
	dialDur    time.Duration
	dialErr    error
	status     int // first response with status >= 400
	wwwAuth    string
	statusText string
}

func (d *httpDiag) noteDial(dur time.Duration, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.dialed {
		return
	}
	d.dialed, d.dialDur, d.dialErr = true, dur, err
}

func (d *httpDiag) noteStatus(resp *http.Response) {
	d.mu.Lock()
	defer d.mu.Unlock()
	auth := func(code int) bool { return code == http.StatusUnauthorized || code == http.StatusForbidden }
	// Keep the first failure, but an authorization failure beats any other.
	if auth(d.status) || d.status != 0 && !auth(resp.StatusCode) {
		return
	}
	d.status, d.statusText = resp.StatusCode, resp.Status
	d.wwwAuth = resp.Header.Get("WWW-Authenticate")
}

func (d *httpDiag) snapshot() (dialed bool, dialDur time.Duration, dialErr error, status int, statusText, wwwAuth string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.dialed, d.dialDur, d.dialErr, d.status, d.statusText, d.wwwAuth
}

// newHTTPClient returns the client one connection to a remote server uses:
// its own transport (closed with the connection), the configured headers
// on every request, and the diagnostics above. Response bodies that may
// carry a tools/list result go through tap, to keep the tools' schemas
// exactly as sent.
func newHTTPClient(headers [][2]string, d *httpDiag, tap *toolTap) (*http.Client, *http.Transport) {
	dialer := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	tr := &http.Transport{
		Proxy: http.ProxyFromEnvironment,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			start := time.Now()
			c, err := dialer.DialContext(ctx, network, addr)
			d.noteDial(time.Since(start), err)
			return c, err
		},
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          4,
		IdleConnTimeout:       30 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	return &http.Client{Transport: &diagTransport{base: tr, headers: headers, diag: d, tap: tap}}, tr
}

type diagTransport struct {
	base    http.RoundTripper
	headers [][2]string
	diag    *httpDiag
	tap     *toolTap
}

func (t *diagTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for _, h := range t.headers {
		// The SDK's own headers (content type, session, protocol version) win.
		if req.Header.Get(h[0]) == "" {
			req.Header.Set(h[0], h[1])
		}
	}
	listing := req.Method == http.MethodGet // a standalone or legacy SSE stream
	if req.Method == http.MethodPost && req.GetBody != nil {
		if body, err := req.GetBody(); err == nil {
			var peek [1024]byte
			n, _ := io.ReadFull(body, peek[:])
			body.Close()
			listing = bytes.Contains(peek[:n], []byte(`"tools/list"`))
		}
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode >= 400 {
		t.diag.noteStatus(resp)
	}
	if listing && t.tap != nil && resp.StatusCode < 300 {
		mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
		switch mt {
		case "application/json":
			resp.Body = &tapBody{rc: resp.Body, tap: t.tap}
		case "text/event-stream":
			resp.Body = &tapBody{rc: resp.Body, tap: t.tap, sse: true}
		}
	}
	return resp, nil
}

// tapBody passes a response body through unchanged and hands the JSON-RPC
// messages in it (the whole body, or each SSE event's data) to a toolTap.
// It holds at most one message (bounded by maxTapMessage) at a time.
type tapBody struct {
	rc   io.ReadCloser
	tap  *toolTap
	sse  bool
	buf  []byte // unparsed bytes: the JSON body, or a partial SSE line
	data []byte // the data lines of the current SSE event
	over bool   // a message exceeded the bound: stop looking
}

const maxTapMessage = 16 << 20

func (b *tapBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if n > 0 && !b.over {
		b.feed(p[:n])
	}
	if err == io.EOF && !b.over {
		if b.sse {
			b.line(b.buf)
			b.line(nil)
		} else {
			b.tap.message(b.buf)
		}
		b.buf, b.data = nil, nil
	}
	return n, err
}

func (b *tapBody) feed(p []byte) {
	b.buf = append(b.buf, p...)
	if len(b.buf)+len(b.data) > maxTapMessage {
		b.over, b.buf, b.data = true, nil, nil
		return
	}
	if !b.sse {
		return
	}
	for {
		i := bytes.IndexByte(b.buf, '\n')
		if i < 0 {
			return
		}
		b.line(bytes.TrimSuffix(b.buf[:i], []byte("\r")))
		b.buf = b.buf[i+1:]
	}
}

// line handles one SSE line; an empty one ends the event.
func (b *tapBody) line(l []byte) {
	switch {
	case len(l) == 0:
		if len(b.data) > 0 {
			b.tap.message(b.data)
		}
		b.data = b.data[:0]
	case bytes.HasPrefix(l, []byte("data:")):
		v := bytes.TrimPrefix(l[5:], []byte(" "))
		if len(b.data) > 0 {
			b.data = append(b.data, '\n')
		}
		b.data = append(b.data, v...)
	}
}

func (b *tapBody) Close() error { return b.rc.Close() }

// toolTap keeps the raw JSON of each tool of a tools/list result, so that
// an inputSchema keeps its key order (the SDK hands schemas over as Go
// maps). It is safe for concurrent use and bounded.
type toolTap struct {
	mu    sync.Mutex
	tools map[string][]byte
	bytes int
}

const maxTapBytes = 32 << 20

func newToolTap() *toolTap { return &toolTap{tools: map[string][]byte{}} }

// message looks at one JSON-RPC message.
func (t *toolTap) message(msg []byte) {
	if !bytes.Contains(msg, []byte(`"tools"`)) {
		return
	}
	t.result(gjson.GetBytes(msg, "result").Raw)
}

// result looks at the result of a response.
func (t *toolTap) result(raw string) {
	res := gjson.Parse(raw)
	tools := res.Get("tools")
	if !tools.IsArray() || res.Get("content").Exists() {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	tools.ForEach(func(_, tool gjson.Result) bool {
		name := tool.Get("name").String()
		if name == "" || t.tools[name] != nil || t.bytes+len(tool.Raw) > maxTapBytes {
			return true
		}
		t.tools[name] = []byte(tool.Raw)
		t.bytes += len(tool.Raw)
		return true
	})
}

// get returns the raw JSON of tool name, or nil.
func (t *toolTap) get(name string) []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.tools[name]
}

// oauthMetadata reports whether the server behind endpoint publishes OAuth
// metadata: the resource_metadata URL of its WWW-Authenticate header (on
// the same host), or RFC 9728 protected-resource metadata, or RFC 8414
// authorization-server metadata at its origin. Each answer must be a JSON
// object with status 200.
func oauthMetadata(ctx context.Context, endpoint, wwwAuth string) bool {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return false
	}
	origin := u.Scheme + "://" + u.Host
	var candidates []string
	if m := authParam(wwwAuth, "resource_metadata"); m != "" {
		if mu, err := url.Parse(m); err == nil && mu.Host == u.Host {
			candidates = append(candidates, m)
		}
	}
	if p := strings.TrimSuffix(u.EscapedPath(), "/"); p != "" {
		candidates = append(candidates, origin+"/.well-known/oauth-protected-resource"+p)
	}
	candidates = append(candidates, origin+"/.well-known/oauth-protected-resource", origin+"/.well-known/oauth-authorization-server")
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyFromEnvironment}, Timeout: 5 * time.Second}
	defer client.CloseIdleConnections()
	for _, c := range candidates {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, c, nil)
		if err != nil {
			continue
		}
		req.Header.Set("Accept", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			if ctx.Err() != nil {
				return false
			}
			continue
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK && gjson.ValidBytes(body) && gjson.ParseBytes(body).IsObject() {
			return true
		}
	}
	return false
}

// authParam extracts one parameter of a WWW-Authenticate header value, e.g.
// resource_metadata="https://…".
func authParam(h, name string) string {
	i := strings.Index(strings.ToLower(h), name+"=")
	if i < 0 {
		return ""
	}
	v := h[i+len(name)+1:]
	if strings.HasPrefix(v, `"`) {
		if j := strings.IndexByte(v[1:], '"'); j >= 0 {
			return v[1 : 1+j]
		}
		return ""
	}
	if j := strings.IndexAny(v, ", "); j >= 0 {
		v = v[:j]
	}
	return v
}

// dialFailure describes a failed dial for people; refused reports an
// actively refused connection.
func dialFailure(err error, host string) (msg string, timeout bool) {
	var dns *net.DNSError
	var op *net.OpError
	switch {
	case errors.As(err, &dns):
		return fmt.Sprintf("cannot resolve host %s", host), false
	case isConnRefused(err):
		return fmt.Sprintf("connection refused by %s", host), false
	case errors.As(err, &op) && op.Timeout():
		return fmt.Sprintf("connecting to %s timed out", host), true
	}
	return fmt.Sprintf("cannot connect to %s", host), false
}
