// Command bench compares `ccproxy normalize --attachments strip` with other
// ways of doing the same job, each as a whole process on the same file, in
// interleaved runs:
//
//   - ccproxy: the ccproxy binary (built from -root unless -bin is given);
//   - base: another ccproxy binary, e.g. built at an older commit (-base);
//   - encoding-json: the same job with encoding/json (benchmix.Baseline);
//   - floor: read lines, check them as Normalize does first
//     (Normalizer.Valid: a skeleton for lines of 64 KiB or more, and
//     ccproxy's validator, which answers as gjson.Valid does), write them:
//     what any normalizer must at least spend;
//   - floor-gjson: the floor as issue 14 measured it, with gjson.Valid as
//     the check (on lines under 64 KiB; longer ones as floor does, which
//     if anything makes it cheaper);
//   - node: the Node peer script (internal/benchmix/peer/normalize.mjs).
//
// The encoding-json, floor and floor-gjson contenders are this binary run again with
// BENCHMIX_ROLE set. Each round runs every contender once, in an order that
// rotates from round to round, so that load from other processes spreads
// over all of them. It prints, per mix, the median and min–max of wall time
// and CPU time (user+system), and the ratios of the medians.
//
//	go run ./internal/benchmix/cmd/bench                        # both mixes, 64 MiB, 5 rounds
//	go run ./internal/benchmix/cmd/bench -mix text -runs 7 -base /tmp/ccproxy-old
//
// Before timing it checks that ccproxy, encoding-json and node agree on the
// flattened tool result texts of every line.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ccproxy/ccproxy/internal/benchmix"
	"github.com/ccproxy/ccproxy/stream"
	"github.com/tidwall/gjson"
)

func main() {
	var err error
	switch role := os.Getenv("BENCHMIX_ROLE"); role {
	case "":
		err = run()
	case "encoding-json", "floor", "floor-gjson":
		err = serve(role, os.Stdin, os.Stdout)
	default:
		err = fmt.Errorf("unknown BENCHMIX_ROLE %q", role)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// serve runs a contender implemented here on stdin and stdout.
func serve(role string, in io.Reader, out io.Writer) error {
	r := stream.NewReader(in, 0)
	w := bufio.NewWriterSize(out, 256<<10)
	bl := &benchmix.Baseline{}
	n := stream.NewNormalizer(stream.Options{Attachments: stream.AttachStrip})
	for {
		line, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		switch {
		case role == "floor-gjson" && len(line) < skeletonBytes:
			if !gjson.ValidBytes(line) {
				line = []byte(`{"type":"ccproxy","subtype":"noise"}`)
			}
		case role == "floor" || role == "floor-gjson":
			if !n.Valid(line) {
				line = []byte(`{"type":"ccproxy","subtype":"noise"}`)
			}
		default:
			line = bl.Normalize(line)
		}
		w.Write(line)
		if err := w.WriteByte('\n'); err != nil {
			return err
		}
	}
	return w.Flush()
}

// skeletonBytes is stream's skeletonBytes (stream/skeleton.go): lines this
// long are read through a skeleton, by floor-gjson as by floor.
const skeletonBytes = 64 << 10

type contender struct {
	name string
	cmd  func() *exec.Cmd
}

// sample is one run's wall and CPU (user+system) time in seconds. (Peak RSS
// is left out: a child started with vfork reports its parent's as well;
// cmd/rssbench measures memory.)
type sample struct{ wall, cpu float64 }

func run() error {
	root := flag.String("root", ".", "module root (for testdata/transcripts, cmd/ccproxy and the peer script)")
	bin := flag.String("bin", "", "ccproxy binary (default: go build ./cmd/ccproxy in -root)")
	base := flag.String("base", "", "a second ccproxy binary to compare with, e.g. built at an older commit")
	mixes := flag.String("mix", "text,image", "mixes to run: text, image or both (comma-separated)")
	size := flag.Int64("size", 64<<20, "bytes of each mix")
	runs := flag.Int("runs", 5, "rounds (each runs every contender once)")
	node := flag.String("node", "node", "node binary; empty to leave the Node peer out")
	flag.Parse()

	tmp, err := os.MkdirTemp("", "ccproxy-bench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if *bin == "" {
		*bin = filepath.Join(tmp, "ccproxy")
		build := exec.Command("go", "build", "-o", *bin, "./cmd/ccproxy")
		build.Dir, build.Stdout, build.Stderr = *root, os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("go build: %w", err)
		}
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	normalize := func(b string) func() *exec.Cmd {
		return func() *exec.Cmd { return exec.Command(b, "normalize", "--attachments", "strip") }
	}
	role := func(r string) func() *exec.Cmd {
		return func() *exec.Cmd {
			c := exec.Command(self)
			c.Env = append(os.Environ(), "BENCHMIX_ROLE="+r)
			return c
		}
	}
	cs := []contender{{"ccproxy", normalize(*bin)}}
	if *base != "" {
		cs = append(cs, contender{"base", normalize(*base)})
	}
	cs = append(cs, contender{"encoding-json", role("encoding-json")}, contender{"floor", role("floor")}, contender{"floor-gjson", role("floor-gjson")})
	if *node != "" {
		script := filepath.Join(*root, "internal", "benchmix", "peer", "normalize.mjs")
		cs = append(cs, contender{"node", func() *exec.Cmd { return exec.Command(*node, script) }})
	}

	dir := filepath.Join(*root, "testdata", "transcripts")
	for _, mix := range strings.Split(*mixes, ",") {
		var m *benchmix.Mix
		switch mix {
		case "text":
			m, err = benchmix.NewTextHeavy(dir)
		case "image":
			m, err = benchmix.New(dir)
		default:
			err = fmt.Errorf("unknown mix %q (want text or image)", mix)
		}
		if err != nil {
			return err
		}
		file := filepath.Join(tmp, mix+".jsonl")
		if err := writeMix(m, file, *size); err != nil {
			return err
		}
		if err := check(cs, file, tmp); err != nil {
			return fmt.Errorf("%s mix: %w", mix, err)
		}
		res := make([][]sample, len(cs))
		for r := range *runs {
			for k := range cs {
				i := (k + r) % len(cs)
				s, err := measure(cs[i], file, os.DevNull)
				if err != nil {
					return fmt.Errorf("%s mix, %s: %w", mix, cs[i].name, err)
				}
				res[i] = append(res[i], s)
			}
		}
		report(mix, file, *runs, cs, res)
	}
	return nil
}

func writeMix(m *benchmix.Mix, file string, size int64) error {
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := m.WriteTo(f, size); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// measure runs c with file on stdin and out as stdout.
func measure(c contender, file, out string) (sample, error) {
	in, err := os.Open(file)
	if err != nil {
		return sample{}, err
	}
	defer in.Close()
	o, err := os.Create(out)
	if err != nil {
		return sample{}, err
	}
	defer o.Close()
	cmd := c.cmd()
	var stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = in, o, &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return sample{}, fmt.Errorf("%w: %s", err, stderr.Bytes())
	}
	wall := time.Since(start)
	ps := cmd.ProcessState
	return sample{wall: wall.Seconds(), cpu: (ps.UserTime() + ps.SystemTime()).Seconds()}, nil
}

// check runs the contenders that normalize once and compares, line by line,
// the flattened texts and attachment hashes of their outputs with
// ccproxy's: a comparison is fair only if they do the same job.
func check(cs []contender, file, tmp string) error {
	outs := map[string][][]byte{}
	for _, c := range cs {
		if strings.HasPrefix(c.name, "floor") {
			continue
		}
		out := filepath.Join(tmp, c.name+".out")
		if _, err := measure(c, file, out); err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		data, err := os.ReadFile(out)
		if err != nil {
			return err
		}
		outs[c.name] = bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
		os.Remove(out)
	}
	want := outs["ccproxy"]
	for name, got := range outs {
		if len(got) != len(want) {
			return fmt.Errorf("%s wrote %d lines, ccproxy %d", name, len(got), len(want))
		}
		for i := range got {
			for _, path := range []string{"type", "message.content.#.content", "message.content.#.attachments.#.sha256", "message.content.#.mcp", "tool_use_result.content"} {
				g, w := gjson.GetBytes(got[i], path), gjson.GetBytes(want[i], path)
				if fmt.Sprint(g.Value()) != fmt.Sprint(w.Value()) {
					return fmt.Errorf("line %d %s: %s gives %.200s, ccproxy %.200s", i+1, path, name, g.Raw, w.Raw)
				}
			}
		}
	}
	return nil
}

func report(mix, file string, runs int, cs []contender, res [][]sample) {
	st, _ := os.Stat(file)
	mib := float64(st.Size()) / (1 << 20)
	fmt.Printf("\n%s mix: %.1f MiB, %d interleaved rounds; median (min–max)\n", mix, mib, runs)
	fmt.Printf("%-14s %-24s %-24s %12s\n", "contender", "wall s", "cpu s", "MiB/cpu-s")
	med := make([]sample, len(cs))
	for i, c := range cs {
		w, c0, c1 := stats(res[i], func(s sample) float64 { return s.wall })
		u, u0, u1 := stats(res[i], func(s sample) float64 { return s.cpu })
		med[i] = sample{w, u}
		fmt.Printf("%-14s %-24s %-24s %12.1f\n", c.name,
			fmt.Sprintf("%.3f (%.3f–%.3f)", w, c0, c1), fmt.Sprintf("%.3f (%.3f–%.3f)", u, u0, u1), mib/u)
	}
	fmt.Printf("ratios of medians, other / ccproxy (>1: ccproxy is faster):\n")
	for i, c := range cs[1:] {
		fmt.Printf("  %-14s wall %.2f×  cpu %.2f×\n", c.name, med[i+1].wall/med[0].wall, med[i+1].cpu/med[0].cpu)
	}
}

func stats(ss []sample, f func(sample) float64) (median, lo, hi float64) {
	v := make([]float64, len(ss))
	for i, s := range ss {
		v[i] = f(s)
	}
	slices.Sort(v)
	n := len(v)
	median = v[n/2]
	if n%2 == 0 {
		median = (v[n/2-1] + v[n/2]) / 2
	}
	return median, v[0], v[n-1]
}
