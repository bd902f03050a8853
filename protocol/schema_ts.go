package protocol

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// The TypeScript types of ts/protocol.gen.ts are generated from the same
// schemas by json-schema-to-typescript (internal/gen). TypeScriptSchema
// gives it one schema whose $defs are the types to declare, named as
// ts/protocol.ts exports them. What a generator cannot express (frames as
// generic unions, the Requests/Pushes maps, normalized events, unions
// between fields) stays hand-written in protocol.ts.

// tsStructs are the Go types declared in TypeScript, with their names. A
// name given to several types must get the same schema from each.
var tsStructs = []struct {
	t    reflect.Type
	name string
}{
	{reflect.TypeFor[SessionCreate](), "SessionCreateData"},
	{reflect.TypeFor[SessionCreateResult](), "SessionCreateResult"},
	{reflect.TypeFor[ClientMCPServer](), "ClientMcpServer"},
	{reflect.TypeFor[Image](), "ImageInput"},
	{reflect.TypeFor[SessionSend](), "SessionSendData"},
	{reflect.TypeFor[SessionUnsubscribe](), "SessionRef"},
	{reflect.TypeFor[SessionInterrupt](), "SessionRef"},
	{reflect.TypeFor[SessionClose](), "SessionRef"},
	{reflect.TypeFor[SessionSubscribe](), "SessionSubscribeData"},
	{reflect.TypeFor[SessionSubscribeResult](), "SessionSubscribeResult"},
	{reflect.TypeFor[SessionInfo](), "SessionInfo"},
	{reflect.TypeFor[SessionListResult](), "SessionListResult"},
	{reflect.TypeFor[SessionSetPermissionMode](), "SessionSetPermissionModeData"},
	{reflect.TypeFor[SessionSetPermissionModeResult](), "SessionSetPermissionModeResult"},
	{reflect.TypeFor[SessionSetModel](), "SessionSetModelData"},
	{reflect.TypeFor[SessionSetModelResult](), "SessionSetModelResult"},
	{reflect.TypeFor[ModelInfo](), "ModelInfo"},
	{reflect.TypeFor[MCPApprove](), "McpNameData"},
	{reflect.TypeFor[MCPReject](), "McpNameData"},
	{reflect.TypeFor[MCPTools](), "McpNameData"},
	{reflect.TypeFor[MCPApprovalResult](), "McpApprovalResult"},
	{reflect.TypeFor[MCPProbe](), "McpProbeData"},
	{reflect.TypeFor[ProbeResult](), "ProbeResult"},
	{reflect.TypeFor[MCPProbeResult](), "McpProbeResult"},
	{reflect.TypeFor[Parameter](), "Parameter"},
	{reflect.TypeFor[Tool](), "Tool"},
	{reflect.TypeFor[MCPToolsResult](), "McpToolsResult"},
	{reflect.TypeFor[MCPCall](), "McpCallData"},
	{reflect.TypeFor[MCPCallResult](), "McpCallResult"},
	{reflect.TypeFor[MCPAdd](), "McpWriteData"},
	{reflect.TypeFor[MCPUpdate](), "McpWriteData"},
	{reflect.TypeFor[MCPRemove](), "McpRemoveData"},
	{reflect.TypeFor[MCPManageResult](), "McpManageResult"},
	{reflect.TypeFor[MCPTrustResult](), "McpTrustResult"},
	{reflect.TypeFor[MCPLogin](), "McpLoginData"},
	{reflect.TypeFor[MCPLoginResult](), "McpLoginResult"},
	{reflect.TypeFor[MCPLogout](), "McpLogoutData"},
	{reflect.TypeFor[MCPLogoutResult](), "McpLogoutResult"},
	{reflect.TypeFor[MCPLoginEvent](), "McpLoginPushData"},
	{reflect.TypeFor[MCPTest](), "McpTestData"},
	{reflect.TypeFor[MCPToggle](), "McpToggleData"},
	{reflect.TypeFor[MCPReconnect](), "McpReconnectData"},
	{reflect.TypeFor[MCPLiveResult](), "McpLiveResult"},
	{reflect.TypeFor[MCPLog](), "McpLogData"},
	{reflect.TypeFor[LogEntry](), "LogEntry"},
	{reflect.TypeFor[MCPLogResult](), "McpLogResult"},
	{reflect.TypeFor[HistorySession](), "HistorySession"},
	{reflect.TypeFor[HistoryListResult](), "HistoryListResult"},
	{reflect.TypeFor[HistoryRead](), "HistoryReadData"},
	{reflect.TypeFor[HistoryEvent](), "HistoryEvent"},
	{reflect.TypeFor[HistoryReadResult](), "HistoryReadResult"},
	{reflect.TypeFor[Hello](), "HelloData"},
	{reflect.TypeFor[SessionEvent](), "SessionEventData"},
	{reflect.TypeFor[SessionState](), "SessionStateData"},
	{reflect.TypeFor[SessionExited](), "SessionExitedData"},
	{reflect.TypeFor[SessionGap](), "SessionGapData"},
	{reflect.TypeFor[QuestionOption](), "QuestionOption"},
	{reflect.TypeFor[Question](), "Question"},
	{reflect.TypeFor[PermissionRequest](), "PermissionRequestData"},
	{reflect.TypeFor[PermissionResolved](), "PermissionResolvedData"},
	{reflect.TypeFor[MCPServerStatus](), "McpServerStatus"},
	{reflect.TypeFor[MCPStatus](), "McpStatusData"},
	{reflect.TypeFor[MCPConfigServer](), "McpConfigServer"},
	{reflect.TypeFor[MCPConfig](), "McpConfigData"},
	{reflect.TypeFor[Error](), "ProtocolError"},
	{reflect.TypeFor[FieldError](), "FieldError"},
	{reflect.TypeFor[Software](), "Software"},
	{reflect.TypeFor[MCPRef](), "McpRef"},
	{reflect.TypeFor[MCPServerInfo](), "McpServerInfo"},
	{reflect.TypeFor[Attachment](), "Attachment"},
}

// tsDefs are the definitions of defs.json declared in TypeScript, by their
// TypeScript names. The others are written inline as their kind (string,
// number), or as tsRefTypes says.
var tsDefs = map[string]string{
	"SessionState":     "SessionStateName",
	"PermissionMode":   "PermissionMode",
	"ImageMediaType":   "ImageMediaType",
	"McpStatusValue":   "McpStatusValue",
	"Scope":            "Scope",
	"Approval":         "Approval",
	"Transport":        "Transport",
	"ProbeCode":        "ProbeCode",
	"WriteScope":       "WriteScope",
	"ParameterType":    "ParameterType",
	"PermissionKind":   "PermissionKind",
	"ProbeStatus":      "ProbeStatus",
	"RespondBehavior":  "RespondBehavior",
	"ResolvedBehavior": "ResolvedBehavior",
	"ResolvedReason":   "ResolvedReason",
	"ExitReason":       "ExitReason",
	"LogKind":          "LogKind",
	"Origin":           "McpStatusOrigin",
	"TitleFrom":        "TitleFrom",
	"HttpError":        "HttpError",
	"Error":            "ProtocolError",
}

// tsRefTypes are definitions that hand-written TypeScript types stand for.
var tsRefTypes = map[string]string{
	"RequestId":       "RequestId",
	"ErrorCode":       "ErrorCode",
	"NormalizedEvent": "NormalizedEvent",
	"EventObject":     "NormalizedEvent",
}

// tsFieldTypes are fields typed by hand-written TypeScript types.
var tsFieldTypes = map[string]string{
	"Hello.capabilities": "Capability[]",
}

// TypeScriptImports returns the hand-written types ts/protocol.gen.ts
// refers to; it imports them from ./protocol.
func TypeScriptImports() []string {
	return []string{"Capability", "ErrorCode", "JsonObject", "JsonValue", "NormalizedEvent", "RequestId"}
}

// setTSType gives field sf of struct t its TypeScript type when the
// schema cannot: raw JSON fields and those of tsFieldTypes.
func setTSType(p *jsonschema.Schema, t reflect.Type, sf reflect.StructField) {
	name, _ := jsonField(sf)
	tsType := tsFieldTypes[t.Name()+"."+name]
	if tsType == "" {
		ft := sf.Type
		switch {
		case ft == rawMessageType && p.Type == "object":
			tsType = "JsonObject"
		case ft == rawMessageType && p.Type == "array":
			tsType = "JsonValue[]"
		case ft == rawMessageType:
			tsType = "JsonValue"
		case ft.Kind() == reflect.Slice && ft.Elem() == rawMessageType:
			tsType = "JsonValue[]"
		}
	}
	if tsType != "" {
		if p.Extra == nil {
			p.Extra = map[string]any{}
		}
		p.Extra["tsType"] = tsType
	}
}

// TypeScriptSchema returns the schema internal/gen turns into
// ts/protocol.gen.ts.
func TypeScriptSchema() ([]byte, error) {
	defs := map[reflect.Type]string{}
	names := map[string]bool{}
	for _, d := range tsStructs {
		defs[d.t] = d.name
		names[d.name] = true
	}
	g := newGenerator("#/$defs/", defs)
	g.ts = true
	shared := newGenerator("#/$defs/", defs).sharedDefs()
	out := map[string]*jsonschema.Schema{}
	for _, d := range tsStructs {
		s, err := g.schemaOf(d.t)
		if err != nil {
			return nil, err
		}
		if prev, ok := out[d.name]; ok {
			a, _ := json.Marshal(prev)
			b, _ := json.Marshal(s)
			if string(a) != string(b) {
				return nil, fmt.Errorf("TypeScript type %s: %v has another schema than the type declared first", d.name, d.t)
			}
			continue
		}
		out[d.name] = s
	}
	for def, name := range tsDefs {
		if _, ok := out[name]; !ok {
			out[name] = shared[def]
		}
	}
	var rewrite func(s *jsonschema.Schema) *jsonschema.Schema
	rewrite = func(s *jsonschema.Schema) *jsonschema.Schema {
		if s == nil {
			return nil
		}
		if s.Ref != "" {
			def := strings.TrimPrefix(s.Ref, "#/$defs/")
			switch {
			case names[def]:
			case tsDefs[def] != "":
				s.Ref = "#/$defs/" + tsDefs[def]
			case tsRefTypes[def] != "":
				return &jsonschema.Schema{Description: s.Description, Extra: map[string]any{"tsType": tsRefTypes[def]}}
			default:
				d := shared[def]
				if d == nil {
					panic("protocol: TypeScriptSchema: no definition " + def)
				}
				return &jsonschema.Schema{Description: s.Description, Type: d.Type, Types: d.Types, Enum: d.Enum, Const: d.Const}
			}
			// A description next to a $ref makes json2ts declare a copy of
			// the referred type: drop it.
			s.Description = ""
			return s
		}
		for k, p := range s.Properties {
			s.Properties[k] = rewrite(p)
		}
		s.Items = rewrite(s.Items)
		s.AdditionalProperties = rewrite(s.AdditionalProperties)
		// Rules between fields are not types: TypeScript gets the fields.
		s.AllOf, s.If, s.Then, s.Else, s.Not, s.PropertyNames = nil, nil, nil, nil, nil, nil
		for i, a := range s.AnyOf {
			s.AnyOf[i] = rewrite(a)
		}
		for i, a := range s.OneOf {
			s.OneOf[i] = rewrite(a)
		}
		delete(s.Extra, "errorMessage")
		return s
	}
	for name, s := range out {
		s = rewrite(s)
		s.Title = name
		out[name] = s
	}
	bundle := &jsonschema.Schema{
		Schema:      draft202012,
		Title:       "Protocol Definitions",
		Description: "The data types of the ccproxy webview protocol, version 1, for json-schema-to-typescript.",
		Type:        "object",
		Defs:        out,
	}
	return marshalSchema(bundle)
}
