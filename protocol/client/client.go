package client

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/ccproxy/ccproxy/protocol"
)

// maxBlobBytes bounds an attachment fetched for an image block.
const maxBlobBytes = 32 << 20

// The proxy drops a websocket client that reads nothing for 10 s
// (proxy.Options.WriteWait): what the backend does on its read loop (fetch
// an image) is bounded well below that, and so is a write to a proxy that
// stopped reading.
const (
	blobTimeout = 5 * time.Second
	writeWait   = 10 * time.Second
)

// Client is one websocket connection to a ccproxy (in-process or a
// running `ccproxy serve`), speaking the protocol. Its read loop (the
// one goroutine it owns, ended by Close or the connection's end) delivers
// replies to the waiting Request and hands every push of a session to
// that session's handler, synchronously and in order: a slow handler
// slows the read, and the proxy then lets this client catch up from its
// replay log (SPEC §5.4), so nothing here is buffered without bound.
// Every method is safe for concurrent use (doc.go).
type Client struct {
	ws    *websocket.Conn
	base  *url.URL // http(s)://host:port of the proxy
	token string
	http  *http.Client

	writeMu sync.Mutex // guards writes to ws

	mu       sync.Mutex // guards what follows
	nextID   int64
	pending  map[string]chan protocol.Frame
	handlers map[string]func(protocol.Frame)
	err      error // why the read loop ended
	hello    *protocol.Hello

	helloed   chan struct{} // closed when the hello came (hello set) or the read loop ended
	done      chan struct{} // closed when the read loop ended
	closeOnce sync.Once
	closeErr  error
}

// Dial connects to the proxy at base (http://host:port or ws://…/v1/ws)
// with the token, and starts the read loop.
func Dial(ctx context.Context, base, token string) (*Client, error) {
	return DialTLS(ctx, base, token, nil)
}

// DialTLS is Dial with the TLS configuration of an https proxy (nil: the
// system's roots), e.g. one that trusts a self-signed certificate by its
// fingerprint. It is used for the websocket and for blob downloads.
func DialTLS(ctx context.Context, base, token string, tlsConfig *tls.Config) (*Client, error) {
	u, err := url.Parse(base)
	if err != nil {
		return nil, fmt.Errorf("proxy URL %q: %w", base, err)
	}
	switch u.Scheme {
	case "http", "ws":
		u.Scheme = "http"
	case "https", "wss":
		u.Scheme = "https"
	default:
		return nil, fmt.Errorf("proxy URL %q: scheme must be http, https, ws or wss", base)
	}
	u.Path, u.RawQuery, u.Fragment = "", "", ""
	wsu := *u
	wsu.Scheme = map[string]string{"http": "ws", "https": "wss"}[u.Scheme]
	wsu.Path = "/v1/ws"
	h := http.Header{"Authorization": {"Bearer " + token}}
	d := *websocket.DefaultDialer
	d.TLSClientConfig = tlsConfig
	ws, resp, err := d.DialContext(ctx, wsu.String(), h)
	if err != nil {
		if resp != nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			resp.Body.Close()
			return nil, fmt.Errorf("connecting to %s: HTTP %d: %s", wsu.String(), resp.StatusCode, strings.TrimSpace(string(body)))
		}
		return nil, fmt.Errorf("connecting to %s: %w", wsu.String(), err)
	}
	ws.SetReadLimit(64 << 20)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = tlsConfig
	b := &Client{ws: ws, base: u, token: token, http: &http.Client{Transport: tr}, pending: map[string]chan protocol.Frame{},
		handlers: map[string]func(protocol.Frame){}, helloed: make(chan struct{}), done: make(chan struct{})}
	go b.readLoop()
	return b, nil
}

// Close ends the connection and waits for the read loop to end (a push
// handler running returns first: Close must not be called from one).
// Requests waiting for their reply, and any made after, return ErrClosed.
// It may be called more than once, from any goroutine; each call returns
// the first one's error.
func (b *Client) Close() error {
	b.closeOnce.Do(func() { b.closeErr = b.ws.Close() })
	<-b.done
	return b.closeErr
}

// Done is closed when the connection ended (Close, or the proxy's end).
func (b *Client) Done() <-chan struct{} { return b.done }

// Hello waits for the proxy's hello (the first frame of every connection,
// SPEC §1.4) and returns it: its capabilities say which requests the proxy
// takes. It returns ErrClosed if the connection ended before it came, and
// ctx's error if ctx ends first. Safe for concurrent use.
func (b *Client) Hello(ctx context.Context) (*protocol.Hello, error) {
	select {
	case <-b.helloed:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.hello == nil {
		return nil, ErrClosed
	}
	return b.hello, nil
}

// Handle routes the pushes of session to h (nil removes the route). h runs
// on the read loop, one push at a time, in the order the proxy sent them.
// Handle does not wait for a handler that is running: it may finish the
// push it has. Safe for concurrent use, also from a handler.
func (b *Client) Handle(session string, h func(protocol.Frame)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if h == nil {
		delete(b.handlers, session)
	} else {
		b.handlers[session] = h
	}
}

func (b *Client) readLoop() {
	defer close(b.done)
	helloed := false
	defer func() {
		if !helloed {
			close(b.helloed)
		}
	}()
	var err error
	for {
		var msg []byte
		_, msg, err = b.ws.ReadMessage()
		if err != nil {
			break
		}
		f, perr := protocol.ParseFrame(msg)
		if perr != nil {
			continue // not ours to fix; the proxy validates what it sends
		}
		if f.Type == protocol.TypeHello && !helloed {
			var h protocol.Hello
			if json.Unmarshal(f.Data, &h) == nil {
				b.mu.Lock()
				b.hello = &h
				b.mu.Unlock()
				helloed = true
				close(b.helloed)
			}
			continue
		}
		if f.IsReply() {
			b.mu.Lock()
			ch := b.pending[string(f.ID)]
			delete(b.pending, string(f.ID))
			b.mu.Unlock()
			if ch != nil {
				ch <- f // buffered 1
			}
			continue
		}
		var s struct {
			Session string `json:"session"`
		}
		_ = json.Unmarshal(f.Data, &s)
		b.mu.Lock()
		h := b.handlers[s.Session]
		b.mu.Unlock()
		if h != nil {
			h(f)
		}
	}
	b.mu.Lock()
	b.err = err
	for id, ch := range b.pending {
		close(ch)
		delete(b.pending, id)
	}
	b.mu.Unlock()
}

// ErrClosed is returned by requests on a connection that ended.
var ErrClosed = errors.New("the connection to ccproxy ended")

// Request sends one request and decodes its reply's data into result
// (which may be nil). An error reply is a *protocol.Error. A ctx that is
// done already sends nothing; one that ends after the request was written
// returns at once without its reply, although the proxy carries the
// request out (so a request that creates something is sent with a ctx
// that does not end before its reply: Agent.create).
func (b *Client) Request(ctx context.Context, typ string, data protocol.Data, result any) error {
	c, err := b.Begin(ctx, typ, data)
	if err != nil {
		return err
	}
	return c.Wait(ctx, result)
}

// Call is a request that was written to the proxy and whose reply is
// awaited with Wait (Begin).
type Call struct {
	b   *Client
	typ string
	id  json.RawMessage
	ch  chan protocol.Frame
}

// Begin writes one request and returns once it is written, without
// waiting for its reply: Call.Wait reads it. The proxy handles a
// connection's requests in the order they were written, so a request
// written after Begin returns reaches it after this one (ccproxy acp
// interrupts a turn whose session/send the proxy holds, before its
// reply). A ctx that is done already sends nothing.
func (b *Client) Begin(ctx context.Context, typ string, data protocol.Data) (*Call, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b.mu.Lock()
	if b.err != nil || isClosed(b.done) {
		b.mu.Unlock()
		return nil, ErrClosed
	}
	b.nextID++
	id := protocol.IntID(b.nextID)
	ch := make(chan protocol.Frame, 1)
	b.pending[string(id)] = ch
	b.mu.Unlock()
	f, err := protocol.NewRequest(id, typ, data)
	if err != nil {
		b.forget(id)
		return nil, fmt.Errorf("%s: %w", typ, err)
	}
	msg, err := protocol.AppendFrame(nil, f)
	if err == nil {
		// Not ctx's deadline: a write that times out ends the websocket,
		// so a short request must not break the connection.
		b.writeMu.Lock()
		b.ws.SetWriteDeadline(time.Now().Add(writeWait))
		err = b.ws.WriteMessage(websocket.TextMessage, msg)
		b.writeMu.Unlock()
	}
	if err != nil {
		b.forget(id)
		return nil, fmt.Errorf("%s: %w", typ, err)
	}
	return &Call{b: b, typ: typ, id: id, ch: ch}, nil
}

// Wait waits for the reply of the call and decodes its data into result
// (which may be nil), as Request does. It is called once.
func (c *Call) Wait(ctx context.Context, result any) error {
	select {
	case r, ok := <-c.ch:
		if !ok {
			return ErrClosed
		}
		if r.OK == nil || !*r.OK {
			if r.Error != nil {
				return r.Error
			}
			return fmt.Errorf("%s: an error reply without an error", c.typ)
		}
		if result != nil && len(r.Data) > 0 {
			if err := json.Unmarshal(r.Data, result); err != nil {
				return fmt.Errorf("%s: reading the reply: %w", c.typ, err)
			}
		}
		return nil
	case <-ctx.Done():
		c.b.forget(c.id)
		return ctx.Err()
	}
}

func (b *Client) forget(id json.RawMessage) {
	b.mu.Lock()
	delete(b.pending, string(id))
	b.mu.Unlock()
}

// Blob fetches an attachment url (/v1/blobs/<sha256>) from the proxy, at
// most maxBlobBytes, within blobTimeout. Safe for concurrent use; it does
// not use the websocket, so it may be called from a push handler.
func (b *Client) Blob(ctx context.Context, rel string) ([]byte, error) {
	if !strings.HasPrefix(rel, "/v1/blobs/") {
		return nil, fmt.Errorf("attachment url %q is not a blob of the proxy", rel)
	}
	u := *b.base
	u.Path = rel
	ctx, cancel := context.WithTimeout(ctx, blobTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+b.token)
	resp, err := b.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: HTTP %s", rel, strconv.Itoa(resp.StatusCode))
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBlobBytes+1))
	if err == nil && len(data) > maxBlobBytes {
		err = fmt.Errorf("GET %s: over %d bytes", rel, maxBlobBytes)
	}
	return data, err
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
