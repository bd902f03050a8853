package main

import (
	"context"
	"io"
)

// runReplayClaude implements the hidden `ccproxy replay-claude` (owned by the demo work).
func runReplayClaude(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	return usagef("replay-claude: not implemented yet")
}
