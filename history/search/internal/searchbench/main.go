// Command searchbench writes the synthetic home of the search benchmark
// (500 sessions, 200 MB, made by package synth from the captured real
// sessions) and measures history/search's index on it, each run in a new
// process: the first search after start with no index (a build), the first
// search after start with the index of an earlier run (catch-up), warm
// searches, the process's RSS with the index open, the index's size. Runs
// of the two kinds alternate; it prints medians with min–max. Run from the
// repository root:
//
//	go run ./history/search/internal/searchbench                 # a temp home, 5 runs
//	go run ./history/search/internal/searchbench -gen DIR        # write the home only
//	go run ./history/search/internal/searchbench -home DIR -runs 7
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ccproxy/ccproxy/history/search"
	"github.com/ccproxy/ccproxy/history/search/internal/synth"
)

// queries of the warm searches: a word of one session, common words, a
// tool name, two words, a prefix.
var queries = []string{synth.Marker(123), "goroutine", "the", "Bash", "cache disk", "obsid"}

type measure struct {
	First   time.Duration   `json:"first"`
	Warm    []time.Duration `json:"warm"`
	RSS     int64           `json:"rss"` // kB, after the searches
	HWM     int64           `json:"hwm"` // kB, peak
	Indexed int             `json:"indexed"`
}

var verbose = flag.Bool("v", false, "print each warm search")

func main() {
	gen := flag.String("gen", "", "write the synthetic home under `DIR`/.claude/projects and exit")
	home := flag.String("home", "", "use the synthetic home in `DIR` (written by -gen); default: write one to a temp dir")
	sessions := flag.Int("sessions", 500, "sessions in the synthetic home")
	mb := flag.Int64("mb", 200, "total size of the synthetic home in MB")
	runs := flag.Int("runs", 5, "runs of each kind")
	child := flag.String("child", "", "(internal) measure once with the index in `DIR`")
	flag.Parse()
	switch {
	case *child != "":
		m, err := measureOnce(*home, *child)
		if err != nil {
			log.Fatal(err)
		}
		json.NewEncoder(os.Stdout).Encode(m)
		return
	case *gen != "":
		t0 := time.Now()
		ss, err := writeHome(*gen, *sessions, *mb)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("wrote %d sessions, %.1f MB in %v\n", len(ss), float64(total(ss))/1e6, time.Since(t0).Round(time.Millisecond))
		return
	}
	if *home == "" {
		dir, err := os.MkdirTemp("", "searchbench-")
		if err != nil {
			log.Fatal(err)
		}
		defer os.RemoveAll(dir)
		ss, err := writeHome(dir, *sessions, *mb)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("synthetic home: %d sessions, %.1f MB\n", len(ss), float64(total(ss))/1e6)
		*home = dir
	}
	idx, err := os.MkdirTemp("", "searchbench-index-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(idx)
	var cold, restart []measure
	var size int64
	for range *runs {
		os.RemoveAll(idx)
		m, err := runChild(*home, idx)
		if err != nil {
			log.Fatal(err)
		}
		cold = append(cold, m)
		size = dirSize(idx)
		m, err = runChild(*home, idx)
		if err != nil {
			log.Fatal(err)
		}
		restart = append(restart, m)
	}
	fmt.Printf("%d runs of each kind, interleaved; median (min–max)\n", *runs)
	row := func(name string, ms []measure, f func(measure) float64, unit string) {
		var v []float64
		for _, m := range ms {
			v = append(v, f(m))
		}
		slices.Sort(v)
		fmt.Printf("  %-44s %8.1f %s (%.1f–%.1f)\n", name, v[len(v)/2], unit, v[0], v[len(v)-1])
	}
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	row("first search, no index (build)", cold, func(m measure) float64 { return ms(m.First) }, "ms")
	row("first search after restart (catch-up)", restart, func(m measure) float64 { return ms(m.First) }, "ms")
	warm := func(ms []measure) []measure { // one measure per warm search
		var out []measure
		for _, m := range ms {
			for _, w := range m.Warm {
				out = append(out, measure{First: w})
			}
		}
		return out
	}
	row("warm search (all queries, all runs)", warm(append(cold, restart...)), func(m measure) float64 { return ms(m.First) }, "ms")
	row("RSS after searches, built in this process", cold, func(m measure) float64 { return float64(m.RSS) / 1024 }, "MiB")
	row("peak RSS, built in this process", cold, func(m measure) float64 { return float64(m.HWM) / 1024 }, "MiB")
	row("RSS after searches, index opened", restart, func(m measure) float64 { return float64(m.RSS) / 1024 }, "MiB")
	row("peak RSS, index opened", restart, func(m measure) float64 { return float64(m.HWM) / 1024 }, "MiB")
	fmt.Printf("  %-44s %8.1f MB (%d sessions indexed)\n", "index size on disk", float64(size)/1e6, cold[0].Indexed)
}

func runChild(home, idx string) (measure, error) {
	cmd := exec.Command(os.Args[0], "-home", home, "-child", idx, fmt.Sprint("-v=", *verbose))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return measure{}, err
	}
	var m measure
	return m, json.Unmarshal(out, &m)
}

func measureOnce(home, idx string) (measure, error) {
	ctx := context.Background()
	var m measure
	t0 := time.Now()
	x, err := search.Open(search.Options{Root: filepath.Join(home, ".claude", "projects"), Dir: idx})
	if err != nil {
		return m, err
	}
	defer x.Close()
	r, err := x.Search(ctx, search.Query{Text: queries[0]})
	if err != nil {
		return m, err
	}
	m.First = time.Since(t0)
	if len(r.Hits) != 1 {
		return m, fmt.Errorf("%q: %d hits, want 1", queries[0], len(r.Hits))
	}
	m.Indexed = r.Indexed
	for range 3 {
		for _, q := range queries {
			t := time.Now()
			r, err := x.Search(ctx, search.Query{Text: q})
			if err != nil {
				return m, err
			}
			m.Warm = append(m.Warm, time.Since(t))
			if *verbose {
				fmt.Fprintf(os.Stderr, "  %-16q %2d hits, more %-5v %v\n", q, len(r.Hits), r.More, time.Since(t).Round(time.Microsecond))
			}
		}
	}
	m.RSS, m.HWM = procStatus("VmRSS"), procStatus("VmHWM")
	return m, nil
}

// procStatus reads a kB figure of /proc/self/status (0 where there is none).
func procStatus(key string) int64 {
	b, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, key+":"); ok {
			var n int64
			fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), &n)
			return n
		}
	}
	return 0
}

func dirSize(d string) int64 {
	var n int64
	filepath.Walk(d, func(_ string, fi os.FileInfo, _ error) error {
		if fi != nil && !fi.IsDir() {
			n += fi.Size()
		}
		return nil
	})
	return n
}

func total(ss []synth.Session) int64 {
	var n int64
	for _, s := range ss {
		n += s.Size
	}
	return n
}

func writeHome(home string, sessions int, mb int64) ([]synth.Session, error) {
	tpl, err := synth.TemplatesIn(filepath.Join("testdata", "history"))
	if err != nil {
		return nil, err
	}
	root := filepath.Join(home, ".claude", "projects")
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, err
	}
	return synth.Write(root, synth.Options{Templates: tpl, Sessions: sessions, Projects: 20, Bytes: mb * 1_000_000, Seed: 1})
}
