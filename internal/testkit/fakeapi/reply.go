package fakeapi

import (
	"net/http"
	"time"
)

// Reply is what the fake answers to one Messages request: either content
// blocks streamed as SSE (or one JSON message when the request did not ask for
// a stream), or an API error.
type Reply struct {
	Blocks []Block

	// StopReason defaults to "tool_use" when a block is a tool_use, else
	// "end_turn".
	StopReason string

	// Error, when set, is returned instead of the blocks: a non-200 status
	// with {"type":"error","error":{type,message}}.
	Error *APIError

	// StreamError, when set, is sent as an SSE "error" event after the blocks,
	// instead of message_delta and message_stop (an overloaded stream, say).
	StreamError *APIError

	// ChunkDelay is slept between SSE events (not before the first), so a
	// client sees the message arrive piece by piece. The wait ends early when
	// the client goes away.
	ChunkDelay time.Duration

	// Wait, when set, holds the stream after message_start until it is closed
	// or the client goes away: a turn that is "thinking" for as long as a test
	// needs (for interrupts, say).
	Wait <-chan struct{}
}

// Block is one content block of a reply. Build it with Text, ToolUse or
// Thinking.
type Block struct {
	Type      string // "text", "tool_use" or "thinking"
	Text      string // text, or the thinking of a thinking block
	Name      string // tool_use: the tool name, e.g. "mcp__srv__tool"
	Input     any    // tool_use: marshalled to JSON (nil means {})
	ID        string // tool_use: the id; "" means the server assigns toolu_fake_NNNN
	Signature string // thinking: the signature; "" means a fixed fake one
}

// Text is a text block.
func Text(s string) Block { return Block{Type: "text", Text: s} }

// ToolUse is a tool_use block calling the tool name with input (anything
// that marshals to a JSON object; nil means {}).
func ToolUse(name string, input any) Block { return Block{Type: "tool_use", Name: name, Input: input} }

// Thinking is a thinking block.
func Thinking(s string) Block { return Block{Type: "thinking", Text: s} }

// Say is a reply of one text block.
func Say(text string) *Reply { return &Reply{Blocks: []Block{Text(text)}} }

// CallTool is a reply calling one tool.
func CallTool(name string, input any) *Reply {
	return &Reply{Blocks: []Block{ToolUse(name, input)}}
}

// CallTools is a reply of several tool_use blocks (parallel tool calls), in
// the order given.
func CallTools(uses ...Block) *Reply { return &Reply{Blocks: uses} }

// Fail is a reply that is an API error with the given HTTP status; the error
// type follows the status as the real API does (429 rate_limit_error, 529
// overloaded_error, ...).
func Fail(status int, message string) *Reply {
	return &Reply{Error: &APIError{Status: status, Message: message}}
}

// APIError is an error answer of the Messages API.
type APIError struct {
	Status  int    // HTTP status; 0 means 500
	Type    string // "" means the type that goes with Status
	Message string
}

func (e *APIError) status() int {
	if e.Status == 0 {
		return http.StatusInternalServerError
	}
	return e.Status
}

func (e *APIError) errType() string {
	if e.Type != "" {
		return e.Type
	}
	switch e.status() {
	case 400:
		return "invalid_request_error"
	case 401:
		return "authentication_error"
	case 403:
		return "permission_error"
	case 404:
		return "not_found_error"
	case 413:
		return "request_too_large"
	case 429:
		return "rate_limit_error"
	case 529:
		return "overloaded_error"
	default:
		return "api_error"
	}
}

func (e *APIError) body() map[string]any {
	return map[string]any{
		"type":  "error",
		"error": map[string]any{"type": e.errType(), "message": e.Message},
	}
}
