// Package mcpconfig resolves MCP server configuration the way Claude Code
// does: discover, merge, approve, expand ${VAR}, watch.
package mcpconfig
