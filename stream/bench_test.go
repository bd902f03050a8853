package stream

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// benchMix builds a realistic stream of about size bytes out of real
// transcript lines: per 1000 events, ~900 stream_event partial-message
// lines, ~60 assistant events, ~35 MCP tool results (text, resource links,
// the tiny image), a few system events, and one large image tool result
// (1 MiB of incompressible PNG bytes, present twice as the CLI prints it).
// It returns the lines and how many of them need a rewrite.
func benchMix(tb testing.TB, size int) (lines [][]byte, rewrite int) {
	tb.Helper()
	var streamEvents, assistants, results, systems [][]byte
	for _, rel := range []string{"partial_messages.jsonl", "everything_tools.jsonl", "streamjson_multiturn.jsonl"} {
		for _, l := range bytes.Split(readTranscript(tb, rel), []byte("\n")) {
			switch gjson.GetBytes(l, "type").Str {
			case "stream_event":
				streamEvents = append(streamEvents, l)
			case "assistant":
				assistants = append(assistants, l)
			case "user":
				if gjson.GetBytes(l, `message.content.#(type=="tool_result")`).Exists() {
					results = append(results, l)
				}
			case "system":
				if gjson.GetBytes(l, "subtype").Str != "init" {
					systems = append(systems, l)
				}
			}
		}
	}
	init := bytes.Split(readTranscript(tb, "everything_tools.jsonl"), []byte("\n"))[0]
	big := largeImageResult(1 << 20)

	rng := rand.New(rand.NewPCG(1, 2))
	pick := func(ls [][]byte) []byte { return ls[rng.IntN(len(ls))] }
	lines = append(lines, init)
	total := len(init)
	for i := 0; total < size; i++ {
		var l []byte
		switch k := i % 1000; {
		case k == 500:
			l = big
		case k < 900:
			l = pick(streamEvents)
		case k < 960:
			l = pick(assistants)
		case k < 995:
			l = pick(results)
		default:
			l = pick(systems)
		}
		lines = append(lines, l)
		total += len(l) + 1
	}
	n := NewNormalizer(Options{Attachments: AttachStrip})
	for _, l := range lines {
		if n.Normalize(l).Rewritten {
			rewrite++
		}
	}
	return lines, rewrite
}

// largeImageResult is a user event carrying an MCP image of n random bytes,
// in message.content and again in tool_use_result, as the CLI prints it.
func largeImageResult(n int) []byte {
	data := make([]byte, n)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	b64 := base64.StdEncoding.EncodeToString(data)
	blocks := `[{"type":"text","text":"Here is the chart:"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + b64 + `"}}]`
	return []byte(`{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_big","type":"tool_result","content":` + blocks +
		`}]},"parent_tool_use_id":null,"session_id":"f232a710-00a3-4b7a-ae4a-494805cc1337","uuid":"0b6e1d2a-1111-4d9e-9872-baa140b60636","tool_use_result":` + blocks + `}`)
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
		b.ResetTimer()
		for b.Loop() {
			for _, l := range lines {
				if out := f(l); len(out) == 0 {
					b.Fatal("empty output")
				}
			}
		}
		b.StopTimer()
		runtime.ReadMemStats(&ms1)
		b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/float64(b.N*len(lines)), "allocs/event")
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
