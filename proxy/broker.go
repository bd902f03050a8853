package proxy

// The parts of the permission broker beyond allow/deny of a tool: what kind
// of request a can_use_tool is (a tool use, AskUserQuestion's questions,
// ExitPlanMode's plan), how a client's answer becomes claude's reply
// ("allow, and don't ask again", answers to questions), and the session's
// permission mode (session/setPermissionMode, reported in session/state and
// session/list). Measured on the real CLI 2.1.329: docs/CLI-NOTES.md.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/ccproxy/ccproxy/proxy/claudecli"
	"github.com/ccproxy/ccproxy/stream"
	protocol "github.com/ccproxy/ccproxy/webview-protocol"
)

// Tools the CLI brokers as something else than a tool use. Both come with
// "requires_user_interaction": true in can_use_tool.
const (
	toolAskUserQuestion = "AskUserQuestion"
	toolExitPlanMode    = "ExitPlanMode"
)

// classifyPermission sets pr.Kind, and the questions or the plan, from the
// tool and its input. Questions that do not parse leave the request a plain
// tool use (a client can still allow or deny it).
func classifyPermission(pr *protocol.PermissionRequest) {
	pr.Kind = protocol.PermissionKindTool
	switch pr.ToolName {
	case toolAskUserQuestion:
		var in struct {
			Questions []protocol.Question `json:"questions"`
		}
		if json.Unmarshal(pr.Input, &in) != nil || len(in.Questions) == 0 {
			return
		}
		for _, q := range in.Questions {
			if q.Question == "" || len(q.Options) == 0 {
				return
			}
			for _, o := range q.Options {
				if o.Label == "" {
					return
				}
			}
		}
		pr.Kind, pr.Questions = protocol.PermissionKindQuestion, in.Questions
	case toolExitPlanMode:
		// The CLI keeps the plan in a file and may send an empty input;
		// the plan's text is shown when it is there.
		pr.Kind, pr.Plan = protocol.PermissionKindPlan, gjson.GetBytes(pr.Input, "plan").String()
	}
}

// waitsForPerson reports whether a request of this kind is exempt from the
// permission timeout: a question or a plan is answered by a person, however
// long that takes.
func waitsForPerson(kind string) bool {
	return kind == protocol.PermissionKindQuestion || kind == protocol.PermissionKindPlan
}

// ruleRecorder is implemented by an MCPSource that can write permission
// rules (MCPConfigSource: mcpconfig.AllowRules, locked across processes).
type ruleRecorder interface {
	AllowRules(dir string, rules []string) error
}

// Destinations of updatedPermissions (measured): localSettings has claude
// apply the rules and write them to .claude/settings.local.json itself
// (without a lock); session has it apply them only.
const (
	destLocalSettings = "localSettings"
	destSession       = "session"
)

// recordAlways handles the "always" of an answer before it is given: the
// rules that allow the tool (alwaysRules) are written to the session's
// .claude/settings.local.json by the MCP source, outside the session's
// lock, and claude is then told to apply them to the session only. It
// returns the destination for updatedPermissions: destSession when the
// proxy wrote them, destLocalSettings (claude writes them) when the source
// cannot. A failed write is an error for the client; the request stays
// pending (it may be answered without always).
func (s *Session) recordAlways(d *protocol.PermissionRespond) (string, error) {
	if !d.Always || d.Behavior != protocol.BehaviorAllow {
		return "", nil
	}
	s.mu.Lock()
	perm := s.permLocked(d.RequestID)
	s.mu.Unlock()
	if perm == nil || perm.kind != protocol.PermissionKindTool {
		return "", nil // the answer reports it
	}
	rec, ok := s.srv.opts.MCP.(ruleRecorder)
	if !ok {
		return destLocalSettings, nil
	}
	var rules []string
	for _, sg := range alwaysRules(perm, destLocalSettings) {
		gjson.GetBytes(sg, "rules").ForEach(func(_, r gjson.Result) bool {
			rule := r.Get("toolName").String()
			if c := r.Get("ruleContent"); c.Exists() && c.String() != "" {
				rule += "(" + c.String() + ")"
			}
			if rule != "" {
				rules = append(rules, rule)
			}
			return true
		})
	}
	if err := rec.AllowRules(s.cfg.cwd, rules); err != nil {
		s.log.Warn("recording an allow rule failed", "rules", rules, "err", err)
		return "", protocol.Errorf(protocol.CodeBadRequest, "permission/respond: the rule could not be recorded (%s); answer without always, or fix the file", truncate(err.Error(), 300))
	}
	s.log.Info("permission rules recorded", "rules", rules)
	return destSession, nil
}

// permissionAnswer builds claude's reply to an allow of perm from the
// client's answer: the input the tool runs with (the client's
// updatedInput, or the request's input with the answers to its questions
// added, in the format the CLI expects: "answers": {question: label}), and
// with always the rules that allow the tool from now on, for claude to
// apply at dest (recordAlways). Errors are protocol errors for the client.
func permissionAnswer(perm *permission, d *protocol.PermissionRespond, dest string) (map[string]any, error) {
	in := perm.input
	if len(d.UpdatedInput) > 0 {
		in = d.UpdatedInput
	}
	if d.Answers != nil {
		if perm.kind != protocol.PermissionKindQuestion {
			return nil, protocol.Errorf(protocol.CodeBadRequest, "permission/respond: answers are only for a question; request %q is a %s", truncate(d.RequestID, 80), perm.kind)
		}
		b, err := sjson.SetBytes([]byte(in), "answers", d.Answers)
		if err != nil {
			return nil, fmt.Errorf("permission answer: %w", err)
		}
		in = b
	}
	resp := map[string]any{"behavior": "allow", "updatedInput": in}
	if d.Always {
		if perm.kind != protocol.PermissionKindTool {
			return nil, protocol.Errorf(protocol.CodeBadRequest, "permission/respond: always is only for a tool use; request %q is a %s", truncate(d.RequestID, 80), perm.kind)
		}
		if dest == "" {
			dest = destLocalSettings
		}
		resp["updatedPermissions"] = alwaysRules(perm, dest)
	}
	return resp, nil
}

// alwaysRules is the updatedPermissions of "allow, and don't ask again":
// the CLI's own suggestions that add allow rules to localSettings, or, when
// it suggested none, the same for the tool's name; with destination dest.
func alwaysRules(perm *permission, dest string) []json.RawMessage {
	var out []json.RawMessage
	gjson.ParseBytes(perm.suggestions).ForEach(func(_, sg gjson.Result) bool {
		if sg.Get("type").String() == "addRules" && sg.Get("behavior").String() == "allow" && sg.Get("destination").String() == destLocalSettings {
			b, err := sjson.SetBytes([]byte(sg.Raw), "destination", dest)
			if err == nil {
				out = append(out, b)
			}
		}
		return true
	})
	if len(out) == 0 {
		b, _ := json.Marshal(map[string]any{"type": "addRules", "rules": []any{map[string]string{"toolName": perm.tool}}, "behavior": "allow", "destination": dest})
		out = append(out, b)
	}
	return out
}

// noteModeLocked records the permission mode claude reports in system/init
// and system/status events, and tells the subscribers when it changed (the
// CLI changes it itself, e.g. leaving plan mode once a plan is approved).
func (s *Session) noteModeLocked(ev *stream.Event) {
	if ev.Type != stream.TypeSystem {
		return
	}
	if m := gjson.GetBytes(ev.JSON, "permissionMode"); m.Type == gjson.String && m.Str != "" {
		s.setModeLocked(m.Str)
	}
}

func (s *Session) setModeLocked(mode string) {
	if mode == s.mode {
		return
	}
	s.mode = mode
	s.pushStateLocked("")
}

// permissionMode is the mode a new process of the session starts in.
func (s *Session) permissionMode() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mode
}

// setPermissionMode switches the session's permission mode with claude's
// set_permission_mode control request. Claude's refusal (bypassPermissions
// when the session was not started in it, or as root) is a cli_error with
// claude's message. While the session restarts the mode is kept for the new
// process. Subscribers get session/state with the new mode.
func (s *Session) setPermissionMode(ctx context.Context, mode string) (string, error) {
	const what = "session/setPermissionMode"
	s.mu.Lock()
	switch {
	case s.exited || s.closing != "":
		s.mu.Unlock()
		return "", protocol.Errorf(protocol.CodeSessionExited, "%s: session %s has exited", what, s.id)
	case s.restarting:
		s.setModeLocked(mode) // the new process starts in it (claudeArgs)
		s.mu.Unlock()
		return mode, nil
	}
	s.mu.Unlock()
	resp, err := s.controlWait(ctx, "set_permission_mode", map[string]any{"mode": mode})
	if err != nil {
		var ce *cliError
		if errors.As(err, &ce) {
			return "", protocol.Errorf(protocol.CodeCLIError, "%s: claude refused mode %q: %s", what, mode, truncate(ce.Msg, 500))
		}
		return "", controlError(what, err)
	}
	got := gjson.GetBytes(resp, "mode").String()
	if got == "" {
		got = mode
	}
	s.mu.Lock()
	s.setModeLocked(got)
	s.mu.Unlock()
	s.log.Info("permission mode set", "mode", got)
	return got, nil
}

// The broker's core: a can_use_tool becomes a permission/request pushed to
// every subscriber; the first answer (or the timeout, for tool uses) wins.

func (s *Session) onPermissionRequest(p *claudecli.Client, id string, line []byte) {
	req := gjson.GetBytes(line, "request")
	input := json.RawMessage(`{}`)
	if in := req.Get("input"); in.IsObject() {
		input = json.RawMessage(bytes.Clone([]byte(in.Raw)))
	}
	pr := protocol.PermissionRequest{
		Session:     s.id,
		RequestID:   id,
		ToolName:    req.Get("tool_name").String(),
		Input:       input,
		ToolUseID:   req.Get("tool_use_id").String(),
		DisplayName: req.Get("display_name").String(),
	}
	if m := req.Get("mcp"); m.IsObject() && m.Get("server").String() != "" && m.Get("tool").String() != "" {
		pr.MCP = &protocol.MCPRef{Server: m.Get("server").String(), Tool: m.Get("tool").String()}
	}
	if sg := req.Get("permission_suggestions"); sg.IsArray() {
		pr.Suggestions = json.RawMessage(bytes.Clone([]byte(sg.Raw)))
	}
	if pr.ToolName == "" {
		pr.ToolName = "unknown"
	}
	classifyPermission(&pr)

	// A tool the current permission rules allow (a rule written after
	// claude started, so its --allowedTools did not name it): allowed, as
	// claude would have if it had been started now. Never a question or a
	// plan: those are for a person.
	if pr.Kind == protocol.PermissionKindTool && s.mcpConfig().allows(pr.ToolName, pr.MCP) {
		s.log.Info("permission allowed by the permission rules", "tool", pr.ToolName)
		resp, _ := stream.ControlSuccess(id, map[string]any{"behavior": "allow", "updatedInput": input})
		s.answerClaude(p, resp)
		return
	}

	timeout := s.srv.opts.PermissionTimeout
	if waitsForPerson(pr.Kind) {
		timeout = 0 // never auto-denied
	}
	if timeout > 0 {
		pr.Deadline = time.Now().Add(timeout).UTC()
	}
	frame, err := encodePush(protocol.TypePermissionRequest, pr)
	if err != nil {
		s.log.Error("permission request cannot be sent to clients; denied", "err", err)
		resp, _ := stream.ControlSuccess(id, map[string]any{"behavior": "deny", "message": "ccproxy could not show this permission request"})
		s.answerClaude(p, resp)
		return
	}
	perm := &permission{id: id, proc: p, kind: pr.Kind, tool: pr.ToolName, input: input, suggestions: pr.Suggestions, frame: frame, asked: time.Now()}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.permLocked(id) != nil || s.exited {
		return
	}
	if len(s.perms) >= s.srv.opts.MaxPendingPermissions {
		s.log.Warn("too many pending permission requests; denied", "request_id", id, "tool", pr.ToolName, "pending", len(s.perms))
		resp, _ := stream.ControlSuccess(id, map[string]any{"behavior": "deny",
			"message": fmt.Sprintf("ccproxy denied this request: %d permission requests are already waiting for an answer", len(s.perms))})
		s.answerClaude(p, resp) // does not block
		return
	}
	s.perms = append(s.perms, perm)
	s.srv.metrics.permissionAsked(perm.kind)
	s.pushLocked(frame)
	if timeout > 0 {
		s.wg.Add(1)
		perm.timer = time.AfterFunc(timeout, func() {
			defer s.wg.Done()
			s.permissionTimedOut(id, timeout)
		})
	}
	s.log.Info("permission requested", "request_id", id, "tool", pr.ToolName)
}

// permLocked returns the pending request id, or nil.
func (s *Session) permLocked(id string) *permission {
	if i := slices.IndexFunc(s.perms, func(p *permission) bool { return p.id == id }); i >= 0 {
		return s.perms[i]
	}
	return nil
}

// takePermLocked removes a pending request (nil if it is not pending),
// stops its timer and remembers it was resolved.
func (s *Session) takePermLocked(id string) *permission {
	i := slices.IndexFunc(s.perms, func(p *permission) bool { return p.id == id })
	if i < 0 {
		return nil
	}
	perm := s.perms[i]
	s.perms = slices.Delete(s.perms, i, i+1)
	if perm.timer != nil && perm.timer.Stop() {
		s.wg.Done() // the AfterFunc will not run
	}
	s.resolved.add(id)
	s.srv.metrics.permissionDone(perm)
	return perm
}

func (s *Session) resolvedLocked(perm *permission, behavior, reason, message string) {
	f, err := encodePush(protocol.TypePermissionResolved, protocol.PermissionResolved{
		Session: s.id, RequestID: perm.id, Behavior: behavior, Reason: reason, Message: message})
	if err != nil {
		s.log.Error("permission resolved", "err", err)
		return
	}
	s.pushLocked(f)
}

func (s *Session) permissionTimedOut(id string, timeout time.Duration) {
	s.mu.Lock()
	perm := s.permLocked(id)
	if perm == nil {
		s.mu.Unlock()
		return
	}
	perm.timer = nil // running now: nothing to stop
	s.takePermLocked(id)
	msg := fmt.Sprintf("No answer to the permission request within %v: denied by ccproxy.", timeout)
	resp, _ := stream.ControlSuccess(id, map[string]any{"behavior": "deny", "message": msg})
	s.answerClaude(perm.proc, resp)
	s.resolvedLocked(perm, protocol.BehaviorDeny, protocol.ResolvedTimeout, msg)
	s.mu.Unlock()
	s.log.Info("permission request timed out; denied", "request_id", id, "timeout", timeout)
}

// respondPermission answers a pending request (first answer wins). On
// success every subscriber, the answering client included, has been sent
// permission/resolved when it returns.
func (s *Session) respondPermission(ctx context.Context, d *protocol.PermissionRespond) error {
	dest, err := s.recordAlways(d) // broker.go: writes "always" rules first, outside the lock
	if err != nil {
		return err
	}
	s.mu.Lock()
	perm := s.permLocked(d.RequestID)
	if perm == nil {
		known := s.resolved.has(d.RequestID)
		s.mu.Unlock()
		if known {
			return protocol.Errorf(protocol.CodeAlreadyResolved, "permission/respond: request %q was already answered, timed out or was cancelled", truncate(d.RequestID, 80))
		}
		return protocol.Errorf(protocol.CodeNotFound, "permission/respond: session %s has no permission request %q", s.id, truncate(d.RequestID, 80))
	}
	var resp map[string]any
	if d.Behavior == protocol.BehaviorAllow {
		if resp, err = permissionAnswer(perm, d, dest); err != nil {
			s.mu.Unlock()
			return err // the request stays pending
		}
	}
	message := ""
	if d.Behavior != protocol.BehaviorAllow {
		message = d.Message
		if message == "" {
			message = "Denied by the user"
		}
		resp = map[string]any{"behavior": "deny", "message": message}
	}
	line, err := stream.ControlSuccess(d.RequestID, resp)
	if err != nil {
		s.mu.Unlock()
		return fmt.Errorf("permission answer: %w", err) // the request stays pending
	}
	// Answered and resolved under the lock: claude's events that follow
	// the answer are appended (under this lock) after permission/resolved,
	// so every subscriber sees the resolution before them. Answer never
	// waits (like the timeout's): a claude that has not read its stdin for
	// StdinQueue lines is killed.
	defer s.mu.Unlock()
	s.takePermLocked(d.RequestID)
	if err := perm.proc.Answer(line); err != nil {
		s.resolvedLocked(perm, protocol.BehaviorCancelled, protocol.ResolvedSessionExited, "")
		return protocol.Errorf(protocol.CodeSessionExited, "permission/respond: session %s: claude is gone, the answer could not be delivered", s.id)
	}
	s.resolvedLocked(perm, d.Behavior, protocol.ResolvedAnswered, message)
	s.log.Info("permission answered", "request_id", d.RequestID, "behavior", d.Behavior)
	return nil
}
