package proxy

// The parts of the permission broker beyond allow/deny of a tool: what kind
// of request a can_use_tool is (a tool use, AskUserQuestion's questions,
// ExitPlanMode's plan), how a client's answer becomes claude's reply
// ("allow, and don't ask again", answers to questions), and the session's
// permission mode (session/setPermissionMode, reported in session/state and
// session/list). Measured on the real CLI 2.1.329: docs/CLI-NOTES.md.

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/proxy/claudecli"
	"github.com/ccproxy/ccproxy/stream"
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

// ruleRecorder is implemented by an mcphub.Source that can write permission
// rules (mcphub.ConfigSource: mcpconfig.AllowRules, locked across processes).
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

// alwaysRecorder is the MCP source's ruleRecorder when it has one: "always"
// answers are then written by the proxy (destSession for claude); without
// one claude writes them itself (destLocalSettings).
func (s *Session) alwaysRecorder() (ruleRecorder, string) {
	if rec, ok := s.srv.opts.MCP.(ruleRecorder); ok {
		return rec, destSession
	}
	return nil, destLocalSettings
}

// ruleStrings are the rules of alwaysRules as settings entries
// ("Tool" or "Tool(content)"), and the distinct tool names they name (what
// the log may show: a rule's content, e.g. a Bash command prefix, may hold
// a secret).
func ruleStrings(perm *permission) (rules, tools []string) {
	for _, sg := range alwaysRules(perm, destLocalSettings) {
		gjson.GetBytes(sg, "rules").ForEach(func(_, r gjson.Result) bool {
			tool := r.Get("toolName").String()
			if tool == "" {
				return true
			}
			rule := tool
			if c := r.Get("ruleContent"); c.Exists() && c.String() != "" {
				rule += "(" + c.String() + ")"
			}
			rules = append(rules, rule)
			if !slices.Contains(tools, tool) {
				tools = append(tools, tool)
			}
			return true
		})
	}
	return rules, tools
}

// permissionAnswer builds claude's reply to an allow of perm from the
// client's answer: the input the tool runs with (the client's
// updatedInput, or the request's input with the answers to its questions
// added, in the format the CLI expects: "answers": {question: label}), and
// with always the rules that allow the tool from now on, for claude to
// apply at dest (alwaysRecorder). Errors are protocol errors for the client;
// respondPermission checks them before it records any rule.
func permissionAnswer(perm *permission, d *protocol.PermissionRespond, dest string) (map[string]any, error) {
	in := perm.input
	if len(d.UpdatedInput) > 0 {
		in = d.UpdatedInput
	}
	if d.Answers != nil {
		if perm.kind != protocol.PermissionKindQuestion {
			return nil, protocol.Errorf(protocol.CodeBadRequest, "permission/respond: answers are only for a question; request %q is a %s", truncate(d.RequestID, 80), perm.kind)
		}
		if err := checkAnswers(perm, d.Answers); err != nil {
			return nil, err
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

// checkAnswers refuses answers that claude would not take as answers to
// perm's questions: a key that is not the text of a question asked (claude
// would read "the user did not answer"), or no answer at all.
func checkAnswers(perm *permission, answers map[string]string) error {
	var asked []string
	for _, q := range gjson.GetBytes(perm.input, "questions.#.question").Array() {
		asked = append(asked, q.String())
	}
	if len(answers) == 0 {
		return protocol.FieldErrorf(protocol.TypePermissionRespond, "data.answers", "empty; answer the questions asked (%s), each by its text", quoteList(asked))
	}
	keys := slices.Sorted(maps.Keys(answers))
	for _, k := range keys {
		if !slices.Contains(asked, k) {
			return protocol.FieldErrorf(protocol.TypePermissionRespond, "data.answers", "%q is not a question asked; the questions are %s (each answer's key is a question's text)", truncate(k, 120), quoteList(asked))
		}
	}
	return nil
}

// quoteList renders question texts for an error message, bounded.
func quoteList(qs []string) string {
	if len(qs) == 0 {
		return "none"
	}
	parts := make([]string, 0, min(len(qs), 8))
	for i, q := range qs {
		if i == 8 {
			parts = append(parts, fmt.Sprintf("and %d more", len(qs)-8))
			break
		}
		parts = append(parts, strconv.Quote(truncate(q, 120)))
	}
	return strings.Join(parts, ", ")
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
// claude's message. While the session restarts there is no claude to ask:
// the mode is kept for the new process, which starts in it
// (--permission-mode, claudeArgs), and the proxy answers as claude would:
// the launch flag takes every mode but bypassPermissions, which claude
// takes only when launched in it (the new process is launched in the
// session's current mode) and never as root, so bypassPermissions is a
// cli_error unless the session is in it already. Subscribers get
// session/state with the new mode.
func (s *Session) setPermissionMode(ctx context.Context, mode string) (string, error) {
	const what = "session/setPermissionMode"
	s.mu.Lock()
	switch {
	case s.exited || s.closing != "":
		s.mu.Unlock()
		return "", protocol.Errorf(protocol.CodeSessionExited, "%s: session %s has exited", what, s.id)
	case s.restarting:
		defer s.mu.Unlock()
		if mode == protocol.PermissionModeBypass && s.mode != protocol.PermissionModeBypass {
			return "", protocol.Errorf(protocol.CodeCLIError, "%s: claude refused mode %q: the session is restarting and its new claude is launched in mode %q; claude takes bypassPermissions only when launched with it (and never as root)", what, mode, cmp.Or(s.mode, protocol.PermissionModeDefault))
		}
		s.setModeLocked(mode)
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
	if pr.Kind == protocol.PermissionKindTool && s.mcpConfig().Allows(pr.ToolName, pr.MCP) {
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
			s.permissionTimedOut(id)
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

// cancelPermsLocked cancels (session_exited) the pending requests of
// process of, or every one when of is nil: nobody can answer them any more.
func (s *Session) cancelPermsLocked(of *claudecli.Client) {
	for _, perm := range slices.Clone(s.perms) {
		if of == nil || perm.proc == of {
			s.takePermLocked(perm.id)
			s.resolvedLocked(perm, protocol.BehaviorCancelled, protocol.ResolvedSessionExited, "")
		}
	}
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

func (s *Session) permissionTimedOut(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	perm := s.permLocked(id)
	if perm == nil {
		return
	}
	perm.timer = nil // running now: nothing to stop
	if perm.answering {
		// An "always" answer is recording its rule: it wins unless the
		// write fails (respondPermission then denies it).
		perm.expired = true
		return
	}
	s.timeOutLocked(perm)
}

// timeOutLocked denies perm for want of an answer within its timeout.
func (s *Session) timeOutLocked(perm *permission) {
	timeout := s.srv.opts.PermissionTimeout
	s.takePermLocked(perm.id)
	msg := fmt.Sprintf("No answer to the permission request within %v: denied by ccproxy.", timeout)
	resp, _ := stream.ControlSuccess(perm.id, map[string]any{"behavior": "deny", "message": msg})
	s.answerClaude(perm.proc, resp)
	s.resolvedLocked(perm, protocol.BehaviorDeny, protocol.ResolvedTimeout, msg)
	s.log.Info("permission request timed out; denied", "request_id", perm.id, "timeout", timeout)
}

// respondPermission answers a pending request (first answer wins). On
// success every subscriber, the answering client included, has been sent
// permission/resolved when it returns.
//
// An "always" allow with a ruleRecorder is checked like any answer, then
// claimed under s.mu (perm.answering: other answers get already_resolved,
// the timeout waits for it), the rules are written outside the lock, and the
// answer is finished under the lock again. So a rule is only ever written
// for an answer that is valid and has won. A failed write releases the
// claim: the request stays pending (or, if its timeout passed meanwhile, is
// denied now) and the client gets the error. Claude's withdrawal or exit
// during the write is not held up: the request is cancelled, the rule the
// person chose stays, and the client is told.
func (s *Session) respondPermission(ctx context.Context, d *protocol.PermissionRespond) error {
	rec, dest := s.alwaysRecorder()
	s.mu.Lock()
	perm := s.permLocked(d.RequestID)
	if perm == nil || perm.answering {
		known := perm != nil || s.resolved.has(d.RequestID)
		s.mu.Unlock()
		if known {
			return protocol.Errorf(protocol.CodeAlreadyResolved, "permission/respond: request %q was already answered, timed out or was cancelled", truncate(d.RequestID, 80))
		}
		return protocol.Errorf(protocol.CodeNotFound, "permission/respond: session %s has no permission request %q", s.id, truncate(d.RequestID, 80))
	}
	line, message, err := answerLine(perm, d, dest)
	if err != nil {
		s.mu.Unlock()
		return err // the request stays pending
	}
	if rec == nil || !d.Always || d.Behavior != protocol.BehaviorAllow {
		defer s.mu.Unlock()
		return s.finishAnswerLocked(perm, d, line, message)
	}

	perm.answering = true
	rules, tools := ruleStrings(perm)
	s.mu.Unlock()
	werr := rec.AllowRules(s.cfg.cwd, rules)
	s.mu.Lock()
	defer s.mu.Unlock()
	perm.answering = false
	if werr == nil {
		s.log.Info("permission rules recorded", "request_id", d.RequestID, "tools", tools, "rules", len(rules))
	} else {
		// The error names the file and the rules' tools only (mcpconfig).
		s.log.Warn("recording an allow rule failed", "request_id", d.RequestID, "tools", tools, "err", werr)
	}
	if s.permLocked(d.RequestID) != perm { // cancelled by claude or its exit meanwhile
		code, what := protocol.CodeAlreadyResolved, "was withdrawn by claude"
		if s.exited {
			code, what = protocol.CodeSessionExited, "was cancelled: claude exited"
		}
		kept := "; the allow rule could not be recorded"
		if werr == nil {
			kept = "; the allow rule was recorded and is kept"
		}
		return protocol.Errorf(code, "permission/respond: request %q %s while its rule was being recorded%s", truncate(d.RequestID, 80), what, kept)
	}
	if werr != nil {
		if perm.expired {
			s.timeOutLocked(perm)
		}
		return protocol.Errorf(protocol.CodeBadRequest, "permission/respond: the rule could not be recorded (%s); answer without always, or fix the file", truncate(werr.Error(), 300))
	}
	return s.finishAnswerLocked(perm, d, line, message)
}

// answerLine is claude's reply to an answer of perm (a control_response
// line) and the message of a deny. Errors are for the client.
func answerLine(perm *permission, d *protocol.PermissionRespond, dest string) ([]byte, string, error) {
	var resp map[string]any
	message := ""
	if d.Behavior == protocol.BehaviorAllow {
		var err error
		if resp, err = permissionAnswer(perm, d, dest); err != nil {
			return nil, "", err
		}
	} else {
		message = d.Message
		if message == "" {
			message = "Denied by the user"
		}
		resp = map[string]any{"behavior": "deny", "message": message}
	}
	line, err := stream.ControlSuccess(d.RequestID, resp)
	if err != nil {
		return nil, "", fmt.Errorf("permission answer: %w", err)
	}
	return line, message, nil
}

// finishAnswerLocked resolves perm with the client's answer: claude gets
// line, every subscriber permission/resolved. Answered and resolved under
// the lock: claude's events that follow the answer are appended (under this
// lock) after permission/resolved, so every subscriber sees the resolution
// before them. Answer never waits (like the timeout's): a claude that has
// not read its stdin for StdinQueue lines is killed.
func (s *Session) finishAnswerLocked(perm *permission, d *protocol.PermissionRespond, line []byte, message string) error {
	s.takePermLocked(perm.id)
	if err := perm.proc.Answer(line); err != nil {
		s.resolvedLocked(perm, protocol.BehaviorCancelled, protocol.ResolvedSessionExited, "")
		return protocol.Errorf(protocol.CodeSessionExited, "permission/respond: session %s: claude is gone, the answer could not be delivered", s.id)
	}
	s.resolvedLocked(perm, d.Behavior, protocol.ResolvedAnswered, message)
	s.log.Info("permission answered", "request_id", d.RequestID, "behavior", d.Behavior)
	return nil
}
