package main

import (
	"context"
	"io"
)

// runMCP implements `ccproxy mcp ...` (owned by the mcpconfig work).
func runMCP(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	return usagef("mcp: not implemented yet")
}
