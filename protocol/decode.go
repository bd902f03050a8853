package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ccproxy/ccproxy/internal/textutil"
)

// Bounds the envelope checks enforce.
const (
	// MaxIDBytes is the longest string request id accepted.
	MaxIDBytes = 128
	// maxSafeInteger is the largest integer id a JavaScript client can hold.
	maxSafeInteger = 1<<53 - 1
)

// ParseFrame parses one websocket text frame and checks its envelope: a JSON
// object with a non-empty string type, an id that is a string or an integer,
// a data object (requests and pushes), and for replies ok plus data or error.
//
// On error the returned Frame still holds the type and id when they could be
// read, so the caller can answer with NewErrorReply(f.ID, err); the error is
// an *Error with code bad_request whose message says what was wrong and where.
//
// A frame that is not valid UTF-8 is refused before anything in it is read
// (its id is not read either): no part of it can then be echoed, raw, in a
// reply or a message. This is the one check of client text for UTF-8;
// everything read from a frame that passed it is valid UTF-8.
func ParseFrame(b []byte) (Frame, error) {
	var f Frame
	if i := invalidUTF8(b); i >= 0 {
		return f, badRequest("frame is not valid UTF-8: invalid byte 0x%02x at byte %d (text frames must be UTF-8; the frame was not executed)", b[i], i)
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(b, &members); err != nil {
		if k := jsonKind(b); k != "" && k != "object" && json.Valid(b) {
			return f, badRequest("frame: want a JSON object, got %s", article(k))
		}
		return f, badRequest("frame is not valid JSON: %s", describeJSONError(b, err))
	}
	if members == nil { // the frame was the literal null
		return f, badRequest("frame: want a JSON object, got null")
	}

	var errs fieldErrors
	if raw, ok := members["id"]; ok {
		if msg := checkID(raw); msg != "" {
			errs.add("id", "%s", msg)
		} else {
			f.ID = raw
		}
	}
	raw, ok := members["type"]
	switch {
	case !ok:
		errs.add("type", "required")
	case jsonKind(raw) != "string":
		errs.add("type", "want a string, got %s", article(jsonKind(raw)))
	default:
		_ = json.Unmarshal(raw, &f.Type)
		if f.Type == "" {
			errs.add("type", "must not be empty")
		}
	}
	if f.Type == TypeReply {
		parseReplyMembers(&f, members, &errs)
	} else if f.Type != "" {
		if string(f.ID) == "null" {
			errs.add("id", "may be null only in a reply")
			f.ID = nil
		}
		raw, ok := members["data"]
		switch {
		case !ok:
			errs.add("data", "required (send {} when a message has no fields)")
		case jsonKind(raw) != "object":
			errs.add("data", "want an object, got %s", article(jsonKind(raw)))
		default:
			f.Data = raw
		}
	}
	if err := errs.err(f.Type, ""); err != nil {
		return f, err
	}
	return f, nil
}

// PeekID reads a request's id from the first bytes of a frame that is not
// kept whole (one discarded as too large or refused for want of memory), so
// that the error reply can still name the request. head is the frame's
// beginning, possibly cut anywhere. The members before "id" are skipped
// token by token; the id is returned only when its whole value lies in head,
// is followed by at least one more byte (a number cut at the end of head
// would read as a smaller one), is valid UTF-8, and is an id ParseFrame
// would accept. Otherwise (no id within head, a null id, any doubt) it
// returns nil and the reply's id is null.
func PeekID(head []byte) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(head))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	for {
		t, err := dec.Token()
		if err != nil {
			return nil
		}
		key, ok := t.(string)
		if !ok { // '}': the object ended without an id
			return nil
		}
		if key == "id" {
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil || dec.InputOffset() >= int64(len(head)) {
				return nil
			}
			if !utf8.Valid(raw) || jsonKind(raw) == "null" || checkID(raw) != "" {
				return nil
			}
			return raw
		}
		// Skip the member's value, however deep.
		for depth := 0; ; {
			t, err := dec.Token()
			if err != nil {
				return nil
			}
			switch t {
			case json.Delim('{'), json.Delim('['):
				depth++
			case json.Delim('}'), json.Delim(']'):
				depth--
			}
			if depth == 0 {
				break
			}
		}
	}
}

func parseReplyMembers(f *Frame, members map[string]json.RawMessage, errs *fieldErrors) {
	if _, ok := members["id"]; !ok {
		errs.add("id", "required in a reply (null when the request's id could not be read)")
	}
	raw, ok := members["ok"]
	if !ok {
		errs.add("ok", "required in a reply")
		return
	}
	var okv bool
	if jsonKind(raw) != "boolean" {
		errs.add("ok", "want a boolean, got %s", article(jsonKind(raw)))
		return
	}
	_ = json.Unmarshal(raw, &okv)
	f.OK = &okv
	if okv {
		raw, ok := members["data"]
		switch {
		case !ok:
			errs.add("data", "required when ok is true")
		case jsonKind(raw) != "object":
			errs.add("data", "want an object, got %s", article(jsonKind(raw)))
		default:
			f.Data = raw
		}
		return
	}
	raw, ok = members["error"]
	if !ok {
		errs.add("error", "required when ok is false")
		return
	}
	var e Error
	if fe := decodeInto(raw, &e, "error"); len(fe) > 0 {
		*errs = append(*errs, fe...)
		return
	}
	f.Error = &e
}

// checkID returns why raw is not a valid request id, or "".
func checkID(raw json.RawMessage) string {
	switch jsonKind(raw) {
	case "null":
		return "" // allowed in replies only; checked by the caller
	case "string":
		var s string
		_ = json.Unmarshal(raw, &s)
		if s == "" {
			return "must not be an empty string"
		}
		if len(s) > MaxIDBytes {
			return fmt.Sprintf("too long: %d bytes, at most %d", len(s), MaxIDBytes)
		}
		return ""
	case "number":
		n, err := strconv.ParseInt(string(bytes.TrimSpace(raw)), 10, 64)
		if err != nil || n > maxSafeInteger || n < -maxSafeInteger {
			return fmt.Sprintf("want a string or an integer between -(2^53-1) and 2^53-1, got %s", textutil.Truncate(string(raw), 40))
		}
		return ""
	default:
		return fmt.Sprintf("want a string or an integer, got %s", article(jsonKind(raw)))
	}
}

// Registries: message type -> a new, empty data struct.
var (
	requestData = map[string]func() Data{
		TypeSessionCreate:      func() Data { return new(SessionCreate) },
		TypeSessionSend:        func() Data { return new(SessionSend) },
		TypeSessionSubscribe:   func() Data { return new(SessionSubscribe) },
		TypeSessionUnsubscribe: func() Data { return new(SessionUnsubscribe) },
		TypeSessionInterrupt:   func() Data { return new(SessionInterrupt) },
		TypeSessionClose:       func() Data { return new(SessionClose) },
		TypeSessionList:        func() Data { return new(SessionList) },
		TypeSessionSetMode:     func() Data { return new(SessionSetPermissionMode) },
		TypeSessionSetModel:    func() Data { return new(SessionSetModel) },
		TypePermissionRespond:  func() Data { return new(PermissionRespond) },
		TypeMCPSubscribe:       func() Data { return new(MCPSubscribe) },
		TypeMCPUnsubscribe:     func() Data { return new(MCPUnsubscribe) },
		TypeMCPApprove:         func() Data { return new(MCPApprove) },
		TypeMCPReject:          func() Data { return new(MCPReject) },
		TypeMCPProbe:           func() Data { return new(MCPProbe) },
		TypeMCPTools:           func() Data { return new(MCPTools) },
		TypeMCPCall:            func() Data { return new(MCPCall) },
		TypeMCPLog:             func() Data { return new(MCPLog) },
		TypeHistoryList:        func() Data { return new(HistoryList) },
		TypeHistoryRead:        func() Data { return new(HistoryRead) },
		TypeMCPAdd:             func() Data { return new(MCPAdd) },
		TypeMCPUpdate:          func() Data { return new(MCPUpdate) },
		TypeMCPRemove:          func() Data { return new(MCPRemove) },
		TypeMCPTest:            func() Data { return new(MCPTest) },
		TypeMCPToggle:          func() Data { return new(MCPToggle) },
		TypeMCPReconnect:       func() Data { return new(MCPReconnect) },
		TypeMCPTrust:           func() Data { return new(MCPTrust) },
		TypeMCPLogin:           func() Data { return new(MCPLogin) },
		TypeMCPLogout:          func() Data { return new(MCPLogout) },
		TypeSessionFiles:       func() Data { return new(SessionFiles) },
		TypeHistoryRename:      func() Data { return new(HistoryRename) },
		TypeHistoryDelete:      func() Data { return new(HistoryDelete) },
		TypeHistoryRestore:     func() Data { return new(HistoryRestore) },
		TypeHistoryTrash:       func() Data { return new(HistoryTrash) },
		TypeHistoryExport:      func() Data { return new(HistoryExport) },
		TypeSessionRewind:      func() Data { return new(SessionRewind) },
		TypeHistorySearch:      func() Data { return new(HistorySearch) },
	}
	resultData = map[string]func() Data{
		TypeSessionCreate:      func() Data { return new(SessionCreateResult) },
		TypeSessionSend:        func() Data { return new(Empty) },
		TypeSessionSubscribe:   func() Data { return new(SessionSubscribeResult) },
		TypeSessionUnsubscribe: func() Data { return new(Empty) },
		TypeSessionInterrupt:   func() Data { return new(Empty) },
		TypeSessionClose:       func() Data { return new(Empty) },
		TypeSessionList:        func() Data { return new(SessionListResult) },
		TypeSessionSetMode:     func() Data { return new(SessionSetPermissionModeResult) },
		TypeSessionSetModel:    func() Data { return new(SessionSetModelResult) },
		TypePermissionRespond:  func() Data { return new(Empty) },
		TypeMCPSubscribe:       func() Data { return new(Empty) },
		TypeMCPUnsubscribe:     func() Data { return new(Empty) },
		TypeMCPApprove:         func() Data { return new(MCPApprovalResult) },
		TypeMCPReject:          func() Data { return new(MCPApprovalResult) },
		TypeMCPProbe:           func() Data { return new(MCPProbeResult) },
		TypeMCPTools:           func() Data { return new(MCPToolsResult) },
		TypeMCPCall:            func() Data { return new(MCPCallResult) },
		TypeMCPLog:             func() Data { return new(MCPLogResult) },
		TypeHistoryList:        func() Data { return new(HistoryListResult) },
		TypeHistoryRead:        func() Data { return new(HistoryReadResult) },
		TypeMCPAdd:             func() Data { return new(MCPManageResult) },
		TypeMCPUpdate:          func() Data { return new(MCPManageResult) },
		TypeMCPRemove:          func() Data { return new(MCPManageResult) },
		TypeMCPTest:            func() Data { return new(MCPProbeResult) },
		TypeMCPToggle:          func() Data { return new(MCPLiveResult) },
		TypeMCPReconnect:       func() Data { return new(MCPLiveResult) },
		TypeMCPTrust:           func() Data { return new(MCPTrustResult) },
		TypeMCPLogin:           func() Data { return new(MCPLoginResult) },
		TypeMCPLogout:          func() Data { return new(MCPLogoutResult) },
		TypeSessionFiles:       func() Data { return new(SessionFilesResult) },
		TypeHistoryRename:      func() Data { return new(HistoryRenameResult) },
		TypeHistoryDelete:      func() Data { return new(HistoryDeleteResult) },
		TypeHistoryRestore:     func() Data { return new(HistoryRestoreResult) },
		TypeHistoryTrash:       func() Data { return new(HistoryTrashResult) },
		TypeHistoryExport:      func() Data { return new(HistoryExportResult) },
		TypeSessionRewind:      func() Data { return new(SessionRewindResult) },
		TypeHistorySearch:      func() Data { return new(HistorySearchResult) },
	}
	pushData = map[string]func() Data{
		TypeHello:              func() Data { return new(Hello) },
		TypeSessionEvent:       func() Data { return new(SessionEvent) },
		TypeSessionState:       func() Data { return new(SessionState) },
		TypeSessionExited:      func() Data { return new(SessionExited) },
		TypeSessionGap:         func() Data { return new(SessionGap) },
		TypePermissionRequest:  func() Data { return new(PermissionRequest) },
		TypePermissionResolved: func() Data { return new(PermissionResolved) },
		TypeMCPStatus:          func() Data { return new(MCPStatus) },
		TypeMCPConfig:          func() Data { return new(MCPConfig) },
		TypeMCPLoginEvent:      func() Data { return new(MCPLoginEvent) },
		TypeSessionCommands:    func() Data { return new(SessionCommands) },
	}
)

// NewRequestData returns a pointer to a new data struct for the request type
// typ (for example *SessionCreate for "session/create").
func NewRequestData(typ string) (Data, bool) { return newFrom(requestData, typ) }

// NewResultData returns a pointer to a new data struct for the reply to the
// request type typ (for example *SessionCreateResult for "session/create").
func NewResultData(requestType string) (Data, bool) { return newFrom(resultData, requestType) }

// NewPushData returns a pointer to a new data struct for the push type typ.
func NewPushData(typ string) (Data, bool) { return newFrom(pushData, typ) }

func newFrom(m map[string]func() Data, typ string) (Data, bool) {
	f, ok := m[typ]
	if !ok {
		return nil, false
	}
	return f(), true
}

// DecodeRequest decodes the data of a client request parsed by ParseFrame
// into its typed struct (a pointer, for example *SessionSend) and validates
// it. Errors are *Error: unknown_type for a type that is not a request,
// bad_request naming each invalid field for anything else.
func DecodeRequest(f Frame) (Data, error) {
	d, ok := NewRequestData(f.Type)
	if !ok {
		if _, push := pushData[f.Type]; push || f.Type == TypeReply {
			return nil, Errorf(CodeUnknownType, "%q is sent by the proxy, not by clients", f.Type)
		}
		return nil, Errorf(CodeUnknownType, "unknown message type %q", textutil.Truncate(f.Type, 64))
	}
	if len(f.ID) == 0 || string(f.ID) == "null" {
		return nil, badRequest("%s: id: required on requests", f.Type)
	}
	if err := DecodeData(f.Type, f.Data, d); err != nil {
		return nil, err
	}
	return d, nil
}

// DecodePush decodes the data of a push (any proxy → client frame but reply)
// into its typed struct and validates it.
func DecodePush(f Frame) (Data, error) {
	d, ok := NewPushData(f.Type)
	if !ok {
		return nil, Errorf(CodeUnknownType, "unknown push type %q", textutil.Truncate(f.Type, 64))
	}
	if err := DecodeData(f.Type, f.Data, d); err != nil {
		return nil, err
	}
	return d, nil
}

// DecodeResult decodes a reply to a request of type requestType. For an
// error reply it returns the reply's *Error; for a success it returns the
// typed result (for example *SessionSubscribeResult), validated.
func DecodeResult(requestType string, f Frame) (Data, error) {
	if f.Type != TypeReply {
		return nil, badRequest("want a reply, got %q", f.Type)
	}
	if f.OK == nil {
		return nil, badRequest("reply: ok: required")
	}
	if !*f.OK {
		if f.Error == nil {
			return nil, badRequest("reply: error: required when ok is false")
		}
		return nil, f.Error
	}
	d, ok := NewResultData(requestType)
	if !ok {
		return nil, Errorf(CodeUnknownType, "unknown request type %q", textutil.Truncate(requestType, 64))
	}
	if err := DecodeData("reply to "+requestType, f.Data, d); err != nil {
		return nil, err
	}
	return d, nil
}

// DecodeData decodes raw, the data object of a message of type typ, into v
// (a pointer to a data struct) and validates it against the type's schema
// and rules. Every problem is reported with its path:
// "session/send: data.images[0].mediaType: required".
func DecodeData(typ string, raw json.RawMessage, v Data) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return Errorf(CodeInternal, "DecodeData: want a non-nil pointer, got %T", v)
	}
	if schemas().byType[rv.Type().Elem()] == nil {
		return Errorf(CodeInternal, "DecodeData: %T is not a data type of the protocol", v)
	}
	if len(raw) == 0 {
		raw = json.RawMessage("{}")
	}
	return decodeInto(raw, v, "data").err(typ, "")
}

// jsonField returns a struct field's JSON name and whether it is required
// (its tag has neither omitempty nor omitzero).
func jsonField(sf reflect.StructField) (name string, required bool) {
	if !sf.IsExported() {
		return "", false
	}
	tag := sf.Tag.Get("json")
	if tag == "-" {
		return "", false
	}
	parts := strings.Split(tag, ",")
	name = parts[0]
	if name == "" {
		name = sf.Name
	}
	required = true
	for _, opt := range parts[1:] {
		if opt == "omitempty" || opt == "omitzero" {
			required = false
		}
	}
	return name, required
}

// jsonKind names the kind of a JSON value by its first byte: object, array,
// string, boolean, null or number ("" when empty).
func jsonKind(raw []byte) string {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return ""
	}
	switch raw[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

func article(kind string) string {
	switch kind {
	case "":
		return "nothing"
	case "null":
		return "null"
	case "object", "array", "integer":
		return "an " + kind
	}
	return "a " + kind
}

func joinPath(path, name string) string {
	if path == "" || name == "" {
		return path + name
	}
	if strings.HasPrefix(name, "[") {
		return path + name
	}
	return path + "." + name
}

func describeJSONError(b []byte, err error) string {
	if len(bytes.TrimSpace(b)) == 0 {
		return "the frame is empty"
	}
	if se, ok := err.(*json.SyntaxError); ok {
		return fmt.Sprintf("%v (at byte %d)", se, se.Offset)
	}
	return err.Error()
}

// invalidUTF8 returns the offset of the first byte of b that is not part
// of valid UTF-8, or -1.
func invalidUTF8(b []byte) int {
	if utf8.Valid(b) {
		return -1
	}
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return -1
}

// ---------------------------------------------------------------- errors

// fieldErrors collects FieldErrors; err turns them into one *Error.
type fieldErrors []FieldError

func (fe *fieldErrors) add(path, format string, args ...any) {
	*fe = append(*fe, FieldError{Path: path, Message: fmt.Sprintf(format, args...)})
}

// err returns nil or a bad_request *Error listing every problem, its message
// prefixed with typ ("session/send: data.text: required").
func (fe fieldErrors) err(typ, prefix string) error {
	if len(fe) == 0 {
		return nil
	}
	fields := make([]FieldError, len(fe))
	parts := make([]string, len(fe))
	for i, f := range fe {
		f.Path = joinPath(prefix, f.Path)
		fields[i] = f
		parts[i] = f.Message
		if f.Path != "" {
			parts[i] = f.Path + ": " + f.Message
		}
	}
	msg := strings.Join(parts, "; ")
	if typ != "" {
		msg = textutil.Truncate(typ, 64) + ": " + msg
	}
	return &Error{Code: CodeBadRequest, Message: msg, Details: &ErrorDetails{Fields: fields}}
}

// withPrefix re-roots the field paths of a Validate error under prefix and
// puts typ in front of its message.
func withPrefix(err error, typ, prefix string) error {
	pe, ok := err.(*Error)
	if !ok || pe.Details == nil || len(pe.Details.Fields) == 0 {
		return err
	}
	return fieldErrors(pe.Details.Fields).err(typ, prefix)
}

func badRequest(format string, args ...any) *Error {
	return Errorf(CodeBadRequest, format, args...)
}
