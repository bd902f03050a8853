package protocol

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/ccproxy/ccproxy/internal/textutil"
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

// tagConsts are the names a schema tag may use for a number.
var tagConsts = map[string]int{
	"maxSessionIDBytes":        maxSessionIDBytes,
	"maxNameBytes":             maxNameBytes,
	"MaxLogLimit":              MaxLogLimit,
	"MaxHistoryListLimit":      MaxHistoryListLimit,
	"MaxHistoryReadLimit":      MaxHistoryReadLimit,
	"maxHistoryCursorBytes":    maxHistoryCursorBytes,
	"MaxModelBytes":            MaxModelBytes,
	"MaxModelDisplayNameBytes": MaxModelDisplayNameBytes,
	"MaxModelDescriptionBytes": MaxModelDescriptionBytes,
	"MaxModels":                MaxModels,
	"MaxCommands":              MaxCommands,
	"MaxRewindFiles":           MaxRewindFiles,
	"MaxHistorySearchLimit":    MaxHistorySearchLimit,
	"maxHistorySearchQuery":    maxHistorySearchQuery,
	"MaxHistorySearchMatches":  MaxHistorySearchMatches,
}

// Enumerations: the schema's enums (defs.json) are made from these lists.
var (
	sessionStates     = []string{StateStarting, StateIdle, StateRunning, StateRestarting, StateExited, StateClosed, StateSuspended}
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
	titleFroms        = []string{"summary", "prompt", "custom"}
	exportFormats     = []string{ExportMarkdown, ExportJSONL}
	searchRoles       = []string{SearchRoleUser, SearchRoleAssistant, SearchRoleTool}
	paramTypes        = []string{"string", "number", "integer", "boolean", "object", "array", "null", "any"}
	probeCodes        = []string{ProbeCommandNotFound, ProbeServerNotFound, ProbeTimeout, ProbeConnectionRefused, ProbeAuthRequired, ProbeProcessExited, ProbeProtocolError, ProbeTransportUnsupported, ProbeNotActive}
)

// ---------------------------------------------------------------- schemas at run time

// compiled holds the schemas validation uses: one resolved schema per data
// type, made once, on first use, from the same generator as the files.
type compiled struct {
	byType map[reflect.Type]*typeSchema
	defs   map[string]*jsonschema.Schema // defs.json's definitions, to explain failures
}

type typeSchema struct {
	schema   *jsonschema.Schema
	resolved *jsonschema.Resolved
}

// schemas returns the compiled schemas; building them fails only if the
// generator is broken, which the package's tests would show.
var schemas = sync.OnceValue(func() *compiled {
	c, err := compile()
	if err != nil {
		panic("protocol: compiling the schemas: " + err.Error())
	}
	return c
})

// dataTypes returns every Go type whose values are validated.
func dataTypes() []reflect.Type {
	var ts []reflect.Type
	for _, reg := range []map[string]func() Data{requestData, resultData, pushData} {
		for _, typ := range sortedKeys(reg) {
			t := reflect.TypeOf(reg[typ]()).Elem()
			if !slices.Contains(ts, t) {
				ts = append(ts, t)
			}
		}
	}
	return append(ts, reflect.TypeFor[Error]())
}

func compile() (*compiled, error) {
	// Each type's schema carries the definitions it uses in its own $defs,
	// so that resolving it does not resolve all of defs.json again.
	g := newGenerator("#/$defs/", fileDefs())
	defs, err := g.allDefs()
	if err != nil {
		return nil, err
	}
	c := &compiled{byType: map[reflect.Type]*typeSchema{}, defs: defs}
	for _, t := range dataTypes() {
		s, err := g.schemaOf(t)
		if err != nil {
			return nil, err
		}
		s.ID = SchemaBase + "go." + t.Name() + ".json"
		s.Defs = map[string]*jsonschema.Schema{}
		addUsedDefs(s, defs, s.Defs)
		r, err := s.Resolve(nil)
		if err != nil {
			return nil, fmt.Errorf("resolving the schema of %v: %w", t, err)
		}
		c.byType[t] = &typeSchema{schema: s, resolved: r}
	}
	return c, nil
}

// addUsedDefs adds to used (a clone of) each definition of defs that s
// refers to, directly or through other definitions.
func addUsedDefs(s *jsonschema.Schema, defs, used map[string]*jsonschema.Schema) {
	if s == nil {
		return
	}
	if _, name, ok := strings.Cut(s.Ref, "#/$defs/"); ok && used[name] == nil && defs[name] != nil {
		used[name] = defs[name].CloneSchemas()
		addUsedDefs(used[name], defs, used)
	}
	for _, p := range s.Properties {
		addUsedDefs(p, defs, used)
	}
	for _, sub := range []*jsonschema.Schema{s.Items, s.AdditionalProperties, s.PropertyNames, s.Not, s.If, s.Then, s.Else} {
		addUsedDefs(sub, defs, used)
	}
	for _, list := range [][]*jsonschema.Schema{s.AllOf, s.AnyOf, s.OneOf} {
		for _, sub := range list {
			addUsedDefs(sub, defs, used)
		}
	}
}

// ---------------------------------------------------------------- validation

// semanticChecker is implemented by data types with rules a JSON Schema
// cannot state (an order, a count that must match a list).
type semanticChecker interface {
	checkSemantics(c *check)
}

// validateValue validates a Go value of a data type: its JSON encoding
// against the type's schema, then the rules of checkSemantics. Paths in
// the error are relative to the value.
func validateValue(v any) error {
	_, err := validateEncode(v)
	return err
}

// validateEncode is validateValue that also returns the encoding.
func validateEncode(v any) (json.RawMessage, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, Errorf(CodeInternal, "encoding %T: %v", v, err)
	}
	var inst any
	if err := json.Unmarshal(raw, &inst); err != nil {
		return nil, Errorf(CodeInternal, "decoding %T: %v", v, err)
	}
	t := reflect.TypeOf(v)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var c check
	validateInstance(t, inst, "", &c.errs)
	if len(c.errs) == 0 {
		if sc, ok := v.(semanticChecker); ok {
			sc.checkSemantics(&c)
		}
	}
	if err := c.err(); err != nil {
		return nil, err
	}
	return raw, nil
}

// validateInstance validates inst, a decoded JSON value, against the schema
// of Go type t, adding each problem under path to errs.
func validateInstance(t reflect.Type, inst any, path string, errs *fieldErrors) {
	ts := schemas().byType[t]
	if ts == nil {
		errs.add(path, "no schema for %v", t)
		return
	}
	err := ts.resolved.Validate(inst)
	if err == nil {
		return
	}
	before := len(*errs)
	explain(ts.schema, inst, path, errs)
	if len(*errs) == before {
		// The explanation missed what the validator saw: say what it said.
		errs.add(path, "%s", textutil.Truncate(err.Error(), 300))
	}
}

// ---------------------------------------------------------------- explaining a failure

// explain adds to errs, with their paths, the reasons inst does not match
// s. It covers the keywords the generator writes; the verdict is the
// validator's (validateInstance asks it first).
func explain(s *jsonschema.Schema, inst any, path string, errs *fieldErrors) {
	if s == nil {
		return
	}
	if msg, ok := s.Extra["errorMessage"].(string); ok {
		var sub fieldErrors
		explainKeywords(s, inst, path, &sub)
		switch {
		case len(sub) == 0:
		case wrongKind(sub, path):
			*errs = append(*errs, sub...) // the value is of the wrong kind: say so
		default:
			errs.add(path, "%s", msg)
		}
		return
	}
	explainKeywords(s, inst, path, errs)
}

// wrongKind reports whether errs, explaining a value at path, start with
// the value being of the wrong kind ("want an object, got an array").
func wrongKind(errs fieldErrors, path string) bool {
	return len(errs) > 0 && errs[0].Path == path && (strings.HasPrefix(errs[0].Message, "want ") || errs[0].Message == "must not be null")
}

func matches(s *jsonschema.Schema, inst any) bool {
	var e fieldErrors
	explain(s, inst, "", &e)
	return len(e) == 0
}

func explainKeywords(s *jsonschema.Schema, inst any, path string, errs *fieldErrors) {
	if s.Ref != "" {
		_, name, _ := strings.Cut(s.Ref, "#/$defs/")
		if def := schemas().defs[name]; def != nil {
			explain(def, inst, path, errs)
		}
	}
	if s.Not != nil && matches(s.Not, inst) {
		errs.add(path, "not allowed here")
	}
	if !explainKind(s, inst, path, errs) {
		return
	}
	switch v := inst.(type) {
	case string:
		explainString(s, v, path, errs)
	case float64:
		explainNumber(s, v, path, errs)
	case []any:
		explainArray(s, v, path, errs)
	case map[string]any:
		explainObject(s, v, path, errs)
	}
	for _, sub := range s.AllOf {
		explain(sub, inst, path, errs)
	}
	if s.If != nil {
		if matches(s.If, inst) {
			explain(s.Then, inst, path, errs)
		} else {
			explain(s.Else, inst, path, errs)
		}
	}
	explainAlternatives(s, inst, path, errs)
}

// explainKind explains a value of the wrong type, or not one of enum or
// const; it reports whether the value's own keywords are worth explaining
// too (false when its kind or value is already wrong).
func explainKind(s *jsonschema.Schema, inst any, path string, errs *fieldErrors) bool {
	kind := instKind(inst)
	if s.Type != "" || s.Types != nil {
		want := s.Types
		if s.Type != "" {
			want = []string{s.Type}
		}
		if !slices.Contains(want, kind) && !(kind == "integer" && slices.Contains(want, "number")) {
			got := article(kind)
			if kind == "integer" {
				got = "a number"
			}
			if (kind == "number" || kind == "integer") && slices.Contains(want, "integer") {
				got = textutil.Truncate(strconv.FormatFloat(inst.(float64), 'g', -1, 64), 40)
			}
			if kind == "null" {
				errs.add(path, "must not be null")
			} else {
				errs.add(path, "want %s, got %s", articles(want), got)
			}
			return false
		}
	}
	if s.Enum != nil && !slices.ContainsFunc(s.Enum, func(e any) bool { return reflect.DeepEqual(e, inst) }) {
		vals := make([]string, len(s.Enum))
		for i, e := range s.Enum {
			vals[i] = jsonText(e, 40)
		}
		errs.add(path, "must be one of %s, got %s", strings.Join(vals, ", "), jsonText(inst, 40))
		return false
	}
	if s.Const != nil && !reflect.DeepEqual(*s.Const, inst) {
		errs.add(path, "must be %s, got %s", jsonText(*s.Const, 40), jsonText(inst, 40))
		return false
	}
	return true
}

// explainString explains a string's length and pattern.
func explainString(s *jsonschema.Schema, v string, path string, errs *fieldErrors) {
	n := utf8.RuneCountInString(v)
	if s.MinLength != nil && n < *s.MinLength {
		if *s.MinLength == 1 {
			errs.add(path, "must not be empty")
		} else {
			errs.add(path, "too short: %d characters, at least %d", n, *s.MinLength)
		}
	}
	if s.MaxLength != nil && n > *s.MaxLength {
		errs.add(path, "too long: %d characters, at most %d", n, *s.MaxLength)
	}
	if s.Pattern != "" {
		if re := compiledPattern(s.Pattern); re != nil && !re.MatchString(v) {
			errs.add(path, "must match %s, got %q", s.Pattern, textutil.Truncate(v, 40))
		}
	}
}

// explainNumber explains a number's bounds.
func explainNumber(s *jsonschema.Schema, v float64, path string, errs *fieldErrors) {
	lo, hi := s.Minimum, s.Maximum
	switch {
	case lo != nil && hi != nil && (v < *lo || v > *hi):
		errs.add(path, "must be between %s and %s, got %s", num(*lo), num(*hi), num(v))
	case lo != nil && v < *lo:
		errs.add(path, "must be at least %s, got %s", num(*lo), num(v))
	case hi != nil && v > *hi:
		errs.add(path, "must be at most %s, got %s", num(*hi), num(v))
	}
}

// explainArray explains an array's length, uniqueness and items.
func explainArray(s *jsonschema.Schema, v []any, path string, errs *fieldErrors) {
	if s.MinItems != nil && len(v) < *s.MinItems {
		errs.add(path, "must have at least %d items, got %d", *s.MinItems, len(v))
	}
	if s.UniqueItems {
	unique:
		for i := range v {
			for j := i + 1; j < len(v); j++ {
				if reflect.DeepEqual(v[i], v[j]) {
					errs.add(path, "items must be unique: [%d] and [%d] are equal", i, j)
					break unique
				}
			}
		}
	}
	if s.Items != nil {
		for i, item := range v {
			explain(s.Items, item, fmt.Sprintf("%s[%d]", path, i), errs)
		}
	}
}

// explainObject explains an object's required members, its properties and
// their names.
func explainObject(s *jsonschema.Schema, v map[string]any, path string, errs *fieldErrors) {
	for _, name := range s.Required {
		if _, ok := v[name]; !ok {
			errs.add(joinPath(path, name), "required")
		}
	}
	for _, name := range sortedKeys(v) {
		p := joinPath(path, name)
		if ps, ok := s.Properties[name]; ok {
			explain(ps, v[name], p, errs)
		} else if s.AdditionalProperties != nil {
			explain(s.AdditionalProperties, v[name], p, errs)
		}
		if s.PropertyNames != nil {
			var e fieldErrors
			explain(s.PropertyNames, name, "", &e)
			for _, fe := range e {
				errs.add(path, "key %q: %s", textutil.Truncate(name, 40), fe.Message)
			}
		}
	}
}

// explainAlternatives explains a value that matches none of anyOf's or
// oneOf's forms (or, for oneOf, more than one).
func explainAlternatives(s *jsonschema.Schema, inst any, path string, errs *fieldErrors) {
	for _, alts := range [][]*jsonschema.Schema{s.AnyOf, s.OneOf} {
		if len(alts) == 0 {
			continue
		}
		// The closest form is one of the value's kind (its problems are
		// inside the value: they are the ones to fix), then the one with
		// the fewest problems.
		var n int
		var closest fieldErrors
		closestWrong := false
		for _, alt := range alts {
			var e fieldErrors
			explain(alt, inst, path, &e)
			wrong := wrongKind(e, path)
			switch {
			case len(e) == 0:
				n++
			case closest == nil, closestWrong && !wrong, closestWrong == wrong && len(e) < len(closest):
				closest, closestWrong = e, wrong
			}
		}
		switch {
		case n == 0:
			*errs = append(*errs, closest...)
		case n > 1 && len(s.OneOf) > 0 && &alts[0] == &s.OneOf[0]:
			errs.add(path, "matches more than one of its forms")
		}
	}
}

// patterns caches the compiled patterns of explain. Its keys are patterns
// of the package's own schemas: a bounded set.
var patterns sync.Map // string -> *regexp.Regexp

func compiledPattern(p string) *regexp.Regexp {
	if re, ok := patterns.Load(p); ok {
		return re.(*regexp.Regexp)
	}
	re, err := regexp.Compile(p)
	if err != nil {
		return nil // Resolve compiled it already: cannot happen
	}
	patterns.Store(p, re)
	return re
}

// instKind names the JSON kind of a decoded value; a whole number is an
// integer, as in JSON Schema.
func instKind(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case float64:
		if v == math.Trunc(v) {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

func articles(kinds []string) string {
	a := make([]string, 0, len(kinds))
	for _, k := range kinds {
		if k != "null" {
			a = append(a, article(k))
		}
	}
	if len(a) < len(kinds) {
		a = append(a, "null")
	}
	return strings.Join(a, " or ")
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func jsonText(v any, n int) string {
	b, _ := json.Marshal(v)
	return textutil.Truncate(string(b), n)
}

// ---------------------------------------------------------------- decoding

// decodeInto validates raw, the data of a message, against the schema of
// v's type, decodes it into v and checks v's semantic rules. Paths in the
// errors start at prefix ("data").
func decodeInto(raw json.RawMessage, v any, prefix string) fieldErrors {
	var errs fieldErrors
	var inst any
	if err := json.Unmarshal(raw, &inst); err != nil {
		errs.add(prefix, "%v", err)
		return errs
	}
	t := reflect.TypeOf(v).Elem()
	validateInstance(t, inst, prefix, &errs)
	if len(errs) > 0 {
		return errs
	}
	if err := json.Unmarshal(raw, v); err != nil {
		var te *json.UnmarshalTypeError
		var pe *time.ParseError
		if errors.As(err, &pe) {
			// A time the pattern let through but time.Time refuses
			// (2026-13-01T...): name the member that holds it.
			p := findString(inst, pe.Value, prefix)
			if p == "" {
				p = prefix
			}
			errs.add(p, "want an RFC 3339 time such as 2026-11-21T00:36:12.204Z, got %q (%s)", textutil.Truncate(pe.Value, 40), strings.TrimPrefix(pe.Message, ": "))
		} else if errors.As(err, &te) {
			what := te.Value
			if w, ok := strings.CutPrefix(what, "number "); ok {
				what = w
			}
			errs.add(joinPath(prefix, te.Field), "want %s, got %s", goKindName(te.Type), textutil.Truncate(what, 40))
		} else {
			errs.add(prefix, "%v", err)
		}
		return errs
	}
	if sc, ok := v.(semanticChecker); ok {
		var c check
		sc.checkSemantics(&c)
		for _, fe := range c.errs {
			errs.add(joinPath(prefix, fe.Path), "%s", fe.Message)
		}
	}
	return errs
}

// findString returns the path of the first string member of v equal to s,
// or "".
func findString(v any, s, path string) string {
	switch v := v.(type) {
	case string:
		if v == s {
			return path
		}
	case []any:
		for i, item := range v {
			if p := findString(item, s, fmt.Sprintf("%s[%d]", path, i)); p != "" {
				return p
			}
		}
	case map[string]any:
		for _, k := range sortedKeys(v) {
			if p := findString(v[k], s, joinPath(path, k)); p != "" {
				return p
			}
		}
	}
	return ""
}

func goKindName(t reflect.Type) string {
	switch {
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Int64:
		return "an integer"
	case t.Kind() >= reflect.Uint && t.Kind() <= reflect.Uint64:
		return "a non-negative integer"
	}
	return article(t.Kind().String())
}

// ---------------------------------------------------------------- rules between fields

// check accumulates problems found by checkSemantics; its paths are
// relative to the value checked.
type check struct{ errs fieldErrors }

func (c *check) add(path, format string, args ...any) { c.errs.add(path, format, args...) }

func (c *check) err() error { return c.errs.err("", "") }

func (d SessionSubscribeResult) checkSemantics(c *check) {
	checkModels(c, d.Model, d.Models)
	if d.FirstSeq > d.LastSeq+1 {
		c.add("firstSeq", "must be at most lastSeq+1 (%d), got %d", d.LastSeq+1, d.FirstSeq)
	}
}

func (d MCPProbeResult) checkSemantics(c *check) {
	for i, r := range d.Results {
		if r.Tools != nil && int64(len(r.Tools)) != r.ToolCount {
			c.add(fmt.Sprintf("results[%d].toolCount", i), "must equal the number of tools (%d), got %d", len(r.Tools), r.ToolCount)
		}
	}
}

func (d MCPStatus) checkSemantics(c *check) {
	for i, s := range d.Servers {
		p := fmt.Sprintf("servers[%d]", i)
		if i > 0 && s.Name <= d.Servers[i-1].Name {
			c.add(p+".name", "servers must be sorted by name, one entry per name: %q follows %q", textutil.Truncate(s.Name, 40), textutil.Truncate(d.Servers[i-1].Name, 40))
		}
		if s.ToolCount != nil && s.Tools != nil && int64(len(s.Tools)) != *s.ToolCount {
			c.add(p+".toolCount", "must equal the number of tools (%d), got %d", len(s.Tools), *s.ToolCount)
		}
	}
}

func (d MCPManageResult) checkSemantics(c *check) {
	var sub check
	d.Config.checkSemantics(&sub)
	for _, fe := range sub.errs {
		c.add(joinPath("config", fe.Path), "%s", fe.Message)
	}
}

func (MCPConfig) checkSemantics(*check) {}

// The schema bounds strings in characters; model values and the texts of
// the model list are bounded in bytes.
func (d SessionSetModel) checkSemantics(c *check) { checkModelBytes(c, "model", d.Model) }

func (d SessionSetModelResult) checkSemantics(c *check) {
	checkModelBytes(c, "model", d.Model)
	checkBytes(c, "resolvedModel", d.ResolvedModel, MaxModelBytes)
}

func (d SessionState) checkSemantics(c *check) { checkModels(c, d.Model, d.Models) }

func (d SessionCommands) checkSemantics(c *check) {
	for i, cmd := range d.Commands {
		p := fmt.Sprintf("commands[%d].", i)
		checkBytes(c, p+"name", cmd.Name, MaxCommandNameBytes)
		checkBytes(c, p+"description", cmd.Description, MaxCommandDescriptionBytes)
		checkBytes(c, p+"argumentHint", cmd.ArgumentHint, MaxCommandNameBytes)
		if len(cmd.Aliases) > MaxCommandAliases {
			c.add(p+"aliases", "must have at most %d items, got %d", MaxCommandAliases, len(cmd.Aliases))
		}
		for j, a := range cmd.Aliases {
			checkBytes(c, fmt.Sprintf("%saliases[%d]", p, j), a, MaxCommandNameBytes)
		}
	}
}

func checkModels(c *check, model string, models []ModelInfo) {
	checkModelBytes(c, "model", model)
	for i, m := range models {
		p := fmt.Sprintf("models[%d].", i)
		checkModelBytes(c, p+"value", m.Value)
		checkBytes(c, p+"displayName", m.DisplayName, MaxModelDisplayNameBytes)
		checkBytes(c, p+"description", m.Description, MaxModelDescriptionBytes)
	}
}

func checkModelBytes(c *check, path, v string) { checkBytes(c, path, v, MaxModelBytes) }

func checkBytes(c *check, path, v string, max int) {
	if len(v) > max {
		c.add(path, "must be at most %d bytes, got %d", max, len(v))
	}
}

// ---------------------------------------------------------------- Validate

// Each data type's Validate checks its JSON encoding against its schema
// and its semantic rules, and returns an *Error with code bad_request that
// names every invalid field.

func (d SessionCreate) Validate() error                  { return validateValue(d) }
func (d SessionCreateResult) Validate() error            { return validateValue(d) }
func (d SessionSend) Validate() error                    { return validateValue(d) }
func (d SessionSubscribe) Validate() error               { return validateValue(d) }
func (d SessionSubscribeResult) Validate() error         { return validateValue(d) }
func (d SessionUnsubscribe) Validate() error             { return validateValue(d) }
func (d SessionInterrupt) Validate() error               { return validateValue(d) }
func (d SessionClose) Validate() error                   { return validateValue(d) }
func (d SessionList) Validate() error                    { return validateValue(d) }
func (d SessionListResult) Validate() error              { return validateValue(d) }
func (d PermissionRespond) Validate() error              { return validateValue(d) }
func (d SessionSetPermissionMode) Validate() error       { return validateValue(d) }
func (d SessionSetPermissionModeResult) Validate() error { return validateValue(d) }
func (d SessionSetModel) Validate() error                { return validateValue(d) }
func (d SessionSetModelResult) Validate() error          { return validateValue(d) }
func (d MCPSubscribe) Validate() error                   { return validateValue(d) }
func (d MCPUnsubscribe) Validate() error                 { return validateValue(d) }
func (d MCPApprove) Validate() error                     { return validateValue(d) }
func (d MCPReject) Validate() error                      { return validateValue(d) }
func (d MCPApprovalResult) Validate() error              { return validateValue(d) }
func (d MCPAdd) Validate() error                         { return validateValue(d) }
func (d MCPUpdate) Validate() error                      { return validateValue(d) }
func (d MCPRemove) Validate() error                      { return validateValue(d) }
func (d MCPManageResult) Validate() error                { return validateValue(d) }
func (d MCPTrust) Validate() error                       { return validateValue(d) }
func (d MCPLogin) Validate() error                       { return validateValue(d) }
func (d MCPLoginResult) Validate() error                 { return validateValue(d) }
func (d MCPLogout) Validate() error                      { return validateValue(d) }
func (d MCPLogoutResult) Validate() error                { return validateValue(d) }
func (d MCPLoginEvent) Validate() error                  { return validateValue(d) }
func (d MCPTrustResult) Validate() error                 { return validateValue(d) }
func (d MCPTest) Validate() error                        { return validateValue(d) }
func (d MCPToggle) Validate() error                      { return validateValue(d) }
func (d MCPReconnect) Validate() error                   { return validateValue(d) }
func (d MCPLiveResult) Validate() error                  { return validateValue(d) }
func (d MCPProbe) Validate() error                       { return validateValue(d) }
func (d MCPProbeResult) Validate() error                 { return validateValue(d) }
func (d MCPTools) Validate() error                       { return validateValue(d) }
func (d MCPToolsResult) Validate() error                 { return validateValue(d) }
func (d MCPCall) Validate() error                        { return validateValue(d) }
func (d MCPCallResult) Validate() error                  { return validateValue(d) }
func (d MCPLog) Validate() error                         { return validateValue(d) }
func (d MCPLogResult) Validate() error                   { return validateValue(d) }
func (d Empty) Validate() error                          { return validateValue(d) }
func (d Hello) Validate() error                          { return validateValue(d) }
func (d SessionEvent) Validate() error                   { return validateValue(d) }
func (d SessionState) Validate() error                   { return validateValue(d) }
func (d SessionCommands) Validate() error                { return validateValue(d) }
func (d SessionExited) Validate() error                  { return validateValue(d) }
func (d SessionGap) Validate() error                     { return validateValue(d) }
func (d PermissionRequest) Validate() error              { return validateValue(d) }
func (d PermissionResolved) Validate() error             { return validateValue(d) }
func (d MCPStatus) Validate() error                      { return validateValue(d) }
func (d MCPConfig) Validate() error                      { return validateValue(d) }
func (d HistoryList) Validate() error                    { return validateValue(d) }
func (d HistoryListResult) Validate() error              { return validateValue(d) }
func (d HistoryRead) Validate() error                    { return validateValue(d) }
func (d HistoryReadResult) Validate() error              { return validateValue(d) }
func (d HistoryRename) Validate() error                  { return validateValue(d) }
func (d HistoryRenameResult) Validate() error            { return validateValue(d) }
func (d HistoryDelete) Validate() error                  { return validateValue(d) }
func (d HistoryDeleteResult) Validate() error            { return validateValue(d) }
func (d HistoryRestore) Validate() error                 { return validateValue(d) }
func (d HistoryRestoreResult) Validate() error           { return validateValue(d) }
func (d HistoryTrash) Validate() error                   { return validateValue(d) }
func (d HistoryTrashResult) Validate() error             { return validateValue(d) }
func (d HistoryExport) Validate() error                  { return validateValue(d) }
func (d HistoryExportResult) Validate() error            { return validateValue(d) }

// Validate checks an error reply's error member.
func (e Error) Validate() error { return validateValue(e) }

func (d SessionRewind) Validate() error       { return validateValue(d) }
func (d SessionRewindResult) Validate() error { return validateValue(d) }

func (SessionRewind) checkSemantics(*check)       {}
func (SessionRewindResult) checkSemantics(*check) {}
