package proxy

// End-to-end tests: the real Claude Code CLI (testkit.Claude), driven by the
// Go fake of the Anthropic API (fakeapi), with real MCP servers (the npm
// server-everything and the go-sdk test server ccproxy-testmcp, configured
// through package mcpconfig from the project's .mcp.json), and real
// websocket clients. A missing CLI or npm server skips these tests, and
// fails them with CI=true.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/ccproxy/ccproxy/internal/testkit"
	"github.com/ccproxy/ccproxy/internal/testkit/fakeapi"
	"github.com/ccproxy/ccproxy/internal/testkit/mcptest"
	"github.com/ccproxy/ccproxy/mcpconfig"
	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/proxy/mcphub"
)

// e2e is one proxy running the real CLI against the fake API.
type e2e struct {
	*testServer
	api     *fakeapi.Server
	env     *mcpEnv
	src     *mcphub.ConfigSource
	release chan struct{} // closed at the end: frees held API streams
	testmcp string        // the ccproxy-testmcp binary
}

// e2eSecret is the value of an env variable of the everything server in
// startE2E's configuration: no frame may hold it.
const e2eSecret = "e2e-secret-value-6f2a9c41"

// bigText is the answer to BIG: long enough that a few turns fill any
// socket buffer.
var bigText = strings.Repeat("0123456789abcdef", 1<<16) // 1 MiB

func e2eResponder(release <-chan struct{}) fakeapi.Responder {
	// touch needs a permission (echo would be allowed as read-only).
	bash := func(word string) *fakeapi.Reply {
		return fakeapi.CallTool("Bash", map[string]any{"command": "touch ccproxy-" + word + ".txt", "description": "create a file"})
	}
	return fakeapi.First(
		fakeapi.OnText("PING-1", fakeapi.Say("pong one")),
		fakeapi.OnText("PING-2", fakeapi.Say("pong two")),
		fakeapi.OnText("IMAGE", fakeapi.CallTool("mcp__testmcp__image", nil)),
		fakeapi.OnText("TINY", fakeapi.CallTool("mcp__everything__get-tiny-image", nil)),
		fakeapi.OnText("BASH-ALLOW", bash("allowed")),
		fakeapi.OnText("BASH-DENY", bash("denied")),
		fakeapi.OnText("BASH-TIMEOUT", bash("timeout")),
		fakeapi.OnText("HOT", fakeapi.CallTool("mcp__hot__text", nil)),
		fakeapi.OnText("OAUTH", fakeapi.CallTool("mcp__oa__echo", map[string]any{"message": "through oauth"})),
		fakeapi.OnText("SLOW", &fakeapi.Reply{Blocks: []fakeapi.Block{fakeapi.Text("this answer never ends")}, Wait: release}),
		fakeapi.OnText("BIG", fakeapi.Say(bigText)),
		fakeapi.OnText("ECHO-1", fakeapi.CallTool("mcp__everything__echo", map[string]any{"message": "one"})),
		fakeapi.OnText("ECHO-2", fakeapi.CallTool("mcp__everything__echo", map[string]any{"message": "two"})),
		fakeapi.OnText("SUM", fakeapi.CallTool("mcp__everything__get-sum", map[string]any{"a": 1, "b": 2})),
		fakeapi.OnText("GETENV", fakeapi.CallTool("mcp__everything__get-env", nil)),
		fakeapi.OnText("BASH-ENV", fakeapi.CallTool("Bash", map[string]any{"command": "env", "description": "print the environment"})),
		fakeapi.OnText("ASKQ", fakeapi.CallTool("AskUserQuestion", map[string]any{"questions": []any{map[string]any{
			"question": "Which color?", "header": "Color", "multiSelect": false,
			"options": []any{map[string]any{"label": "Red", "description": "warm"}, map[string]any{"label": "Blue", "description": "cold"}}}}})),
		fakeapi.OnText("PLAN", fakeapi.CallTool("ExitPlanMode", map[string]any{"plan": "1. do A\n2. do B"})),
		fakeapi.OnToolResults(fakeapi.Summarize),
	)
}

// startE2E starts the fake API and a proxy whose project has a .mcp.json
// with server-everything and ccproxy-testmcp (trusted, so active), every
// tool of which is allowed without asking (serve --allow-mcp-tools).
// opts.ClaudeEnv, if any, is added to the fake API's environment.
func startE2E(t *testing.T, opts Options) *e2e {
	t.Helper()
	return startE2EWith(t, opts, func(o *mcpconfig.Options) { o.AllowServerTools = true })
}

// startE2EWith is startE2E with the MCP configuration's options changed by
// setup (nil: MCP tool calls ask, the default of serve).
func startE2EWith(t *testing.T, opts Options, setup func(*mcpconfig.Options)) *e2e {
	t.Helper()
	claude := testkit.Claude(t)
	everything := testkit.NodeBin(t, "mcp-server-everything")
	e := &e2e{release: make(chan struct{}), testmcp: mcptest.Command(t)}
	t.Cleanup(func() { close(e.release) })
	e.api = fakeapi.NewServer(e2eResponder(e.release), &fakeapi.Options{ChunkRunes: 1 << 16})
	t.Cleanup(e.api.Close)

	e.env = newMCPEnv(t)
	if err := os.MkdirAll(filepath.Join(e.env.Home, "tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	e.env.WriteMCPJSON(t, map[string]any{
		// e2eSecret: a configured secret, which get-env prints.
		"everything": map[string]any{"command": everything, "env": map[string]any{"CCPROXY_E2E_KEY": e2eSecret}},
		"testmcp":    map[string]any{"command": e.testmcp, "args": []any{}},
	})
	claudeEnv := e.api.Env(e.env.Home)
	e.env.Opts.TrustProject = true
	e.env.Opts.Env = func(name string) (string, bool) {
		for _, kv := range claudeEnv {
			if k, v, ok := strings.Cut(kv, "="); ok && k == name {
				return v, true
			}
		}
		return "", false
	}
	if setup != nil {
		setup(&e.env.Opts)
	}
	src, err := mcphub.NewConfigSource(e.env.Opts, e.env.FilesDir, nil)
	if err != nil {
		t.Fatal(err)
	}
	e.src = src
	opts.ClaudePath = claude
	opts.ClaudeEnv = append(claudeEnv, opts.ClaudeEnv...) // the caller's, added
	opts.Project = e.env.Project
	opts.MCP = src
	if opts.PermissionTimeout == 0 {
		opts.PermissionTimeout = -1
	}
	if opts.MCPProbe.Timeout == 0 {
		// server-everything is a node program: in the race run on two busy
		// cores it took more than the default 5 s to answer tools/list.
		// The tests are about what the answers hold, not their speed.
		opts.MCPProbe.Timeout = time.Minute
	}
	e.testServer = startServer(t, opts)
	t.Cleanup(func() { src.Close() }) // after the server stopped (cleanups run last-in first-out)
	return e
}

// assistantTexts returns the text blocks of the assistant events.
func assistantTexts(evs []protocol.SessionEvent) []string {
	var out []string
	for _, ev := range evs {
		if t := textOf(ev); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// toolResults returns the tool_result blocks of the user events.
type toolResult struct {
	ToolUseID   string                `json:"tool_use_id"`
	Content     json.RawMessage       `json:"content"`
	IsError     bool                  `json:"is_error"`
	Attachments []protocol.Attachment `json:"attachments"`
	MCP         *protocol.MCPRef      `json:"mcp"`
}

func toolResults(t *testing.T, evs []protocol.SessionEvent) []toolResult {
	var out []toolResult
	for _, ev := range evs {
		if eventType(ev) != "user" {
			continue
		}
		var u struct {
			Message struct {
				Content json.RawMessage `json:"content"`
			} `json:"message"`
		}
		mustUnmarshal(t, ev.Event, &u)
		var blocks []toolResult
		if json.Unmarshal(u.Message.Content, &blocks) == nil {
			for _, b := range blocks {
				if b.ToolUseID != "" {
					out = append(out, b)
				}
			}
		}
	}
	return out
}

func resultOf(t *testing.T, evs []protocol.SessionEvent) map[string]any {
	t.Helper()
	for i := len(evs) - 1; i >= 0; i-- {
		if isResult(evs[i]) {
			var r map[string]any
			mustUnmarshal(t, evs[i].Event, &r)
			return r
		}
	}
	t.Fatal("no result event")
	return nil
}

// Several turns in one process; the second request carries the first turn.
// Then the session is closed and resumed by its Claude session id.
func TestE2EMultiTurnAndResume(t *testing.T) {
	t.Parallel()
	e := startE2E(t, Options{})
	c := e.dial(t)
	s := c.create(nil)
	evs := c.turn(s, "say PING-1 please")
	echoed := false
	for _, ev := range evs {
		echoed = echoed || eventType(ev) == "user" && bytes.Contains(ev.Event, []byte("say PING-1 please"))
	}
	if !echoed {
		t.Error("the user's turn is not in the event stream (--replay-user-messages)")
	}
	if r := resultOf(t, evs); r["result"] != "pong one" || r["is_error"] != false {
		t.Errorf("first result: %v", r)
	}
	if !slices.Contains(assistantTexts(evs), "pong one") {
		t.Errorf("assistant texts %q", assistantTexts(evs))
	}
	partial := 0
	for _, ev := range evs {
		if eventType(ev) == "stream_event" {
			partial++
		}
	}
	if partial == 0 {
		t.Error("no stream_event: --include-partial-messages missing?")
	}
	evs = c.turn(s, "now PING-2")
	if r := resultOf(t, evs); r["result"] != "pong two" {
		t.Errorf("second result: %v", r)
	}
	checkSeqs(t, c.events(s), 1)
	req, err := e.api.LastRequestWith("PING-2")
	if err != nil {
		t.Fatal(err)
	}
	if !req.Has("pong one") {
		t.Error("the second turn's request does not carry the first turn's answer")
	}

	var list protocol.SessionListResult
	mustUnmarshal(t, c.do(protocol.TypeSessionList, map[string]any{}), &list)
	claudeID := list.Sessions[0].ClaudeSessionID
	if claudeID == "" {
		t.Fatal("no claudeSessionId after two turns")
	}
	ex, _ := closeSession(t, c, s)
	if ex.Code == nil || *ex.Code != 0 {
		t.Errorf("close: exit %v / %v, stderr %q", deref(ex.Code), deref(ex.Signal), ex.StderrTail)
	}

	s2 := c.create(map[string]any{"resume": claudeID})
	evs = c.turn(s2, "again PING-1")
	if r := resultOf(t, evs); r["result"] != "pong one" {
		t.Errorf("resumed result: %v", r)
	}
	req, err = e.api.LastRequestWith("again PING-1")
	if err != nil {
		t.Fatal(err)
	}
	if !req.Has("pong two") || !req.Has("now PING-2") {
		t.Error("the resumed session's request does not carry the earlier conversation")
	}
}

// MCP tools returning images: the result is text with an attachment whose
// blob the proxy serves; the MCP status shows both servers connected.
func TestE2EMCPImageAndStatus(t *testing.T) {
	t.Parallel()
	e := startE2E(t, Options{})
	c := e.dial(t)
	c.do(protocol.TypeMCPSubscribe, map[string]any{})
	s := c.create(nil)
	for _, tc := range []struct {
		prompt, server, tool string
		want                 []byte
	}{
		{"show an IMAGE", "testmcp", "image", mcptest.SmallPNG()},
		{"a TINY image", "everything", "get-tiny-image", nil},
	} {
		evs := c.turn(s, tc.prompt)
		trs := toolResults(t, evs)
		if len(trs) != 1 {
			t.Fatalf("%s: %d tool results", tc.prompt, len(trs))
		}
		tr := trs[0]
		var text string
		if err := json.Unmarshal(tr.Content, &text); err != nil {
			t.Fatalf("%s: content is not a string: %s", tc.prompt, tr.Content)
		}
		if tr.IsError || len(tr.Attachments) != 1 || !strings.Contains(text, "[image image/png") || tr.MCP == nil || tr.MCP.Server != tc.server || tr.MCP.Tool != tc.tool {
			t.Fatalf("%s: tool result %+v", tc.prompt, tr)
		}
		a := tr.Attachments[0]
		resp, body := httpGet(t, "GET", e.url+a.URL, http.Header{"Authorization": {"Bearer " + testToken}})
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/png" || int64(len(body)) != a.Size || !bytes.HasPrefix(body, []byte("\x89PNG")) {
			t.Errorf("%s: blob: %s %s %d bytes", tc.prompt, resp.Status, resp.Header.Get("Content-Type"), len(body))
		}
		if tc.want != nil && !bytes.Equal(body, tc.want) {
			t.Errorf("%s: the blob is not the server's image", tc.prompt)
		}
		for _, ev := range evs {
			if bytes.Contains(ev.Event, []byte(`"data":"iVBOR`)) {
				t.Errorf("%s: base64 image data left in an event", tc.prompt)
			}
		}
		// The model got the image (the CLI sent it on).
		if r := resultOf(t, evs); !strings.Contains(fmt.Sprint(r["result"]), "1 image(s)") {
			t.Errorf("%s: the API did not get the image: %v", tc.prompt, r["result"])
		}
	}
	st, _ := waitStatus(c, 0, "both connected", func(st protocol.MCPStatus) bool {
		a, b := statusOf(st, "everything"), statusOf(st, "testmcp")
		return a != nil && b != nil && a.Status == protocol.MCPConnected && b.Status == protocol.MCPConnected && a.ToolCount != nil && b.ToolCount != nil
	})
	tm := statusOf(st, "testmcp")
	if !slices.Contains(tm.Tools, "image") || tm.Scope != protocol.ScopeProject || tm.Approval != protocol.ApprovalApproved || tm.ServerInfo == nil || tm.ServerInfo.Name != mcptest.ServerName {
		t.Errorf("testmcp status %+v", tm)
	}
	resp, body := httpGet(t, "GET", e.url+"/v1/mcp/status", http.Header{"Authorization": {"Bearer " + testToken}})
	if resp.StatusCode != 200 || !bytes.Contains(body, []byte(`"name":"testmcp"`)) {
		t.Errorf("GET /v1/mcp/status: %s %s", resp.Status, body)
	}
}

// Permission prompts from the real CLI: allow runs the tool, deny does not;
// with a short timeout an unanswered prompt is denied.
func TestE2EPermissions(t *testing.T) {
	t.Parallel()
	e := startE2E(t, Options{})
	a, b := e.dial(t), e.dial(t)
	s := a.create(nil)
	b.do(protocol.TypeSessionSubscribe, map[string]any{"session": s})
	for _, tc := range []struct {
		prompt, word, behavior string
	}{
		{"BASH-ALLOW now", "allowed", "allow"},
		{"BASH-DENY now", "denied", "deny"},
	} {
		from, bfrom := a.count(), b.count()
		a.do(protocol.TypeSessionSend, map[string]any{"session": s, "text": tc.prompt})
		var req protocol.PermissionRequest
		a.waitPush(from, protocol.TypePermissionRequest, &req, nil)
		b.waitPush(bfrom, protocol.TypePermissionRequest, nil, nil)
		if req.ToolName != "Bash" || !strings.Contains(string(req.Input), "touch ccproxy-"+tc.word+".txt") {
			t.Errorf("permission/request %+v", req)
		}
		data := map[string]any{"session": s, "requestId": req.RequestID, "behavior": tc.behavior}
		if tc.behavior == "deny" {
			data["message"] = "no shell today"
		}
		b.do(protocol.TypePermissionRespond, data)
		var res protocol.PermissionResolved
		a.waitPush(from, protocol.TypePermissionResolved, &res, nil)
		if res.Behavior != tc.behavior || res.Reason != protocol.ResolvedAnswered {
			t.Errorf("resolved %+v", res)
		}
		a.waitEvent(from, s, "result", isResult)
		var evs []protocol.SessionEvent
		for _, f := range a.snapshot()[from:] {
			if f.ev != nil {
				evs = append(evs, *f.ev)
			}
		}
		trs := toolResults(t, evs)
		if len(trs) == 0 {
			t.Fatalf("%s: no tool result", tc.word)
		}
		tr := trs[len(trs)-1]
		_, statErr := os.Stat(filepath.Join(e.env.Project, "ccproxy-"+tc.word+".txt"))
		switch tc.behavior {
		case "allow":
			if tr.IsError || statErr != nil {
				t.Errorf("allowed: tool result %s (error %v); file: %v", tr.Content, tr.IsError, statErr)
			}
		case "deny":
			if !tr.IsError || !strings.Contains(string(tr.Content), "no shell today") || statErr == nil {
				t.Errorf("denied: tool result %s (error %v); file: %v", tr.Content, tr.IsError, statErr)
			}
		}
	}
}

func TestE2EPermissionTimeout(t *testing.T) {
	t.Parallel()
	e := startE2E(t, Options{SessionLimits: SessionLimits{PermissionTimeout: 500 * time.Millisecond}})
	c := e.dial(t)
	s := c.create(nil)
	from := c.count()
	evs := c.turn(s, "BASH-TIMEOUT now")
	var res protocol.PermissionResolved
	c.waitPush(from, protocol.TypePermissionResolved, &res, nil)
	if res.Behavior != "deny" || res.Reason != protocol.ResolvedTimeout {
		t.Errorf("resolved %+v", res)
	}
	trs := toolResults(t, evs)
	if len(trs) != 1 || !trs[0].IsError || !strings.Contains(string(trs[0].Content), "No answer to the permission request") {
		t.Errorf("tool results %+v", trs)
	}
}

// Interrupt while the answer streams: the turn ends with
// error_during_execution, and the process serves the next turn.
func TestE2EInterrupt(t *testing.T) {
	t.Parallel()
	e := startE2E(t, Options{})
	c := e.dial(t)
	s := c.create(nil)
	from := c.count()
	c.do(protocol.TypeSessionSend, map[string]any{"session": s, "text": "be SLOW"})
	c.waitEvent(from, s, "the answer starts streaming", func(ev protocol.SessionEvent) bool {
		return eventType(ev) == "stream_event" && bytes.Contains(ev.Event, []byte(`"message_start"`))
	})
	c.do(protocol.TypeSessionInterrupt, map[string]any{"session": s})
	ev, _ := c.waitEvent(from, s, "result", isResult)
	if eventType(ev) != "result/error_during_execution" {
		t.Errorf("result after interrupt: %.300s", ev.Event)
	}
	evs := c.turn(s, "then PING-1")
	if r := resultOf(t, evs); r["result"] != "pong one" {
		t.Errorf("after the interrupt: %v", r)
	}
	checkSeqs(t, c.events(s), 1)
}

// Reconnect with replay: a client that went away resumes from its last
// seq; seqs are continuous, with no duplicate.
func TestE2EReconnectReplay(t *testing.T) {
	t.Parallel()
	e := startE2E(t, Options{})
	a := e.dial(t)
	s := a.create(nil)
	b := e.dial(t)
	b.do(protocol.TypeSessionSubscribe, map[string]any{"session": s})
	a.turn(s, "PING-1")
	b.waitEvent(0, s, "result", isResult)
	got := b.events(s)
	b.conn.Close()
	<-b.done
	a.turn(s, "IMAGE")
	a.turn(s, "PING-2")
	all := a.events(s)

	b2 := e.dial(t)
	last := got[len(got)-1].Seq
	b2.do(protocol.TypeSessionSubscribe, map[string]any{"session": s, "afterSeq": last})
	b2.waitEvent(0, s, "the last event", func(ev protocol.SessionEvent) bool { return ev.Seq == all[len(all)-1].Seq })
	resumed := append(got, b2.events(s)...)
	checkSeqs(t, resumed, 1)
	if len(resumed) != len(all) {
		t.Fatalf("resumed %d events, the live client has %d", len(resumed), len(all))
	}
	for i := range all {
		if !bytes.Equal(all[i].Event, resumed[i].Event) {
			t.Fatalf("event %d differs between live and replay", all[i].Seq)
		}
	}
}

// A client that stops reading falls behind without being dropped while
// another client on the same session gets every event; reading again, it
// gets every event too. Each turn has fewer frames than a send queue holds
// and the next is sent only once the fast client has the previous result,
// so only the slow client can fall behind.
func TestE2ESlowClient(t *testing.T) {
	t.Parallel()
	// The slow client reads nothing, not even pings, until it catches up:
	// PongWait (60 s by default) must outlast the turns it takes to fall
	// behind, however slow the machine or the CLI (on 2.1.332 under load
	// it fell behind after 38 s and was dropped at 60 s, before it read),
	// and so must WriteWait: its socket is full from the first turns on,
	// and a write to it waited more than a minute for the last turns under
	// load in a whole-suite run (the client was dropped, "accepted nothing
	// for 1m0s").
	e := startE2E(t, Options{WebSocketOptions: WebSocketOptions{SendQueueFrames: 64, WriteWait: 10 * time.Minute, PongWait: 10 * time.Minute}})
	fast := e.dial(t)
	s := fast.create(nil)
	slow := dialSlow(t, e.testServer, s)
	behind := false
	for i := 0; i < 40 && !behind; i++ {
		evs := fast.turn(s, "BIG answer")
		if r := resultOf(t, evs); r["result"] != bigText {
			t.Fatalf("turn %d: result of %d bytes", i, len(fmt.Sprint(r["result"])))
		}
		behind = strings.Contains(e.logBuf.String(), "client fell behind; it catches up from the replay log")
	}
	if !behind {
		t.Fatal("the slow client never fell behind")
	}
	checkSeqs(t, fast.events(s), 1)
	fast.turn(s, "PING-1")
	all := fast.events(s)
	checkSeqs(t, all, 1)
	slow.startReading()
	slow.waitEvent(0, s, "the last event", func(ev protocol.SessionEvent) bool { return ev.Seq == all[len(all)-1].Seq })
	checkSeqs(t, slow.events(s), 1)
	if strings.Contains(e.logBuf.String(), "dropping websocket client") {
		t.Error("a client was dropped")
	}
}

// dialSlow connects a client with a small receive buffer, subscribes it to
// s and returns it without reading anything more.
func dialSlow(t *testing.T, ts *testServer, s string) *wsClient {
	t.Helper()
	dialer := smallBufferDialer()
	conn, _, err := dialer.Dial(ts.wsURL(), http.Header{"Authorization": {"Bearer " + testToken}})
	if err != nil {
		t.Fatal(err)
	}
	c := newWSClient(t, conn, false)
	req, _ := json.Marshal(map[string]any{"type": "session/subscribe", "id": 1, "data": map[string]any{"session": s}})
	if err := conn.WriteMessage(websocket.TextMessage, req); err != nil {
		t.Fatal(err)
	}
	for {
		_, data, err := conn.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		if bytes.HasPrefix(data, []byte(`{"type":"reply","id":1,`)) {
			return c
		}
	}
}

// kill -9 of claude: reported with signal SIGKILL; its MCP servers die
// with it.
func TestE2EKilled(t *testing.T) {
	t.Parallel()
	e := startE2E(t, Options{})
	c := e.dial(t)
	s := c.create(nil)
	c.turn(s, "IMAGE") // both MCP servers are running now
	if len(leftovers(e.marker)) < 3 {
		t.Fatalf("expected claude and its MCP servers, found %v", leftovers(e.marker))
	}
	sess, _ := e.srv.session(s)
	sess.mu.Lock()
	pid := sess.proc.cur.cli.PID()
	sess.mu.Unlock()
	// On Linux the pid is childproc's guard; claude is its only child.
	if kids := testkit.Children(pid); len(kids) == 1 {
		pid = kids[0].PID
	}
	from := c.count()
	killPID(pid, syscall.SIGKILL)
	var ex protocol.SessionExited
	c.waitPush(from, protocol.TypeSessionExited, &ex, nil)
	if ex.Signal == nil || *ex.Signal != "SIGKILL" || ex.Code != nil || ex.Reason != protocol.ExitExited {
		t.Errorf("exited %+v", ex)
	}
	waitNoLeftovers(t, e.marker)
	if e := c.doErr(protocol.TypeSessionSend, map[string]any{"session": s, "text": "hi"}); e.Code != protocol.CodeSessionExited {
		t.Errorf("send after kill: %v", e)
	}
}

// Hot reload: a server added to .mcp.json mid-session reaches the running
// claude (mcp_set_servers), and the next turn calls its tool.
func TestE2EHotReload(t *testing.T) {
	t.Parallel()
	e := startE2E(t, Options{})
	c := e.dial(t)
	c.do(protocol.TypeMCPSubscribe, map[string]any{})
	s := c.create(nil)
	c.turn(s, "PING-1")

	from := c.count()
	e.env.WriteMCPJSON(t, map[string]any{
		"everything": map[string]any{"command": testkit.NodeBin(t, "mcp-server-everything")},
		"testmcp":    map[string]any{"command": e.testmcp, "args": []any{}},
		"hot":        map[string]any{"command": e.testmcp},
	})
	var cfg protocol.MCPConfig
	c.waitPush(from, protocol.TypeMCPConfig, &cfg, func(raw json.RawMessage) bool { return bytes.Contains(raw, []byte(`"name":"hot"`)) })
	waitStatus(c, from, "hot connected", func(st protocol.MCPStatus) bool {
		h := statusOf(st, "hot")
		return h != nil && h.Status == protocol.MCPConnected && h.Origin == protocol.OriginSession
	})
	evs := c.turn(s, "use the HOT server")
	trs := toolResults(t, evs)
	if len(trs) != 1 || trs[0].IsError || !strings.Contains(string(trs[0].Content), mcptest.OneText) || trs[0].MCP == nil || trs[0].MCP.Server != "hot" {
		t.Fatalf("tool results %+v", trs)
	}
	for _, f := range c.snapshot()[from:] {
		if f.Type == protocol.TypePermissionRequest {
			t.Errorf("the new server's tool needed a permission: %s", f.raw)
		}
		if f.Type == protocol.TypeSessionState && bytes.Contains(f.raw, []byte("restarting")) {
			t.Errorf("the session restarted instead of taking the change live")
		}
	}
	checkSeqs(t, c.events(s), 1)
}

// Wrong token and wrong Origin against a proxy running the real CLI.
func TestE2EAuth(t *testing.T) {
	t.Parallel()
	e := startE2E(t, Options{})
	for _, tc := range []struct {
		h      http.Header
		status int
	}{
		{http.Header{"Authorization": {"Bearer not-the-token-at-all-123"}}, 401},
		{http.Header{"Authorization": {"Bearer " + testToken}, "Origin": {"https://evil.example"}}, 403},
	} {
		_, resp, err := websocket.DefaultDialer.Dial(e.wsURL(), tc.h)
		if err == nil || resp == nil || resp.StatusCode != tc.status {
			t.Errorf("%v: got %v %v, want %d", tc.h, resp, err, tc.status)
		}
	}
	c := e.dial(t)
	s := c.create(nil)
	c.turn(s, "PING-1")
}
