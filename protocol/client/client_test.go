package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/ccproxy/ccproxy/internal/testkit/fakeclaude"
	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/protocol/client"
	"github.com/ccproxy/ccproxy/proxy"
)

// The test binary doubles as the fake Claude Code CLI
// (internal/testkit/fakeclaude): the proxy's sessions run it.
var fakeClaudePath string

func TestMain(m *testing.M) {
	fakeclaude.Run(m, func(s fakeclaude.Scripts) { fakeClaudePath = s.Claude })
}

const token = "client-test-token-0123456789abcdef"

// start runs a proxy.Server over the fake claude on a loopback port and
// returns its base URL.
func start(t *testing.T) string {
	t.Helper()
	url, stop, served := serve(t)
	t.Cleanup(func() { stop(); <-served })
	return url
}

// serve runs a proxy.Server over the fake claude on a loopback port: its
// base URL, the cancel that stops it and the channel Serve's error comes on.
func serve(t *testing.T) (string, context.CancelFunc, <-chan error) {
	t.Helper()
	srv, err := proxy.New(proxy.Options{
		Token:          token,
		Logger:         slog.New(slog.DiscardHandler),
		CLIOptions:     proxy.CLIOptions{ClaudePath: fakeClaudePath},
		ReplayOptions:  proxy.ReplayOptions{SpoolDir: t.TempDir()},
		HistoryOptions: proxy.HistoryOptions{HistoryHome: "-"},
	})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	return "http://" + ln.Addr().String(), cancel, served
}

func dial(t *testing.T, url string) *client.Client {
	t.Helper()
	c, err := client.Dial(context.Background(), url, token)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func sessions(t *testing.T, c *client.Client) []protocol.SessionInfo {
	t.Helper()
	var l protocol.SessionListResult
	if err := c.Request(context.Background(), protocol.TypeSessionList, &protocol.SessionList{}, &l); err != nil {
		t.Fatal(err)
	}
	return l.Sessions
}

// A request gets its reply's data; the hello names the proxy's
// capabilities.
func TestClientRequestReply(t *testing.T) {
	c := dial(t, start(t))
	ctx := context.Background()
	h, err := c.Hello(ctx)
	if err != nil || h.Protocol != protocol.Version {
		t.Fatalf("hello: %+v %v", h, err)
	}
	has := map[string]bool{}
	for _, cp := range h.Capabilities {
		has[cp] = true
	}
	if !has["sessions"] || has["history"] {
		t.Errorf("hello's capabilities %v: want sessions, and no history (HistoryHome -)", h.Capabilities)
	}
	var res protocol.SessionCreateResult
	if err := c.Request(ctx, protocol.TypeSessionCreate, &protocol.SessionCreate{Cwd: t.TempDir()}, &res); err != nil || res.Session == "" {
		t.Fatalf("session/create: %+v %v", res, err)
	}
	if l := sessions(t, c); len(l) != 1 || l[0].Session != res.Session {
		t.Errorf("session/list: %+v, want the one session %s", l, res.Session)
	}
}

// An error reply is a *protocol.Error with the proxy's code.
func TestClientErrorReply(t *testing.T) {
	c := dial(t, start(t))
	err := c.Request(context.Background(), protocol.TypeSessionSubscribe, &protocol.SessionSubscribe{Session: "no-such-session"}, nil)
	var pe *protocol.Error
	if !errors.As(err, &pe) || pe.Code != protocol.CodeUnknownSession {
		t.Fatalf("subscribing to an unknown session: %v, want a *protocol.Error unknown_session", err)
	}
}

// Pushes go to the handler of the session they name, in order; a session
// without a handler's are dropped.
func TestClientPushesRoutedBySession(t *testing.T) {
	c := dial(t, start(t))
	ctx := context.Background()
	create := func() string {
		var res protocol.SessionCreateResult
		if err := c.Request(ctx, protocol.TypeSessionCreate, &protocol.SessionCreate{Cwd: t.TempDir()}, &res); err != nil {
			t.Fatal(err)
		}
		return res.Session
	}
	a, b := create(), create()
	var mu sync.Mutex
	got := map[string][]string{} // handler -> the sessions its pushes named
	result := make(chan string, 2)
	route := func(name string) func(protocol.Frame) {
		return func(f protocol.Frame) {
			var d struct {
				Session string `json:"session"`
				Event   struct {
					Type string `json:"type"`
				} `json:"event"`
			}
			_ = json.Unmarshal(f.Data, &d)
			mu.Lock()
			got[name] = append(got[name], d.Session)
			mu.Unlock()
			if f.Type == protocol.TypeSessionEvent && d.Event.Type == "result" {
				result <- d.Session
			}
		}
	}
	c.Handle(a, route(a))
	c.Handle(b, route(b))
	for _, id := range []string{a, b} {
		if err := c.Request(ctx, protocol.TypeSessionSubscribe, &protocol.SessionSubscribe{Session: id}, nil); err != nil {
			t.Fatal(err)
		}
		if err := c.Request(ctx, protocol.TypeSessionSend, &protocol.SessionSend{Session: id, Text: "Hi " + id}, nil); err != nil {
			t.Fatal(err)
		}
	}
	done := map[string]bool{}
	for len(done) < 2 {
		select {
		case id := <-result:
			done[id] = true
		case <-time.After(30 * time.Second): // a bound on a hang, not a wait
			t.Fatalf("the turns' results did not come: %v", done)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for name, ids := range got {
		if len(ids) == 0 {
			t.Errorf("handler of %s got no push", name)
		}
		for _, id := range ids {
			if id != name {
				t.Errorf("handler of %s got a push of %s", name, id)
			}
		}
	}
	if len(got) != 2 {
		t.Errorf("pushes reached the handlers of %d sessions, want 2", len(got))
	}
}

// Close may be called more than once, at once; it returns after the read
// loop ended (Done closed), and every request after it is ErrClosed.
func TestClientCloseIdempotent(t *testing.T) {
	c := dial(t, start(t))
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.Close()
			select {
			case <-c.Done():
			default:
				t.Error("Close returned before the read loop ended")
			}
		}()
	}
	wg.Wait()
	if err := c.Close(); err != nil {
		t.Errorf("Close again: %v", err)
	}
	if err := c.Request(context.Background(), protocol.TypeSessionList, &protocol.SessionList{}, nil); !errors.Is(err, client.ErrClosed) {
		t.Errorf("a request after Close: %v, want ErrClosed", err)
	}
}

// A request waiting for its reply when the connection ends returns
// ErrClosed, and so does every request after: here the proxy goes.
func TestClientRequestsAfterTheEnd(t *testing.T) {
	url, cancel, served := serve(t)
	c := dial(t, url)
	sessions(t, c)
	cancel()
	<-served
	<-c.Done() // the proxy's end ends the connection
	if err := c.Request(context.Background(), protocol.TypeSessionList, &protocol.SessionList{}, nil); !errors.Is(err, client.ErrClosed) {
		t.Errorf("a request after the proxy went: %v, want ErrClosed", err)
	}
}

// A ctx done before the request is sent sends nothing: no session is
// created.
func TestClientDoneCtxSendsNothing(t *testing.T) {
	c := dial(t, start(t))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.Request(ctx, protocol.TypeSessionCreate, &protocol.SessionCreate{Cwd: t.TempDir()}, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("a request with a done ctx: %v, want context.Canceled", err)
	}
	// Requests are carried out in order: had it been sent, this list
	// would show its session.
	if l := sessions(t, c); len(l) != 0 {
		t.Errorf("a request whose ctx was done created %+v", l)
	}
}
