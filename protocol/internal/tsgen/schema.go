package tsgen

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/ccproxy/ccproxy/protocol"
)

// The TypeScript types of ts/protocol.gen.ts are generated from the same
// schemas as schema/*.json (protocol.SchemaOf) by json-schema-to-typescript
// (internal/gen). Schema gives it one schema whose $defs are the types to
// declare, named as ts/protocol.ts exports them. What a generator cannot express (frames as
// generic unions, the Requests/Pushes maps, normalized events, unions
// between fields) stays hand-written in protocol.ts.

// tsStructs are the Go types declared in TypeScript, with their names. A
// name given to several types must get the same schema from each.
var tsStructs = []struct {
	t    reflect.Type
	name string
}{
	{reflect.TypeFor[protocol.SessionCreate](), "SessionCreateData"},
	{reflect.TypeFor[protocol.SessionCreateResult](), "SessionCreateResult"},
	{reflect.TypeFor[protocol.ClientMCPServer](), "ClientMcpServer"},
	{reflect.TypeFor[protocol.Image](), "ImageInput"},
	{reflect.TypeFor[protocol.SessionSend](), "SessionSendData"},
	{reflect.TypeFor[protocol.SessionUnsubscribe](), "SessionRef"},
	{reflect.TypeFor[protocol.SessionInterrupt](), "SessionRef"},
	{reflect.TypeFor[protocol.SessionClose](), "SessionRef"},
	{reflect.TypeFor[protocol.SessionSubscribe](), "SessionSubscribeData"},
	{reflect.TypeFor[protocol.SessionSubscribeResult](), "SessionSubscribeResult"},
	{reflect.TypeFor[protocol.SessionInfo](), "SessionInfo"},
	{reflect.TypeFor[protocol.SessionListResult](), "SessionListResult"},
	{reflect.TypeFor[protocol.SessionSetPermissionMode](), "SessionSetPermissionModeData"},
	{reflect.TypeFor[protocol.SessionSetPermissionModeResult](), "SessionSetPermissionModeResult"},
	{reflect.TypeFor[protocol.SessionSetModel](), "SessionSetModelData"},
	{reflect.TypeFor[protocol.SessionSetModelResult](), "SessionSetModelResult"},
	{reflect.TypeFor[protocol.ModelInfo](), "ModelInfo"},
	{reflect.TypeFor[protocol.MCPApprove](), "McpNameData"},
	{reflect.TypeFor[protocol.MCPReject](), "McpNameData"},
	{reflect.TypeFor[protocol.MCPTools](), "McpNameData"},
	{reflect.TypeFor[protocol.MCPApprovalResult](), "McpApprovalResult"},
	{reflect.TypeFor[protocol.MCPProbe](), "McpProbeData"},
	{reflect.TypeFor[protocol.ProbeResult](), "ProbeResult"},
	{reflect.TypeFor[protocol.MCPProbeResult](), "McpProbeResult"},
	{reflect.TypeFor[protocol.Parameter](), "Parameter"},
	{reflect.TypeFor[protocol.Tool](), "Tool"},
	{reflect.TypeFor[protocol.MCPToolsResult](), "McpToolsResult"},
	{reflect.TypeFor[protocol.MCPCall](), "McpCallData"},
	{reflect.TypeFor[protocol.MCPCallResult](), "McpCallResult"},
	{reflect.TypeFor[protocol.MCPAdd](), "McpWriteData"},
	{reflect.TypeFor[protocol.MCPUpdate](), "McpWriteData"},
	{reflect.TypeFor[protocol.MCPRemove](), "McpRemoveData"},
	{reflect.TypeFor[protocol.MCPManageResult](), "McpManageResult"},
	{reflect.TypeFor[protocol.MCPTrustResult](), "McpTrustResult"},
	{reflect.TypeFor[protocol.MCPLogin](), "McpLoginData"},
	{reflect.TypeFor[protocol.MCPLoginResult](), "McpLoginResult"},
	{reflect.TypeFor[protocol.MCPLogout](), "McpLogoutData"},
	{reflect.TypeFor[protocol.MCPLogoutResult](), "McpLogoutResult"},
	{reflect.TypeFor[protocol.MCPLoginEvent](), "McpLoginPushData"},
	{reflect.TypeFor[protocol.MCPTest](), "McpTestData"},
	{reflect.TypeFor[protocol.MCPToggle](), "McpToggleData"},
	{reflect.TypeFor[protocol.MCPReconnect](), "McpReconnectData"},
	{reflect.TypeFor[protocol.MCPLiveResult](), "McpLiveResult"},
	{reflect.TypeFor[protocol.MCPLog](), "McpLogData"},
	{reflect.TypeFor[protocol.LogEntry](), "LogEntry"},
	{reflect.TypeFor[protocol.MCPLogResult](), "McpLogResult"},
	{reflect.TypeFor[protocol.HistorySession](), "HistorySession"},
	{reflect.TypeFor[protocol.HistoryListResult](), "HistoryListResult"},
	{reflect.TypeFor[protocol.HistoryRead](), "HistoryReadData"},
	{reflect.TypeFor[protocol.HistoryEvent](), "HistoryEvent"},
	{reflect.TypeFor[protocol.HistoryReadResult](), "HistoryReadResult"},
	{reflect.TypeFor[protocol.HistoryRename](), "HistoryRenameData"},
	{reflect.TypeFor[protocol.HistoryRenameResult](), "HistoryRenameResult"},
	{reflect.TypeFor[protocol.HistoryDelete](), "HistoryDeleteData"},
	{reflect.TypeFor[protocol.HistoryTrashEntry](), "HistoryTrashEntry"},
	{reflect.TypeFor[protocol.HistoryDeleteResult](), "HistoryDeleteResult"},
	{reflect.TypeFor[protocol.HistoryRestore](), "HistoryRestoreData"},
	{reflect.TypeFor[protocol.HistoryRestoreResult](), "HistoryRestoreResult"},
	{reflect.TypeFor[protocol.HistoryTrashResult](), "HistoryTrashResult"},
	{reflect.TypeFor[protocol.HistoryExport](), "HistoryExportData"},
	{reflect.TypeFor[protocol.HistoryExportResult](), "HistoryExportResult"},
	{reflect.TypeFor[protocol.HistoryProject](), "HistoryProject"},
	{reflect.TypeFor[protocol.Hello](), "HelloData"},
	{reflect.TypeFor[protocol.SessionEvent](), "SessionEventData"},
	{reflect.TypeFor[protocol.SessionState](), "SessionStateData"},
	{reflect.TypeFor[protocol.SessionExited](), "SessionExitedData"},
	{reflect.TypeFor[protocol.SessionGap](), "SessionGapData"},
	{reflect.TypeFor[protocol.QuestionOption](), "QuestionOption"},
	{reflect.TypeFor[protocol.Question](), "Question"},
	{reflect.TypeFor[protocol.PermissionRequest](), "PermissionRequestData"},
	{reflect.TypeFor[protocol.PermissionResolved](), "PermissionResolvedData"},
	{reflect.TypeFor[protocol.MCPServerStatus](), "McpServerStatus"},
	{reflect.TypeFor[protocol.MCPStatus](), "McpStatusData"},
	{reflect.TypeFor[protocol.MCPConfigServer](), "McpConfigServer"},
	{reflect.TypeFor[protocol.MCPConfig](), "McpConfigData"},
	{reflect.TypeFor[protocol.Error](), "ProtocolError"},
	{reflect.TypeFor[protocol.FieldError](), "FieldError"},
	{reflect.TypeFor[protocol.Software](), "Software"},
	{reflect.TypeFor[protocol.MCPRef](), "McpRef"},
	{reflect.TypeFor[protocol.MCPServerInfo](), "McpServerInfo"},
	{reflect.TypeFor[protocol.Attachment](), "Attachment"},
	{reflect.TypeFor[protocol.SessionCommands](), "SessionCommandsData"},
	{reflect.TypeFor[protocol.SlashCommand](), "SlashCommand"},
	{reflect.TypeFor[protocol.SessionFiles](), "SessionFilesData"},
	{reflect.TypeFor[protocol.SessionFilesResult](), "SessionFilesResult"},
	{reflect.TypeFor[protocol.FileEntry](), "FileEntry"},
	{reflect.TypeFor[protocol.SessionRewind](), "SessionRewindData"},
	{reflect.TypeFor[protocol.SessionRewindResult](), "SessionRewindResult"},
	{reflect.TypeFor[protocol.TokenUsage](), "TokenUsage"},
	{reflect.TypeFor[protocol.SessionUsage](), "SessionUsage"},
	{reflect.TypeFor[protocol.HistorySearch](), "HistorySearchData"},
	{reflect.TypeFor[protocol.HistorySearchSpan](), "HistorySearchSpan"},
	{reflect.TypeFor[protocol.HistorySearchMatch](), "HistorySearchMatch"},
	{reflect.TypeFor[protocol.HistorySearchHit](), "HistorySearchHit"},
	{reflect.TypeFor[protocol.HistorySearchResult](), "HistorySearchResult"},
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
	"SearchRole":       "SearchRole",
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

// Imports returns the hand-written types ts/protocol.gen.ts refers to; it
// imports them from ./protocol.
func Imports() []string {
	return []string{"Capability", "ErrorCode", "JsonObject", "JsonValue", "NormalizedEvent", "RequestId"}
}

var rawMessageType = reflect.TypeFor[json.RawMessage]()

// setTSType gives field sf (JSON name) of struct t its TypeScript type when
// the schema cannot: raw JSON fields and those of tsFieldTypes.
func setTSType(p *jsonschema.Schema, t reflect.Type, name string, sf reflect.StructField) {
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

// Schema returns the schema internal/gen turns into ts/protocol.gen.ts
// (with Generate).
func Schema() ([]byte, error) {
	defs := map[reflect.Type]string{}
	names := map[string]bool{}
	for _, d := range tsStructs {
		defs[d.t] = d.name
		names[d.name] = true
	}
	opts := protocol.SchemaOptions{RefPrefix: "#/$defs/", Defs: defs, Field: setTSType}
	shared := protocol.SharedSchemas("#/$defs/")
	out := map[string]*jsonschema.Schema{}
	for _, d := range tsStructs {
		s, err := protocol.SchemaOf(d.t, opts)
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
					panic("tsgen: Schema: no definition " + def)
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
		Schema:      "https://json-schema.org/draft/2020-12/schema",
		Title:       "Protocol Definitions",
		Description: "The data types of the ccproxy webview protocol, version 1, for json-schema-to-typescript.",
		Type:        "object",
		Defs:        out,
	}
	return protocol.MarshalSchema(bundle)
}
