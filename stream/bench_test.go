package stream

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/ccproxy/ccproxy/internal/benchmix"
	"github.com/tidwall/gjson"
)

// benchMix is a realistic stream of about size bytes (see package
// benchmix) and how many of its lines need a rewrite.
func benchMix(tb testing.TB, size int) (lines [][]byte, rewrite int) {
	tb.Helper()
	m, err := benchmix.New(transcriptsDir)
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
// same way and re-encodes it. One op is the whole mix (~8 MiB).
func BenchmarkNormalize(b *testing.B) {
	lines, rewrite := benchMix(b, 8<<20)
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
	b.Run("baseline-encoding-json", func(b *testing.B) {
		bl := &baseline{}
		run(b, bl.normalize)
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
	})
}

// baseline is the straightforward way: full decode, edit maps, re-encode.
type baseline struct {
	tools map[string][2]string
}

func (bl *baseline) normalize(line []byte) []byte {
	var ev map[string]any
	if err := json.Unmarshal(line, &ev); err != nil {
		out, _ := json.Marshal(map[string]any{"type": "ccproxy", "subtype": "noise", "text": string(line)})
		return out
	}
	if bl.tools == nil {
		bl.tools = map[string][2]string{}
	}
	switch ev["type"] {
	case "assistant":
		msg, _ := ev["message"].(map[string]any)
		blocks, _ := msg["content"].([]any)
		for _, bk := range blocks {
			blk, _ := bk.(map[string]any)
			name, _ := blk["name"].(string)
			if blk["type"] == "tool_use" && strings.HasPrefix(name, "mcp__") {
				srv, tool, _ := strings.Cut(name[5:], "__")
				blk["mcp"] = map[string]any{"server": srv, "tool": tool}
				id, _ := blk["id"].(string)
				bl.tools[id] = [2]string{srv, tool}
			}
		}
	case "user":
		msg, _ := ev["message"].(map[string]any)
		blocks, _ := msg["content"].([]any)
		for _, bk := range blocks {
			blk, _ := bk.(map[string]any)
			if blk["type"] != "tool_result" {
				continue
			}
			if arr, ok := blk["content"].([]any); ok {
				text, atts := baselineFlatten(arr)
				blk["content"] = text
				if len(atts) > 0 {
					blk["attachments"] = atts
				}
			}
			id, _ := blk["tool_use_id"].(string)
			if ref, ok := bl.tools[id]; ok {
				blk["mcp"] = map[string]any{"server": ref[0], "tool": ref[1]}
			}
		}
		switch tur := ev["tool_use_result"].(type) {
		case []any:
			text, atts := baselineFlatten(tur)
			m := map[string]any{"content": text}
			if len(atts) > 0 {
				m["attachments"] = atts
			}
			ev["tool_use_result"] = m
		case map[string]any:
			if arr, ok := tur["content"].([]any); ok {
				text, atts := baselineFlatten(arr)
				tur["content"] = text
				if len(atts) > 0 {
					tur["attachments"] = atts
				}
			}
		}
	}
	out, err := json.Marshal(ev)
	if err != nil {
		panic(err)
	}
	return out
}

func baselineFlatten(arr []any) (string, []any) {
	var parts []string
	var atts []any
	for _, el := range arr {
		blk, _ := el.(map[string]any)
		switch blk["type"] {
		case "text":
			s, _ := blk["text"].(string)
			parts = append(parts, s)
		case "image":
			src, _ := blk["source"].(map[string]any)
			data, _ := src["data"].(string)
			dec, _ := base64.StdEncoding.DecodeString(data)
			sum := sha256.Sum256(dec)
			mt, _ := src["media_type"].(string)
			parts = append(parts, fmt.Sprintf("[image %s %s]", mt, FormatSize(len(dec))))
			atts = append(atts, map[string]any{"kind": "image", "mediaType": mt, "size": len(dec), "sha256": hex.EncodeToString(sum[:])})
		}
	}
	return strings.Join(parts, "\n"), atts
}

// TestBaselineAgrees makes sure the baseline does the same job, so the
// benchmark compares like with like.
func TestBaselineAgrees(t *testing.T) {
	lines, _ := benchMix(t, 3<<20)
	n := NewNormalizer(Options{Attachments: AttachStrip})
	bl := &baseline{}
	for i, l := range lines {
		got, want := n.Normalize(l).JSON, bl.normalize(l)
		// Same tool_result texts and attachment hashes.
		for _, path := range []string{"message.content.#.content", "message.content.#.attachments.#.sha256", "tool_use_result.content"} {
			if g, w := gjson.GetBytes(got, path), gjson.GetBytes(want, path); fmt.Sprint(g.Value()) != fmt.Sprint(w.Value()) {
				t.Fatalf("line %d %s: ccproxy %.200s, baseline %.200s", i, path, g.Raw, w.Raw)
			}
		}
	}
}
