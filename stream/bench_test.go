package stream

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"

	"github.com/ccproxy/ccproxy/internal/benchmix"
	"github.com/tidwall/gjson"
)

// benchMix is a realistic stream of about size bytes (see package
// benchmix: the image-heavy mix, or the text-heavy one) and how many of its
// lines need a rewrite.
func benchMix(tb testing.TB, size int, text bool) (lines [][]byte, rewrite int) {
	tb.Helper()
	newMix := benchmix.New
	if text {
		newMix = benchmix.NewTextHeavy
	}
	m, err := newMix(transcriptsDir)
	if err != nil {
		tb.Fatal(err)
	}
	lines = m.Lines(int64(size))
	n := NewNormalizer(Options{Attachments: AttachStrip})
	for _, l := range lines {
		if n.Normalize(l).Rewritten {
			rewrite++
		}
	}
	return lines, rewrite
}

func mixBytes(lines [][]byte) int64 {
	var n int64
	for _, l := range lines {
		n += int64(len(l)) + 1
	}
	return n
}

// BenchmarkNormalize compares ccproxy's normalizer with a baseline that
// decodes each line with encoding/json into map[string]any, rewrites it the
// same way and re-encodes it, on the image-heavy and the text-heavy mix.
// One op is the whole mix (~8 MiB).
func BenchmarkNormalize(b *testing.B) {
	for _, mix := range []string{"image", "text"} {
		b.Run(mix, func(b *testing.B) { benchNormalize(b, mix == "text") })
	}
}

func benchNormalize(b *testing.B, text bool) {
	lines, rewrite := benchMix(b, 8<<20, text)
	size := mixBytes(lines)
	b.Logf("mix: %d events, %.1f MiB, %d rewritten", len(lines), float64(size)/(1<<20), rewrite)

	run := func(b *testing.B, f func(line []byte) []byte) {
		b.SetBytes(size)
		b.ReportAllocs()
		var ms0, ms1 runtime.MemStats
		runtime.ReadMemStats(&ms0)
		cpu0 := cpuTime()
		b.ResetTimer()
		for b.Loop() {
			for _, l := range lines {
				if out := f(l); len(out) == 0 {
					b.Fatal("empty output")
				}
			}
		}
		b.StopTimer()
		cpu := cpuTime() - cpu0
		runtime.ReadMemStats(&ms1)
		b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/float64(b.N*len(lines)), "allocs/event")
		// CPU time of the process (GC included) per op, and the throughput
		// it implies: unlike wall time, hardly changed by other processes
		// competing for the machine.
		b.ReportMetric(float64(size)*float64(b.N)/cpu.Seconds()/1e6, "MB/cpu-s")
	}
	b.Run("ccproxy", func(b *testing.B) {
		n := NewNormalizer(Options{Attachments: AttachStrip})
		run(b, func(l []byte) []byte { return n.Normalize(l).JSON })
	})
	b.Run("floor", func(b *testing.B) {
		// What any normalizer must at least do: the validation alone.
		n := NewNormalizer(Options{Attachments: AttachStrip})
		run(b, func(l []byte) []byte {
			if !n.Valid(l) {
				b.Fatal("invalid line")
			}
			return l
		})
	})
	b.Run("baseline-encoding-json", func(b *testing.B) {
		bl := &benchmix.Baseline{}
		run(b, bl.Normalize)
	})
}

// BenchmarkPassthrough measures lines that need no rewrite (stream_event
// partial messages) against copying the same bytes.
func BenchmarkPassthrough(b *testing.B) {
	var lines [][]byte
	for _, l := range bytes.Split(readTranscript(b, "partial_messages.jsonl"), []byte("\n")) {
		// Partial-message lines other than MCP tool_use starts (which get
		// annotated) need no rewrite.
		if gjson.GetBytes(l, "type").Str == "stream_event" && !bytes.Contains(l, []byte(`"mcp__`)) {
			lines = append(lines, l)
		}
	}
	size := mixBytes(lines)
	perLine := func(b *testing.B) {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(lines)), "ns/line")
	}
	b.Run("normalize", func(b *testing.B) {
		n := NewNormalizer(Options{})
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			for _, l := range lines {
				if ev := n.Normalize(l); ev.Rewritten {
					b.Fatal("rewritten")
				}
			}
		}
		perLine(b)
	})
	b.Run("floor", func(b *testing.B) {
		// The validation alone (Normalizer.Valid).
		n := NewNormalizer(Options{})
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			for _, l := range lines {
				if !n.Valid(l) {
					b.Fatal("invalid")
				}
			}
		}
		perLine(b)
	})
	b.Run("memcpy", func(b *testing.B) {
		dst := make([]byte, 0, 4096)
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			for _, l := range lines {
				dst = append(dst[:0], l...)
			}
		}
		perLine(b)
	})
}

// TestBaselineAgrees makes sure the baseline does the same job, so the
// benchmark compares like with like.
func TestBaselineAgrees(t *testing.T) {
	for _, text := range []bool{false, true} {
		lines, _ := benchMix(t, 3<<20, text)
		n := NewNormalizer(Options{Attachments: AttachStrip})
		bl := &benchmix.Baseline{}
		for i, l := range lines {
			got, want := n.Normalize(l).JSON, bl.Normalize(l)
			// Same tool_result texts and attachment hashes.
			for _, path := range []string{"message.content.#.content", "message.content.#.attachments.#.sha256", "tool_use_result.content"} {
				if g, w := gjson.GetBytes(got, path), gjson.GetBytes(want, path); fmt.Sprint(g.Value()) != fmt.Sprint(w.Value()) {
					t.Fatalf("text mix %v, line %d %s: ccproxy %.200s, baseline %.200s", text, i, path, g.Raw, w.Raw)
				}
			}
		}
	}
}

// BenchmarkKinds normalizes the lines of the text-heavy mix one kind at a
// time (stream_event, assistant, user tool results, the many-part text
// results, system), next to the validation floor (Normalizer.Valid) on the
// same lines, and reports ns/line for each.
func BenchmarkKinds(b *testing.B) {
	lines, _ := benchMix(b, 8<<20, true)
	kinds := map[string][][]byte{}
	var names []string
	for _, l := range lines {
		k := gjson.GetBytes(l, "type").Str
		if k == "user" && len(gjson.GetBytes(l, "message.content.0.content").Array()) >= 100 {
			k = "manyparts"
		}
		if kinds[k] == nil {
			names = append(names, k)
		}
		kinds[k] = append(kinds[k], l)
	}
	for _, k := range names {
		ls := kinds[k]
		for _, eng := range []string{"normalize", "floor"} {
			b.Run(k+"/"+eng, func(b *testing.B) {
				n := NewNormalizer(Options{Attachments: AttachStrip})
				b.SetBytes(mixBytes(ls))
				for b.Loop() {
					for _, l := range ls {
						if eng == "floor" {
							n.Valid(l)
						} else {
							n.Normalize(l)
						}
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(ls)), "ns/line")
			})
		}
	}
}
