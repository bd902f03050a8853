package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
)

// This file derives the JSON Schemas of the protocol from the Go types:
// jsonschema.For gives each data struct's shape (members, kinds, which are
// required), the `jsonschema:"..."` field tags its descriptions, and the
// `schema:"..."` field tags the constraints a Go type cannot say:
//
//	ref=Name          the value is defs.json's definition Name (sharedDefs)
//	minLength=N maxLength=N minimum=N maximum=N const=V uniqueItems maxItems=N
//	                  (N an integer or a constant named in tagConsts)
//	items.minLength=N (of a list's strings)  keys.minLength=N (of a map's keys)
//	nullable          a pointer field may be null (otherwise null is refused)
//	type=object|array a json.RawMessage field must be that kind
//	pattern=RE        the string matches RE (last item: RE may hold commas)
//
// An unknown item is an error of SchemaFiles, so a typo cannot drop a
// constraint silently.
//
// Rules between fields are added by a type's schemaRules method. The same
// schemas serve the committed files (SchemaFiles, written by go generate)
// and the validation at run time (validate.go).

// SchemaBase is the $id prefix of the schema files: SchemaBase+"defs.json".
const SchemaBase = "https://github.com/ccproxy/ccproxy/protocol/schema/"

const draft202012 = "https://json-schema.org/draft/2020-12/schema"

// defStructs are the Go struct types that are definitions of defs.json;
// every use of one is a $ref to it. Other struct types are written inline.
var defStructs = []struct {
	name string
	t    reflect.Type
}{
	{"Error", reflect.TypeFor[Error]()},
	{"FieldError", reflect.TypeFor[FieldError]()},
	{"Software", reflect.TypeFor[Software]()},
	{"McpRef", reflect.TypeFor[MCPRef]()},
	{"McpServerInfo", reflect.TypeFor[MCPServerInfo]()},
	{"Attachment", reflect.TypeFor[Attachment]()},
	{"McpServerStatus", reflect.TypeFor[MCPServerStatus]()},
	{"McpStatusData", reflect.TypeFor[MCPStatus]()},
	{"McpConfigData", reflect.TypeFor[MCPConfig]()},
	{"McpProbeResult", reflect.TypeFor[MCPProbeResult]()},
	{"McpLiveResult", reflect.TypeFor[MCPLiveResult]()},
	{"Parameter", reflect.TypeFor[Parameter]()},
}

// schemaRuler is implemented by data types with rules between fields that
// the schema expresses with allOf, if/then and not.
type schemaRuler interface {
	schemaRules(s *jsonschema.Schema)
}

// generator builds schemas whose definitions are referred to as
// refPrefix+Name; defs maps each definition's Go type to its name.
type generator struct {
	refPrefix string
	defs      map[reflect.Type]string
	// field, when set, is called on each struct field's schema
	// (SchemaOptions.Field).
	field func(s *jsonschema.Schema, t reflect.Type, name string, sf reflect.StructField)
}

func newGenerator(refPrefix string, defs map[reflect.Type]string) *generator {
	return &generator{refPrefix: refPrefix, defs: defs}
}

func fileDefs() map[reflect.Type]string {
	m := map[reflect.Type]string{}
	for _, d := range defStructs {
		m[d.t] = d.name
	}
	return m
}

func (g *generator) ref(name string) *jsonschema.Schema {
	return &jsonschema.Schema{Ref: g.refPrefix + name}
}

var (
	rawMessageType = reflect.TypeFor[json.RawMessage]()
	timeType       = reflect.TypeFor[time.Time]()
)

// schemaOf returns the schema of Go type t. A definition's own type is
// generated in full (its fields may still refer to it: Parameter).
func (g *generator) schemaOf(t reflect.Type) (*jsonschema.Schema, error) {
	ts := map[reflect.Type]*jsonschema.Schema{
		rawMessageType: {},
		timeType:       g.ref("Timestamp"),
	}
	for dt, name := range g.defs {
		ts[dt] = g.ref(name)
	}
	top := t
	if _, isDef := g.defs[t]; isDef {
		// The same fields and tags as a new unnamed type, so that the
		// top level is generated while the fields still refer to t.
		fields := make([]reflect.StructField, t.NumField())
		for i := range fields {
			fields[i] = t.Field(i)
		}
		top = reflect.StructOf(fields)
	}
	s, err := jsonschema.ForType(top, &jsonschema.ForOptions{TypeSchemas: ts})
	if err != nil {
		return nil, err
	}
	if err := g.fix(s, t, true); err != nil {
		return nil, fmt.Errorf("%v: %w", t, err)
	}
	return s, nil
}

// fix turns what jsonschema.For made of Go type t into the protocol's
// schema: unknown members are allowed (a newer peer may send more), lists
// and pointers are not null unless the field says nullable, and each
// field's schema tag is applied.
func (g *generator) fix(s *jsonschema.Schema, t reflect.Type, top bool) error {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if _, isDef := g.defs[t]; (isDef && !top) || t == rawMessageType || t == timeType {
		return nil
	}
	switch t.Kind() {
	case reflect.Slice:
		s.Types, s.Type = nil, "array"
		return g.fix(s.Items, t.Elem(), false)
	case reflect.Map:
		return g.fix(s.AdditionalProperties, t.Elem(), false)
	case reflect.Struct:
	default:
		return nil
	}
	s.AdditionalProperties = nil
	if d := typeDocs[t]; d != "" && s.Description == "" {
		s.Description = d
	}
	for i := range t.NumField() {
		sf := t.Field(i)
		name, _ := jsonField(sf)
		p := s.Properties[name]
		if name == "" || p == nil {
			continue
		}
		if err := g.fix(p, sf.Type, false); err != nil {
			return err
		}
		np, err := g.applyTag(p, sf)
		if err != nil {
			return fmt.Errorf("field %s: %w", sf.Name, err)
		}
		if g.field != nil {
			g.field(np, t, name, sf)
		}
		s.Properties[name] = np
	}
	if r, ok := reflect.Zero(t).Interface().(schemaRuler); ok {
		r.schemaRules(s)
	}
	return nil
}

// applyTag applies the schema tag of field sf to its schema p, and drops
// null from a pointer's types unless the field is nullable.
func (g *generator) applyTag(p *jsonschema.Schema, sf reflect.StructField) (*jsonschema.Schema, error) {
	nullable := false
	tag := sf.Tag.Get("schema")
	for tag != "" {
		var item string
		if strings.HasPrefix(tag, "pattern=") {
			item, tag = tag, "" // a pattern is last and may hold commas
		} else {
			item, tag, _ = strings.Cut(tag, ",")
		}
		key, val, _ := strings.Cut(item, "=")
		atoi := func() (*int, error) {
			if n, ok := tagConsts[val]; ok {
				return &n, nil
			}
			n, err := strconv.Atoi(val)
			return &n, err
		}
		num := func() (*float64, error) {
			n, err := atoi()
			if err != nil {
				return nil, err
			}
			f := float64(*n)
			return &f, nil
		}
		var err error
		switch key {
		case "ref":
			p = &jsonschema.Schema{Ref: g.refPrefix + val, Description: p.Description}
		case "minLength":
			p.MinLength, err = atoi()
		case "maxLength":
			p.MaxLength, err = atoi()
		case "minimum":
			p.Minimum, err = num()
		case "maximum":
			p.Maximum, err = num()
		case "const":
			var c any = val
			p.Const, p.Type = &c, ""
		case "maxItems":
			p.MaxItems, err = atoi()
		case "uniqueItems":
			p.UniqueItems = true
		case "items.minLength":
			p.Items.MinLength, err = atoi()
		case "keys.minLength":
			var n *int
			n, err = atoi()
			p.PropertyNames = &jsonschema.Schema{MinLength: n}
		case "nullable":
			nullable = true
		case "type":
			p.Type = val
		case "pattern":
			p.Pattern = val
		default:
			err = fmt.Errorf("unknown schema tag item %q", item)
		}
		if err != nil {
			return nil, fmt.Errorf("schema tag %q: %w", item, err)
		}
	}
	if sf.Type.Kind() == reflect.Pointer && !nullable {
		p.Types = slices.DeleteFunc(slices.Clone(p.Types), func(t string) bool { return t == "null" })
		switch len(p.Types) {
		case 0:
			p.Types = nil
		case 1:
			p.Type, p.Types = p.Types[0], nil
		}
	}
	if nullable && p.Type != "" {
		p.Types, p.Type = []string{p.Type, "null"}, ""
	}
	return p, nil
}

// ---------------------------------------------------------------- shared definitions

func enumOf[T ~string](vs []T) *jsonschema.Schema {
	e := make([]any, len(vs))
	for i, v := range vs {
		e[i] = string(v)
	}
	return &jsonschema.Schema{Enum: e}
}

func strSchema(desc, pattern string, minLen, maxLen int) *jsonschema.Schema {
	s := &jsonschema.Schema{Type: "string", Description: desc, Pattern: pattern}
	if minLen > 0 {
		s.MinLength = &minLen
	}
	if maxLen > 0 {
		s.MaxLength = &maxLen
	}
	return s
}

func withDesc(s *jsonschema.Schema, desc string) *jsonschema.Schema {
	s.Description = desc
	return s
}

func fptr(f float64) *float64 { return &f }

// errorMessage is the message a validation error gives for a failure of
// the schema it is set on, instead of one made from the failed keyword.
func withMessage(s *jsonschema.Schema, msg string) *jsonschema.Schema {
	if s.Extra == nil {
		s.Extra = map[string]any{}
	}
	s.Extra["errorMessage"] = msg
	return s
}

// sharedDefs returns the definitions of defs.json other than defStructs.
func (g *generator) sharedDefs() map[string]*jsonschema.Schema {
	requestID := &jsonschema.Schema{
		Description: "A request id chosen by the client: a non-empty string of at most 128 bytes, or an integer a JavaScript number holds exactly. The reply echoes it.",
		OneOf: []*jsonschema.Schema{
			strSchema("", "", 1, MaxIDBytes),
			{Type: "integer", Minimum: fptr(-maxSafeInteger), Maximum: fptr(maxSafeInteger)},
		},
	}
	withMessage(requestID, "want a non-empty string of at most 128 bytes or an integer between -(2^53-1) and 2^53-1")
	replyID := &jsonschema.Schema{
		Description: "The id of the request a reply answers; null when the request's id could not be read (malformed or oversized frame).",
		AnyOf:       []*jsonschema.Schema{g.ref("RequestId"), {Type: "null"}},
	}
	errorReply := &jsonschema.Schema{
		Type:        "object",
		Description: "A failed request: exactly one per request, instead of a success reply.",
		Required:    []string{"type", "id", "ok", "error"},
		Properties: map[string]*jsonschema.Schema{
			"type":  constOf(TypeReply),
			"id":    g.ref("ReplyId"),
			"ok":    constOf(false),
			"error": g.ref("Error"),
		},
		PropertyOrder: []string{"type", "id", "ok", "error"},
	}
	httpError := &jsonschema.Schema{
		Type:          "object",
		Description:   "The body of an HTTP error response.",
		Required:      []string{"error"},
		Properties:    map[string]*jsonschema.Schema{"error": g.ref("Error")},
		PropertyOrder: []string{"error"},
	}
	eventObject := &jsonschema.Schema{
		Type:          "object",
		Description:   "A normalized event (SPEC §7) as a JSON object with a type.",
		Required:      []string{"type"},
		Properties:    map[string]*jsonschema.Schema{"type": {Type: "string"}},
		PropertyOrder: []string{"type"},
	}
	seq := &jsonschema.Schema{Type: "integer", Minimum: fptr(1), Description: "A session event sequence number: 1 for a session's first event, +1 for each next one."}
	defs := map[string]*jsonschema.Schema{
		"RequestId":       requestID,
		"ReplyId":         replyID,
		"SessionId":       strSchema("A ccproxy session id (opaque; not Claude's session_id).", "", 1, maxSessionIDBytes),
		"ClaudeSessionId": withMessage(strSchema("Claude Code's own session id (system/init session_id), used to resume. It becomes an argument of claude, so it may not start with '-'.", claudeSessionIDPattern, 0, 0), "must be a Claude session id (letters, digits, _ -; not starting with -)"),
		"Model":           withMessage(strSchema("A model name or alias passed to claude --model; may not start with '-'.", modelPattern, 0, 0), "must be a model name (letters, digits, . _ : / @ [ ] -; not starting with -)"),
		"ModelValue":      withMessage(strSchema("A model value for session/setModel (claude's set_model): an alias from session/state's models such as sonnet or default, or a model id; 1 to 256 bytes, no control characters.", modelValuePattern, 1, MaxModelBytes), "must be a non-empty model name without control characters, at most 256 bytes"),
		"ServerName":      strSchema("An MCP server name as configured.", "", 1, maxNameBytes),
		"Seq":             seq,
		"Timestamp": withMessage(&jsonschema.Schema{
			Type: "string", Format: "date-time", Pattern: timestampPattern,
			Description: "An RFC 3339 time, UTC recommended.",
		}, "want an RFC 3339 time such as 2026-11-21T00:36:12.204Z"),
		"SessionState":   withDesc(enumOf(sessionStates), "starting: spawned, not ready; idle: ready for a turn; running: a turn is in progress; restarting: restarted with --resume (MCP hot reload); exited: the process ended; closed: closed by session/close."),
		"PermissionMode": withDesc(enumOf(permissionModes), "Claude Code permission mode (claude --permission-mode): default asks for what the rules do not allow; acceptEdits also allows file edits; plan only plans (ExitPlanMode asks to approve the plan); bypassPermissions asks nothing (refused by claude when it runs as root, or when the session was not started in it)."),
		"ImageMediaType": enumOf(imageMediaTypes),
		"Base64": withMessage(&jsonschema.Schema{
			Type:        "string",
			Description: "Standard base64 with padding; no data: prefix, no line breaks: base64 characters, then at most two =, in all a multiple of 4 characters.",
			// Two patterns that Go's regexp runs in one pass, instead of
			// the one ^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$
			// it runs several times slower: images are megabytes.
			AllOf: []*jsonschema.Schema{{Pattern: base64CharsPattern}, {Pattern: base64LengthPattern}},
		}, "must be standard base64 (no data: prefix, no line breaks)"),
		"Sha256":           withMessage(strSchema("A SHA-256 digest: 64 lower-case hex digits.", "^[0-9a-f]{64}$", 0, 0), "must be 64 lower-case hex digits"),
		"ErrorCode":        withMessage(strSchema("A stable error code (SPEC.md, Error codes). The list may grow within version 1: treat an unknown code like internal.", "^[a-z][a-z0-9_]*$", 0, 0), "must be a lower_snake_case code"),
		"ErrorReply":       errorReply,
		"HttpError":        httpError,
		"McpStatusValue":   enumOf(mcpStatuses),
		"Scope":            withDesc(enumOf(scopes), "Where a server is configured (package mcpconfig): extra = a --mcp-config file given to ccproxy."),
		"Approval":         enumOf(approvals),
		"Transport":        enumOf(transports),
		"ProbeCode":        withDesc(enumOf(probeCodes), "Typed probe failure (issue 5). In a reply error it appears as mcp_<lower case code>."),
		"WriteScope":       withDesc(enumOf(MCPWriteScopes), "The scopes mcp/add, mcp/update and mcp/remove write."),
		"ProbeStatus":      withDesc(enumOf(probeStatuses), "A probe's status: a McpStatusValue other than pending."),
		"ParameterType":    enumOf(paramTypes),
		"PermissionKind":   withDesc(enumOf(permissionKinds), "tool (default): allow or deny; question: AskUserQuestion (answer with answers); plan: ExitPlanMode (allow approves the plan)."),
		"RespondBehavior":  enumOf(respondBehaviors),
		"ResolvedBehavior": enumOf(resolvedBehaviors),
		"ResolvedReason":   enumOf(resolvedReasons),
		"ExitReason":       withDesc(enumOf(exitReasons), "closed: a client sent session/close; shutdown: the proxy is stopping; exited: the process ended on its own or was killed."),
		"LogKind":          withDesc(enumOf(logKinds), "session: a tool_use/tool_result pair seen in a session; direct: an mcp/call."),
		"Origin":           withDesc(enumOf(origins), "What the status comes from: config (not active, or never observed), session (a live session's report) or probe."),
		"TitleFrom":        withDesc(enumOf(titleFroms), "Where a session's title comes from: summary (the CLI's summary record), prompt (the first prompt), custom (a rename: the CLI's custom-title record, last one wins)."),
		"SessionTitle": &jsonschema.Schema{
			Type:        "string",
			Description: "A session title: 1 to 200 characters, not only spaces, no control characters (no newlines).",
			MinLength:   ptrInt(1),
			MaxLength:   ptrInt(MaxSessionTitleChars),
			AllOf: []*jsonschema.Schema{
				withMessage(&jsonschema.Schema{Pattern: "^[^\\x00-\\x1f\\x7f]*$"}, "must not contain newlines or other control characters"),
				withMessage(&jsonschema.Schema{Pattern: "\\S"}, "must not be only spaces"),
			},
		},
		"ExportFormat": withDesc(enumOf(exportFormats), "markdown: the conversation for a person to read; jsonl: the session file's lines."),
		"AttachmentKind": withMessage(strSchema("The content block type it came from: image, audio, resource (an embedded blob), document, or another block type; render an unknown kind as a download.", "^[a-z][a-z0-9_-]*$", 0, 0),
			"must be a lower-case kind such as \"image\""),
		"Cwd": &jsonschema.Schema{
			Type:        "string",
			Description: "An absolute directory path.",
			AllOf: []*jsonschema.Schema{
				withMessage(&jsonschema.Schema{Pattern: absPathPattern}, "must be an absolute path"),
				withMessage(&jsonschema.Schema{Pattern: "^[^\\x00]*$"}, "must not contain NUL"),
			},
		},
		"ProjectDir": &jsonschema.Schema{
			Type:        "string",
			Description: "A project directory: an absolute path.",
			MaxLength:   ptrInt(4096),
			AllOf: []*jsonschema.Schema{
				withMessage(&jsonschema.Schema{Pattern: absPathPattern}, "must be an absolute path"),
				withMessage(&jsonschema.Schema{Pattern: "^[^\\x00]*$"}, "must not contain NUL"),
			},
		},
		"Offset":      withMessage(strSchema("A byte offset in a session file, in decimal: a page's next or a history_more event's cursor.", "^[0-9]{1,19}$", 0, 0), "must be a byte offset in decimal (a previous page's next)"),
		"EventObject": eventObject,
		"MessageUuid": withMessage(strSchema("The uuid of a message of a Claude session (live events and history/read carry it).", claudeSessionIDPattern, 0, 0), "must be a message uuid (letters, digits, _ -; not starting with -)"),
		"SearchRole":  withDesc(enumOf(searchRoles), "What a history/search match is: user (text the user typed), assistant (a reply's text), tool (a tool use: its name, then its input's values)."),
	}
	for name, s := range eventDefs(g.refPrefix) {
		defs[name] = s
	}
	return defs
}

func ptrInt(n int) *int { return &n }

func constOf(v any) *jsonschema.Schema { return &jsonschema.Schema{Const: &v} }

// Patterns of the shared definitions.
const (
	// Values that end up in claude's argv must not look like flags.
	modelPattern           = `^[A-Za-z0-9][A-Za-z0-9._:/@\[\]-]{0,127}$`
	modelValuePattern      = `^[^\x00-\x1f\x7f-\x9f]+$`
	claudeSessionIDPattern = `^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$`
	timestampPattern       = `^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})$`
	base64CharsPattern     = `^[A-Za-z0-9+/]*={0,2}$`
	base64LengthPattern    = `^(?:.{4})*$`
	absPathPattern         = `^(/|[A-Za-z]:[\\/])`
)

// allDefs returns every definition of defs.json: sharedDefs and the
// schemas of defStructs.
func (g *generator) allDefs() (map[string]*jsonschema.Schema, error) {
	defs := g.sharedDefs()
	for _, d := range defStructs {
		s, err := g.schemaOf(d.t)
		if err != nil {
			return nil, err
		}
		defs[d.name] = s
	}
	return defs, nil
}

// ---------------------------------------------------------------- files

// schemaFile is one schema/*.json file.
type schemaFile struct {
	name   string // "session.send.json"
	schema *jsonschema.Schema
}

// messageFiles returns every schema file, defs.json first.
func (g *generator) files() ([]schemaFile, error) {
	defs, err := g.allDefs()
	if err != nil {
		return nil, err
	}
	out := []schemaFile{{"defs.json", &jsonschema.Schema{
		Title:       "shared definitions",
		Description: "Definitions shared by the ccproxy webview protocol schemas, version 1. Generated from the Go types of package protocol: do not edit.",
		Defs:        defs,
	}}}
	out = append(out, schemaFile{"frame.json", g.frameSchema()}, schemaFile{"reply.json", g.replySchema("reply", messageDocs["reply"], &jsonschema.Schema{Type: "object"}, true)})

	for _, typ := range requestTypes {
		data, err := g.messageData(reflect.TypeOf(requestData[typ]()).Elem())
		if err != nil {
			return nil, err
		}
		out = append(out, schemaFile{fileName(typ) + ".json", g.messageSchema(typ, data, true)})
		result, err := g.messageData(reflect.TypeOf(resultData[typ]()).Elem())
		if err != nil {
			return nil, err
		}
		out = append(out, schemaFile{fileName(typ) + ".reply.json", g.replySchema("reply to "+typ, messageDocs[typ+" reply"], result, false)})
	}
	for _, typ := range pushTypes {
		data, err := g.messageData(reflect.TypeOf(pushData[typ]()).Elem())
		if err != nil {
			return nil, err
		}
		out = append(out, schemaFile{pushFileName(typ) + ".json", g.messageSchema(typ, data, false)})
	}
	out = append(out,
		schemaFile{"http.mcp-status.json", &jsonschema.Schema{Title: "GET /v1/mcp/status", Description: messageDocs["GET /v1/mcp/status"], Ref: g.refPrefix + "McpStatusData"}},
		schemaFile{"http.error.json", &jsonschema.Schema{Title: "HTTP error body", Description: messageDocs["HTTP error"], Ref: g.refPrefix + "HttpError"}},
	)
	for i := range out {
		out[i].schema.Schema = draft202012
		out[i].schema.ID = SchemaBase + out[i].name
	}
	return out, nil
}

// messageData returns the schema of a message's data of Go type t: a $ref
// when t is a definition of defs.json.
func (g *generator) messageData(t reflect.Type) (*jsonschema.Schema, error) {
	if name, ok := g.defs[t]; ok {
		return g.ref(name), nil
	}
	return g.schemaOf(t)
}

func (g *generator) messageSchema(typ string, data *jsonschema.Schema, request bool) *jsonschema.Schema {
	docs := messageDocs[typ]
	if !request && pushFileName(typ) != fileName(typ) {
		docs = messageDocs[typ+" push"]
	}
	s := &jsonschema.Schema{
		Title:       typ,
		Description: docs,
		Type:        "object",
		Properties: map[string]*jsonschema.Schema{
			"type": constOf(typ),
			"data": {Ref: "#/$defs/data"},
		},
		PropertyOrder: []string{"type", "id", "data"},
		Defs:          map[string]*jsonschema.Schema{"data": data},
	}
	if request {
		s.Required = []string{"type", "id", "data"}
		s.Properties["id"] = g.ref("RequestId")
	} else {
		s.Required = []string{"type", "data"}
	}
	return s
}

func (g *generator) replySchema(title, desc string, result *jsonschema.Schema, inline bool) *jsonschema.Schema {
	data := result
	var defs map[string]*jsonschema.Schema
	if !inline {
		data = &jsonschema.Schema{Ref: "#/$defs/result"}
		defs = map[string]*jsonschema.Schema{"result": result}
	}
	return &jsonschema.Schema{
		Title:       title,
		Description: desc,
		AnyOf: []*jsonschema.Schema{
			{
				Type:     "object",
				Required: []string{"type", "id", "ok", "data"},
				Properties: map[string]*jsonschema.Schema{
					"type": constOf(TypeReply),
					"id":   g.ref("ReplyId"),
					"ok":   constOf(true),
					"data": data,
				},
				PropertyOrder: []string{"type", "id", "ok", "data"},
			},
			g.ref("ErrorReply"),
		},
		Defs: defs,
	}
}

func (g *generator) frameSchema() *jsonschema.Schema {
	reply := g.replySchema("", "", &jsonschema.Schema{Type: "object"}, true)
	return &jsonschema.Schema{
		Title:       "frame",
		Description: messageDocs["frame"],
		Type:        "object",
		Required:    []string{"type"},
		Properties: map[string]*jsonschema.Schema{
			"type": {Type: "string", MinLength: ptrInt(1)},
			"id":   g.ref("ReplyId"),
			"data": {Type: "object"},
		},
		PropertyOrder: []string{"type", "id", "data"},
		If:            &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"type": constOf(TypeReply)}},
		Then:          &jsonschema.Schema{AnyOf: reply.AnyOf},
		Else: &jsonschema.Schema{
			Type:       "object",
			Required:   []string{"data"},
			Properties: map[string]*jsonschema.Schema{"id": g.ref("RequestId")},
		},
	}
}

// SchemaFiles returns the JSON Schema files of protocol version 1 (the
// contents of schema/, which go generate writes from this function), by
// file name. They are generated from the Go types: see schema.go.
func SchemaFiles() (map[string][]byte, error) {
	files, err := newGenerator("defs.json#/$defs/", fileDefs()).files()
	if err != nil {
		return nil, err
	}
	out := make(map[string][]byte, len(files))
	for _, f := range files {
		b, err := marshalSchema(f.schema)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.name, err)
		}
		out[f.name] = b
	}
	return out, nil
}

// SchemaOptions says how SchemaOf writes a schema.
type SchemaOptions struct {
	// Defs are the types written as a reference, RefPrefix+name, instead
	// of in full (except the top level of SchemaOf's type itself).
	RefPrefix string
	Defs      map[reflect.Type]string
	// Field, when set, is called on the schema of each field of a struct
	// (tags applied) with the struct, the field's JSON name and the field:
	// a generator adds its own annotations there.
	Field func(s *jsonschema.Schema, t reflect.Type, name string, sf reflect.StructField)
}

// SchemaOf returns the JSON Schema of Go type t as schema/*.json give it,
// with the references and field annotations o asks for. It is how other
// schemas are made from the protocol's types (the TypeScript bundle of
// protocol/internal/tsgen).
func SchemaOf(t reflect.Type, o SchemaOptions) (*jsonschema.Schema, error) {
	g := newGenerator(o.RefPrefix, o.Defs)
	g.field = o.Field
	return g.schemaOf(t)
}

// SharedSchemas returns the definitions of schema/defs.json that are not a
// Go type's (RequestId, ErrorCode, the enumerations …), by name, referring
// to each other as refPrefix+name.
func SharedSchemas(refPrefix string) map[string]*jsonschema.Schema {
	return newGenerator(refPrefix, nil).sharedDefs()
}

// MarshalSchema encodes s as schema/*.json are written (marshalSchema).
func MarshalSchema(s *jsonschema.Schema) ([]byte, error) { return marshalSchema(s) }

// marshalSchema encodes s indented, with a final newline, $schema, $id,
// title and description first, and <, > and & unescaped.
func marshalSchema(s *jsonschema.Schema) ([]byte, error) {
	head := []struct {
		key, val string
	}{{"$schema", s.Schema}, {"$id", s.ID}, {"title", s.Title}, {"description", s.Description}}
	rest := *s
	rest.Schema, rest.ID, rest.Title, rest.Description = "", "", "", ""
	body, err := json.Marshal(rest)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for _, h := range head {
		if h.val != "" {
			k, _ := json.Marshal(h.key)
			v, _ := json.Marshal(h.val)
			fmt.Fprintf(&b, "%s:%s,", k, v)
		}
	}
	if len(body) > 2 {
		b.Write(body[1:])
	} else {
		b.Truncate(b.Len() - 1)
		b.WriteByte('}')
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b.Bytes(), "", "  "); err != nil {
		return nil, err
	}
	if bytes.Contains(out.Bytes(), []byte(`\\u00`)) {
		return nil, fmt.Errorf("a string holds a literal \\u00 escape")
	}
	r := strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&")
	return append([]byte(r.Replace(out.String())), '\n'), nil
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// fileName is the schema file name of a message type, without .json:
// "session/send" -> "session.send".
func fileName(typ string) string { return strings.ReplaceAll(typ, "/", ".") }

// pushFileName is the schema and example name of a push type: its
// fileName, with ".push" added when a request has the same name (mcp/login
// is both: mcp.login.json is the request, mcp.login.push.json the push).
func pushFileName(typ string) string {
	if slices.Contains(requestTypes, typ) {
		return fileName(typ) + ".push"
	}
	return fileName(typ)
}
