package proxy

// Real-CLI tests of the permission broker beyond allow/deny (issue 9 §4):
// MCP tools ask by default, permission rules, "allow, and don't ask
// again", permission modes, AskUserQuestion and ExitPlanMode.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ccproxy/ccproxy/mcpconfig"
	"github.com/ccproxy/ccproxy/protocol"
)

// turnFrames sends text and waits for the turn's result, answering every
// permission/request with answer (nil: fail on any request). It returns
// the requests seen and the turn's events.
func (c *wsClient) permTurn(t *testing.T, s, text string, answer func(req protocol.PermissionRequest) map[string]any) ([]protocol.PermissionRequest, []protocol.SessionEvent) {
	t.Helper()
	from := c.count()
	c.do(protocol.TypeSessionSend, map[string]any{"session": s, "text": text})
	var reqs []protocol.PermissionRequest
	seen := from
	for {
		f, i := c.waitFor(seen, "a permission request or the result of "+text, func(f rawFrame) bool {
			return f.Type == protocol.TypePermissionRequest || (f.ev != nil && f.ev.Session == s && isResult(*f.ev))
		})
		seen = i + 1
		if f.Type != protocol.TypePermissionRequest {
			break
		}
		var req protocol.PermissionRequest
		mustUnmarshal(t, f.Data, &req)
		reqs = append(reqs, req)
		if answer == nil {
			t.Fatalf("%s: unexpected permission/request %+v", text, req)
		}
		data := answer(req)
		data["session"], data["requestId"] = s, req.RequestID
		c.do(protocol.TypePermissionRespond, data)
	}
	var evs []protocol.SessionEvent
	for _, f := range c.snapshot()[from:] {
		if f.ev != nil && f.ev.Session == s {
			evs = append(evs, *f.ev)
		}
	}
	return reqs, evs
}

func lastToolResult(t *testing.T, evs []protocol.SessionEvent) toolResult {
	t.Helper()
	trs := toolResults(t, evs)
	if len(trs) == 0 {
		t.Fatal("no tool result")
	}
	return trs[len(trs)-1]
}

// By default an MCP tool call asks; "allow, and don't ask again" writes the
// rule to .claude/settings.local.json (the proxy, locked) and has claude
// apply it to the session: the next call of that tool in the same session
// does not ask, while another tool still does.
func TestE2EMCPToolAsksAndAllowAlways(t *testing.T) {
	t.Parallel()
	e := startE2EWith(t, Options{}, nil)
	c := e.dial(t)
	c.do(protocol.TypeMCPSubscribe, map[string]any{})
	s := c.create(nil)

	reqs, evs := c.permTurn(t, s, "ECHO-1 please", func(req protocol.PermissionRequest) map[string]any {
		return map[string]any{"behavior": "allow", "always": true}
	})
	if len(reqs) != 1 || reqs[0].ToolName != "mcp__everything__echo" || reqs[0].Kind != protocol.PermissionKindTool ||
		reqs[0].MCP == nil || reqs[0].MCP.Server != "everything" || !strings.Contains(string(reqs[0].Suggestions), `"localSettings"`) {
		t.Fatalf("requests %+v", reqs)
	}
	if tr := lastToolResult(t, evs); tr.IsError || !strings.Contains(string(tr.Content), "Echo: one") {
		t.Errorf("echo: %s", tr.Content)
	}
	// The rule is in force: in this session (claude applied it) ...
	reqs, evs = c.permTurn(t, s, "ECHO-2 please", nil)
	if tr := lastToolResult(t, evs); len(reqs) != 0 || tr.IsError || !strings.Contains(string(tr.Content), "Echo: two") {
		t.Errorf("second echo: %d requests, %s", len(reqs), tr.Content)
	}
	// ... for the proxy, whose configuration carries it once its Watcher
	// saw the file ...
	c.waitPush(0, protocol.TypeMCPConfig, nil, func(raw json.RawMessage) bool {
		var v protocol.MCPConfig
		return json.Unmarshal(raw, &v) == nil && slices.Contains(v.AllowedTools, "mcp__everything__echo")
	})
	if !e.srv.mcp.Config().Allows("mcp__everything__echo", &protocol.MCPRef{Server: "everything", Tool: "echo"}) {
		t.Error("the proxy's rules do not allow the remembered tool")
	}
	// ... in settings.local.json's permissions.allow, where the CLI keeps
	// it, written by the proxy (its lock file is there).
	local := filepath.Join(e.env.Project, ".claude", "settings.local.json")
	data, err := os.ReadFile(local)
	var m struct {
		Permissions struct{ Allow []string } `json:"permissions"`
	}
	if err != nil || json.Unmarshal(data, &m) != nil || !slices.Contains(m.Permissions.Allow, "mcp__everything__echo") {
		t.Fatalf("settings.local.json: %s %v", data, err)
	}
	if _, err := os.Stat(filepath.Join(e.env.Project, ".claude", ".settings.local.json.lock")); err != nil {
		t.Errorf("not written by the proxy: %v", err)
	}
	// Another tool of the same server still asks.
	reqs, evs = c.permTurn(t, s, "SUM please", func(req protocol.PermissionRequest) map[string]any {
		return map[string]any{"behavior": "deny", "message": "no sums"}
	})
	if tr := lastToolResult(t, evs); len(reqs) != 1 || reqs[0].ToolName != "mcp__everything__get-sum" || !tr.IsError {
		t.Errorf("sum: %+v, %s", reqs, tr.Content)
	}
}

// permissions.allow and permissions.deny rules of the settings files decide
// without a prompt, except the allow rules of an untrusted project's
// .claude/settings.json (as in the CLI); serve --allow-mcp-tools allows
// every tool of the active servers.
func TestE2EMCPToolRules(t *testing.T) {
	t.Parallel()
	t.Run("rules", func(t *testing.T) {
		e := startE2EWith(t, Options{}, func(o *mcpconfig.Options) {
			dir := filepath.Join(o.ProjectDir, ".claude")
			os.MkdirAll(dir, 0o755)
			os.WriteFile(filepath.Join(dir, "settings.local.json"), []byte(`{"permissions": {"allow": ["mcp__everything__get-sum"]}}`), 0o644)
			os.WriteFile(filepath.Join(dir, "settings.json"), []byte(`{"permissions": {"allow": ["mcp__everything__get-tiny-image"], "deny": ["mcp__everything__echo"]}}`), 0o644)
		})
		c := e.dial(t)
		s := c.create(nil)
		reqs, evs := c.permTurn(t, s, "SUM please", nil)
		if tr := lastToolResult(t, evs); len(reqs) != 0 || tr.IsError || !strings.Contains(string(tr.Content), "3") {
			t.Errorf("allowed by rule: %d requests, %s", len(reqs), tr.Content)
		}
		reqs, evs = c.permTurn(t, s, "ECHO-1 please", nil)
		if tr := lastToolResult(t, evs); len(reqs) != 0 || !tr.IsError {
			t.Errorf("denied by rule: %d requests, %s", len(reqs), tr.Content)
		}
		if e.srv.mcp.Config().Allows("mcp__everything__get-tiny-image", &protocol.MCPRef{Server: "everything", Tool: "get-tiny-image"}) {
			t.Error("the proxy counts an untrusted project's allow rule")
		}
		reqs, _ = c.permTurn(t, s, "a TINY image", func(protocol.PermissionRequest) map[string]any {
			return map[string]any{"behavior": "deny"}
		})
		if len(reqs) != 1 || reqs[0].ToolName != "mcp__everything__get-tiny-image" {
			t.Errorf("untrusted project rule: requests %+v", reqs)
		}
	})
	t.Run("allow-mcp-tools", func(t *testing.T) {
		e := startE2E(t, Options{}) // AllowServerTools, as serve --allow-mcp-tools
		c := e.dial(t)
		s := c.create(nil)
		for _, prompt := range []string{"SUM please", "ECHO-1 please"} {
			reqs, evs := c.permTurn(t, s, prompt, nil)
			if tr := lastToolResult(t, evs); len(reqs) != 0 || tr.IsError {
				t.Errorf("%s: %d requests, %s", prompt, len(reqs), tr.Content)
			}
		}
	})
}

// The permission mode switches live; claude's refusal of bypassPermissions
// is a cli_error with its message; in plan mode ExitPlanMode is a plan to
// approve, which never times out, and approving it leaves plan mode.
func TestE2EPermissionModeAndPlan(t *testing.T) {
	t.Parallel()
	e := startE2EWith(t, Options{SessionLimits: SessionLimits{PermissionTimeout: time.Millisecond}}, nil)
	c := e.dial(t)
	s := c.create(nil)
	c.turn(s, "PING-1")

	from := c.count()
	var res protocol.SessionSetPermissionModeResult
	mustUnmarshal(t, c.do(protocol.TypeSessionSetMode, map[string]any{"session": s, "mode": "acceptEdits"}), &res)
	if res.Mode != "acceptEdits" {
		t.Errorf("reply %+v", res)
	}
	var st protocol.SessionState
	c.waitPush(from, protocol.TypeSessionState, &st, func(raw json.RawMessage) bool { return strings.Contains(string(raw), `"acceptEdits"`) })
	var list protocol.SessionListResult
	mustUnmarshal(t, c.do(protocol.TypeSessionList, map[string]any{}), &list)
	if list.Sessions[0].PermissionMode != "acceptEdits" {
		t.Errorf("session/list mode %q", list.Sessions[0].PermissionMode)
	}

	e2 := c.doErr(protocol.TypeSessionSetMode, map[string]any{"session": s, "mode": "bypassPermissions"})
	if e2 == nil || e2.Code != protocol.CodeCLIError || !strings.Contains(e2.Message, "bypassPermissions") {
		t.Errorf("bypassPermissions: %+v", e2)
	}

	c.do(protocol.TypeSessionSetMode, map[string]any{"session": s, "mode": "plan"})
	from = c.count()
	reqs, evs := c.permTurn(t, s, "PLAN now", func(req protocol.PermissionRequest) map[string]any {
		return map[string]any{"behavior": "allow"}
	})
	if len(reqs) != 1 || reqs[0].Kind != protocol.PermissionKindPlan || reqs[0].ToolName != "ExitPlanMode" || !reqs[0].Deadline.IsZero() {
		t.Fatalf("plan requests %+v", reqs)
	}
	if tr := lastToolResult(t, evs); tr.IsError || !strings.Contains(string(tr.Content), "approved") {
		t.Errorf("plan result %s", tr.Content)
	}
	for _, f := range c.snapshot()[from:] {
		if f.Type == protocol.TypePermissionResolved && strings.Contains(string(f.Data), `"timeout"`) {
			t.Errorf("the plan timed out: %s", f.Data)
		}
	}
	// Approving the plan left plan mode (claude reports it; the proxy follows).
	c.waitPush(from, protocol.TypeSessionState, &st, func(raw json.RawMessage) bool {
		return strings.Contains(string(raw), `"permissionMode"`) && !strings.Contains(string(raw), `"plan"`)
	})
	if st.PermissionMode == "" || st.PermissionMode == "plan" {
		t.Errorf("mode after the plan: %+v", st)
	}
}

// AskUserQuestion is a question with options, never timed out; the answers
// reach claude in the format it expects.
func TestE2EAskUserQuestion(t *testing.T) {
	t.Parallel()
	e := startE2EWith(t, Options{SessionLimits: SessionLimits{PermissionTimeout: time.Millisecond}}, nil)
	c := e.dial(t)
	s := c.create(nil)
	from := c.count()
	reqs, evs := c.permTurn(t, s, "ASKQ now", func(req protocol.PermissionRequest) map[string]any {
		// Answers to questions not asked, or none, are refused naming
		// what is wrong; the question stays pending.
		for _, bad := range []struct {
			answers map[string]string
			msg     string
		}{{map[string]string{"Wrong question?": "Red"}, `"Wrong question?" is not a question asked`}, {map[string]string{}, "empty"}} {
			e := c.doErr(protocol.TypePermissionRespond, map[string]any{"session": s, "requestId": req.RequestID, "behavior": "allow", "answers": bad.answers})
			if e.Code != protocol.CodeBadRequest || !strings.Contains(e.Message, bad.msg) || !strings.Contains(e.Message, `"Which color?"`) ||
				e.Details == nil || len(e.Details.Fields) != 1 || e.Details.Fields[0].Path != "data.answers" {
				t.Errorf("answers %v: %+v, want bad_request on data.answers mentioning %q", bad.answers, e, bad.msg)
			}
		}
		return map[string]any{"behavior": "allow", "answers": map[string]string{"Which color?": "Blue"}}
	})
	if len(reqs) != 1 || reqs[0].Kind != protocol.PermissionKindQuestion || !reqs[0].Deadline.IsZero() || len(reqs[0].Questions) != 1 {
		t.Fatalf("question requests %+v", reqs)
	}
	q := reqs[0].Questions[0]
	if q.Question != "Which color?" || q.Header != "Color" || len(q.Options) != 2 || q.Options[1].Label != "Blue" || q.Options[1].Description != "cold" {
		t.Errorf("question %+v", q)
	}
	if tr := lastToolResult(t, evs); tr.IsError || !strings.Contains(string(tr.Content), `\"Which color?\"=\"Blue\"`) {
		t.Errorf("answer result %s", tr.Content)
	}
	for _, f := range c.snapshot()[from:] {
		if f.Type == protocol.TypePermissionResolved && strings.Contains(string(f.Data), `"timeout"`) {
			t.Errorf("the question timed out: %s", f.Data)
		}
	}
}

// bypassPermissions at creation: as root claude refuses to start, and the
// client sees claude's reason in session/exited; otherwise the session
// reports the mode.
func TestE2EBypassPermissionsAtCreate(t *testing.T) {
	t.Parallel()
	e := startE2EWith(t, Options{}, nil)
	c := e.dial(t)
	from := c.count()
	s := c.create(map[string]any{"permissionMode": "bypassPermissions"})
	if os.Geteuid() != 0 {
		c.turn(s, "PING-1")
		var list protocol.SessionListResult
		mustUnmarshal(t, c.do(protocol.TypeSessionList, map[string]any{}), &list)
		if list.Sessions[0].PermissionMode != "bypassPermissions" {
			t.Errorf("mode %q", list.Sessions[0].PermissionMode)
		}
		return
	}
	var ex protocol.SessionExited
	c.waitPush(from, protocol.TypeSessionExited, &ex, nil)
	if !strings.Contains(ex.StderrTail, "cannot be used with root/sudo privileges") {
		t.Errorf("session/exited %+v", ex)
	}
}
