// Package benchmix generates realistic Claude Code stream-json output for
// benchmarks and memory measurements, out of the real transcripts under
// testdata/transcripts.
//
// Per 1000 events the mix holds ~900 stream_event partial-message lines, ~60
// assistant events, ~35 MCP tool results (text, resource links, the tiny
// image), a few system events, and one large image tool result (1 MiB of
// incompressible bytes, present twice on its line, as the CLI prints it).
package benchmix

import (
	"bufio"
	"encoding/base64"
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
}

// New reads the transcripts under dir (testdata/transcripts).
func New(dir string) (*Mix, error) {
	m := &Mix{big: LargeImageResult(1 << 20)}
	for _, name := range []string{"partial_messages.jsonl", "everything_tools.jsonl", "streamjson_multiturn.jsonl"} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, fmt.Errorf("benchmix: %w", err)
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
		return nil, fmt.Errorf("benchmix: transcripts in %s lack some kind of event", dir)
	}
	return m, nil
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
		switch k := i % 1000; {
		case k == 500:
			l = m.big
		case k < 900:
			l = pick(m.streamEvents)
		case k < 960:
			l = pick(m.assistants)
		case k < 995:
			l = pick(m.results)
		default:
			l = pick(m.system)
		}
		if err := f(l); err != nil {
			return err
		}
		total += int64(len(l) + 1)
	}
	return nil
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
