// Package benchmix generates realistic Claude Code stream-json output for
// benchmarks and memory measurements, out of the real transcripts under
// testdata/transcripts. There are two mixes.
//
// The image-heavy mix (New): per 1000 events ~900 stream_event
// partial-message lines, ~60 assistant events, ~35 MCP tool results (text,
// resource links, the tiny image), a few system events, and one large image
// tool result (1 MiB of incompressible bytes, present twice on its line, as
// the CLI prints it).
//
// The text-heavy mix (NewTextHeavy): per 1000 events ~880 stream_event
// lines (from three captured sessions), ~60 assistant events, ~35 real MCP
// tool results, ~20 system events and 5 text tool results of 100 to 400
// small text parts (as MCP servers return search hits, file listings and
// log lines), each with its tool_use_result duplicate, as the CLI prints
// them. Their parts are the lines of real texts of the transcripts, and
// their envelope is a real tool result's. No image larger than the
// transcripts' own.
//
// Both are deterministic: the same size gives the same bytes.
package benchmix

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/tidwall/gjson"
)

// Mix holds the pools of real lines a stream is drawn from.
type Mix struct {
	init                                      []byte
	streamEvents, assistants, results, system [][]byte
	big                                       []byte
	manyParts                                 [][]byte // text-heavy mix only
}

// New reads the transcripts under dir (testdata/transcripts) for the
// image-heavy mix.
func New(dir string) (*Mix, error) {
	m := &Mix{big: LargeImageResult(1 << 20)}
	if err := m.load(dir, "partial_messages.jsonl", "everything_tools.jsonl", "streamjson_multiturn.jsonl"); err != nil {
		return nil, err
	}
	return m, nil
}

// NewTextHeavy reads the transcripts under dir (testdata/transcripts) for
// the text-heavy mix.
func NewTextHeavy(dir string) (*Mix, error) {
	m := &Mix{}
	if err := m.load(dir, "partial_messages.jsonl", "captured/partial_messages_mcp.jsonl", "captured/demo.jsonl",
		"everything_tools.jsonl", "streamjson_multiturn.jsonl", "captured/testmcp_tools.jsonl"); err != nil {
		return nil, err
	}
	texts := m.texts()
	// The envelope: a real text tool result whose tool_use_result repeats
	// its content array byte for byte.
	var tmpl []byte
	for _, r := range m.results {
		c := gjson.GetBytes(r, `message.content.0.content`)
		if c.IsArray() && len(c.Array()) > 1 && gjson.GetBytes(r, "tool_use_result").Raw == c.Raw &&
			!strings.Contains(c.Raw, `"image"`) {
			tmpl = r
			break
		}
	}
	if tmpl == nil || len(texts) < 50 {
		return nil, fmt.Errorf("benchmix: transcripts in %s lack a text tool result to expand", dir)
	}
	arr := gjson.GetBytes(tmpl, `message.content.0.content`).Raw
	rng := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 16; i++ {
		var b strings.Builder
		b.WriteByte('[')
		for p := range 100 + rng.IntN(301) {
			if p > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`{"type":"text","text":`)
			b.Write(appendString(nil, texts[rng.IntN(len(texts))]))
			b.WriteByte('}')
		}
		b.WriteByte(']')
		line := strings.Replace(string(tmpl), arr, b.String(), 2)
		if !gjson.Valid(line) {
			return nil, fmt.Errorf("benchmix: built an invalid many-part line")
		}
		m.manyParts = append(m.manyParts, []byte(line))
	}
	return m, nil
}

// texts returns the lines of the real texts in the pools: text parts of
// tool results, assistant text blocks, streamed text deltas.
func (m *Mix) texts() []string {
	var out []string
	add := func(s string) {
		for _, l := range strings.Split(s, "\n") {
			if l = strings.TrimSpace(l); len(l) >= 8 {
				out = append(out, l)
			}
		}
	}
	for _, r := range m.results {
		gjson.GetBytes(r, `message.content.#.content.#(type=="text")#.text`).ForEach(func(_, v gjson.Result) bool {
			v.ForEach(func(_, t gjson.Result) bool { add(t.String()); return true })
			return true
		})
	}
	for _, a := range m.assistants {
		gjson.GetBytes(a, `message.content.#(type=="text")#.text`).ForEach(func(_, t gjson.Result) bool { add(t.String()); return true })
	}
	for _, e := range m.streamEvents {
		add(gjson.GetBytes(e, "event.delta.text").String())
	}
	return out
}

func appendString(dst []byte, s string) []byte {
	b, _ := json.Marshal(s)
	return append(dst, b...)
}

func (m *Mix) load(dir string, names ...string) error {
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return fmt.Errorf("benchmix: %w", err)
		}
		for _, l := range strings.Split(string(data), "\n") {
			b := []byte(l)
			switch gjson.Get(l, "type").Str {
			case "stream_event":
				m.streamEvents = append(m.streamEvents, b)
			case "assistant":
				m.assistants = append(m.assistants, b)
			case "user":
				if gjson.Get(l, `message.content.#(type=="tool_result")`).Exists() {
					m.results = append(m.results, b)
				}
			case "system":
				if gjson.Get(l, "subtype").Str == "init" {
					if m.init == nil {
						m.init = b
					}
				} else {
					m.system = append(m.system, b)
				}
			}
		}
	}
	if m.init == nil || len(m.streamEvents) == 0 || len(m.assistants) == 0 || len(m.results) == 0 || len(m.system) == 0 {
		return fmt.Errorf("benchmix: transcripts in %s lack some kind of event", dir)
	}
	return nil
}

// Lines returns a stream of about size bytes as lines (without "\n").
func (m *Mix) Lines(size int64) [][]byte {
	var lines [][]byte
	m.each(size, func(l []byte) error { lines = append(lines, l); return nil })
	return lines
}

// WriteTo writes a stream of about size bytes to w, one line at a time, so
// that gigabytes can be produced without holding them.
func (m *Mix) WriteTo(w io.Writer, size int64) (int64, error) {
	bw := bufio.NewWriterSize(w, 1<<20)
	var n int64
	err := m.each(size, func(l []byte) error {
		k, err := bw.Write(l)
		n += int64(k)
		if err == nil {
			err = bw.WriteByte('\n')
			n++
		}
		return err
	})
	if err == nil {
		err = bw.Flush()
	}
	return n, err
}

func (m *Mix) each(size int64, f func([]byte) error) error {
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func(ls [][]byte) []byte { return ls[rng.IntN(len(ls))] }
	total := int64(len(m.init) + 1)
	if err := f(m.init); err != nil {
		return err
	}
	for i := 0; total < size; i++ {
		var l []byte
		if m.manyParts != nil {
			switch k := i % 1000; {
			case k%200 == 100:
				l = pick(m.manyParts)
			case k < 880:
				l = pick(m.streamEvents)
			case k < 940:
				l = pick(m.assistants)
			case k < 975:
				l = pick(m.results)
			default:
				l = pick(m.system)
			}
		} else {
			l = m.imageHeavy(i, pick)
		}
		if err := f(l); err != nil {
			return err
		}
		total += int64(len(l) + 1)
	}
	return nil
}

func (m *Mix) imageHeavy(i int, pick func([][]byte) []byte) []byte {
	switch k := i % 1000; {
	case k == 500:
		return m.big
	case k < 900:
		return pick(m.streamEvents)
	case k < 960:
		return pick(m.assistants)
	case k < 995:
		return pick(m.results)
	}
	return pick(m.system)
}

// LargeImageResult is a user event carrying an MCP image of n random bytes,
// in message.content and again in tool_use_result, as the CLI prints it.
func LargeImageResult(n int) []byte {
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
