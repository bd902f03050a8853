package calllog

import "github.com/ccproxy/ccproxy/protocol"

// For tests only.

// Path is the file the log appends to.
func (l *Log) Path() string { return l.path }

// Pending is the number of MCP tool calls waiting for their result.
func (p *Pairer) Pending() int { return len(p.pending) }

// Wire maps entries to the protocol's, so that the tests keep checking them
// against the protocol. wire_test.go (package calllog_test, which may
// import proxy/mcpcalls) sets it to mcpcalls' mapping, the one the proxy
// uses.
var Wire struct {
	LogEntries func([]Entry) []protocol.LogEntry
}
