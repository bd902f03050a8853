package proxy

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/stream"
)

// A client that stops reading is not dropped when its queue is full: it
// falls back to catching up from the log, and when it reads again it gets
// every event, in order, with no gap and no duplicate; a fast client on
// the same session gets every event meanwhile. The turns are small and the
// next is sent only when the fast client has the previous one, so the
// fast client can never fall behind, whatever the machine's speed; the
// slow one falls behind by everything: 12 MB, far more than its socket
// buffers and its queue (16 frames) hold, and more than the log keeps in
// memory (1 MiB): the rest comes back from disk.
func TestSlowClientCatchesUp(t *testing.T) {
	t.Parallel()
	// WriteWait is long so the proxy's write to the stalled client does
	// not time out before the test reads again.
	ts := startServer(t, Options{ReplayOptions: ReplayOptions{ReplayBytes: 1 << 20}, WebSocketOptions: WebSocketOptions{SendQueueFrames: 16, WriteWait: waitTimeout}})
	fast := ts.dial(t)
	s := fast.create(nil)

	// The slow client subscribes, then stops reading. Its receive buffer is
	// small (no autotuning), so what can be in flight is bounded by the
	// proxy's send buffer (net.ipv4.tcp_wmem, 4 MiB at most by default).
	conn, _, err := smallBufferDialer().Dial(ts.wsURL(), http.Header{"Authorization": {"Bearer " + testToken}})
	if err != nil {
		t.Fatal(err)
	}
	slow := newWSClient(t, conn, false)
	req, _ := json.Marshal(map[string]any{"type": "session/subscribe", "id": 1, "data": map[string]any{"session": s}})
	if err := conn.WriteMessage(websocket.TextMessage, req); err != nil {
		t.Fatal(err)
	}
	// Read up to the subscribe reply (the session has no events yet).
	for {
		_, data, err := conn.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		var f protocol.Frame
		mustUnmarshal(t, data, &f)
		if f.Type == protocol.TypeReply && string(f.ID) == "1" {
			break
		}
	}

	for i := 0; i < 30; i++ {
		if evs := fast.turn(s, "flood 8 50000"); len(evs) != 10 {
			t.Fatalf("turn %d: the fast client got %d events, want 10", i, len(evs))
		}
	}
	checkSeqs(t, fast.events(s), 1)
	if !strings.Contains(ts.logBuf.String(), "client fell behind; it catches up from the replay log") {
		t.Fatalf("the slow client never fell behind; the test proves nothing")
	}

	// Reading again, the slow client gets everything.
	slow.startReading()
	last := fast.events(s)[len(fast.events(s))-1].Seq
	slow.waitEvent(0, s, "the last event", func(ev protocol.SessionEvent) bool { return ev.Seq == last })
	checkSeqs(t, slow.events(s), 1)
	for _, f := range slow.snapshot() {
		if f.Type == protocol.TypeSessionGap {
			t.Fatalf("the slow client got a gap: %s", f.Data)
		}
	}
	// And it is live again: a new turn reaches it.
	fast.turn(s, "after catching up")
	last = fast.events(s)[len(fast.events(s))-1].Seq
	slow.waitEvent(0, s, "the new turn", func(ev protocol.SessionEvent) bool { return ev.Seq == last })
	checkSeqs(t, slow.events(s), 1)
}

// Replay: a subscriber with afterSeq gets exactly the events after it, then
// live ones; when the log no longer reaches back, session/gap says where it
// starts.
func TestReplayAndGap(t *testing.T) {
	ts := startServer(t, Options{ReplayOptions: ReplayOptions{ReplayBytes: 64 << 10, ReplayDiskBytes: -1}})
	a := ts.dial(t)
	s := a.create(nil)
	a.turn(s, "flood 20 100")
	all := a.events(s)

	b := ts.dial(t)
	var sub protocol.SessionSubscribeResult
	mustUnmarshal(t, b.do(protocol.TypeSessionSubscribe, map[string]any{"session": s, "afterSeq": 10}), &sub)
	if sub.FirstSeq != 1 || sub.LastSeq != all[len(all)-1].Seq || sub.State != protocol.StateIdle {
		t.Errorf("subscribe reply = %+v", sub)
	}
	b.waitEvent(0, s, "replay end", func(ev protocol.SessionEvent) bool { return ev.Seq == sub.LastSeq })
	checkSeqs(t, b.events(s), 11)
	// Then live.
	a.turn(s, "live")
	b.waitEvent(0, s, "live result", func(ev protocol.SessionEvent) bool { return isResult(ev) && ev.Seq > sub.LastSeq })
	checkSeqs(t, b.events(s), 11)

	// Resubscribing on the same connection replays again from afterSeq.
	from := b.count()
	mustUnmarshal(t, b.do(protocol.TypeSessionSubscribe, map[string]any{"session": s, "afterSeq": 20}), &sub)
	_, end := b.waitEvent(from, s, "second replay end", func(ev protocol.SessionEvent) bool { return ev.Seq == sub.LastSeq })
	var re []protocol.SessionEvent
	for _, f := range b.snapshot()[from : end+1] {
		if f.Type == protocol.TypeSessionEvent {
			var ev protocol.SessionEvent
			json.Unmarshal(f.Data, &ev)
			re = append(re, ev)
		}
	}
	checkSeqs(t, re, 21)

	// Overflow the 64 KiB log: the oldest events are gone.
	a.turn(s, "flood 200 1000")
	c := ts.dial(t)
	id := c.send(protocol.TypeSessionSubscribe, map[string]any{"session": s, "afterSeq": 5})
	rep := c.reply(id)
	mustUnmarshal(t, rep.Data, &sub)
	if sub.FirstSeq <= 6 {
		t.Fatalf("the log still reaches back to %d", sub.FirstSeq)
	}
	var gap protocol.SessionGap
	gi := c.waitPush(0, protocol.TypeSessionGap, &gap, nil)
	if gap.FirstSeq != sub.FirstSeq {
		t.Errorf("gap firstSeq %d, subscribe reply firstSeq %d", gap.FirstSeq, sub.FirstSeq)
	}
	ev, ei := c.waitEvent(0, s, "first replayed", func(protocol.SessionEvent) bool { return true })
	if ev.Seq != sub.FirstSeq || ei < gi {
		t.Errorf("first replayed event %d at frame %d, gap at frame %d", ev.Seq, ei, gi)
	}
	c.waitEvent(0, s, "replay end", func(ev protocol.SessionEvent) bool { return ev.Seq == sub.LastSeq })
	checkSeqs(t, c.events(s), sub.FirstSeq)

	// afterSeq beyond the last seq: this proxy never produced it.
	if e := c.doErr(protocol.TypeSessionSubscribe, map[string]any{"session": s, "afterSeq": sub.LastSeq + 100}); e.Code != protocol.CodeBadRequest {
		t.Errorf("afterSeq beyond lastSeq: %v", e)
	}
	// Unsubscribe: nothing more of the session arrives.
	c.do(protocol.TypeSessionUnsubscribe, map[string]any{"session": s})
	n := len(c.events(s))
	a.turn(s, "after unsubscribe")
	c.do(protocol.TypeSessionList, map[string]any{}) // a round trip after the turn
	if len(c.events(s)) != n {
		t.Errorf("events arrived after session/unsubscribe")
	}
}

// A client that drops reconnects with the last seq it has and continues
// with no loss and no duplicate, including what happened while it was
// away. (Each turn has fewer frames than a send queue holds, so no client
// can be dropped as slow, whatever the machine's speed.)
func TestReconnectResume(t *testing.T) {
	ts := startServer(t, Options{})
	a := ts.dial(t)
	var cr protocol.SessionCreateResult
	mustUnmarshal(t, a.do(protocol.TypeSessionCreate, map[string]any{}), &cr)
	s := cr.Session
	b := ts.dial(t)
	b.do(protocol.TypeSessionSubscribe, map[string]any{"session": s})
	a.do(protocol.TypeSessionSend, map[string]any{"session": s, "text": "flood 900 200"})
	b.waitEvent(0, s, "some events", func(ev protocol.SessionEvent) bool { return ev.Seq >= 100 })
	b.conn.Close()
	<-b.done
	got := b.events(s)
	checkSeqs(t, got, 1)
	last := got[len(got)-1].Seq

	// While b is away: the end of that turn (unless b got it before it
	// closed: the flood is not held back), and another one.
	a.do(protocol.TypeSessionSubscribe, map[string]any{"session": s, "afterSeq": last})
	if !slices.ContainsFunc(got, isResult) {
		a.waitEvent(0, s, "result", isResult)
	}
	a.turn(s, "flood 900 200")
	var list protocol.SessionListResult
	mustUnmarshal(t, a.do(protocol.TypeSessionList, map[string]any{}), &list)
	lastSeq := list.Sessions[0].LastSeq

	b2 := ts.dial(t)
	b2.do(protocol.TypeSessionSubscribe, map[string]any{"session": s, "afterSeq": last})
	b2.waitEvent(0, s, "the last event", func(ev protocol.SessionEvent) bool { return ev.Seq == lastSeq })
	all := append(got, b2.events(s)...)
	checkSeqs(t, all, 1)
	if int64(len(all)) != lastSeq || lastSeq != 2*902 {
		t.Errorf("resumed client has %d events, last seq %d, want %d", len(all), lastSeq, 2*902)
	}
}

// Interrupt: acknowledged, the turn ends with error_during_execution, the
// process lives on.
func TestInterrupt(t *testing.T) {
	ts := startServer(t, Options{})
	c := ts.dial(t)
	s := c.create(nil)
	from := c.count()
	c.do(protocol.TypeSessionSend, map[string]any{"session": s, "text": "hang"})
	c.waitEvent(from, s, "the turn started", func(ev protocol.SessionEvent) bool { return textOf(ev) == "working on it" })
	var st protocol.SessionState
	c.waitPush(from, protocol.TypeSessionState, &st, func(raw json.RawMessage) bool { return strings.Contains(string(raw), `"running"`) })
	c.do(protocol.TypeSessionInterrupt, map[string]any{"session": s})
	ev, _ := c.waitEvent(from, s, "result", isResult)
	if eventType(ev) != "result/error_during_execution" {
		t.Errorf("result after interrupt: %s", ev.Event)
	}
	c.turn(s, "still there")
	// Interrupting while idle is fine too.
	c.do(protocol.TypeSessionInterrupt, map[string]any{"session": s})
}

// Bad input gets an error reply that says what and where; the connection
// and the session live on.
func TestBadInput(t *testing.T) {
	ts := startServer(t, Options{SessionLimits: SessionLimits{MaxImageBytes: 100}, WebSocketOptions: WebSocketOptions{MaxFrameBytes: 4096}})
	c := ts.dial(t)
	s := c.create(nil)

	raw := func(mt int, b []byte) *protocol.Error {
		t.Helper()
		from := c.count()
		if err := c.conn.WriteMessage(mt, b); err != nil {
			t.Fatal(err)
		}
		f, _ := c.waitFor(from, "error reply", func(f rawFrame) bool { return f.Type == protocol.TypeReply })
		if f.OK == nil || *f.OK || f.Error == nil || string(f.ID) != "null" {
			t.Fatalf("want an error reply with id null, got %s", f.raw)
		}
		return f.Error
	}
	for _, tc := range []struct {
		name string
		mt   int
		in   string
		code protocol.Code
		msg  string
	}{
		{"not json", websocket.TextMessage, `{"type":`, protocol.CodeBadRequest, "not valid JSON"},
		{"not an object", websocket.TextMessage, `[1,2]`, protocol.CodeBadRequest, "want a JSON object"},
		{"no id", websocket.TextMessage, `{"type":"session/list","data":{}}`, protocol.CodeBadRequest, "id: required"},
		{"binary", websocket.BinaryMessage, `{"type":"session/list","id":1,"data":{}}`, protocol.CodeBadRequest, "binary frames"},
		// Its id is not within the first 4 KiB: the proxy does not look further.
		{"oversized, id at its end", websocket.TextMessage, `{"type":"session/send","data":{"text":"` + strings.Repeat("a", 10000) + `"},"id":1}`, protocol.CodeFrameTooLarge, "larger than limits.maxFrameBytes (4096)"},
	} {
		e := raw(tc.mt, []byte(tc.in))
		if e.Code != tc.code || !strings.Contains(e.Message, tc.msg) {
			t.Errorf("%s: %v, want %s mentioning %q", tc.name, e, tc.code, tc.msg)
		}
	}
	for _, tc := range []struct {
		typ  string
		data any
		code protocol.Code
		msg  string
	}{
		{"session/fly", map[string]any{}, protocol.CodeUnknownType, "unknown request type"},
		{"mcp/probe", map[string]any{}, protocol.CodeUnknownType, "unknown request type"},
		{"mcp/approve", map[string]any{"name": "x"}, protocol.CodeUnknownType, "unknown request type"},
		{"hello", map[string]any{}, protocol.CodeUnknownType, "unknown request type"},
		{"session/send", map[string]any{"session": "s-nope", "text": "hi"}, protocol.CodeUnknownSession, "no session"},
		{"session/send", map[string]any{"session": s}, protocol.CodeBadRequest, "data.text"},
		{"session/send", map[string]any{"session": s, "text": "x", "images": []any{map[string]any{"mediaType": "image/svg+xml", "data": "AAAA"}}}, protocol.CodeBadRequest, "data.images[0].mediaType"},
		{"session/send", map[string]any{"session": s, "text": "x", "images": []any{map[string]any{"mediaType": "image/png", "data": strings.Repeat("AAAA", 100)}}}, protocol.CodeLimitExceeded, "maxImageBytes"},
		// One byte over: its base64 length alone does not tell.
		{"session/send", map[string]any{"session": s, "text": "x", "images": []any{map[string]any{"mediaType": "image/png", "data": base64.StdEncoding.EncodeToString(make([]byte, 101))}}}, protocol.CodeLimitExceeded, "maxImageBytes"},
		{"session/create", map[string]any{"model": "--dangerously-skip-permissions"}, protocol.CodeBadRequest, "data.model"},
		{"session/create", map[string]any{"cwd": "relative/dir"}, protocol.CodeBadRequest, "data.cwd"},
		{"session/create", map[string]any{"cwd": "/nonexistent/dir"}, protocol.CodeBadRequest, "not an existing directory"},
		{"session/subscribe", map[string]any{"session": s, "afterSeq": -1}, protocol.CodeBadRequest, "data.afterSeq"},
		{"permission/respond", map[string]any{"session": s, "requestId": "r", "behavior": "maybe"}, protocol.CodeBadRequest, "data.behavior"},
		{"session/close", map[string]any{"session": "s-nope"}, protocol.CodeUnknownSession, "no session"},
	} {
		e := c.doErr(tc.typ, tc.data)
		if e.Code != tc.code || !strings.Contains(e.Message, tc.msg) {
			t.Errorf("%s %v: %v, want %s mentioning %q", tc.typ, tc.data, e, tc.code, tc.msg)
		}
	}
	// An oversized frame's reply names it by the id at its start, so
	// that a client can fail that request.
	for _, tc := range []struct{ id, frame string }{
		{"1", `{"type":"session/send","id":1,"data":{"text":"` + strings.Repeat("a", 10000) + `"}}`},
		{`"big-é"`, `{"id":"big-é","type":"session/send","data":{"text":"` + strings.Repeat("a", 5000) + `"}}`},
	} {
		from := c.count()
		c.conn.WriteMessage(websocket.TextMessage, []byte(tc.frame))
		f, _ := c.waitFor(from, "error reply", func(f rawFrame) bool { return f.Type == protocol.TypeReply })
		if string(f.ID) != tc.id || f.Error == nil || f.Error.Code != protocol.CodeFrameTooLarge {
			t.Errorf("oversized frame with id %s: reply %.200s, want frame_too_large with that id", tc.id, f.raw)
		}
	}
	// Field errors found after decoding name their field in details, as
	// the decoder's do.
	if e := c.doErr(protocol.TypeSessionCreate, map[string]any{"cwd": "/does/not/exist"}); e.Code != protocol.CodeBadRequest ||
		e.Message != `session/create: data.cwd: "/does/not/exist" is not an existing directory` ||
		e.Details == nil || len(e.Details.Fields) != 1 || e.Details.Fields[0].Path != "data.cwd" {
		t.Errorf("cwd that does not exist: %+v, want bad_request with details.fields data.cwd", e)
	}
	// String ids are echoed exactly.
	b, _ := json.Marshal(map[string]any{"type": "session/list", "id": "req-é-1", "data": map[string]any{}})
	from := c.count()
	c.conn.WriteMessage(websocket.TextMessage, b)
	c.waitFor(from, "string id reply", func(f rawFrame) bool { return string(f.ID) == `"req-é-1"` })

	// Still working.
	c.turn(s, "fine")
	checkSeqs(t, c.events(s), 1)
}

// Images in a turn reach claude as image blocks.
func TestSendImage(t *testing.T) {
	ts := startServer(t, Options{})
	c := ts.dial(t)
	s := c.create(nil)
	from := c.count()
	c.do(protocol.TypeSessionSend, map[string]any{"session": s, "text": "look", "images": []any{map[string]any{"mediaType": "image/png", "data": "iVBORw0KGgo="}}})
	ev, _ := c.waitEvent(from, s, "echo", func(ev protocol.SessionEvent) bool { return strings.HasPrefix(textOf(ev), "echo:") })
	if textOf(ev) != "echo: look [image]" {
		t.Errorf("claude got %q", textOf(ev))
	}
}

// The image limit is Options.MaxImageBytes, also above stream's default
// (one byte over it: TestBadInput).
func TestSendImageLimit(t *testing.T) {
	t.Parallel()
	limit := stream.MaxImageBytes + 1024
	ts := startServer(t, Options{SessionLimits: SessionLimits{MaxImageBytes: int64(limit)}})
	c := ts.dial(t)
	s := c.create(nil)
	from := c.count()
	// Framed by hand: encoding/json is slow on megabytes under -race.
	frame := `{"type":"session/send","id":"huge","data":{"session":"` + s + `","text":"huge","images":[{"mediaType":"image/png","data":"` +
		base64.StdEncoding.EncodeToString(make([]byte, limit)) + `"}]}}`
	if err := c.conn.WriteMessage(websocket.TextMessage, []byte(frame)); err != nil {
		t.Fatal(err)
	}
	if rep := c.reply(json.RawMessage(`"huge"`)); !*rep.OK {
		t.Fatalf("an image of limits.maxImageBytes: %s", rep.raw)
	}
	c.waitEvent(from, s, "echo", func(ev protocol.SessionEvent) bool { return textOf(ev) == "echo: huge [image]" })
}

// Several sessions at once, each with its own process and seqs.
func TestSeveralSessions(t *testing.T) {
	ts := startServer(t, Options{SessionLimits: SessionLimits{MaxSessions: 2}})
	c := ts.dial(t)
	s1, s2 := c.create(nil), c.create(nil)
	if e := c.doErr(protocol.TypeSessionCreate, map[string]any{}); e.Code != protocol.CodeLimitExceeded {
		t.Errorf("third session: %v, want limit_exceeded", e)
	}
	c.do(protocol.TypeSessionSend, map[string]any{"session": s1, "text": "one"})
	c.do(protocol.TypeSessionSend, map[string]any{"session": s2, "text": "two"})
	c.waitEvent(0, s1, "result 1", isResult)
	c.waitEvent(0, s2, "result 2", isResult)
	checkSeqs(t, c.events(s1), 1)
	checkSeqs(t, c.events(s2), 1)
	var list protocol.SessionListResult
	mustUnmarshal(t, c.do(protocol.TypeSessionList, map[string]any{}), &list)
	if len(list.Sessions) != 2 || list.Sessions[0].Session != s1 {
		t.Errorf("session/list = %+v", list.Sessions)
	}
}

// Shutdown: subscribers get session/exited (reason shutdown), then the
// connection closes with 1001; nothing is left running.
func TestShutdown(t *testing.T) {
	ts := startServer(t, Options{})
	c := ts.dial(t)
	s := c.create(nil)
	c.create(nil)
	c.turn(s, "child")
	if err := ts.stop(); err != nil {
		t.Fatal(err)
	}
	ce := c.waitClosed()
	if ce == nil || ce.Code != websocket.CloseGoingAway || ce.Text != "ccproxy is shutting down" {
		t.Errorf("close = %v, want 1001", ce)
	}
	var ex protocol.SessionExited
	c.waitPush(0, protocol.TypeSessionExited, &ex, func(raw json.RawMessage) bool { return strings.Contains(string(raw), s) })
	if ex.Reason != protocol.ExitShutdown {
		t.Errorf("exit reason %q", ex.Reason)
	}
	waitNoLeftovers(t, ts.marker)
}

// smallBufferDialer dials with a 64 KiB receive buffer (no autotuning), so
// a client that stops reading stalls the proxy's writes early.
func smallBufferDialer() *websocket.Dialer {
	return &websocket.Dialer{NetDialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err == nil {
			err = conn.(*net.TCPConn).SetReadBuffer(64 << 10)
		}
		return conn, err
	}}
}

// Keep-alive: a client that answers pings stays; one that reads but never
// answers them (and sends nothing) is dropped after PongWait.
func TestPingPong(t *testing.T) {
	ts := startServer(t, Options{WebSocketOptions: WebSocketOptions{PingInterval: 20 * time.Millisecond, PongWait: 300 * time.Millisecond}})
	alive := ts.dial(t) // gorilla answers pings while it reads
	conn, _, err := websocket.DefaultDialer.Dial(ts.wsURL(), http.Header{"Authorization": {"Bearer " + testToken}})
	if err != nil {
		t.Fatal(err)
	}
	newWSClient(t, conn, false)
	pings := 0
	conn.SetPingHandler(func(string) error { pings++; return nil }) // no pong
	conn.SetReadDeadline(time.Now().Add(waitTimeout))
	start := time.Now()
	for {
		if _, _, err := conn.NextReader(); err != nil {
			break // the proxy closed the connection
		}
	}
	if d := time.Since(start); d < 300*time.Millisecond || pings == 0 {
		t.Errorf("dropped after %v with %d pings, want after PongWait (300ms) of pings", d, pings)
	}
	// The client that answers pings is still there, well after PongWait.
	alive.do(protocol.TypeSessionList, map[string]any{})
}

// A client that subscribes to a session with many events gets them from
// the log in batches: all of them, in order, in far fewer writes to its
// connection than frames.
func TestCatchUpIsBatched(t *testing.T) {
	ts := startServer(t, Options{})
	first := ts.dial(t)
	s := first.create(nil)
	for range 10 {
		first.turn(s, "flood 100 100")
	}
	evs := first.events(s)
	last := evs[len(evs)-1].Seq

	late := ts.dial(t)
	late.do(protocol.TypeSessionSubscribe, map[string]any{"session": s})
	late.waitEvent(0, s, "the last event", func(ev protocol.SessionEvent) bool { return ev.Seq == last })
	checkSeqs(t, late.events(s), 1)
	if got := len(late.events(s)); int64(got) != last {
		t.Fatalf("the late client got %d events, want %d", got, last)
	}
	var lateClient *client
	ts.srv.mu.Lock()
	for c := range ts.srv.clients {
		if lateClient == nil || c.id > lateClient.id { // c-000002 > c-000001
			lateClient = c
		}
	}
	ts.srv.mu.Unlock()
	if lateClient.conn.Batch() == nil {
		t.Fatal("the client has no wsconn.BatchConn")
	}
	// The late client's writes: the hello, the reply, and the catch-up of
	// every event.
	writes := lateClient.conn.Batch().Writes()
	if writes*10 > last {
		t.Errorf("%d writes for %d events: the frames were not batched", writes, last)
	}
	t.Logf("%d events in %d writes", last, writes)
}
