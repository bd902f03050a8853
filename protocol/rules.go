package protocol

import "github.com/google/jsonschema-go/jsonschema"

// Rules between fields, as JSON Schema. Each rule puts its errorMessage on
// the field it forbids or requires, so a validation error names that field.

func props(m map[string]*jsonschema.Schema) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "object", Properties: m}
}

// forbidden is a schema no value matches, with msg as its error.
func forbidden(msg string) *jsonschema.Schema {
	return withMessage(&jsonschema.Schema{Not: &jsonschema.Schema{}}, msg)
}

func rule(ifs, then *jsonschema.Schema) *jsonschema.Schema {
	return &jsonschema.Schema{If: ifs, Then: then}
}

func (SessionSend) schemaRules(s *jsonschema.Schema) {
	s.AllOf = append(s.AllOf, rule(
		&jsonschema.Schema{Not: &jsonschema.Schema{Required: []string{"images"}, Properties: map[string]*jsonschema.Schema{"images": {MinItems: ptrInt(1)}}}},
		props(map[string]*jsonschema.Schema{"text": withMessage(&jsonschema.Schema{MinLength: ptrInt(1)}, "must not be empty unless images are sent")}),
	))
}

func (PermissionRespond) schemaRules(s *jsonschema.Schema) {
	onlyAllow := `only allowed with behavior "allow"`
	s.AllOf = append(s.AllOf,
		rule(props(map[string]*jsonschema.Schema{"behavior": constOf(BehaviorDeny)}),
			props(map[string]*jsonschema.Schema{
				"updatedInput": forbidden(onlyAllow),
				"answers":      forbidden(onlyAllow),
				"always":       withMessage(constOf(false), onlyAllow),
			})),
		rule(props(map[string]*jsonschema.Schema{"behavior": constOf(BehaviorAllow)}),
			props(map[string]*jsonschema.Schema{"message": withMessage(&jsonschema.Schema{MaxLength: ptrInt(0)}, `only allowed with behavior "deny"`)})),
		rule(&jsonschema.Schema{Required: []string{"answers", "updatedInput"}},
			props(map[string]*jsonschema.Schema{"answers": forbidden("not allowed with updatedInput (the answers are added to the question's input)")})),
	)
}

func (HistoryList) schemaRules(s *jsonschema.Schema) {
	s.AllOf = append(s.AllOf, rule(
		&jsonschema.Schema{Required: []string{"project", "all"}, Properties: map[string]*jsonschema.Schema{"all": constOf(true)}},
		props(map[string]*jsonschema.Schema{"all": forbidden("project and all exclude each other")}),
	))
}

func (MCPToggle) schemaRules(s *jsonschema.Schema) {
	s.AllOf = append(s.AllOf, rule(
		&jsonschema.Schema{Required: []string{"persist", "session"}, Properties: map[string]*jsonschema.Schema{"persist": constOf(true)}},
		props(map[string]*jsonschema.Schema{"persist": forbidden("applies to every session: leave session out")}),
	))
}

func (PermissionRequest) schemaRules(s *jsonschema.Schema) {
	kindIs := func(k string) *jsonschema.Schema {
		return &jsonschema.Schema{Required: []string{"kind"}, Properties: map[string]*jsonschema.Schema{"kind": constOf(k)}}
	}
	s.AllOf = append(s.AllOf,
		rule(&jsonschema.Schema{Required: []string{"kind"}, Properties: map[string]*jsonschema.Schema{"kind": {Enum: []any{PermissionKindQuestion, PermissionKindPlan}}}},
			props(map[string]*jsonschema.Schema{"deadline": forbidden("a question or a plan waits for a person: no deadline")})),
		rule(&jsonschema.Schema{Not: kindIs(PermissionKindQuestion)},
			props(map[string]*jsonschema.Schema{"questions": forbidden(`only allowed with kind "question"`)})),
		rule(&jsonschema.Schema{Not: kindIs(PermissionKindPlan)},
			props(map[string]*jsonschema.Schema{"plan": forbidden(`only allowed with kind "plan"`)})),
	)
}

func (SessionExited) schemaRules(s *jsonschema.Schema) {
	s.AllOf = append(s.AllOf, withMessage(&jsonschema.Schema{AnyOf: []*jsonschema.Schema{
		props(map[string]*jsonschema.Schema{"code": {Type: "integer"}}),
		props(map[string]*jsonschema.Schema{"signal": {Type: "string"}}),
	}}, "code or signal must be set"))
}

func (LogEntry) schemaRules(s *jsonschema.Schema) {
	s.AllOf = append(s.AllOf, rule(
		props(map[string]*jsonschema.Schema{"kind": constOf(LogKindSession)}),
		&jsonschema.Schema{Required: []string{"session"}},
	))
}

func (ProbeResult) schemaRules(s *jsonschema.Schema) {
	s.AllOf = append(s.AllOf,
		rule(props(map[string]*jsonschema.Schema{"ok": constOf(true)}),
			props(map[string]*jsonschema.Schema{"status": withMessage(constOf(MCPConnected), `must be "connected" when ok is true`)})),
		rule(props(map[string]*jsonschema.Schema{"ok": constOf(false)}),
			&jsonschema.Schema{
				Required:   []string{"error"},
				Properties: map[string]*jsonschema.Schema{"status": withMessage(&jsonschema.Schema{Not: constOf(MCPConnected)}, `must not be "connected" when ok is false`)},
			}),
	)
}

func (MCPLiveOutcome) schemaRules(s *jsonschema.Schema) {
	s.AllOf = append(s.AllOf,
		rule(props(map[string]*jsonschema.Schema{"ok": constOf(true)}),
			props(map[string]*jsonschema.Schema{"error": forbidden("not allowed when ok is true")})),
		rule(props(map[string]*jsonschema.Schema{"ok": constOf(false)}),
			&jsonschema.Schema{Required: []string{"error"}}),
	)
}

// SessionCreate's mcpServers: an object of at most MaxClientMCPServers
// server definitions (objects), by name, as in .mcp.json; each definition
// is checked by mcpconfig, as a file's is.
//
// fork: only with resume (the conversation to fork).
func (SessionCreate) schemaRules(s *jsonschema.Schema) {
	s.AllOf = append(s.AllOf, rule(
		&jsonschema.Schema{Required: []string{"fork"}, Properties: map[string]*jsonschema.Schema{"fork": constOf(true)}, Not: &jsonschema.Schema{Required: []string{"resume"}}},
		props(map[string]*jsonschema.Schema{"fork": forbidden("only with resume: the Claude session id of the conversation to fork")}),
	))
	p := s.Properties["mcpServers"]
	if p == nil {
		return
	}
	p.Type, p.Types = "object", nil
	p.MaxProperties = ptrInt(MaxClientMCPServers)
	p.PropertyNames = withMessage(&jsonschema.Schema{Pattern: "^[A-Za-z0-9_][A-Za-z0-9_-]{0,255}$"}, "a server name is 1 to 256 letters, digits, _ or -, not - first")
	p.AdditionalProperties = withMessage(&jsonschema.Schema{Type: "object"}, "a server definition is an object")
}

// MCPLoginEvent: state is one of LoginStates; url comes with state url
// only, error with state failed only.
func (MCPLoginEvent) schemaRules(s *jsonschema.Schema) {
	s.Properties["state"] = withMessage(enumOf(LoginStates), "must be url, done or failed")
	stateIs := func(st string) *jsonschema.Schema {
		return props(map[string]*jsonschema.Schema{"state": constOf(st)})
	}
	s.AllOf = append(s.AllOf,
		&jsonschema.Schema{If: stateIs(LoginURL),
			Then: &jsonschema.Schema{Required: []string{"url"}},
			Else: props(map[string]*jsonschema.Schema{"url": forbidden("only when state is url")})},
		&jsonschema.Schema{If: stateIs(LoginFailed),
			Then: &jsonschema.Schema{Required: []string{"error"}},
			Else: props(map[string]*jsonschema.Schema{"error": forbidden("only when state is failed")})},
	)
}
