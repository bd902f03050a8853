package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/ccproxy/ccproxy/stream"
)

func newNormalizeCmd() *cobra.Command {
	var maxLine int
	var attach string
	c := &cobra.Command{
		Use:     "normalize [flags]",
		Short:   "read claude stream-json on stdin, write normalized events to stdout",
		Long:    "Reads claude stream-json on stdin and writes normalized events to stdout, one per line.",
		Example: "  claude -p --output-format stream-json --verbose ... | ccproxy normalize",
		Args:    cobra.ArbitraryArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("normalize: unexpected argument %q (input is read from stdin)", args[0])
			}
			return runNormalize(c.Context(), maxLine, attach, c.InOrStdin(), c.OutOrStdout(), c.ErrOrStderr())
		},
	}
	c.Flags().IntVar(&maxLine, "max-line", stream.DefaultMaxLine, "longest `BYTES` of a line kept whole; longer lines become oversized_line events")
	c.Flags().StringVar(&attach, "attachments", "inline", "what becomes of images and other binary parts: `strip|inline`")
	return c
}

// runNormalize is `ccproxy normalize`: claude stream-json on stdin,
// normalized events on stdout, one per line.
func runNormalize(ctx context.Context, maxLine int, attach string, stdin io.Reader, stdout, stderr io.Writer) error {
	if maxLine <= 0 {
		return usagef("normalize: --max-line must be a positive number of bytes, got %d", maxLine)
	}
	mode, ok := stream.ParseAttachmentMode(attach)
	if !ok || mode == stream.AttachSink {
		return usagef("normalize: --attachments must be strip or inline, got %q", attach)
	}

	r := stream.NewReader(stdin, maxLine)
	norm := stream.NewNormalizer(stream.Options{Attachments: mode})
	w := bufio.NewWriterSize(stdout, 256<<10)
	var lines, noise int
	for {
		if err := ctx.Err(); err != nil {
			w.Flush()
			return err
		}
		line, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			w.Flush()
			return fmt.Errorf("normalize: reading stdin: %w", err)
		}
		// Written in pieces: a rewritten image line is not copied whole.
		ev, err := norm.NormalizeTo(w, line)
		lines++
		if ev.Type == stream.TypeCCProxy && ev.Subtype == stream.SubtypeNoise {
			noise++
		}
		if err == nil {
			err = w.WriteByte('\n')
		}
		if err != nil {
			return fmt.Errorf("normalize: writing stdout: %w", err)
		}
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("normalize: writing stdout: %w", err)
	}
	if n := r.Oversized(); n > 0 {
		fmt.Fprintf(stderr, "ccproxy normalize: %d line(s) over --max-line %d bytes were replaced by oversized_line events\n", n, maxLine)
	}
	switch {
	case lines > 0 && noise == lines:
		// Not claude's output at all (a README, a log): a failure, said.
		return fmt.Errorf("normalize: none of the %d input lines is a JSON object: the input is not claude's stream-json (claude -p --output-format stream-json --verbose); each became a noise event", lines)
	case noise > 0:
		fmt.Fprintf(stderr, "ccproxy normalize: %d of %d line(s) were not JSON objects and became noise events\n", noise, lines)
	}
	return nil
}
