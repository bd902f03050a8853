package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/tidwall/gjson"

	"github.com/ccproxy/ccproxy/internal/testkit"
	"github.com/ccproxy/ccproxy/internal/textutil"
	"github.com/ccproxy/ccproxy/protocol"
)

const testToken = "test-token-0123456789abcdef"

// waitTimeout bounds every wait for an event in the tests: long enough
// never to fire on a slow machine, and a test that hits it fails.
const waitTimeout = 60 * time.Second

// testServer is a proxy served on a loopback port for one test.
type testServer struct {
	srv    *Server
	url    string // http://127.0.0.1:PORT
	addr   string
	marker string // in the environment of every claude it starts
	logBuf *syncBuffer
	stop   func() error
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startServer serves a proxy with opts (Token, Logger, ClaudePath and the
// marker in ClaudeEnv are filled in when empty). It is shut down at the end
// of the test, which then checks that no process it started is left.
func startServer(t testing.TB, opts Options, env ...string) *testServer {
	t.Helper()
	ts := &testServer{marker: fmt.Sprintf("CCPROXY_TEST_MARKER=%d-%s-%d", os.Getpid(), sanitize(t.Name()), time.Now().UnixNano()), logBuf: &syncBuffer{}}
	if opts.Token == "" {
		opts.Token = testToken
	}
	if opts.ClaudePath == "" {
		opts.ClaudePath = fakeClaudePath
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(ts.logBuf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	if opts.ClaudeEnv == nil {
		opts.ClaudeEnv = append(os.Environ(), env...)
	}
	opts.ClaudeEnv = append(opts.ClaudeEnv, ts.marker)
	if opts.Project == "" {
		opts.Project = t.TempDir()
	}
	if opts.SpoolDir == "" {
		opts.SpoolDir = t.TempDir()
	}
	srv, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	var once sync.Once
	var stopErr error
	ts.stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case stopErr = <-done:
			case <-time.After(waitTimeout):
				stopErr = fmt.Errorf("Serve did not return %v after its context was cancelled", waitTimeout)
			}
		})
		return stopErr
	}
	t.Cleanup(func() {
		if err := ts.stop(); err != nil {
			t.Errorf("Serve: %v", err)
		}
		if left := testkit.WaitGone(ts.marker, leftoverWait); len(left) > 0 {
			t.Errorf("processes left running after the proxy shut down: %v", left)
			for _, p := range left {
				killPID(p.PID, syscall.SIGKILL)
			}
		}
		if t.Failed() {
			t.Logf("proxy log:\n%s", lastBytes(ts.logBuf.String(), 20000))
		}
	})
	ts.srv, ts.addr, ts.url = srv, ln.Addr().String(), "http://"+ln.Addr().String()
	return ts
}

func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, s)
}

func lastBytes(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// procInfo is a process left running (process_test.go reads its pid).
type procInfo struct {
	pid int
	cmd string
}

func (p procInfo) String() string { return fmt.Sprintf("%d %s", p.pid, p.cmd) }

// leftovers lists the live processes whose environment holds marker: every
// claude the proxy started and whatever they started (MCP servers inherit
// claude's environment).
func leftovers(marker string) []procInfo {
	var out []procInfo
	for _, p := range testkit.MarkedProcesses(marker) {
		out = append(out, procInfo{p.PID, p.Command})
	}
	return out
}

// leftoverWait bounds the wait for processes with a marker to go: SIGKILL
// cannot be caught, but is delivered asynchronously.
const leftoverWait = 5 * time.Second

// waitNoLeftovers fails the test if processes with marker stay alive.
func waitNoLeftovers(t testing.TB, marker string) {
	t.Helper()
	if left := testkit.WaitGone(marker, leftoverWait); len(left) > 0 {
		t.Fatalf("processes still running: %v", left)
	}
}

// ---------------------------------------------------------------- websocket test client

// wsClient is a test websocket client: a reader goroutine records every
// frame; requests wait for their reply.
type wsClient struct {
	t    testing.TB
	conn *websocket.Conn

	mu       sync.Mutex
	cond     *sync.Cond
	frames   []rawFrame
	err      error // why reading stopped
	closeErr *websocket.CloseError
	nextID   int
	reading  bool
	done     chan struct{}
}

type rawFrame struct {
	protocol.Frame
	raw []byte
	ev  *protocol.SessionEvent // for session/event frames, decoded once
}

func (ts *testServer) wsURL() string { return "ws" + strings.TrimPrefix(ts.url, "http") + "/v1/ws" }

// dial connects with the token in the Authorization header.
func (ts *testServer) dial(t testing.TB) *wsClient {
	t.Helper()
	h := http.Header{"Authorization": {"Bearer " + testToken}}
	conn, resp, err := websocket.DefaultDialer.Dial(ts.wsURL(), h)
	if err != nil {
		t.Fatalf("dial: %v (response %v)", err, respStatus(resp))
	}
	return newWSClient(t, conn, true)
}

func respStatus(r *http.Response) string {
	if r == nil {
		return "none"
	}
	b, _ := io.ReadAll(io.LimitReader(r.Body, 1000))
	return fmt.Sprintf("%s %s", r.Status, b)
}

// newWSClient wraps conn; with read set, a goroutine reads frames at once.
func newWSClient(t testing.TB, conn *websocket.Conn, read bool) *wsClient {
	c := &wsClient{t: t, conn: conn, done: make(chan struct{})}
	c.cond = sync.NewCond(&c.mu)
	if read {
		c.startReading()
	}
	t.Cleanup(func() {
		conn.Close()
		c.mu.Lock()
		reading := c.reading
		c.mu.Unlock()
		if reading {
			<-c.done
		}
	})
	return c
}

func (c *wsClient) startReading() {
	c.mu.Lock()
	c.reading = true
	c.mu.Unlock()
	go func() {
		defer close(c.done)
		for {
			mt, data, err := c.conn.ReadMessage()
			c.mu.Lock()
			if err != nil {
				c.err = err
				if ce, ok := err.(*websocket.CloseError); ok {
					c.closeErr = ce
				}
				c.cond.Broadcast()
				c.mu.Unlock()
				return
			}
			var f protocol.Frame
			var ev *protocol.SessionEvent
			switch {
			case mt != websocket.TextMessage:
				c.err = fmt.Errorf("binary frame from the proxy")
			case bytes.HasPrefix(data, []byte(`{"type":"session/event",`)):
				// The hot path of big tests: read the envelope with gjson
				// (encoding/json under -race is slow on megabytes).
				d := gjson.GetBytes(data, "data")
				f = protocol.Frame{Type: protocol.TypeSessionEvent, Data: json.RawMessage(d.Raw)}
				ev = &protocol.SessionEvent{Session: d.Get("session").String(), Seq: d.Get("seq").Int(), Event: json.RawMessage(d.Get("event").Raw)}
				if !d.Get("event").IsObject() {
					c.err = fmt.Errorf("session/event without an event object: %.200s", data)
				}
			default:
				if err := json.Unmarshal(data, &f); err != nil {
					c.err = fmt.Errorf("frame is not JSON: %v: %.200s", err, data)
				}
			}
			c.frames = append(c.frames, rawFrame{f, data, ev})
			c.cond.Broadcast()
			c.mu.Unlock()
		}
	}()
}

// waitFor waits for the first frame at index >= from satisfying pred and
// returns it with its index.
func (c *wsClient) waitFor(from int, what string, pred func(f rawFrame) bool) (rawFrame, int) {
	c.t.Helper()
	timer := time.AfterFunc(waitTimeout, func() {
		c.mu.Lock()
		c.cond.Broadcast()
		c.mu.Unlock()
	})
	defer timer.Stop()
	deadline := time.Now().Add(waitTimeout)
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := from; ; {
		for ; i < len(c.frames); i++ {
			if pred(c.frames[i]) {
				return c.frames[i], i
			}
		}
		if c.err != nil {
			c.t.Fatalf("waiting for %s: connection ended: %v (last frames: %s)", what, c.err, c.tailLocked(5))
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("waiting for %s: nothing in %v (last frames: %s)", what, waitTimeout, c.tailLocked(5))
		}
		c.cond.Wait()
	}
}

func (c *wsClient) tailLocked(n int) string {
	var parts []string
	for i := max(0, len(c.frames)-n); i < len(c.frames); i++ {
		parts = append(parts, textutil.Truncate(string(c.frames[i].raw), 300))
	}
	return strings.Join(parts, "\n  ")
}

// waitClosed waits until reading stops and returns the close error, if any.
func (c *wsClient) waitClosed() *websocket.CloseError {
	c.t.Helper()
	select {
	case <-c.done:
	case <-time.After(waitTimeout):
		c.t.Fatalf("connection not closed after %v", waitTimeout)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closeErr
}

func (c *wsClient) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.frames)
}

func (c *wsClient) snapshot() []rawFrame {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]rawFrame(nil), c.frames...)
}

// send sends a request and returns its id. Its members come in the order
// clients write them (type, id, data), so the id is near the frame's start.
func (c *wsClient) send(typ string, data any) json.RawMessage {
	c.t.Helper()
	c.mu.Lock()
	c.nextID++
	id := protocol.IntID(int64(c.nextID))
	c.mu.Unlock()
	b, err := json.Marshal(struct {
		Type string          `json:"type"`
		ID   json.RawMessage `json:"id"`
		Data any             `json:"data"`
	}{typ, id, data})
	if err != nil {
		c.t.Fatal(err)
	}
	if err := c.conn.WriteMessage(websocket.TextMessage, b); err != nil {
		c.t.Fatalf("sending %s: %v", typ, err)
	}
	return id
}

// reply waits for the reply to id.
func (c *wsClient) reply(id json.RawMessage) rawFrame {
	c.t.Helper()
	f, _ := c.waitFor(0, "reply "+string(id), func(f rawFrame) bool { return f.Type == protocol.TypeReply && string(f.ID) == string(id) })
	return f
}

// do sends a request and waits for its reply, which must be ok; it returns
// the reply's data.
func (c *wsClient) do(typ string, data any) json.RawMessage {
	c.t.Helper()
	f := c.reply(c.send(typ, data))
	if f.OK == nil || !*f.OK {
		c.t.Fatalf("%s failed: %s", typ, f.raw)
	}
	return f.Data
}

// doErr sends a request whose reply must be an error, and returns it.
func (c *wsClient) doErr(typ string, data any) *protocol.Error {
	c.t.Helper()
	f := c.reply(c.send(typ, data))
	if f.OK == nil || *f.OK || f.Error == nil {
		c.t.Fatalf("%s: want an error reply, got %s", typ, f.raw)
	}
	return f.Error
}

// create creates a session and subscribes to it.
func (c *wsClient) create(data map[string]any) string {
	c.t.Helper()
	if data == nil {
		data = map[string]any{}
	}
	var r protocol.SessionCreateResult
	mustUnmarshal(c.t, c.do(protocol.TypeSessionCreate, data), &r)
	c.do(protocol.TypeSessionSubscribe, map[string]any{"session": r.Session})
	return r.Session
}

// events returns the session/event frames of session received so far.
func (c *wsClient) events(session string) []protocol.SessionEvent {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []protocol.SessionEvent
	for _, f := range c.frames {
		if f.ev != nil && f.ev.Session == session {
			out = append(out, *f.ev)
		}
	}
	return out
}

// waitEvent waits for an event of session (from frame index from) whose JSON
// satisfies pred.
func (c *wsClient) waitEvent(from int, session, what string, pred func(ev protocol.SessionEvent) bool) (protocol.SessionEvent, int) {
	c.t.Helper()
	var got protocol.SessionEvent
	_, i := c.waitFor(from, what, func(f rawFrame) bool {
		if f.ev == nil || f.ev.Session != session {
			return false
		}
		if pred(*f.ev) {
			got = *f.ev
			return true
		}
		return false
	})
	return got, i
}

// waitPush waits for a push of type typ (from frame index from) and
// decodes its data into v.
func (c *wsClient) waitPush(from int, typ string, v any, pred func(raw json.RawMessage) bool) int {
	c.t.Helper()
	f, i := c.waitFor(from, typ, func(f rawFrame) bool { return f.Type == typ && (pred == nil || pred(f.Data)) })
	if v != nil {
		mustUnmarshal(c.t, f.Data, v)
	}
	return i
}

func mustUnmarshal(t testing.TB, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("unmarshal %.300s: %v", b, err)
	}
}

func eventType(ev protocol.SessionEvent) string {
	var h struct {
		Type    string `json:"type"`
		Subtype string `json:"subtype"`
	}
	json.Unmarshal(ev.Event, &h)
	if h.Subtype != "" {
		return h.Type + "/" + h.Subtype
	}
	return h.Type
}

func isResult(ev protocol.SessionEvent) bool { return strings.HasPrefix(eventType(ev), "result") }

// checkSeqs checks that the events have the seqs from, from+1, … with no
// hole and no duplicate.
func checkSeqs(t testing.TB, evs []protocol.SessionEvent, from int64) {
	t.Helper()
	for i, ev := range evs {
		if ev.Seq != from+int64(i) {
			t.Fatalf("event %d has seq %d, want %d (no hole, no duplicate)", i, ev.Seq, from+int64(i))
		}
	}
}

// waitState waits for a session/state push of state after frame from.
func (c *wsClient) waitState(from int, state string) {
	c.t.Helper()
	c.waitPush(from, protocol.TypeSessionState, nil, func(raw json.RawMessage) bool { return strings.Contains(string(raw), `"`+state+`"`) })
}

// restartSession restarts session s of ts between turns, as a refused MCP
// change does, and waits until c is told it is restarting. from is c's
// frame count before the restart.
func restartSession(t *testing.T, ts *testServer, c *wsClient, s string) (sess *Session, from int) {
	t.Helper()
	sess, err := ts.srv.session(s)
	if err != nil {
		t.Fatal(err)
	}
	from = c.count()
	sess.requestRestart("test")
	c.waitState(from, protocol.StateRestarting)
	return sess, from
}

// fakeArgs returns the arguments the fake claude wrote to argsFile
// (FAKE_ARGS_FILE), and argValue the value after flag in them ("" if none).
func fakeArgs(t *testing.T, argsFile string) []string {
	t.Helper()
	b, err := os.ReadFile(argsFile)
	if err != nil {
		t.Fatal(err)
	}
	var args []string
	if err := json.Unmarshal(b, &args); err != nil {
		t.Fatalf("%s: %v", argsFile, err)
	}
	return args
}

func argValue(args []string, flag string) string {
	if i := slices.Index(args, flag); i >= 0 && i+1 < len(args) {
		return args[i+1]
	}
	return ""
}
