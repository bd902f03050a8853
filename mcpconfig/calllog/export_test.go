package calllog

// For tests only.

// Path is the file the log appends to.
func (l *Log) Path() string { return l.path }

// Pending is the number of MCP tool calls waiting for their result.
func (p *Pairer) Pending() int { return len(p.pending) }
