package proxy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/proxy/claudecli"
	"github.com/ccproxy/ccproxy/proxy/spare"
	"github.com/ccproxy/ccproxy/proxy/wsconn"
)

// scrape GETs /metrics with the token and returns its series by their
// text (`name{label="v",...}`) and the body.
func scrape(t *testing.T, ts *testServer) (map[string]float64, string) {
	t.Helper()
	resp, body := httpGet(t, "GET", ts.url+"/metrics", http.Header{"Authorization": {"Bearer " + testToken}})
	if resp.StatusCode != 200 {
		t.Fatalf("GET /metrics: %s %s", resp.Status, body)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("Content-Type %q", ct)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("metrics line %q: %v", line, err)
		}
		out[line[:i]] = v
	}
	return out, string(body)
}

// want checks series that must have exactly these values.
func wantMetrics(t *testing.T, step string, m map[string]float64, want map[string]float64) {
	t.Helper()
	for k, v := range want {
		got, ok := m[k]
		if !ok {
			t.Errorf("%s: no series %s", step, k)
		} else if got != v {
			t.Errorf("%s: %s = %v, want %v", step, k, got, v)
		}
	}
}

// TestMetrics: GET /metrics needs the token; after a fake-claude session
// (create, a turn with a permission request answered, close) the values
// move as they must; no label carries a session id, a tool input, claude's
// session id or the token.
func TestMetrics(t *testing.T) {
	ts := startServer(t, Options{Version: "1.2.3"})
	for _, h := range []http.Header{nil, {"Authorization": {"Bearer wrong"}}} {
		if resp, body := httpGet(t, "GET", ts.url+"/metrics", h); resp.StatusCode != 401 || bytes.Contains(body, []byte("ccproxy_")) {
			t.Errorf("/metrics with %v: %s %s", h, resp.Status, body)
		}
	}
	m, body := scrape(t, ts)
	wantMetrics(t, "at start", m, map[string]float64{
		`ccproxy_sessions{state="idle"}`:                          0,
		`ccproxy_clients`:                                         0,
		`ccproxy_events_total`:                                    0,
		`ccproxy_permission_requests_pending{kind="tool"}`:        0,
		`ccproxy_clients_dropped_total{reason="send_queue_full"}`: 0,
		`ccproxy_replay_log_bytes{where="memory"}`:                0,
	})
	for _, name := range []string{"ccproxy_sessions", "ccproxy_clients", "ccproxy_replay_log_bytes", "ccproxy_mcp_servers", "ccproxy_permission_wait_seconds", "ccproxy_normalize_seconds", "ccproxy_claude_restarts_total", "go_goroutines"} {
		if !strings.Contains(body, "# HELP "+name+" ") {
			t.Errorf("no HELP for %s", name)
		}
	}

	c := ts.dial(t)
	s := c.create(nil)
	// idle: in the subscription's reply, or in a session/state push after it.
	c.waitFor(0, "state idle", func(f rawFrame) bool { return bytes.Contains(f.raw, []byte(`"state":"idle"`)) })
	m, _ = scrape(t, ts)
	wantMetrics(t, "idle", m, map[string]float64{
		`ccproxy_sessions{state="idle"}`:    1,
		`ccproxy_sessions{state="running"}`: 0,
		`ccproxy_clients`:                   1,
		`ccproxy_sessions_created_total`:    1,
		`ccproxy_control_request_duration_seconds_count{result="success",subtype="initialize"}`: 1,
	})

	from := c.count()
	c.do(protocol.TypeSessionSend, map[string]any{"session": s, "text": "perm Bash"})
	var req protocol.PermissionRequest
	c.waitPush(from, protocol.TypePermissionRequest, &req, nil)
	m, _ = scrape(t, ts)
	wantMetrics(t, "asking", m, map[string]float64{
		`ccproxy_sessions{state="running"}`:                  1,
		`ccproxy_permission_requests_pending{kind="tool"}`:   1,
		`ccproxy_permission_requests_total{kind="tool"}`:     1,
		`ccproxy_permission_wait_seconds_count{kind="tool"}`: 0,
	})

	c.do(protocol.TypePermissionRespond, map[string]any{"session": s, "requestId": req.RequestID, "behavior": "allow"})
	answerText(t, c, from, s)
	c.waitEvent(from, s, "the result", isResult)
	events := len(c.events(s))
	var frameBytes int
	for _, f := range c.snapshot() {
		if f.Type == protocol.TypeSessionEvent {
			frameBytes += len(f.raw)
		}
	}
	m, body = scrape(t, ts)
	wantMetrics(t, "answered", m, map[string]float64{
		`ccproxy_permission_requests_pending{kind="tool"}`:   0,
		`ccproxy_permission_wait_seconds_count{kind="tool"}`: 1,
		`ccproxy_events_total`:                               float64(events),
		`ccproxy_event_bytes_total`:                          float64(frameBytes),
	})
	// Sampled: the first line of each process, then one in 64.
	if n := m[`ccproxy_normalize_seconds_count`]; n < 1 || n > float64(1+events/claudecli.NormalizeSampleEvery+1) {
		t.Errorf("normalize count %v for %d events", n, events)
	}
	if got := m[`ccproxy_ws_frames_total{direction="out"}`]; got < float64(from) {
		t.Errorf("frames out %v < %d frames received", got, from)
	}
	if got := m[`ccproxy_ws_frames_total{direction="in"}`]; got != 4 { // create, subscribe, send, respond
		t.Errorf("frames in = %v, want 4", got)
	}
	if m[`ccproxy_ws_bytes_total{direction="in"}`] <= 0 || m[`ccproxy_ws_bytes_total{direction="out"}`] < float64(frameBytes) {
		t.Errorf("ws bytes: in %v, out %v (events alone %d)", m[`ccproxy_ws_bytes_total{direction="in"}`], m[`ccproxy_ws_bytes_total{direction="out"}`], frameBytes)
	}
	if m[`ccproxy_replay_log_bytes{where="memory"}`] < float64(frameBytes) {
		t.Errorf("replay log memory %v < %d bytes of events", m[`ccproxy_replay_log_bytes{where="memory"}`], frameBytes)
	}

	// No session id, tool input, tool_use id, claude's session id or
	// token anywhere (labels are bounded).
	for _, secret := range []string{s, req.RequestID, `command`, "toolu_fake_1", "fake-session-1", testToken} {
		if strings.Contains(body, secret) {
			t.Errorf("/metrics shows %q", secret)
		}
	}
	checkLabelsBounded(t, body)

	c.do(protocol.TypeSessionClose, map[string]any{"session": s})
	m, body = scrape(t, ts)
	for _, name := range []string{"ccproxy_control_request_duration_seconds", "ccproxy_claude_exits_total"} {
		if !strings.Contains(body, "# HELP "+name+" ") {
			t.Errorf("no HELP for %s", name)
		}
	}
	wantMetrics(t, "closed", m, map[string]float64{
		`ccproxy_sessions{state="idle"}`:                          0,
		`ccproxy_claude_exits_total{how="code0",reason="closed"}`: 1,
		`ccproxy_replay_log_bytes{where="memory"}`:                0,
	})
}

// checkLabelsBounded: every ccproxy_ label value is one of a fixed set.
func checkLabelsBounded(t *testing.T, body string) {
	t.Helper()
	allowed := map[string]bool{"other": true, "in": true, "out": true, "memory": true, "disk": true,
		"success": true, "error": true, "timeout": true, "exited": true, "failed": true, "code0": true, "code_nonzero": true, "signal": true,
		wsconn.DropQueueFull: true, wsconn.DropWriteTimeout: true, wsconn.DropPongTimeout: true}
	for _, l := range [][]string{
		{protocol.StateStarting, protocol.StateIdle, protocol.StateRunning, protocol.StateRestarting, protocol.StateExited, protocol.StateClosed, protocol.StateSuspended},
		{protocol.MCPConnected, protocol.MCPFailed, protocol.MCPPending, protocol.MCPNeedsAuth, protocol.MCPDisabled, protocol.MCPAwaitingApproval, protocol.MCPRejected},
		{protocol.PermissionKindTool, protocol.PermissionKindQuestion, protocol.PermissionKindPlan},
		{"initialize", "interrupt", "set_permission_mode", "set_model", "mcp_set_servers", "mcp_status", "claim_session"},
		{protocol.ExitExited, protocol.ExitClosed, protocol.ExitShutdown, "restart", "suspend"},
		spare.TakeResults,
	} {
		for _, v := range l {
			allowed[v] = true
		}
	}
	label := regexp.MustCompile(`([a-z_]+)="([^"]*)"`)
	for _, line := range strings.Split(body, "\n") {
		if !strings.HasPrefix(line, "ccproxy_") {
			continue
		}
		for _, m := range label.FindAllStringSubmatch(line, -1) {
			if m[1] == "le" {
				continue
			}
			if !allowed[m[2]] {
				t.Errorf("unbounded label value %s=%q in %s", m[1], m[2], line)
			}
		}
	}
}

// TestMetricsLabelsBounded: values a label does not know count as other.
func TestMetricsLabelsBounded(t *testing.T) {
	ts := startServer(t, Options{})
	ts.srv.metrics.ControlDone("s-secretsessionid", time.Millisecond, nil)
	ts.srv.metrics.ControlDone("interrupt", time.Millisecond, &claudecli.CLIError{Msg: "no"})
	ts.srv.metrics.ControlDone("interrupt", time.Millisecond, claudecli.ErrTimeout)
	ts.srv.metrics.ControlDone("interrupt", time.Millisecond, errors.New("stdin closed"))
	ts.srv.metrics.PermissionAsked("rm -rf /")
	ts.srv.metrics.Probed([]protocol.ProbeResult{{Name: "secret-server", Status: "weird", LatencyMs: protocol.Latency{Total: 1500}}})
	m, body := scrape(t, ts)
	wantMetrics(t, "bounded", m, map[string]float64{
		`ccproxy_control_request_duration_seconds_count{result="success",subtype="other"}`:     1,
		`ccproxy_control_request_duration_seconds_count{result="error",subtype="interrupt"}`:   1,
		`ccproxy_control_request_duration_seconds_count{result="timeout",subtype="interrupt"}`: 1,
		`ccproxy_control_request_duration_seconds_count{result="failed",subtype="interrupt"}`:  1,
		`ccproxy_permission_requests_total{kind="other"}`:                                      1,
		`ccproxy_mcp_probe_duration_seconds_sum{status="other"}`:                               1.5,
	})
	for _, s := range []string{"secretsessionid", "rm -rf", "secret-server", "weird"} {
		if strings.Contains(body, s) {
			t.Errorf("/metrics shows %q", s)
		}
	}
	checkLabelsBounded(t, body)
}

// TestMetricsRestartAndMCP: a restart for a refused MCP change counts a
// restart, an exit for it, mcp_set_servers (answered with errors) and a
// second initialize; the MCP servers are counted by status.
func TestMetricsRestartAndMCP(t *testing.T) {
	src := newTestSource(t, map[string]string{"alpha": `{"command":"a","args":[]}`})
	ts := startServer(t, Options{MCPOptions: MCPOptions{MCP: src}}, "FAKE_REFUSE_SET=1")
	c := ts.dial(t)
	s := c.create(nil)
	before := c.count()
	c.turn(s, "first")
	ri := c.waitPush(before, protocol.TypeSessionState, nil, func(raw json.RawMessage) bool { return strings.Contains(string(raw), `"running"`) })
	c.waitPush(ri+1, protocol.TypeSessionState, nil, func(raw json.RawMessage) bool { return strings.Contains(string(raw), `"idle"`) })
	m, _ := scrape(t, ts)
	wantMetrics(t, "before", m, map[string]float64{`ccproxy_claude_restarts_total`: 0})
	if n := sumOf(m, "ccproxy_mcp_servers{"); n != 1 {
		t.Errorf("before: %v MCP servers, want 1", n)
	}

	from := c.count()
	src.set(map[string]string{"alpha": `{"command":"a","args":[]}`, "beta": `{"command":"b","args":[]}`}, nil)
	c.waitPush(from, protocol.TypeSessionState, nil, func(raw json.RawMessage) bool { return strings.Contains(string(raw), `"restarting"`) })
	c.waitPush(from, protocol.TypeSessionState, nil, func(raw json.RawMessage) bool { return strings.Contains(string(raw), `"idle"`) })
	m, body := scrape(t, ts)
	wantMetrics(t, "restarted", m, map[string]float64{
		`ccproxy_claude_restarts_total`:                                                            1,
		`ccproxy_claude_exits_total{how="code0",reason="restart"}`:                                 1,
		`ccproxy_control_request_duration_seconds_count{result="error",subtype="mcp_set_servers"}`: 1, // refused
		`ccproxy_control_request_duration_seconds_count{result="success",subtype="initialize"}`:    2,
		`ccproxy_sessions{state="idle"}`:                                                           1,
	})
	if n := sumOf(m, "ccproxy_mcp_servers{"); n != 2 {
		t.Errorf("restarted: %v MCP servers, want 2", n)
	}
	checkLabelsBounded(t, body)
}

func sumOf(m map[string]float64, prefix string) float64 {
	var n float64
	for k, v := range m {
		if strings.HasPrefix(k, prefix) {
			n += v
		}
	}
	return n
}

// TestMetricsSlowClients: a client that stops reading falls behind
// (counted, nothing lost); one whose queue of replies then goes twice over
// its bound is dropped with 1008 and counted as send_queue_full, once.
func TestMetricsSlowClients(t *testing.T) {
	ts := startServer(t, Options{ReplayOptions: ReplayOptions{ReplayBytes: 1 << 20}, WebSocketOptions: WebSocketOptions{SendQueueFrames: 4, WriteWait: waitTimeout}})
	fast := ts.dial(t)
	s := fast.create(nil)
	conn, _, err := smallBufferDialer().Dial(ts.wsURL(), http.Header{"Authorization": {"Bearer " + testToken}})
	if err != nil {
		t.Fatal(err)
	}
	slow := newWSClient(t, conn, false)
	req, _ := json.Marshal(map[string]any{"type": "session/subscribe", "id": 1, "data": map[string]any{"session": s}})
	if err := conn.WriteMessage(websocket.TextMessage, req); err != nil {
		t.Fatal(err)
	}
	for { // up to the subscribe reply; then it stops reading
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
	for range 30 { // 12 MB: more than the socket buffers hold
		fast.turn(s, "flood 8 50000")
	}
	m, _ := scrape(t, ts)
	if m[`ccproxy_subscriptions_fell_behind_total`] < 1 {
		t.Fatalf("fell behind = %v, want ≥ 1", m[`ccproxy_subscriptions_fell_behind_total`])
	}
	wantMetrics(t, "behind", m, map[string]float64{`ccproxy_clients_dropped_total{reason="send_queue_full"}`: 0, `ccproxy_clients`: 2})

	// Its write pump is stuck writing the catch-up: replies pile up.
	for i := range 2*4 + 2 {
		req, _ := json.Marshal(map[string]any{"type": "session/list", "id": 100 + i, "data": map[string]any{}})
		if err := conn.WriteMessage(websocket.TextMessage, req); err != nil {
			t.Fatal(err)
		}
	}
	// Reading again, the stuck write ends; then the proxy closes the
	// connection (with 1008, when the close frame makes it through before
	// the reset).
	slow.startReading()
	if ce := slow.waitClosed(); ce != nil && ce.Code != websocket.ClosePolicyViolation {
		t.Fatalf("slow client closed with %v, want 1008", ce)
	}
	m, _ = scrape(t, ts)
	wantMetrics(t, "dropped", m, map[string]float64{
		`ccproxy_clients_dropped_total{reason="send_queue_full"}`: 1,
		`ccproxy_clients_dropped_total{reason="write_timeout"}`:   0,
	})
}

// TestMetricsTimeouts: a client that answers no ping is dropped as
// pong_timeout; one whose write makes no progress for WriteWait as
// write_timeout.
func TestMetricsTimeouts(t *testing.T) {
	ts := startServer(t, Options{WebSocketOptions: WebSocketOptions{PingInterval: 20 * time.Millisecond, PongWait: 300 * time.Millisecond}})
	conn, _, err := websocket.DefaultDialer.Dial(ts.wsURL(), http.Header{"Authorization": {"Bearer " + testToken}})
	if err != nil {
		t.Fatal(err)
	}
	newWSClient(t, conn, false)
	conn.SetPingHandler(func(string) error { return nil }) // no pong
	conn.SetReadDeadline(time.Now().Add(waitTimeout))
	for {
		if _, _, err := conn.NextReader(); err != nil {
			break // the proxy closed the connection
		}
	}
	if log := ts.logBuf.String(); !strings.Contains(log, `level=WARN msg="dropping websocket client" conn=c-000001 reason="no frame or pong for 300ms (pong timeout)`) {
		t.Errorf("the pong timeout was not logged as a WARN with its reason:\n%s", lastBytes(log, 4000))
	}
	m, _ := scrape(t, ts)
	wantMetrics(t, "no pong", m, map[string]float64{`ccproxy_clients_dropped_total{reason="pong_timeout"}`: 1, `ccproxy_clients_dropped_total{reason="write_timeout"}`: 0})

	ts = startServer(t, Options{WebSocketOptions: WebSocketOptions{SendQueueFrames: 16, WriteWait: 300 * time.Millisecond}})
	fast := ts.dial(t)
	s := fast.create(nil)
	dialSlow(t, ts, s)
	for i := 0; i < 200 && !strings.Contains(ts.logBuf.String(), `msg="dropping websocket client"`); i++ {
		fast.turn(s, "flood 8 50000")
	}
	m, _ = scrape(t, ts)
	wantMetrics(t, "stalled", m, map[string]float64{`ccproxy_clients_dropped_total{reason="write_timeout"}`: 1, `ccproxy_clients_dropped_total{reason="pong_timeout"}`: 0})
}
