package broker

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/ccproxy/ccproxy/internal/textutil"
	"github.com/ccproxy/ccproxy/protocol"
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

// RuleRecorder writes permission rules for a session's directory: an
// mcphub.Source that can (mcphub.ConfigSource: mcpconfig.AllowRules, locked
// across processes).
type RuleRecorder interface {
	AllowRules(dir string, rules []string) error
}

// Session is the session a Broker brokers for, as the broker sees it.
type Session interface {
	// Push queues frame to every live subscriber of the session (its
	// hub). Called with the session's lock held; it must not block.
	Push(frame []byte)
	// Exited reports whether the session has exited. Called with the
	// session's lock held.
	Exited() bool
	// Allows reports whether the session's permission rules allow tool
	// without asking. Called without the session's lock.
	Allows(tool string, mcp *protocol.MCPRef) bool
}

// Process is the claude process that asked: the broker answers it.
// Answer queues a control_response line for claude's stdin without
// blocking (claudecli.Client.Answer); a claude that has not read its stdin
// for so long that the queue is full is killed by it.
type Process interface {
	Answer(line []byte) error
}

// Metrics counts the permission requests (the proxy's metrics). Its
// methods are called with the session's lock held: they take only locks
// of their own.
type Metrics interface {
	PermissionAsked(kind string)
	PermissionDone(kind string, waited time.Duration)
}

// Config is what a Broker is made with; it never changes.
type Config struct {
	Session    string        // the session's id, in the pushes
	Log        *slog.Logger  // nil: discarded
	Metrics    Metrics       // nil: not counted
	Timeout    time.Duration // a tool use unanswered this long is denied (<= 0: never)
	MaxPending int           // more pending requests are denied at once
	Rules      RuleRecorder  // writes "always" rules (nil: claude writes them: destLocalSettings)
	Cwd        string        // the session's directory, where rules are written
	Mode       string        // the permission mode the session starts in
}

// Destinations of updatedPermissions (measured): localSettings has claude
// apply the rules and write them to .claude/settings.local.json itself
// (without a lock); session has it apply them only.
const (
	destLocalSettings = "localSettings"
	destSession       = "session"
)

// Broker is the permission broker of a session. perms, resolved and mode
// are guarded by *mu, the session's lock (the broker is a part of the
// session, not a lock of its own); the other fields are set by New and
// never change but wg.
type Broker struct {
	mu         *sync.Mutex // the session's lock
	sess       Session
	session    string // the session's id, in the pushes
	log        *slog.Logger
	metrics    Metrics
	timeout    time.Duration  // Config.Timeout
	maxPending int            // Config.MaxPending
	rules      RuleRecorder   // Config.Rules
	cwd        string         // Config.Cwd
	wg         sync.WaitGroup // the permission timers (AfterFuncs): counted when armed, released when they run or are stopped

	perms    []*permission // pending, in arrival order (a few at most: a linear search is fine)
	resolved recentSet     // request ids answered, timed out or cancelled
	mode     string        // the permission mode: claude's last report, or set by session/setPermissionMode
}

// New returns the broker of session sess, whose lock is mu.
func New(mu *sync.Mutex, sess Session, cfg Config) *Broker {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Metrics == nil {
		cfg.Metrics = noMetrics{}
	}
	return &Broker{mu: mu, sess: sess, session: cfg.Session, log: cfg.Log, metrics: cfg.Metrics,
		timeout: cfg.Timeout, maxPending: cfg.MaxPending, rules: cfg.Rules, cwd: cfg.Cwd, mode: cfg.Mode}
}

type noMetrics struct{}

func (noMetrics) PermissionAsked(string)               {}
func (noMetrics) PermissionDone(string, time.Duration) {}

// permission is a pending can_use_tool request of claude.
type permission struct {
	id          string
	proc        Process
	kind        string // protocol.PermissionKind*
	tool        string
	input       json.RawMessage
	suggestions json.RawMessage // the CLI's permission_suggestions (for "always")
	frame       []byte          // the permission/request push
	timer       *time.Timer
	asked       time.Time // when it arrived (ccproxy_permission_wait_seconds)
	answering   bool      // an "always" answer claimed it and is recording its rules (Broker.Respond)
	expired     bool      // its timeout ran while it was claimed: denied if the claim is released
}

// recentSet remembers the last recentMax ids added.
type recentSet struct {
	m    map[string]struct{}
	ring []string
	next int
}

const recentMax = 1024

func (r *recentSet) add(id string) {
	if r.m == nil {
		r.m = map[string]struct{}{}
		r.ring = make([]string, recentMax)
	}
	if old := r.ring[r.next]; old != "" {
		delete(r.m, old)
	}
	r.ring[r.next] = id
	r.next = (r.next + 1) % recentMax
	r.m[id] = struct{}{}
}

func (r *recentSet) has(id string) bool { _, ok := r.m[id]; return ok }

// recorder is the MCP source's RuleRecorder when it has one: "always"
// answers are then written by the proxy (destSession for claude); without
// one claude writes them itself (destLocalSettings).
func (b *Broker) recorder() (RuleRecorder, string) {
	if b.rules != nil {
		return b.rules, destSession
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
// apply at dest (Broker.recorder). Errors are protocol errors for the client;
// Broker.Respond checks them before it records any rule.
func permissionAnswer(perm *permission, d *protocol.PermissionRespond, dest string) (map[string]any, error) {
	in := perm.input
	if len(d.UpdatedInput) > 0 {
		in = d.UpdatedInput
	}
	if d.Answers != nil {
		if perm.kind != protocol.PermissionKindQuestion {
			return nil, protocol.Errorf(protocol.CodeBadRequest, "permission/respond: answers are only for a question; request %q is a %s", textutil.Truncate(d.RequestID, 80), perm.kind)
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
			return nil, protocol.Errorf(protocol.CodeBadRequest, "permission/respond: always is only for a tool use; request %q is a %s", textutil.Truncate(d.RequestID, 80), perm.kind)
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
			return protocol.FieldErrorf(protocol.TypePermissionRespond, "data.answers", "%q is not a question asked; the questions are %s (each answer's key is a question's text)", textutil.Truncate(k, 120), quoteList(asked))
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
		parts = append(parts, strconv.Quote(textutil.Truncate(q, 120)))
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

// NoteMode records the permission mode claude reports in system/init
// and system/status events, and reports whether it changed (the CLI
// changes it itself, e.g. leaving plan mode once a plan is approved).
// Called with mu held.
func (b *Broker) NoteMode(ev *stream.Event) (changed bool) {
	if ev.Type != stream.TypeSystem {
		return false
	}
	if m := gjson.GetBytes(ev.JSON, "permissionMode"); m.Type == gjson.String && m.Str != "" {
		return b.SetMode(m.Str)
	}
	return false
}

// SetMode sets the permission mode and reports whether it changed.
// Called with mu held.
func (b *Broker) SetMode(mode string) (changed bool) {
	if mode == b.mode {
		return false
	}
	b.mode = mode
	return true
}

// The broker's core: a can_use_tool becomes a permission/request pushed to
// every subscriber; the first answer (or the timeout, for tool uses) wins.

// Mode is the permission mode. Called with mu held.
func (b *Broker) Mode() string { return b.mode }

// Pending is the number of pending requests. Called with mu held.
func (b *Broker) Pending() int { return len(b.perms) }

// CountPending adds the pending requests to byKind, by kind. Called with
// mu held.
func (b *Broker) CountPending(byKind map[string]int) {
	for _, p := range b.perms {
		byKind[p.kind]++
	}
}

// AppendFrames appends the permission/request pushes of the pending
// requests, in arrival order, to frames (what a subscription gets when it
// turns live). Called with mu held.
func (b *Broker) AppendFrames(frames [][]byte) [][]byte {
	for _, perm := range b.perms {
		frames = append(frames, perm.frame)
	}
	return frames
}

// Wait waits for the permission timers that run; the session's close
// calls it after the last process ended.
func (b *Broker) Wait() { b.wg.Wait() }

// Request handles claude's can_use_tool id (line) of process p.
func (b *Broker) Request(p Process, id string, line []byte) {
	req := gjson.GetBytes(line, "request")
	input := json.RawMessage(`{}`)
	if in := req.Get("input"); in.IsObject() {
		input = json.RawMessage(bytes.Clone([]byte(in.Raw)))
	}
	pr := protocol.PermissionRequest{
		Session:     b.session,
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
	if pr.Kind == protocol.PermissionKindTool && b.sess.Allows(pr.ToolName, pr.MCP) {
		b.log.Info("permission allowed by the permission rules", "tool", pr.ToolName)
		resp, _ := stream.ControlSuccess(id, map[string]any{"behavior": "allow", "updatedInput": input})
		answerClaude(p, resp)
		return
	}

	timeout := b.timeout
	if waitsForPerson(pr.Kind) {
		timeout = 0 // never auto-denied
	}
	if timeout > 0 {
		pr.Deadline = time.Now().Add(timeout).UTC()
	}
	frame, err := protocol.EncodePush(protocol.TypePermissionRequest, pr)
	if err != nil {
		b.log.Error("permission request cannot be sent to clients; denied", "err", err)
		resp, _ := stream.ControlSuccess(id, map[string]any{"behavior": "deny", "message": "ccproxy could not show this permission request"})
		answerClaude(p, resp)
		return
	}
	perm := &permission{id: id, proc: p, kind: pr.Kind, tool: pr.ToolName, input: input, suggestions: pr.Suggestions, frame: frame, asked: time.Now()}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.find(id) != nil || b.sess.Exited() {
		return
	}
	if len(b.perms) >= b.maxPending {
		b.log.Warn("too many pending permission requests; denied", "request_id", id, "tool", pr.ToolName, "pending", len(b.perms))
		resp, _ := stream.ControlSuccess(id, map[string]any{"behavior": "deny",
			"message": fmt.Sprintf("ccproxy denied this request: %d permission requests are already waiting for an answer", len(b.perms))})
		answerClaude(p, resp) // does not block
		return
	}
	b.perms = append(b.perms, perm)
	b.metrics.PermissionAsked(perm.kind)
	b.sess.Push(frame)
	if timeout > 0 {
		b.wg.Add(1)
		perm.timer = time.AfterFunc(timeout, func() {
			defer b.wg.Done()
			b.timedOut(id)
		})
	}
	b.log.Info("permission requested", "request_id", id, "tool", pr.ToolName)
}

// find returns the pending request id, or nil. Called with mu held.
func (b *Broker) find(id string) *permission {
	if i := slices.IndexFunc(b.perms, func(p *permission) bool { return p.id == id }); i >= 0 {
		return b.perms[i]
	}
	return nil
}

// CancelOf cancels (session_exited) the pending requests of process of:
// nobody can answer them any more. Called with mu held.
func (b *Broker) CancelOf(of Process) { b.cancel(of) }

// CancelAll cancels (session_exited) every pending request: the session
// has exited. Called with mu held.
func (b *Broker) CancelAll() { b.cancel(nil) }

// cancel cancels the pending requests of process of, or every one when of
// is nil. Called with mu held.
func (b *Broker) cancel(of Process) {
	for _, perm := range slices.Clone(b.perms) {
		if of == nil || perm.proc == of {
			b.take(perm.id)
			b.pushResolved(perm, protocol.BehaviorCancelled, protocol.ResolvedSessionExited, "")
		}
	}
}

// take removes a pending request (nil if it is not pending), stops its
// timer and remembers it was resolved. Called with mu held.
func (b *Broker) take(id string) *permission {
	i := slices.IndexFunc(b.perms, func(p *permission) bool { return p.id == id })
	if i < 0 {
		return nil
	}
	perm := b.perms[i]
	b.perms = slices.Delete(b.perms, i, i+1)
	if perm.timer != nil && perm.timer.Stop() {
		b.wg.Done() // the AfterFunc will not run
	}
	b.resolved.add(id)
	b.metrics.PermissionDone(perm.kind, time.Since(perm.asked))
	return perm
}

// pushResolved tells every subscriber how perm was resolved. Called with
// mu held.
func (b *Broker) pushResolved(perm *permission, behavior, reason, message string) {
	f, err := protocol.EncodePush(protocol.TypePermissionResolved, protocol.PermissionResolved{
		Session: b.session, RequestID: perm.id, Behavior: behavior, Reason: reason, Message: message})
	if err != nil {
		b.log.Error("permission resolved", "err", err)
		return
	}
	b.sess.Push(f)
}

// timedOut runs when the timeout of request id passed (its timer).
func (b *Broker) timedOut(id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	perm := b.find(id)
	if perm == nil {
		return
	}
	perm.timer = nil // running now: nothing to stop
	if perm.answering {
		// An "always" answer is recording its rule: it wins unless the
		// write fails (respond then denies it).
		perm.expired = true
		return
	}
	b.timeOut(perm)
}

// timeOut denies perm for want of an answer within its timeout. Called
// with mu held.
func (b *Broker) timeOut(perm *permission) {
	timeout := b.timeout
	b.take(perm.id)
	msg := fmt.Sprintf("No answer to the permission request within %v: denied by ccproxy.", timeout)
	resp, _ := stream.ControlSuccess(perm.id, map[string]any{"behavior": "deny", "message": msg})
	answerClaude(perm.proc, resp)
	b.pushResolved(perm, protocol.BehaviorDeny, protocol.ResolvedTimeout, msg)
	b.log.Info("permission request timed out; denied", "request_id", perm.id, "timeout", timeout)
}

// Respond answers a pending request (first answer wins). On
// success every subscriber, the answering client included, has been sent
// permission/resolved when it returns.
//
// An "always" allow with a ruleRecorder is checked like any answer, then
// claimed under mu (perm.answering: other answers get already_resolved,
// the timeout waits for it), the rules are written outside the lock, and the
// answer is finished under the lock again. So a rule is only ever written
// for an answer that is valid and has won. A failed write releases the
// claim: the request stays pending (or, if its timeout passed meanwhile, is
// denied now) and the client gets the error. Claude's withdrawal or exit
// during the write is not held up: the request is cancelled, the rule the
// person chose stays, and the client is told.
func (b *Broker) Respond(ctx context.Context, d *protocol.PermissionRespond) error {
	rec, dest := b.recorder()
	b.mu.Lock()
	perm := b.find(d.RequestID)
	if perm == nil || perm.answering {
		known := perm != nil || b.resolved.has(d.RequestID)
		b.mu.Unlock()
		if known {
			return protocol.Errorf(protocol.CodeAlreadyResolved, "permission/respond: request %q was already answered, timed out or was cancelled", textutil.Truncate(d.RequestID, 80))
		}
		return protocol.Errorf(protocol.CodeNotFound, "permission/respond: session %s has no permission request %q", b.session, textutil.Truncate(d.RequestID, 80))
	}
	line, message, err := answerLine(perm, d, dest)
	if err != nil {
		b.mu.Unlock()
		return err // the request stays pending
	}
	if rec == nil || !d.Always || d.Behavior != protocol.BehaviorAllow {
		defer b.mu.Unlock()
		return b.finish(perm, d, line, message)
	}

	perm.answering = true
	rules, tools := ruleStrings(perm)
	b.mu.Unlock()
	werr := rec.AllowRules(b.cwd, rules)
	b.mu.Lock()
	defer b.mu.Unlock()
	perm.answering = false
	if werr == nil {
		b.log.Info("permission rules recorded", "request_id", d.RequestID, "tools", tools, "rules", len(rules))
	} else {
		// The error names the file and the rules' tools only (mcpconfig).
		b.log.Warn("recording an allow rule failed", "request_id", d.RequestID, "tools", tools, "err", werr)
	}
	if b.find(d.RequestID) != perm { // cancelled by claude or its exit meanwhile
		code, what := protocol.CodeAlreadyResolved, "was withdrawn by claude"
		if b.sess.Exited() {
			code, what = protocol.CodeSessionExited, "was cancelled: claude exited"
		}
		kept := "; the allow rule could not be recorded"
		if werr == nil {
			kept = "; the allow rule was recorded and is kept"
		}
		return protocol.Errorf(code, "permission/respond: request %q %s while its rule was being recorded%s", textutil.Truncate(d.RequestID, 80), what, kept)
	}
	if werr != nil {
		if perm.expired {
			b.timeOut(perm)
		}
		return protocol.Errorf(protocol.CodeBadRequest, "permission/respond: the rule could not be recorded (%s); answer without always, or fix the file", textutil.Truncate(werr.Error(), 300))
	}
	return b.finish(perm, d, line, message)
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

// finish resolves perm with the client's answer: claude gets
// line, every subscriber permission/resolved. Answered and resolved under
// the lock: claude's events that follow the answer are appended (under this
// lock) after permission/resolved, so every subscriber sees the resolution
// before them. Called with mu held. Answer never waits (like the timeout's): a claude that has
// not read its stdin for StdinQueue lines is killed.
func (b *Broker) finish(perm *permission, d *protocol.PermissionRespond, line []byte, message string) error {
	b.take(perm.id)
	if err := perm.proc.Answer(line); err != nil {
		b.pushResolved(perm, protocol.BehaviorCancelled, protocol.ResolvedSessionExited, "")
		return protocol.Errorf(protocol.CodeSessionExited, "permission/respond: session %s: claude is gone, the answer could not be delivered", b.session)
	}
	b.pushResolved(perm, d.Behavior, protocol.ResolvedAnswered, message)
	b.log.Info("permission answered", "request_id", d.RequestID, "behavior", d.Behavior)
	return nil
}

// Withdraw handles claude's control_cancel_request of a pending request
// (claudecli.Config.OnControlCancel).
func (b *Broker) Withdraw(id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	perm := b.take(id)
	if perm == nil {
		return
	}
	b.pushResolved(perm, protocol.BehaviorCancelled, protocol.ResolvedCancelled, "")
}

// answerClaude queues an answer to a control request of claude without
// blocking. If claude has not read its stdin for so long that the queue is
// full, the session cannot go on: the client kills the process.
func answerClaude(p Process, line []byte) { _ = p.Answer(line) }
