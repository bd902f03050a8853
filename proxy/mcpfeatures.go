package proxy

// The MCP features' adapters: what the feature table (features.go) calls
// for mcp/subscribe, mcp/approve … mcp/logout. The logic is package
// mcphub's; these decode nothing new, call it and reply.

// mcpSubscriber is a connection as a subscriber of the MCP hub
// (mcp/subscribe): its pushes are queued like any frame. Equal for the
// same connection, so mcp/unsubscribe and the connection's end remove it.
type mcpSubscriber struct{ c *client }

func (s mcpSubscriber) Push(frame []byte) bool { return s.c.enqueue(outFrame{data: frame}) }
