package proxy

import (
	"strings"
	"testing"
	"time"

	"github.com/ccproxy/ccproxy/protocol"
)

// answerText is what the fake says after a permission turn.
func answerText(t *testing.T, c *wsClient, from int, s string) string {
	t.Helper()
	ev, _ := c.waitEvent(from, s, "the fake's report of the answer", func(ev protocol.SessionEvent) bool {
		txt := textOf(ev)
		return strings.HasPrefix(txt, "permission answer: ") || strings.HasPrefix(txt, "permission withdrawn")
	})
	return textOf(ev)
}

// Every subscriber gets the request; the first answer wins; the others get
// permission/resolved and a late answer gets already_resolved; a client
// that subscribes while a request is pending gets it after the replay.
func TestPermissionFirstAnswerWins(t *testing.T) {
	ts := startServer(t, Options{})
	a, b := ts.dial(t), ts.dial(t)
	s := a.create(nil)
	b.do(protocol.TypeSessionSubscribe, map[string]any{"session": s})

	from := a.count()
	a.do(protocol.TypeSessionSend, map[string]any{"session": s, "text": "perm Bash"})
	var reqA, reqB protocol.PermissionRequest
	a.waitPush(from, protocol.TypePermissionRequest, &reqA, nil)
	b.waitPush(0, protocol.TypePermissionRequest, &reqB, nil)
	if reqA.RequestID == "" || reqA.RequestID != reqB.RequestID {
		t.Fatalf("requests differ: %+v / %+v", reqA, reqB)
	}
	if reqA.ToolName != "Bash" || string(reqA.Input) != `{"command":"ls"}` || reqA.ToolUseID != "toolu_fake_1" || reqA.Deadline.IsZero() {
		t.Errorf("permission/request = %+v", reqA)
	}

	// A late subscriber gets the pending request after the replay.
	late := ts.dial(t)
	late.do(protocol.TypeSessionSubscribe, map[string]any{"session": s})
	var reqL protocol.PermissionRequest
	li := late.waitPush(0, protocol.TypePermissionRequest, &reqL, nil)
	if reqL.RequestID != reqA.RequestID {
		t.Errorf("late subscriber got %q, want %q", reqL.RequestID, reqA.RequestID)
	}
	lastEvent := 0
	for i, f := range late.snapshot()[:li] {
		if f.Type == protocol.TypeSessionEvent {
			lastEvent = i
		}
	}
	if lastEvent == 0 || lastEvent > li {
		t.Errorf("the pending request did not come after the replayed events")
	}

	var list protocol.SessionListResult
	mustUnmarshal(t, a.do(protocol.TypeSessionList, map[string]any{}), &list)
	if list.Sessions[0].PendingPermissions != 1 {
		t.Errorf("pendingPermissions = %d", list.Sessions[0].PendingPermissions)
	}

	bFrom := b.count()
	id := b.send(protocol.TypePermissionRespond, map[string]any{"session": s, "requestId": reqA.RequestID,
		"behavior": "allow", "updatedInput": map[string]any{"command": "ls -la"}})
	var res protocol.PermissionResolved
	ri := b.waitPush(bFrom, protocol.TypePermissionResolved, &res, nil)
	_, repI := b.waitFor(bFrom, "reply", func(f rawFrame) bool { return string(f.ID) == string(id) })
	if ri > repI {
		t.Errorf("reply before permission/resolved")
	}
	if res.Behavior != "allow" || res.Reason != protocol.ResolvedAnswered {
		t.Errorf("resolved = %+v", res)
	}
	a.waitPush(from, protocol.TypePermissionResolved, &res, nil)
	late.waitPush(li, protocol.TypePermissionResolved, nil, nil)

	if e := a.doErr(protocol.TypePermissionRespond, map[string]any{"session": s, "requestId": reqA.RequestID, "behavior": "deny"}); e.Code != protocol.CodeAlreadyResolved {
		t.Errorf("second answer: %v, want already_resolved", e)
	}
	if e := a.doErr(protocol.TypePermissionRespond, map[string]any{"session": s, "requestId": "nope", "behavior": "deny"}); e.Code != protocol.CodeNotFound {
		t.Errorf("unknown request: %v, want not_found", e)
	}
	if got := answerText(t, a, from, s); got != `permission answer: {"behavior":"allow","updatedInput":{"command":"ls -la"}}` {
		t.Errorf("claude got %s", got)
	}
}

// Deny: the default message, or the client's.
func TestPermissionDeny(t *testing.T) {
	ts := startServer(t, Options{})
	c := ts.dial(t)
	s := c.create(nil)
	for _, tc := range []struct{ msg, want string }{
		{"", "Denied by the user"},
		{"not today", "not today"},
	} {
		from := c.count()
		c.do(protocol.TypeSessionSend, map[string]any{"session": s, "text": "perm Write"})
		var req protocol.PermissionRequest
		c.waitPush(from, protocol.TypePermissionRequest, &req, nil)
		data := map[string]any{"session": s, "requestId": req.RequestID, "behavior": "deny"}
		if tc.msg != "" {
			data["message"] = tc.msg
		}
		c.do(protocol.TypePermissionRespond, data)
		if got := answerText(t, c, from, s); got != `permission answer: {"behavior":"deny","message":"`+tc.want+`"}` {
			t.Errorf("claude got %s", got)
		}
		c.waitEvent(from, s, "result", isResult)
	}
}

// Unanswered requests are denied after the timeout, with a message.
func TestPermissionTimeout(t *testing.T) {
	ts := startServer(t, Options{SessionLimits: SessionLimits{PermissionTimeout: 300 * time.Millisecond}})
	c := ts.dial(t)
	var hello protocol.Hello
	c.waitPush(0, protocol.TypeHello, &hello, nil)
	if hello.Limits.PermissionTimeoutMs != 300 {
		t.Errorf("hello permissionTimeoutMs = %d", hello.Limits.PermissionTimeoutMs)
	}
	s := c.create(nil)
	from := c.count()
	c.do(protocol.TypeSessionSend, map[string]any{"session": s, "text": "perm Bash"})
	var req protocol.PermissionRequest
	c.waitPush(from, protocol.TypePermissionRequest, &req, nil)
	var res protocol.PermissionResolved
	c.waitPush(from, protocol.TypePermissionResolved, &res, nil)
	if res.Behavior != "deny" || res.Reason != protocol.ResolvedTimeout || !strings.Contains(res.Message, "No answer") {
		t.Errorf("resolved = %+v", res)
	}
	got := answerText(t, c, from, s)
	if !strings.Contains(got, `"behavior":"deny"`) || !strings.Contains(got, "denied by ccproxy") {
		t.Errorf("claude got %s", got)
	}
	if e := c.doErr(protocol.TypePermissionRespond, map[string]any{"session": s, "requestId": req.RequestID, "behavior": "allow"}); e.Code != protocol.CodeAlreadyResolved {
		t.Errorf("answer after timeout: %v", e)
	}
}

// control_cancel_request withdraws a request: cancelled, no answer to claude.
func TestPermissionCancelled(t *testing.T) {
	ts := startServer(t, Options{})
	c := ts.dial(t)
	s := c.create(nil)
	from := c.count()
	c.do(protocol.TypeSessionSend, map[string]any{"session": s, "text": "permcancel"})
	var req protocol.PermissionRequest
	c.waitPush(from, protocol.TypePermissionRequest, &req, nil)
	var res protocol.PermissionResolved
	c.waitPush(from, protocol.TypePermissionResolved, &res, nil)
	if res.Behavior != protocol.BehaviorCancelled || res.Reason != protocol.ResolvedCancelled || res.RequestID != req.RequestID {
		t.Errorf("resolved = %+v", res)
	}
	c.waitEvent(from, s, "result", isResult)
	if e := c.doErr(protocol.TypePermissionRespond, map[string]any{"session": s, "requestId": req.RequestID, "behavior": "allow"}); e.Code != protocol.CodeAlreadyResolved {
		t.Errorf("answer after cancel: %v", e)
	}
}

// A pending request is cancelled when claude exits.
func TestPermissionSessionExited(t *testing.T) {
	t.Parallel()
	ts := startServer(t, Options{})
	c := ts.dial(t)
	s := c.create(nil)
	from := c.count()
	c.do(protocol.TypeSessionSend, map[string]any{"session": s, "text": "perm Bash"})
	c.waitPush(from, protocol.TypePermissionRequest, nil, nil)
	closeSession(t, c, s)
	var res protocol.PermissionResolved
	c.waitPush(from, protocol.TypePermissionResolved, &res, nil)
	if res.Behavior != protocol.BehaviorCancelled || res.Reason != protocol.ResolvedSessionExited {
		t.Errorf("resolved = %+v", res)
	}
}

// A control request ccproxy does not handle gets an error answer at once.
func TestUnhandledControlRequest(t *testing.T) {
	ts := startServer(t, Options{})
	c := ts.dial(t)
	s := c.create(nil)
	var said string
	for _, ev := range c.turn(s, "ctl hook_callback") {
		if txt := textOf(ev); strings.HasPrefix(txt, "control answer") {
			said = txt
		}
	}
	if said != `control answer: error / ccproxy does not handle control requests of subtype "hook_callback"` {
		t.Errorf("claude got %q", said)
	}
}

// A tool the MCP configuration allows is allowed without asking (a server
// added after claude started).
func TestPermissionAllowedByConfig(t *testing.T) {
	src := newTestSource(t, map[string]string{"beta": `{"command":"x","args":[]}`})
	ts := startServer(t, Options{MCPOptions: MCPOptions{MCP: src}})
	c := ts.dial(t)
	s := c.create(nil)
	from := c.count()
	evs := c.turn(s, "perm mcp__beta__echo")
	got := ""
	for _, ev := range evs {
		if txt := textOf(ev); strings.HasPrefix(txt, "permission answer") {
			got = txt
		}
	}
	if got != `permission answer: {"behavior":"allow","updatedInput":{"command":"ls"}}` {
		t.Errorf("claude got %q", got)
	}
	for _, f := range c.snapshot()[from:] {
		if f.Type == protocol.TypePermissionRequest {
			t.Errorf("a permission/request was sent for an allowed tool: %s", f.raw)
		}
	}
	// Not allowed: asked.
	from = c.count()
	c.do(protocol.TypeSessionSend, map[string]any{"session": s, "text": "perm mcp__gamma__echo"})
	var req protocol.PermissionRequest
	c.waitPush(from, protocol.TypePermissionRequest, &req, nil)
	c.do(protocol.TypePermissionRespond, map[string]any{"session": s, "requestId": req.RequestID, "behavior": "deny"})
}

// Beyond MaxPendingPermissions a request is denied at once; the pending one
// is still answered by the client.
func TestPermissionPendingBound(t *testing.T) {
	ts := startServer(t, Options{SessionLimits: SessionLimits{MaxPendingPermissions: 1}})
	c := ts.dial(t)
	s := c.create(nil)
	from := c.count()
	c.do(protocol.TypeSessionSend, map[string]any{"session": s, "text": "permtwice"})
	var req protocol.PermissionRequest
	c.waitPush(from, protocol.TypePermissionRequest, &req, nil)
	// Answer the first request only once claude has the answer to the
	// second: answered earlier, the first would no longer be pending when
	// the second arrives, and the second would not hit the bound.
	c.waitEvent(from, s, "the fake's report of the second answer", func(ev protocol.SessionEvent) bool {
		return strings.HasPrefix(textOf(ev), "permission second answered: ")
	})
	c.do(protocol.TypePermissionRespond, map[string]any{"session": s, "requestId": req.RequestID, "behavior": "allow"})
	got := answerText(t, c, from, s)
	first, second, _ := strings.Cut(strings.TrimPrefix(got, "permission answer: first "), " second ")
	if !strings.Contains(first, `"behavior":"allow"`) || !strings.Contains(second, `"behavior":"deny"`) || !strings.Contains(second, "already waiting") {
		t.Errorf("claude got %s", got)
	}
	if !strings.Contains(ts.logBuf.String(), "too many pending permission requests") {
		t.Errorf("hitting the bound was not logged")
	}
}
