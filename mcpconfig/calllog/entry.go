package calllog

import (
	"encoding/json"
	"time"
)

// Kinds of entries (Entry.Kind).
const (
	KindSession = "session" // a call seen in a session's events
	KindDirect  = "direct"  // an mcp/call
)

// Entry is one MCP tool call. Its JSON form is a line of the log file
// (and the protocol's LogEntry, to which package proxy/mcpcalls maps it).
type Entry struct {
	Time        time.Time       `json:"time"`
	Kind        string          `json:"kind"`
	Session     string          `json:"session,omitempty"`
	Server      string          `json:"server"`
	Tool        string          `json:"tool"`
	ToolUseID   string          `json:"toolUseId,omitempty"`
	IsError     bool            `json:"isError"`
	DurationMs  *float64        `json:"durationMs,omitempty"` // nil: the call's start was not seen
	ResultBytes int64           `json:"resultBytes"`          // the result's text plus its attachments' decoded bytes
	Input       json.RawMessage `json:"input,omitempty"`      // the arguments, only with Options.StoreIO
	Output      *string         `json:"output,omitempty"`     // the normalized result text, only with Options.StoreIO
}
