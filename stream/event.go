package stream

import (
	"bytes"
	"strings"
)

// Event types and subtypes ccproxy looks at. Others pass through unchanged.
const (
	TypeSystem          = "system"
	TypeAssistant       = "assistant"
	TypeUser            = "user"
	TypeResult          = "result"
	TypeStreamEvent     = "stream_event"
	TypeControlRequest  = "control_request"
	TypeControlResponse = "control_response"
	TypeControlCancel   = "control_cancel_request"
	TypeRateLimit       = "rate_limit_event"

	// TypeCCProxy marks events ccproxy made up itself.
	TypeCCProxy = "ccproxy"

	SubtypeInit          = "init"
	SubtypeOversizedLine = "oversized_line"
	SubtypeNoise         = "noise"
)

// Event is one classified, normalized line of the CLI's output.
type Event struct {
	// Type, Subtype, SessionID, UUID and ParentToolUseID are the event's
	// top-level fields of those names ("" when absent, null or not a
	// string).
	Type            string
	Subtype         string
	SessionID       string
	UUID            string
	ParentToolUseID string

	// JSON is the normalized event: one valid JSON object in valid UTF-8,
	// without a trailing newline. It may alias the input line or the
	// Normalizer's buffer, so it is valid only until the next call to
	// Normalize; copy it to keep it.
	JSON []byte

	// Rewritten reports whether JSON differs from the input line.
	Rewritten bool

	// MCP reports whether the event has blocks annotated as MCP tool
	// calls or results ("mcp":{"server","tool"}), so consumers of MCP
	// calls can skip every other event without parsing it.
	MCP bool

	// Attachments lists the binary parts taken out of this event's tool
	// results, one per distinct sha256, in order of appearance. Their Data
	// is not set here: with AttachInline it is in JSON.
	Attachments []Attachment
}

// Clone returns a copy of e that stays valid after the next call to
// Normalize: its JSON, strings and attachments are copied.
func (e *Event) Clone() *Event {
	c := &Event{
		Type: strings.Clone(e.Type), Subtype: strings.Clone(e.Subtype), SessionID: strings.Clone(e.SessionID),
		UUID: strings.Clone(e.UUID), ParentToolUseID: strings.Clone(e.ParentToolUseID),
		JSON: bytes.Clone(e.JSON), Rewritten: e.Rewritten, MCP: e.MCP,
	}
	if e.Attachments != nil {
		c.Attachments = make([]Attachment, len(e.Attachments))
		for i, a := range e.Attachments {
			c.Attachments[i] = a.owned()
			c.Attachments[i].Data = strings.Clone(a.Data)
		}
	}
	return c
}

// Attachment describes a non-text part of a tool result, taken out of the
// text so that no renderer has to deal with it.
type Attachment struct {
	// Kind is the content block type it came from: image, audio,
	// resource (an embedded blob), document, or another block type.
	Kind string `json:"kind"`
	// MediaType is the MIME type, "" when unknown.
	MediaType string `json:"mediaType,omitempty"`
	// Size is the size in bytes of the decoded data.
	Size int `json:"size"`
	// SHA256 is the hex sha256 of the decoded data.
	SHA256 string `json:"sha256"`
	// URI is the resource URI of an embedded resource.
	URI string `json:"uri,omitempty"`
	// Data is the base64 data, with AttachInline.
	Data string `json:"data,omitempty"`
	// URL is where a Sink serves the data, with AttachSink.
	URL string `json:"url,omitempty"`
	// Error says why the data could not be decoded or stored.
	Error string `json:"error,omitempty"`
}

// intern returns a constant string for the common values of type and
// subtype, so that classifying most events allocates nothing.
func intern(b string) (string, bool) {
	switch b {
	case TypeSystem:
		return TypeSystem, true
	case TypeAssistant:
		return TypeAssistant, true
	case TypeUser:
		return TypeUser, true
	case TypeResult:
		return TypeResult, true
	case TypeStreamEvent:
		return TypeStreamEvent, true
	case TypeControlRequest:
		return TypeControlRequest, true
	case TypeControlResponse:
		return TypeControlResponse, true
	case TypeControlCancel:
		return TypeControlCancel, true
	case TypeRateLimit:
		return TypeRateLimit, true
	case SubtypeInit:
		return SubtypeInit, true
	case "success":
		return "success", true
	case "status":
		return "status", true
	case "error_during_execution":
		return "error_during_execution", true
	case "error_max_turns":
		return "error_max_turns", true
	case "api_retry":
		return "api_retry", true
	case "permission_denied":
		return "permission_denied", true
	case "compact_boundary":
		return "compact_boundary", true
	case "commands_changed":
		return "commands_changed", true
	}
	return "", false
}
