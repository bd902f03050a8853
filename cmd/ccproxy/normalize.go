package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/ccproxy/ccproxy/stream"
)

// runNormalize is `ccproxy normalize`: claude stream-json on stdin,
// normalized events on stdout, one per line.
func runNormalize(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("normalize", flag.ContinueOnError)
	fs.SetOutput(stderr)
	maxLine := fs.Int("max-line", stream.DefaultMaxLine, "longest `BYTES` of a line kept whole; longer lines become oversized_line events")
	attach := fs.String("attachments", "inline", "what becomes of images and other binary parts: `strip|inline`")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: claude -p --output-format stream-json --verbose ... | ccproxy normalize [flags]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usagef("normalize: %v", err)
	}
	if fs.NArg() > 0 {
		return usagef("normalize: unexpected argument %q (input is read from stdin)", fs.Arg(0))
	}
	if *maxLine <= 0 {
		return usagef("normalize: --max-line must be a positive number of bytes, got %d", *maxLine)
	}
	mode, ok := stream.ParseAttachmentMode(*attach)
	if !ok || mode == stream.AttachSink {
		return usagef("normalize: --attachments must be strip or inline, got %q", *attach)
	}

	r := stream.NewReader(stdin, *maxLine)
	norm := stream.NewNormalizer(stream.Options{Attachments: mode})
	w := bufio.NewWriterSize(stdout, 256<<10)
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
		ev := norm.Normalize(line)
		w.Write(ev.JSON)
		if err := w.WriteByte('\n'); err != nil {
			return fmt.Errorf("normalize: writing stdout: %w", err)
		}
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("normalize: writing stdout: %w", err)
	}
	if n := r.Oversized(); n > 0 {
		fmt.Fprintf(stderr, "ccproxy normalize: %d line(s) over --max-line %d bytes were replaced by oversized_line events\n", n, *maxLine)
	}
	return nil
}
