package fakeapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Kind says which endpoint a request was sent to.
type Kind string

// The endpoints the fake answers. Anything else is KindOther and gets a 404.
const (
	KindMessages    Kind = "messages"     // POST /v1/messages
	KindCountTokens Kind = "count_tokens" // POST /v1/messages/count_tokens
	KindOther       Kind = "other"
)

// Request is one HTTP request the fake received, with the Messages API body
// parsed. Requests handed to a Responder must not be modified; the recorded
// copies (Server.Requests) are shared with other readers.
type Request struct {
	Seq      int       // arrival order, from 1
	Time     time.Time // arrival time
	Kind     Kind
	Method   string
	Path     string // URL path, without the query
	RawQuery string
	Header   http.Header // with x-api-key and authorization redacted
	Body     []byte      // raw body (as received; bounded by Options.MaxBodyBytes)

	// Parsed from a JSON body (zero when the body is not a Messages request).
	Model     string
	MaxTokens int
	Stream    bool
	System    string // all system text blocks, joined with "\n"
	Messages  []Message
	Tools     []Tool
	Thinking  json.RawMessage // the "thinking" request option, if any
	ParseErr  error           // why the body could not be parsed, if it could not
}

// Message is one entry of the request's messages array. String content is
// turned into a single text block.
type Message struct {
	Role    string         `json:"role"`
	Content []ContentBlock `json:"content"`
}

// UnmarshalJSON accepts content as a string or as an array of blocks.
func (m *Message) UnmarshalJSON(data []byte) error {
	var raw struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	m.Role = raw.Role
	blocks, err := parseContent(raw.Content)
	if err != nil {
		return fmt.Errorf("message (role %q) content: %w", raw.Role, err)
	}
	m.Content = blocks
	return nil
}

// ContentBlock is a block of a request message: text, image, thinking,
// tool_use (assistant) or tool_result (user). Unused fields are zero.
type ContentBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	Thinking  string          `json:"thinking,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   json.RawMessage `json:"content,omitempty"` // tool_result: string or array of blocks
	IsError   bool            `json:"is_error,omitempty"`
	Source    *Source         `json:"source,omitempty"` // image
}

// Source is the source of an image block.
type Source struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type,omitempty"`
	Data      string `json:"data,omitempty"`
	URL       string `json:"url,omitempty"`
}

// Tool is a tool offered in the request.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
}

// ToolResult is a tool_result block of the last user message, with the name of
// the tool whose tool_use it answers (found in the conversation history).
type ToolResult struct {
	ToolUseID string
	ToolName  string // "" if no matching tool_use is in the history
	IsError   bool
	Text      string         // all text parts (or the string content), joined with "\n"
	Blocks    []ContentBlock // the content as blocks (a string becomes one text block)
	Raw       json.RawMessage
}

// Images counts the image blocks of the result.
func (tr ToolResult) Images() int {
	n := 0
	for _, b := range tr.Blocks {
		if b.Type == "image" {
			n++
		}
	}
	return n
}

func parseContent(raw json.RawMessage) ([]ContentBlock, error) {
	raw = json.RawMessage(strings.TrimSpace(string(raw)))
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		return []ContentBlock{{Type: "text", Text: s}}, nil
	}
	var blocks []ContentBlock
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return nil, err
	}
	return blocks, nil
}

// parseBody fills the Messages fields of r from its body.
func (r *Request) parseBody() {
	if len(r.Body) == 0 {
		return
	}
	var body struct {
		Model     string          `json:"model"`
		MaxTokens int             `json:"max_tokens"`
		Stream    bool            `json:"stream"`
		System    json.RawMessage `json:"system"`
		Messages  []Message       `json:"messages"`
		Tools     []Tool          `json:"tools"`
		Thinking  json.RawMessage `json:"thinking"`
	}
	if err := json.Unmarshal(r.Body, &body); err != nil {
		r.ParseErr = fmt.Errorf("request body is not a Messages API request: %w", err)
		return
	}
	r.Model, r.MaxTokens, r.Stream = body.Model, body.MaxTokens, body.Stream
	r.Messages, r.Tools, r.Thinking = body.Messages, body.Tools, body.Thinking
	sys, err := parseContent(body.System)
	if err != nil {
		r.ParseErr = fmt.Errorf("request system prompt: %w", err)
		return
	}
	r.System = joinText(sys)
}

func joinText(blocks []ContentBlock) string {
	var parts []string
	for _, b := range blocks {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// LastUser returns the last message with role "user", or nil.
func (r *Request) LastUser() *Message {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return &r.Messages[i]
		}
	}
	return nil
}

// LastUserText is the text of the last user message (its text blocks joined
// with "\n"; tool_result blocks are not included).
func (r *Request) LastUserText() string {
	if m := r.LastUser(); m != nil {
		return joinText(m.Content)
	}
	return ""
}

// promptIndex is the index of the last user message that carries no
// tool_result: the prompt that started the current exchange. -1 if none.
func (r *Request) promptIndex() int {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		m := r.Messages[i]
		if m.Role != "user" {
			continue
		}
		if !hasToolResult(m) {
			return i
		}
	}
	return -1
}

func hasToolResult(m Message) bool {
	for _, b := range m.Content {
		if b.Type == "tool_result" {
			return true
		}
	}
	return false
}

// Prompt is the text of the last user message that carries no tool_result:
// the user's prompt that the model is working on, even while tool results
// come back.
func (r *Request) Prompt() string {
	if i := r.promptIndex(); i >= 0 {
		return joinText(r.Messages[i].Content)
	}
	return ""
}

// Step counts the assistant messages after the prompt: 0 when the model is
// asked to answer the prompt, 1 after its first reply (typically a tool call)
// came back with results, and so on.
func (r *Request) Step() int {
	i := r.promptIndex()
	if i < 0 {
		return 0
	}
	n := 0
	for _, m := range r.Messages[i+1:] {
		if m.Role == "assistant" {
			n++
		}
	}
	return n
}

// ToolResults returns the tool_result blocks of the last user message.
func (r *Request) ToolResults() []ToolResult {
	m := r.LastUser()
	if m == nil {
		return nil
	}
	names := map[string]string{}
	for _, msg := range r.Messages {
		if msg.Role != "assistant" {
			continue
		}
		for _, b := range msg.Content {
			if b.Type == "tool_use" {
				names[b.ID] = b.Name
			}
		}
	}
	var out []ToolResult
	for _, b := range m.Content {
		if b.Type != "tool_result" {
			continue
		}
		tr := ToolResult{ToolUseID: b.ToolUseID, ToolName: names[b.ToolUseID], IsError: b.IsError, Raw: b.Content}
		blocks, err := parseContent(b.Content)
		if err != nil {
			blocks = []ContentBlock{{Type: "text", Text: string(b.Content)}}
		}
		tr.Blocks = blocks
		tr.Text = joinText(blocks)
		out = append(out, tr)
	}
	return out
}

// HasTools reports whether the request offers any tool.
func (r *Request) HasTools() bool { return len(r.Tools) > 0 }

// OffersTool reports whether the request offers the tool called name.
func (r *Request) OffersTool(name string) bool {
	for _, t := range r.Tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

// ToolNames lists the names of the offered tools.
func (r *Request) ToolNames() []string {
	names := make([]string, len(r.Tools))
	for i, t := range r.Tools {
		names[i] = t.Name
	}
	return names
}

// Has reports whether a text block of the request's messages holds text.
func (r *Request) Has(text string) bool {
	for _, m := range r.Messages {
		for _, b := range m.Content {
			if strings.Contains(b.Text, text) {
				return true
			}
		}
	}
	return false
}
