package protocol

import (
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Patterns shared with the JSON Schemas (schema/defs.json).
var (
	// Values that end up in claude's argv must not look like flags.
	modelPattern  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:/@\[\]-]{0,127}$`)
	resumePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$`)
	sha256Pattern = regexp.MustCompile(`^[0-9a-f]{64}$`)
	codePattern   = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	kindPattern   = regexp.MustCompile(`^[a-z][a-z0-9_-]*$`)
)

// Bounds on identifiers and names.
const (
	maxSessionIDBytes = 128
	maxNameBytes      = 256
	// MaxLogLimit is the largest mcp/log limit; DefaultLogLimit applies when
	// limit is absent.
	MaxLogLimit     = 1000
	DefaultLogLimit = 100
)

var (
	sessionStates     = []string{StateStarting, StateIdle, StateRunning, StateRestarting, StateExited, StateClosed}
	permissionModes   = []string{PermissionModeDefault, PermissionModeAcceptEdits, PermissionModePlan, PermissionModeBypass}
	permissionKinds   = []string{PermissionKindTool, PermissionKindQuestion, PermissionKindPlan}
	imageMediaTypes   = []string{"image/png", "image/jpeg", "image/gif", "image/webp"}
	respondBehaviors  = []string{BehaviorAllow, BehaviorDeny}
	resolvedBehaviors = []string{BehaviorAllow, BehaviorDeny, BehaviorCancelled}
	resolvedReasons   = []string{ResolvedAnswered, ResolvedTimeout, ResolvedCancelled, ResolvedSessionExited}
	exitReasons       = []string{ExitClosed, ExitShutdown, ExitExited}
	mcpStatuses       = []string{MCPConnected, MCPFailed, MCPPending, MCPNeedsAuth, MCPDisabled, MCPAwaitingApproval, MCPRejected}
	probeStatuses     = []string{MCPConnected, MCPFailed, MCPNeedsAuth, MCPDisabled, MCPAwaitingApproval, MCPRejected}
	scopes            = []string{ScopeUser, ScopeLocal, ScopeProject, ScopeManaged, ScopeExtra}
	approvals         = []string{ApprovalApproved, ApprovalAwaiting, ApprovalRejected, ApprovalNotNeeded}
	origins           = []string{OriginConfig, OriginSession, OriginProbe}
	transports        = []string{"stdio", "http", "sse", "ws"}
	logKinds          = []string{LogKindSession, LogKindDirect}
	paramTypes        = []string{"string", "number", "integer", "boolean", "object", "array", "null", "any"}
	probeCodes        = []string{ProbeCommandNotFound, ProbeServerNotFound, ProbeTimeout, ProbeConnectionRefused, ProbeAuthRequired, ProbeProcessExited, ProbeProtocolError, ProbeTransportUnsupported, ProbeNotActive}
)

// check accumulates field problems; its paths are relative to the data
// object, and DecodeData re-roots them under "data".
type check struct{ errs fieldErrors }

func (c *check) add(path, format string, args ...any) { c.errs.add(path, format, args...) }

func (c *check) err() error { return c.errs.err("", "") }

func (c *check) nonEmpty(path, v string) {
	if v == "" {
		c.add(path, "must not be empty")
	}
}

func (c *check) maxLen(path, v string, n int) {
	if len(v) > n {
		c.add(path, "too long: %d bytes, at most %d", len(v), n)
	}
}

func (c *check) session(path, v string) {
	c.nonEmpty(path, v)
	c.maxLen(path, v, maxSessionIDBytes)
}

func (c *check) name(path, v string) {
	c.nonEmpty(path, v)
	c.maxLen(path, v, maxNameBytes)
}

// enum checks a required enumerated value.
func (c *check) enum(path, v string, allowed []string) {
	if !slices.Contains(allowed, v) {
		c.add(path, "must be one of %s, got %q", quoteList(allowed), truncate(v, 40))
	}
}

// optEnum checks an optional enumerated value ("" = absent).
func (c *check) optEnum(path, v string, allowed []string) {
	if v != "" {
		c.enum(path, v, allowed)
	}
}

func (c *check) pattern(path, v string, re *regexp.Regexp, what string) {
	if !re.MatchString(v) {
		c.add(path, "must be %s, got %q", what, truncate(v, 40))
	}
}

func (c *check) min(path string, v, lo int64) {
	if v < lo {
		c.add(path, "must be at least %d, got %d", lo, v)
	}
}

func (c *check) object(path string, raw json.RawMessage) {
	if k := jsonKind(raw); k != "object" {
		c.add(path, "want an object, got %s", article(k))
	}
}

// optObject checks an optional JSON object field.
func (c *check) optObject(path string, raw json.RawMessage) {
	if len(raw) != 0 {
		c.object(path, raw)
	}
}

func (c *check) attachments(path string, as []Attachment) {
	for i, a := range as {
		a.check(c, fmt.Sprintf("%s[%d]", path, i))
	}
}

func quoteList(vs []string) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = fmt.Sprintf("%q", v)
	}
	return strings.Join(q, ", ")
}

// ---------------------------------------------------------------- requests

func (d SessionCreate) Validate() error {
	var c check
	if d.Cwd != "" {
		if !filepath.IsAbs(d.Cwd) && !strings.HasPrefix(d.Cwd, "/") {
			c.add("cwd", "must be an absolute path, got %q", truncate(d.Cwd, 80))
		}
		if strings.ContainsRune(d.Cwd, 0) {
			c.add("cwd", "must not contain NUL")
		}
	}
	if d.Model != "" {
		c.pattern("model", d.Model, modelPattern, "a model name (letters, digits, . _ : / @ [ ] -; not starting with -)")
	}
	c.optEnum("permissionMode", d.PermissionMode, permissionModes)
	if d.Resume != "" {
		c.pattern("resume", d.Resume, resumePattern, "a Claude session id (letters, digits, _ -)")
	}
	return c.err()
}

func (d SessionCreateResult) Validate() error {
	var c check
	c.session("session", d.Session)
	c.optEnum("state", d.State, sessionStates)
	return c.err()
}

func (d SessionSend) Validate() error {
	var c check
	c.session("session", d.Session)
	if d.Text == "" && len(d.Images) == 0 {
		c.add("text", "must not be empty unless images are sent")
	}
	for i, img := range d.Images {
		p := fmt.Sprintf("images[%d]", i)
		c.enum(p+".mediaType", img.MediaType, imageMediaTypes)
		if img.Data == "" {
			c.add(p+".data", "must not be empty")
		} else if !isStdBase64(img.Data) {
			c.add(p+".data", "must be standard base64 (no data: prefix, no line breaks)")
		}
	}
	return c.err()
}

func (d SessionSubscribe) Validate() error {
	var c check
	c.session("session", d.Session)
	if d.AfterSeq != nil {
		c.min("afterSeq", *d.AfterSeq, 0)
	}
	return c.err()
}

func (d SessionSubscribeResult) Validate() error {
	var c check
	c.session("session", d.Session)
	c.enum("state", d.State, sessionStates)
	c.min("firstSeq", d.FirstSeq, 1)
	c.min("lastSeq", d.LastSeq, 0)
	if d.FirstSeq > d.LastSeq+1 {
		c.add("firstSeq", "must be at most lastSeq+1 (%d), got %d", d.LastSeq+1, d.FirstSeq)
	}
	return c.err()
}

func (d SessionUnsubscribe) Validate() error { return sessionOnly(d.Session) }
func (d SessionInterrupt) Validate() error   { return sessionOnly(d.Session) }
func (d SessionClose) Validate() error       { return sessionOnly(d.Session) }

func sessionOnly(s string) error {
	var c check
	c.session("session", s)
	return c.err()
}

func (SessionList) Validate() error    { return nil }
func (MCPSubscribe) Validate() error   { return nil }
func (MCPUnsubscribe) Validate() error { return nil }
func (Empty) Validate() error          { return nil }

func (d SessionListResult) Validate() error {
	var c check
	for i, s := range d.Sessions {
		p := fmt.Sprintf("sessions[%d]", i)
		c.session(p+".session", s.Session)
		c.enum(p+".state", s.State, sessionStates)
		c.nonEmpty(p+".cwd", s.Cwd)
		c.optEnum(p+".permissionMode", s.PermissionMode, permissionModes)
		c.min(p+".firstSeq", s.FirstSeq, 1)
		c.min(p+".lastSeq", s.LastSeq, 0)
		c.min(p+".subscribers", s.Subscribers, 0)
		c.min(p+".pendingPermissions", s.PendingPermissions, 0)
	}
	return c.err()
}

func (d PermissionRespond) Validate() error {
	var c check
	c.session("session", d.Session)
	c.nonEmpty("requestId", d.RequestID)
	c.enum("behavior", d.Behavior, respondBehaviors)
	c.optObject("updatedInput", d.UpdatedInput)
	if len(d.UpdatedInput) != 0 && d.Behavior == BehaviorDeny {
		c.add("updatedInput", "only allowed with behavior \"allow\"")
	}
	if d.Message != "" && d.Behavior == BehaviorAllow {
		c.add("message", "only allowed with behavior \"deny\"")
	}
	if d.Always && d.Behavior != BehaviorAllow {
		c.add("always", "only allowed with behavior \"allow\"")
	}
	if d.Answers != nil && d.Behavior != BehaviorAllow {
		c.add("answers", "only allowed with behavior \"allow\"")
	}
	if d.Answers != nil && len(d.UpdatedInput) != 0 {
		c.add("answers", "not allowed with updatedInput (the answers are added to the question's input)")
	}
	for q := range d.Answers {
		if q == "" {
			c.add("answers", "a question must not be empty")
		}
	}
	return c.err()
}

func (d SessionSetPermissionMode) Validate() error {
	var c check
	c.session("session", d.Session)
	c.enum("mode", d.Mode, permissionModes)
	return c.err()
}

func (d SessionSetPermissionModeResult) Validate() error {
	var c check
	c.enum("mode", d.Mode, permissionModes)
	return c.err()
}

func (d MCPApprove) Validate() error { return nameOnly(d.Name) }
func (d MCPReject) Validate() error  { return nameOnly(d.Name) }
func (d MCPTools) Validate() error   { return nameOnly(d.Name) }

func (d MCPAdd) Validate() error    { return checkWrite(d.Name, d.Scope, d.Definition) }
func (d MCPUpdate) Validate() error { return checkWrite(d.Name, d.Scope, d.Definition) }

func checkWrite(name, scope string, def json.RawMessage) error {
	var c check
	c.name("name", name)
	c.optEnum("scope", scope, MCPWriteScopes)
	c.object("definition", def)
	return c.err()
}

func (d MCPRemove) Validate() error {
	var c check
	c.name("name", d.Name)
	c.optEnum("scope", d.Scope, MCPWriteScopes)
	return c.err()
}

func (d MCPManageResult) Validate() error {
	var c check
	c.name("name", d.Name)
	c.enum("scope", d.Scope, MCPWriteScopes)
	c.nonEmpty("file", d.File)
	if err := d.Config.Validate(); err != nil {
		c.add("config", "%v", err)
	}
	return c.err()
}

func (d MCPTest) Validate() error {
	var c check
	c.maxLen("name", d.Name, maxNameBytes)
	c.object("definition", d.Definition)
	return c.err()
}

func (d MCPToggle) Validate() error {
	var c check
	c.name("name", d.Name)
	if d.Enabled == nil {
		c.add("enabled", "is required (true or false)")
	}
	if d.Session != "" {
		c.session("session", d.Session)
		if d.Persist {
			c.add("persist", "applies to every session: leave session out")
		}
	}
	return c.err()
}

func (d MCPReconnect) Validate() error {
	var c check
	c.name("name", d.Name)
	if d.Session != "" {
		c.session("session", d.Session)
	}
	return c.err()
}

func (d MCPLiveResult) Validate() error {
	var c check
	c.name("name", d.Name)
	for i, o := range d.Sessions {
		c.session(fmt.Sprintf("sessions[%d].session", i), o.Session)
		if o.OK == (o.Error != nil) {
			c.add(fmt.Sprintf("sessions[%d]", i), "ok must be true exactly when there is no error")
		}
	}
	return c.err()
}

func (d MCPLogin) Validate() error {
	var c check
	c.name("name", d.Name)
	if d.Redirect != "" {
		c.httpURL("redirect", d.Redirect)
	}
	return c.err()
}

func (d MCPLogout) Validate() error { return nameOnly(d.Name) }

func (d MCPLoginResult) Validate() error {
	var c check
	c.name("name", d.Name)
	if d.URL != "" {
		c.httpURL("url", d.URL)
	}
	return c.err()
}

func (d MCPLogoutResult) Validate() error {
	return MCPLiveResult{Name: d.Name, Sessions: d.Sessions}.Validate()
}

func (d MCPLoginEvent) Validate() error {
	var c check
	c.name("name", d.Name)
	c.enum("state", d.State, LoginStates)
	switch d.State {
	case LoginURL:
		c.httpURL("url", d.URL)
	case LoginFailed:
		if d.Error == nil {
			c.add("error", "is required when state is failed")
		}
	}
	if d.State != LoginFailed && d.Error != nil {
		c.add("error", "only when state is failed")
	}
	if d.URL != "" && d.State != LoginURL {
		c.add("url", "only when state is url")
	}
	return c.err()
}

// httpURL checks an absolute http(s) URL.
func (c *check) httpURL(path, v string) {
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		c.add(path, "must be an absolute http or https URL")
	}
}

func nameOnly(n string) error {
	var c check
	c.name("name", n)
	return c.err()
}

func (d MCPApprovalResult) Validate() error {
	var c check
	c.name("name", d.Name)
	c.enum("approval", d.Approval, approvals)
	return c.err()
}

func (d MCPProbe) Validate() error {
	var c check
	c.maxLen("name", d.Name, maxNameBytes)
	return c.err()
}

func (d MCPProbeResult) Validate() error {
	var c check
	for i, r := range d.Results {
		r.check(&c, fmt.Sprintf("results[%d]", i))
	}
	return c.err()
}

func (r ProbeResult) check(c *check, p string) {
	c.name(p+".name", r.Name)
	c.optEnum(p+".scope", r.Scope, scopes)
	c.optEnum(p+".transport", r.Transport, transports)
	c.enum(p+".status", r.Status, probeStatuses)
	if r.OK != (r.Status == MCPConnected) {
		c.add(p+".ok", "must be true exactly when status is \"connected\"")
	}
	if !r.OK && r.Error == nil {
		c.add(p+".error", "required when ok is false")
	}
	if r.Error != nil {
		c.enum(p+".error.code", r.Error.Code, probeCodes)
		c.nonEmpty(p+".error.message", r.Error.Message)
	}
	if r.ServerInfo != nil {
		c.nonEmpty(p+".serverInfo.name", r.ServerInfo.Name)
	}
	c.optObject(p+".capabilities", r.Capabilities)
	c.min(p+".toolCount", r.ToolCount, 0)
	if r.Tools != nil && int64(len(r.Tools)) != r.ToolCount {
		c.add(p+".toolCount", "must equal the number of tools (%d), got %d", len(r.Tools), r.ToolCount)
	}
	for i, t := range r.Tools {
		c.nonEmpty(fmt.Sprintf("%s.tools[%d].name", p, i), t.Name)
	}
	if r.LatencyMs.Total < 0 {
		c.add(p+".latencyMs.total", "must not be negative")
	}
}

func (d MCPToolsResult) Validate() error {
	var c check
	c.name("server", d.Server)
	for i, t := range d.Tools {
		p := fmt.Sprintf("tools[%d]", i)
		c.nonEmpty(p+".name", t.Name)
		c.object(p+".inputSchema", t.InputSchema)
		c.optObject(p+".outputSchema", t.OutputSchema)
		c.optObject(p+".annotations", t.Annotations)
		for j, prm := range t.Parameters {
			prm.check(&c, fmt.Sprintf("%s.parameters[%d]", p, j))
		}
	}
	return c.err()
}

func (prm Parameter) check(c *check, p string) {
	c.nonEmpty(p+".path", prm.Path)
	c.enum(p+".type", prm.Type, paramTypes)
	if prm.MinLength != nil {
		c.min(p+".minLength", *prm.MinLength, 0)
	}
	if prm.MaxLength != nil {
		c.min(p+".maxLength", *prm.MaxLength, 0)
	}
	if prm.Items != nil {
		prm.Items.check(c, p+".items")
	}
	for _, sub := range []struct {
		name string
		list []Parameter
	}{{"properties", prm.Properties}, {"anyOf", prm.AnyOf}, {"oneOf", prm.OneOf}} {
		for i, q := range sub.list {
			q.check(c, fmt.Sprintf("%s.%s[%d]", p, sub.name, i))
		}
	}
}

func (d MCPCall) Validate() error {
	var c check
	c.name("name", d.Name)
	c.name("tool", d.Tool)
	c.object("arguments", d.Arguments)
	return c.err()
}

func (d MCPCallResult) Validate() error {
	var c check
	c.name("server", d.Server)
	c.name("tool", d.Tool)
	c.attachments("attachments", d.Attachments)
	if d.DurationMs < 0 {
		c.add("durationMs", "must not be negative")
	}
	return c.err()
}

func (a Attachment) check(c *check, p string) {
	c.pattern(p+".kind", a.Kind, kindPattern, "a lower-case kind such as \"image\"")
	c.min(p+".size", a.Size, 0)
	c.pattern(p+".sha256", a.SHA256, sha256Pattern, "64 lower-case hex digits")
	if a.Data != "" && !isStdBase64(a.Data) {
		c.add(p+".data", "must be standard base64")
	}
}

func (d MCPLog) Validate() error {
	var c check
	c.maxLen("server", d.Server, maxNameBytes)
	if d.Limit != nil && (*d.Limit < 1 || *d.Limit > MaxLogLimit) {
		c.add("limit", "must be between 1 and %d, got %d", MaxLogLimit, *d.Limit)
	}
	return c.err()
}

func (d MCPLogResult) Validate() error {
	var c check
	for i, e := range d.Entries {
		p := fmt.Sprintf("entries[%d]", i)
		c.enum(p+".kind", e.Kind, logKinds)
		if e.Kind == LogKindSession && e.Session == "" {
			c.add(p+".session", "required for kind \"session\"")
		}
		c.name(p+".server", e.Server)
		c.name(p+".tool", e.Tool)
		c.min(p+".resultBytes", e.ResultBytes, 0)
	}
	return c.err()
}

// ---------------------------------------------------------------- pushes

func (d Hello) Validate() error {
	var c check
	c.nonEmpty("protocol", d.Protocol)
	c.nonEmpty("server.name", d.Server.Name)
	c.nonEmpty("server.version", d.Server.Version)
	for i, cap := range d.Capabilities {
		c.nonEmpty(fmt.Sprintf("capabilities[%d]", i), cap)
	}
	c.min("limits.maxFrameBytes", d.Limits.MaxFrameBytes, 1)
	c.min("limits.sendQueueFrames", d.Limits.SendQueueFrames, 1)
	c.min("limits.replayBytes", d.Limits.ReplayBytes, 1)
	return c.err()
}

func (d SessionEvent) Validate() error {
	var c check
	c.session("session", d.Session)
	c.min("seq", d.Seq, 1)
	if k := jsonKind(d.Event); k != "object" {
		c.add("event", "want an object, got %s", article(k))
	} else {
		var head struct {
			Type *string `json:"type"`
		}
		if err := json.Unmarshal(d.Event, &head); err != nil || head.Type == nil {
			c.add("event.type", "required, a string")
		}
	}
	return c.err()
}

func (d SessionState) Validate() error {
	var c check
	c.session("session", d.Session)
	c.enum("state", d.State, sessionStates)
	c.optEnum("permissionMode", d.PermissionMode, permissionModes)
	return c.err()
}

func (d SessionExited) Validate() error {
	var c check
	c.session("session", d.Session)
	if d.Code == nil && d.Signal == nil {
		c.add("code", "code or signal must be set")
	}
	if d.Signal != nil {
		c.nonEmpty("signal", *d.Signal)
	}
	c.optEnum("reason", d.Reason, exitReasons)
	return c.err()
}

func (d SessionGap) Validate() error {
	var c check
	c.session("session", d.Session)
	c.min("firstSeq", d.FirstSeq, 1)
	return c.err()
}

func (d PermissionRequest) Validate() error {
	var c check
	c.session("session", d.Session)
	c.nonEmpty("requestId", d.RequestID)
	c.nonEmpty("toolName", d.ToolName)
	c.object("input", d.Input)
	if d.MCP != nil {
		c.nonEmpty("mcp.server", d.MCP.Server)
		c.nonEmpty("mcp.tool", d.MCP.Tool)
	}
	if len(d.Suggestions) != 0 && jsonKind(d.Suggestions) != "array" {
		c.add("suggestions", "want an array, got %s", article(jsonKind(d.Suggestions)))
	}
	c.optEnum("kind", d.Kind, permissionKinds)
	if d.Kind != PermissionKindQuestion && len(d.Questions) > 0 {
		c.add("questions", "only allowed with kind \"question\"")
	}
	if d.Kind != PermissionKindPlan && d.Plan != "" {
		c.add("plan", "only allowed with kind \"plan\"")
	}
	if (d.Kind == PermissionKindQuestion || d.Kind == PermissionKindPlan) && !d.Deadline.IsZero() {
		c.add("deadline", "a %s waits for a person: no deadline", d.Kind)
	}
	for i, q := range d.Questions {
		c.nonEmpty(fmt.Sprintf("questions[%d].question", i), q.Question)
		for j, o := range q.Options {
			c.nonEmpty(fmt.Sprintf("questions[%d].options[%d].label", i, j), o.Label)
		}
	}
	return c.err()
}

func (d PermissionResolved) Validate() error {
	var c check
	c.session("session", d.Session)
	c.nonEmpty("requestId", d.RequestID)
	c.enum("behavior", d.Behavior, resolvedBehaviors)
	c.optEnum("reason", d.Reason, resolvedReasons)
	return c.err()
}

func (d MCPStatus) Validate() error {
	var c check
	for i, s := range d.Servers {
		p := fmt.Sprintf("servers[%d]", i)
		c.name(p+".name", s.Name)
		if i > 0 && s.Name <= d.Servers[i-1].Name {
			c.add(p+".name", "servers must be sorted by name, one entry per name: %q follows %q", truncate(s.Name, 40), truncate(d.Servers[i-1].Name, 40))
		}
		c.enum(p+".status", s.Status, mcpStatuses)
		c.enum(p+".scope", s.Scope, scopes)
		c.enum(p+".approval", s.Approval, approvals)
		c.optEnum(p+".errorCode", s.ErrorCode, probeCodes)
		if s.ToolCount != nil {
			c.min(p+".toolCount", *s.ToolCount, 0)
			if s.Tools != nil && int64(len(s.Tools)) != *s.ToolCount {
				c.add(p+".toolCount", "must equal the number of tools (%d), got %d", len(s.Tools), *s.ToolCount)
			}
		}
		c.optEnum(p+".transport", s.Transport, transports)
		c.optEnum(p+".origin", s.Origin, origins)
	}
	return c.err()
}

func (d MCPConfig) Validate() error {
	var c check
	for i, s := range d.Servers {
		p := fmt.Sprintf("servers[%d]", i)
		c.name(p+".name", s.Name)
		c.enum(p+".scope", s.Scope, scopes)
		c.enum(p+".type", s.Type, transports)
		c.enum(p+".approval", s.Approval, approvals)
		for j, sh := range s.Shadows {
			c.enum(fmt.Sprintf("%s.shadows[%d].scope", p, j), sh.Scope, scopes)
		}
		c.optObject(p+".config", s.Config)
	}
	for i, e := range d.Errors {
		c.nonEmpty(fmt.Sprintf("errors[%d].file", i), e.File)
		c.nonEmpty(fmt.Sprintf("errors[%d].message", i), e.Message)
	}
	return c.err()
}

// Validate checks an error reply's error member.
func (e Error) Validate() error {
	var c check
	c.pattern("code", string(e.Code), codePattern, "a lower_snake_case code")
	c.nonEmpty("message", e.Message)
	return c.err()
}

// isStdBase64 reports whether s is padded standard base64: a multiple of 4
// characters of A–Z a–z 0–9 + /, with at most two "=" at the end. It is the
// schema's pattern as one pass over the bytes: images are megabytes.
func isStdBase64(s string) bool {
	if len(s)%4 != 0 {
		return false
	}
	pad := 0
	if strings.HasSuffix(s, "==") {
		pad = 2
	} else if strings.HasSuffix(s, "=") {
		pad = 1
	}
	for i := 0; i < len(s)-pad; i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/') {
			return false
		}
	}
	return true
}
