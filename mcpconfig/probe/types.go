package probe

import (
	"encoding/json"
	"time"
)

// What a Prober returns: its own types, which package proxy/mcpcalls
// (wire.go) maps to the webview protocol's (ProbeResult, Tool, Parameter,
// MCPCallResult, ...) in one place. The codes and statuses are the
// protocol's strings (SPEC §8); mcpcalls' tests check that they agree.

// Failure codes of a probe (Error.Code, Failure.Code).
const (
	CodeCommandNotFound      = "COMMAND_NOT_FOUND"
	CodeServerNotFound       = "SERVER_NOT_FOUND"
	CodeTimeout              = "TIMEOUT"
	CodeConnectionRefused    = "CONNECTION_REFUSED"
	CodeAuthRequired         = "AUTH_REQUIRED"
	CodeProcessExited        = "PROCESS_EXITED"
	CodeProtocolError        = "PROTOCOL_ERROR"
	CodeTransportUnsupported = "TRANSPORT_UNSUPPORTED"
	CodeNotActive            = "NOT_ACTIVE"
)

// Statuses a probe reports (Result.Status, Error.Status).
const (
	StatusConnected        = "connected"
	StatusFailed           = "failed"
	StatusNeedsAuth        = "needs-auth"
	StatusDisabled         = "disabled"
	StatusAwaitingApproval = "awaiting-approval"
	StatusRejected         = "rejected"
)

// Result is the outcome of probing one server.
type Result struct {
	Name            string
	Scope           string
	Transport       string
	OK              bool // Status is connected
	Status          string
	Error           *Failure // why it failed (nil when OK)
	ServerInfo      *ServerInfo
	ProtocolVersion string
	Capabilities    json.RawMessage // the server's, as JSON
	Tools           []ToolSummary
	ToolCount       int64
	Resources       []ResourceSummary
	Prompts         []PromptSummary
	LatencyMs       Latency
	ProbedAt        time.Time
}

// Failure is a probe's failure in its Result: the code and message of
// the Error met, and the end of the server's stderr.
type Failure struct {
	Code       string
	Message    string
	StderrTail string
}

// ServerInfo is the serverInfo an MCP server returned from initialize.
type ServerInfo struct {
	Name    string
	Version string
	Title   string
}

// Latency of each probe step, in milliseconds (nil: not reached).
type Latency struct {
	Total      float64
	Connect    *float64
	Initialize *float64
	Tools      *float64
	Resources  *float64
	Prompts    *float64
}

// ToolSummary names a tool.
type ToolSummary struct {
	Name        string
	Title       string
	Description string
}

// ResourceSummary names a resource.
type ResourceSummary struct {
	URI         string
	Name        string
	MimeType    string
	Description string
}

// PromptSummary names a prompt.
type PromptSummary struct {
	Name        string
	Description string
}

// Tool is one tool of a server with its parameter tree. The schemas and
// annotations are the server's JSON.
type Tool struct {
	Name         string
	Title        string
	Description  string
	InputSchema  json.RawMessage
	OutputSchema json.RawMessage
	Annotations  json.RawMessage
	Parameters   []Parameter
}

// Parameter is one node of the parameter tree built from a tool's
// inputSchema. Type is string, number, integer, boolean, object, array,
// null or any. Its JSON form (the golden trees of the tests) is the
// protocol's.
type Parameter struct {
	Name        string            `json:"name"`
	Path        string            `json:"path"`
	Type        string            `json:"type"`
	Description string            `json:"description,omitempty"`
	Required    bool              `json:"required"`
	Nullable    bool              `json:"nullable,omitempty"`
	Default     json.RawMessage   `json:"default,omitempty"`
	Enum        []json.RawMessage `json:"enum,omitzero"`
	Minimum     *float64          `json:"minimum,omitempty"`
	Maximum     *float64          `json:"maximum,omitempty"`
	MinLength   *int64            `json:"minLength,omitempty"`
	MaxLength   *int64            `json:"maxLength,omitempty"`
	Pattern     string            `json:"pattern,omitempty"`
	Format      string            `json:"format,omitempty"`
	Items       *Parameter        `json:"items,omitempty"`
	Properties  []Parameter       `json:"properties,omitzero"`
	AnyOf       []Parameter       `json:"anyOf,omitzero"`
	OneOf       []Parameter       `json:"oneOf,omitzero"`
	Unsupported string            `json:"unsupported,omitempty"`
}

// FieldError says what is wrong with one argument: Path such as
// filters[2].key, Code one of the Param* codes.
type FieldError struct {
	Path    string
	Code    string
	Message string
}

// CallResult is the result of a tool call, normalized like session
// tool_results.
type CallResult struct {
	Server            string
	Tool              string
	IsError           bool   // the tool reported an error (a result, not a failed call)
	Content           string // the result as text
	Attachments       []Attachment
	StructuredContent json.RawMessage // the tool's, verbatim
	DurationMs        float64
}

// Attachment is binary content taken out of a call's result by package
// stream's normalization: Data (inline) or URL (a Sink's) says where its
// bytes are; Error says why neither is set.
type Attachment struct {
	Kind      string
	MediaType string
	Size      int64
	SHA256    string
	URI       string
	URL       string
	Data      string
	Error     string
}
