package protocol

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// Version is the protocol version this package implements. It is announced
// in the hello frame and selected with the websocket subprotocol Subprotocol.
const Version = "1"

// Subprotocol is the websocket subprotocol that selects protocol version 1.
// A client that offers subprotocols must offer it; the proxy selects it and
// never echoes a token subprotocol when this one is offered.
const Subprotocol = "ccproxy.v1"

// TokenSubprotocolPrefix precedes the token when a client that cannot set
// headers (a browser) authenticates with a subprotocol: "ccproxy.token.T".
const TokenSubprotocolPrefix = "ccproxy.token."

// Message types sent by clients. Each one is a request: it carries an id and
// gets exactly one reply.
const (
	TypeSessionCreate      = "session/create"
	TypeSessionSend        = "session/send"
	TypeSessionSubscribe   = "session/subscribe"
	TypeSessionUnsubscribe = "session/unsubscribe"
	TypeSessionInterrupt   = "session/interrupt"
	TypeSessionClose       = "session/close"
	TypeSessionList        = "session/list"
	TypeSessionSetMode     = "session/setPermissionMode"
	TypeSessionSetModel    = "session/setModel"
	TypeSessionRewind      = "session/rewind"
	TypePermissionRespond  = "permission/respond"
	TypeMCPSubscribe       = "mcp/subscribe"
	TypeMCPUnsubscribe     = "mcp/unsubscribe"
	TypeMCPApprove         = "mcp/approve"
	TypeMCPReject          = "mcp/reject"
	TypeMCPProbe           = "mcp/probe"
	TypeMCPTools           = "mcp/tools"
	TypeMCPCall            = "mcp/call"
	TypeMCPLog             = "mcp/log"
	TypeHistoryList        = "history/list"
	TypeHistoryRead        = "history/read"
	TypeMCPAdd             = "mcp/add"
	TypeMCPUpdate          = "mcp/update"
	TypeMCPRemove          = "mcp/remove"
	TypeMCPTest            = "mcp/test"
	TypeMCPToggle          = "mcp/toggle"
	TypeMCPReconnect       = "mcp/reconnect"
	TypeMCPTrust           = "mcp/trust"
	TypeMCPLogin           = "mcp/login"
	TypeMCPLogout          = "mcp/logout"
	TypeSessionFiles       = "session/files"
	TypeHistoryRename      = "history/rename"
	TypeHistoryDelete      = "history/delete"
	TypeHistoryRestore     = "history/restore"
	TypeHistoryTrash       = "history/trash"
	TypeHistoryExport      = "history/export"
	TypeHistorySearch      = "history/search"
)

// Message types sent by the proxy.
const (
	TypeHello              = "hello"
	TypeReply              = "reply"
	TypeSessionEvent       = "session/event"
	TypeSessionState       = "session/state"
	TypeSessionExited      = "session/exited"
	TypeSessionGap         = "session/gap"
	TypePermissionRequest  = "permission/request"
	TypePermissionResolved = "permission/resolved"
	TypeMCPStatus          = "mcp/status"
	TypeMCPConfig          = "mcp/config"
	// TypeMCPLoginEvent is the push that follows an mcp/login; it has the
	// request's name.
	TypeMCPLoginEvent = "mcp/login"
	// TypeSessionCommands carries the slash commands claude offers in a
	// session, from its initialize answer (before the first turn) on.
	TypeSessionCommands = "session/commands"
)

// Capabilities a proxy announces in hello. A client hides what the proxy does
// not offer; a request of a missing capability gets unknown_type.
const (
	CapSessions        = "sessions"         // session/* requests and pushes
	CapImages          = "images"           // session/send accepts images
	CapPartialMessages = "partial-messages" // stream_event events are forwarded
	CapPermissions     = "permissions"      // permission/* broker
	CapBlobs           = "blobs"            // GET /v1/blobs/<sha256>
	CapMCPStatus       = "mcp.status"       // mcp/subscribe, mcp/status, mcp/config, GET /v1/mcp/status
	CapMCPApproval     = "mcp.approval"     // mcp/approve, mcp/reject
	CapMCPProbe        = "mcp.probe"        // mcp/probe
	CapMCPTools        = "mcp.tools"        // mcp/tools
	CapMCPCall         = "mcp.call"         // mcp/call
	CapMCPLog          = "mcp.log"          // mcp/log
	CapHistory         = "history"          // history/list, history/read
	CapMCPManage       = "mcp.manage"       // mcp/add, mcp/update, mcp/remove, mcp/test, mcp/trust
	CapMCPLive         = "mcp.live"         // mcp/toggle, mcp/reconnect
	CapMCPAuth         = "mcp.auth"         // mcp/login, mcp/logout, the mcp/login push
	CapFiles           = "files"            // session/files
	CapHistoryManage   = "history.manage"   // history/rename, history/delete, history/restore, history/trash, history/export
	CapHistorySearch   = "history.search"   // history/search
)

// RequestTypes returns every client → proxy message type, in SPEC order.
func RequestTypes() []string { return slices.Clone(requestTypes) }

// PushTypes returns every proxy → client message type except reply, in SPEC
// order.
func PushTypes() []string { return slices.Clone(pushTypes) }

var requestTypes = []string{
	TypeSessionCreate, TypeSessionSend, TypeSessionSubscribe, TypeSessionUnsubscribe,
	TypeSessionInterrupt, TypeSessionClose, TypeSessionList, TypeSessionSetMode, TypeSessionSetModel, TypePermissionRespond,
	TypeMCPSubscribe, TypeMCPUnsubscribe, TypeMCPApprove, TypeMCPReject,
	TypeMCPProbe, TypeMCPTools, TypeMCPCall, TypeMCPLog,
	TypeHistoryList, TypeHistoryRead,
	TypeMCPAdd, TypeMCPUpdate, TypeMCPRemove, TypeMCPTest, TypeMCPToggle, TypeMCPReconnect,
	TypeMCPTrust,
	TypeMCPLogin, TypeMCPLogout,
	TypeSessionFiles,
	TypeHistoryRename, TypeHistoryDelete, TypeHistoryRestore, TypeHistoryTrash, TypeHistoryExport,
	TypeSessionRewind,
	TypeHistorySearch,
}

var pushTypes = []string{
	TypeHello, TypeSessionEvent, TypeSessionState, TypeSessionExited, TypeSessionGap,
	TypePermissionRequest, TypePermissionResolved, TypeMCPStatus, TypeMCPConfig,
	TypeMCPLoginEvent, TypeSessionCommands,
}

// Frame is one websocket text frame, in either direction:
//
//	{"type": T, "id"?: ID, "data": {...}}                               request or push
//	{"type": "reply", "id": ID, "ok": true, "data": {...}}              success reply
//	{"type": "reply", "id": ID, "ok": false, "error": {code, message}}  error reply
//
// ID holds the request id exactly as the client wrote it (a JSON string or
// integer; null in a reply to a frame whose id could not be read), so a reply
// echoes it byte for byte. Data holds the raw data object; decode it with
// DecodeRequest, DecodePush or DecodeResult.
type Frame struct {
	Type  string          `json:"type"`
	ID    json.RawMessage `json:"id,omitempty"`
	OK    *bool           `json:"ok,omitempty"`
	Data  json.RawMessage `json:"data,omitempty"`
	Error *Error          `json:"error,omitempty"`
}

// IsReply reports whether f is a reply.
func (f *Frame) IsReply() bool { return f.Type == TypeReply }

// Code is a stable, machine-readable error code. The list is in SPEC.md.
type Code string

// Error codes. See SPEC.md "Error codes" for when each is used.
const (
	CodeBadRequest          Code = "bad_request"
	CodeUnknownType         Code = "unknown_type"
	CodeFrameTooLarge       Code = "frame_too_large"
	CodeUnauthorized        Code = "unauthorized"
	CodeForbiddenOrigin     Code = "forbidden_origin"
	CodeUnsupportedProtocol Code = "unsupported_protocol"
	CodeUnknownSession      Code = "unknown_session"
	CodeSessionExited       Code = "session_exited"
	CodeNotFound            Code = "not_found"
	CodeAlreadyResolved     Code = "already_resolved"
	CodeLimitExceeded       Code = "limit_exceeded"
	CodeClaudeUnavailable   Code = "claude_unavailable"
	CodeCLIError            Code = "cli_error"
	CodeTimeout             Code = "timeout"
	CodeCancelled           Code = "cancelled"
	CodeShuttingDown        Code = "shutting_down"
	CodeInternal            Code = "internal"

	CodeMCPServerNotFound       Code = "mcp_server_not_found"
	CodeMCPServerExists         Code = "mcp_server_exists"
	CodeMCPNotActive            Code = "mcp_not_active"
	CodeMCPToolNotFound         Code = "mcp_tool_not_found"
	CodeMCPInvalidArguments     Code = "mcp_invalid_arguments"
	CodeMCPCommandNotFound      Code = "mcp_command_not_found"
	CodeMCPTimeout              Code = "mcp_timeout"
	CodeMCPConnectionRefused    Code = "mcp_connection_refused"
	CodeMCPAuthRequired         Code = "mcp_auth_required"
	CodeMCPProcessExited        Code = "mcp_process_exited"
	CodeMCPProtocolError        Code = "mcp_protocol_error"
	CodeMCPTransportUnsupported Code = "mcp_transport_unsupported"

	CodeConflict Code = "conflict"
)

// Codes returns every error code of protocol version 1, in SPEC order.
func Codes() []Code { return slices.Clone(codes) }

var codes = []Code{
	CodeBadRequest, CodeUnknownType, CodeFrameTooLarge, CodeUnauthorized,
	CodeForbiddenOrigin, CodeUnsupportedProtocol, CodeUnknownSession,
	CodeSessionExited, CodeNotFound, CodeAlreadyResolved, CodeLimitExceeded,
	CodeClaudeUnavailable, CodeCLIError, CodeTimeout, CodeCancelled, CodeShuttingDown, CodeInternal,
	CodeMCPServerNotFound, CodeMCPNotActive, CodeMCPToolNotFound,
	CodeMCPInvalidArguments, CodeMCPCommandNotFound, CodeMCPTimeout,
	CodeMCPConnectionRefused, CodeMCPAuthRequired, CodeMCPProcessExited,
	CodeMCPProtocolError, CodeMCPTransportUnsupported, CodeMCPServerExists,
	CodeConflict,
}

// Probe failure codes (issue 5), carried in ProbeError.Code. A reply error
// caused by one of them uses the protocol code MCPCode(probeCode).
const (
	ProbeCommandNotFound      = "COMMAND_NOT_FOUND"
	ProbeServerNotFound       = "SERVER_NOT_FOUND"
	ProbeTimeout              = "TIMEOUT"
	ProbeConnectionRefused    = "CONNECTION_REFUSED"
	ProbeAuthRequired         = "AUTH_REQUIRED"
	ProbeProcessExited        = "PROCESS_EXITED"
	ProbeProtocolError        = "PROTOCOL_ERROR"
	ProbeTransportUnsupported = "TRANSPORT_UNSUPPORTED"
	ProbeNotActive            = "NOT_ACTIVE"
)

// MCPCode maps a probe failure code to the reply error code for it:
// "TIMEOUT" -> mcp_timeout, "SERVER_NOT_FOUND" -> mcp_server_not_found. An
// unknown probe code maps to internal.
func MCPCode(probeCode string) Code {
	switch probeCode {
	case ProbeCommandNotFound:
		return CodeMCPCommandNotFound
	case ProbeServerNotFound:
		return CodeMCPServerNotFound
	case ProbeTimeout:
		return CodeMCPTimeout
	case ProbeConnectionRefused:
		return CodeMCPConnectionRefused
	case ProbeAuthRequired:
		return CodeMCPAuthRequired
	case ProbeProcessExited:
		return CodeMCPProcessExited
	case ProbeProtocolError:
		return CodeMCPProtocolError
	case ProbeTransportUnsupported:
		return CodeMCPTransportUnsupported
	case ProbeNotActive:
		return CodeMCPNotActive
	}
	return CodeInternal
}

// Error is the error member of an error reply, and the error type of this
// package: every function here that rejects input returns an *Error whose
// Message says what was wrong and where.
type Error struct {
	Code    Code          `json:"code" schema:"ref=ErrorCode"`
	Message string        `json:"message" jsonschema:"Human-readable; never contains a secret." schema:"minLength=1"`
	Details *ErrorDetails `json:"details,omitempty"`
}

// ErrorDetails are optional machine-readable details of an Error.
type ErrorDetails struct {
	// Fields lists each invalid field (bad_request, mcp_invalid_arguments).
	Fields []FieldError `json:"fields,omitzero"`
	// ProbeCode is the probe failure code behind an mcp_* error.
	ProbeCode string `json:"probeCode,omitempty" schema:"ref=ProbeCode"`
	// StderrTail is the end of an MCP server's stderr (mcp_process_exited).
	StderrTail string `json:"stderrTail,omitempty"`
}

// FieldError says what is wrong with one field. Path is a JSON path such as
// "data.images[0].mediaType" (bad_request) or "filters[2].key" (tool
// arguments); Code is set for tool arguments (PARAMETER_REQUIRED, ...).
type FieldError struct {
	Path    string `json:"path" jsonschema:"Where: data.images[0].mediaType, or an argument path such as filters[2].key."`
	Code    string `json:"code,omitempty" jsonschema:"For tool arguments: PARAMETER_REQUIRED, PARAMETER_INVALID_TYPE, PARAMETER_CONSTRAINT_VIOLATED, PARAMETER_ENUM_INVALID."`
	Message string `json:"message" jsonschema:"What is wrong."`
}

func (e *Error) Error() string {
	if e == nil {
		return "<nil>"
	}
	return string(e.Code) + ": " + e.Message
}

// Errorf returns an *Error with code and a formatted message. The message is
// shown to clients: it must never contain a secret.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// FieldErrorf returns a bad_request *Error about one field that passed
// decoding but not a check that needs more than the frame (a directory
// that does not exist, an answer to a question that was not asked): its
// message is "typ: path: message", and details.fields names path, as the
// decoder's own field errors do.
func FieldErrorf(typ, path, format string, args ...any) *Error {
	var fe fieldErrors
	fe.add(path, format, args...)
	return fe.err(typ, "").(*Error)
}

// CodeOf returns the code of the first *Error in err's chain, internal for
// any other non-nil error, and "" for nil.
func CodeOf(err error) Code {
	if err == nil {
		return ""
	}
	var pe *Error
	if errors.As(err, &pe) {
		return pe.Code
	}
	return CodeInternal
}

// Ptr returns a pointer to v, for optional fields.
func Ptr[T any](v T) *T { return &v }
