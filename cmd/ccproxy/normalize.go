package main

import (
	"context"
	"io"
)

func runNormalize(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	return usagef("normalize: not implemented yet")
}
