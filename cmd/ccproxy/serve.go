package main

import (
	"context"
	"io"
)

// runServe implements `ccproxy serve` (owned by the proxy work).
func runServe(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	return usagef("serve: not implemented yet")
}
