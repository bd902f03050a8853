// Command rssbench measures `ccproxy normalize` as a user runs it: a real
// process fed through a pipe, its peak resident memory read from the kernel
// (rusage maxrss) when it exits.
//
//	go run ./internal/benchmix/cmd/rssbench                    # 1 GiB realistic mix
//	go run ./internal/benchmix/cmd/rssbench -scenario longline # a 100 MB line, then normal lines
//	go run ./internal/benchmix/cmd/rssbench -scenario longimage -max-line 268435456 # a 100 MB line holding an image twice
//
// It builds ccproxy unless -bin is given, and checks the output: one JSON
// object per line, the expected number of events.
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/ccproxy/ccproxy/internal/benchmix"
	"github.com/tidwall/gjson"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "rssbench:", err)
		os.Exit(1)
	}
}

func run() error {
	bin := flag.String("bin", "", "ccproxy binary (default: go build ./cmd/ccproxy)")
	scenario := flag.String("scenario", "mix", "mix (realistic stream of -size bytes), longline (a -line byte line, then normal lines) or longimage (a user event of -line bytes carrying one image twice, as the CLI prints it, then normal lines)")
	size := flag.Int64("size", 1<<30, "input size in bytes for the mix scenario")
	attach := flag.String("attachments", "inline", "strip or inline")
	root := flag.String("root", ".", "module root (for testdata/transcripts)")
	lineSize := flag.Int64("line", 100_000_000, "length of the long line in the longline scenario")
	maxLine := flag.Int("max-line", 0, "--max-line for ccproxy normalize (0: its default)")
	flag.Parse()

	if *bin == "" {
		dir, err := os.MkdirTemp("", "rssbench")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		*bin = filepath.Join(dir, "ccproxy")
		build := exec.Command("go", "build", "-o", *bin, "./cmd/ccproxy")
		build.Dir, build.Stdout, build.Stderr = *root, os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("go build: %w", err)
		}
	}

	var feed func(w io.Writer) (int64, error)
	switch *scenario {
	case "mix":
		m, err := benchmix.New(filepath.Join(*root, "testdata", "transcripts"))
		if err != nil {
			return err
		}
		feed = func(w io.Writer) (int64, error) { return m.WriteTo(w, *size) }
	case "longline":
		feed = func(w io.Writer) (int64, error) { return longLine(w, *lineSize) }
	case "longimage":
		feed = func(w io.Writer) (int64, error) { return longImage(w, *lineSize) }
	default:
		return fmt.Errorf("unknown -scenario %q", *scenario)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	args := []string{"normalize", "--attachments", *attach}
	if *maxLine > 0 {
		args = append(args, "--max-line", fmt.Sprint(*maxLine))
	}
	cmd := exec.CommandContext(ctx, *bin, args...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return err
	}
	fed := make(chan error, 1)
	var in int64
	go func() {
		n, err := feed(stdin)
		in = n
		if cerr := stdin.Close(); err == nil {
			err = cerr
		}
		fed <- err
	}()
	out, events, first, bad, rerr := drain(stdout)
	werr := cmd.Wait()
	elapsed := time.Since(start)
	if err := errors.Join(<-fed, rerr, werr); err != nil {
		return err
	}
	if bad > 0 {
		return fmt.Errorf("%d output lines are not JSON objects", bad)
	}
	fmt.Printf("scenario=%s attachments=%s input=%.1f MiB output=%.1f MiB events=%d time=%.2fs throughput=%.0f MiB/s peak_rss=%.1f MiB\n",
		*scenario, *attach, float64(in)/(1<<20), float64(out)/(1<<20), events, elapsed.Seconds(),
		float64(in)/(1<<20)/elapsed.Seconds(), peakRSSMiB(cmd.ProcessState))
	if *scenario == "longimage" && events != 4 {
		return fmt.Errorf("want 4 events, got %d", events)
	}
	if *scenario == "longline" {
		fmt.Printf("first event: %.160s\n", first)
		if gjson.GetBytes(first, "subtype").Str != "oversized_line" || events != 4 {
			return fmt.Errorf("want an oversized_line event then 3 events, got %d events starting with %.100s", events, first)
		}
	}
	return nil
}

// longLine writes a line of about size bytes and three normal ones.
func longLine(w io.Writer, size int64) (int64, error) {
	bw := bufio.NewWriterSize(w, 1<<20)
	var n int64
	k, _ := bw.WriteString(`{"type":"user","message":{"content":[{"type":"tool_result","content":"`)
	n += int64(k)
	chunk := bytes.Repeat([]byte("QUJD"), 1<<14)
	for n < size {
		k, err := bw.Write(chunk)
		n += int64(k)
		if err != nil {
			return n, err
		}
	}
	k, _ = bw.WriteString(`"}]}}` + "\n" + strings.Repeat(`{"type":"system","subtype":"status","status":"requesting"}`+"\n", 3))
	n += int64(k)
	return n, bw.Flush()
}

// longImage writes a user event of about size bytes whose tool result
// holds one image (random bytes, base64) in message.content and again in
// tool_use_result, then three normal lines.
func longImage(w io.Writer, size int64) (int64, error) {
	line := benchmix.LargeImageResult(int(size / 2 * 3 / 4))
	n, err := w.Write(append(line, '\n'))
	if err != nil {
		return int64(n), err
	}
	k, err := io.WriteString(w, strings.Repeat(`{"type":"system","subtype":"status","status":"requesting"}`+"\n", 3))
	return int64(n + k), err
}

// drain reads the output, checking that each line is a JSON object.
func drain(r io.Reader) (bytesOut int64, events int, first []byte, bad int, err error) {
	br := bufio.NewReaderSize(r, 1<<20)
	var line []byte
	for {
		chunk, isPrefix, rerr := br.ReadLine()
		if rerr != nil {
			if errors.Is(rerr, io.EOF) {
				return bytesOut, events, first, bad, nil
			}
			return bytesOut, events, first, bad, rerr
		}
		line = append(line, chunk...)
		if isPrefix {
			continue
		}
		bytesOut += int64(len(line) + 1)
		events++
		if first == nil {
			first = bytes.Clone(line)
		}
		if len(line) == 0 || line[0] != '{' || !gjson.ValidBytes(line) {
			bad++
		}
		if cap(line) > 8<<20 {
			line = nil
		} else {
			line = line[:0]
		}
	}
}
