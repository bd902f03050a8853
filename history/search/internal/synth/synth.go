// Package synth writes a synthetic Claude Code projects directory for the
// search benchmarks and tests: sessions made of the records of the real
// captured sessions (testdata/history), repeated to a size, with new ids,
// timestamps and varied text (prompts, replies, tool inputs), so that the
// files look like real ones to every reader and their words differ.
//
// It starts no goroutines and keeps no state.
package synth

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// Options say what to write.
type Options struct {
	// Templates are the real session files whose records are repeated
	// (at least one).
	Templates []string
	// Sessions is how many session files to write; Projects how many
	// project folders they are spread over.
	Sessions, Projects int
	// Bytes is the total size to aim at; each session gets between a
	// tenth and twice its share.
	Bytes int64
	// Seed makes the text; the same seed writes the same files.
	Seed uint64
	// Start is the first session's first timestamp (default
	// 2026-01-01); each session starts an hour after the one before.
	Start time.Time
}

// Session is one written session file.
type Session struct {
	ID, Project, Path string
	// Marker is a word found in this session only (in its first prompt).
	Marker string
	Size   int64
}

// TemplatesIn returns the main session files under dir (a tree like
// testdata/history).
func TemplatesIn(dir string) ([]string, error) {
	m, err := filepath.Glob(filepath.Join(dir, "*", "projects", "*", "*.jsonl"))
	if err == nil && len(m) == 0 {
		err = fmt.Errorf("synth: no session files under %s/*/projects/*", dir)
	}
	return m, err
}

// ID returns the id of the i-th session.
func ID(i int) string { return fmt.Sprintf("%08x-5e55-4000-8000-%012x", i, i) }

// Project returns the project directory of the p-th project.
func Project(p int) string { return fmt.Sprintf("/home/user/work/project-%02d", p) }

// Marker returns the word only the i-th session has.
func Marker(i int) string { return fmt.Sprintf("zqmarker%05d", i) }

type template struct {
	lines     [][]byte
	sessionID string
	cwd       string
}

func loadTemplate(path string) (template, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return template{}, err
	}
	t := template{sessionID: strings.TrimSuffix(filepath.Base(path), ".jsonl")}
	for _, l := range bytes.Split(b, []byte("\n")) {
		if len(bytes.TrimSpace(l)) == 0 {
			continue
		}
		if t.cwd == "" {
			t.cwd = gjson.GetBytes(l, "cwd").Str
		}
		t.lines = append(t.lines, l)
	}
	if len(t.lines) == 0 || t.cwd == "" {
		return template{}, fmt.Errorf("synth: %s has no records with a cwd", path)
	}
	return t, nil
}

// Write writes the sessions under root (the projects directory) and
// returns them.
func Write(root string, o Options) ([]Session, error) {
	if len(o.Templates) == 0 || o.Sessions <= 0 || o.Projects <= 0 {
		return nil, errors.New("synth: want templates, sessions and projects")
	}
	var ts []template
	for _, p := range o.Templates {
		t, err := loadTemplate(p)
		if err != nil {
			return nil, err
		}
		ts = append(ts, t)
	}
	if o.Start.IsZero() {
		o.Start = time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	}
	rng := rand.New(rand.NewPCG(o.Seed, 0x5e55))
	share := max(o.Bytes/int64(o.Sessions), 1)
	out := make([]Session, 0, o.Sessions)
	for i := range o.Sessions {
		size := share/10 + rng.Int64N(share*17/10+1)
		s := Session{ID: ID(i), Project: Project(i % o.Projects), Marker: Marker(i)}
		folder := strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
				return r
			}
			return '-'
		}, s.Project)
		s.Path = filepath.Join(root, folder, s.ID+".jsonl")
		n, err := writeSession(s, ts[i%len(ts)], size, o.Start.Add(time.Duration(i)*time.Hour), rng)
		if err != nil {
			return nil, err
		}
		s.Size = n
		out = append(out, s)
	}
	return out, nil
}

func writeSession(s Session, t template, size int64, start time.Time, rng *rand.Rand) (int64, error) {
	if err := os.MkdirAll(filepath.Dir(s.Path), 0o755); err != nil {
		return 0, err
	}
	f, err := os.Create(s.Path)
	if err != nil {
		return 0, err
	}
	w := bufio.NewWriterSize(f, 1<<16)
	var n int64
	now := start
	first, marked := true, false
	for n < size || first {
		for _, l := range t.lines {
			now = now.Add(time.Duration(200+rng.IntN(4000)) * time.Millisecond)
			l = bytes.ReplaceAll(l, []byte(t.sessionID), []byte(s.ID))
			l = bytes.ReplaceAll(l, []byte(t.cwd), []byte(s.Project))
			l, err = vary(l, s, now, &marked, rng)
			if err != nil {
				f.Close()
				return 0, err
			}
			w.Write(l)
			w.WriteByte('\n')
			n += int64(len(l)) + 1
			first = false
			if n >= size && gjson.GetBytes(l, "type").Str == "assistant" {
				break
			}
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return 0, err
	}
	return n, f.Close()
}

// vary gives a record a new uuid and timestamp, and new words to its
// prompts, replies and tool inputs.
func vary(l []byte, s Session, now time.Time, marked *bool, rng *rand.Rand) ([]byte, error) {
	r := gjson.ParseBytes(l)
	var err error
	set := func(path string, v any) {
		if err == nil {
			l, err = sjson.SetBytes(l, path, v)
		}
	}
	if r.Get("timestamp").Exists() {
		set("timestamp", now.Format("2006-01-02T15:04:05.000Z07:00"))
	}
	if r.Get("uuid").Exists() {
		set("uuid", fmt.Sprintf("%08x-0000-4000-8000-%012x", rng.Uint32(), rng.Uint64()&0xffffffffffff))
	}
	if r.Get("isMeta").Bool() {
		return l, err
	}
	switch r.Get("type").Str {
	case "user":
		c := r.Get("message.content")
		if c.Type == gjson.String && !strings.HasPrefix(c.Str, "<") {
			p := sentence(rng, 6+rng.IntN(20))
			if !*marked {
				p, *marked = s.Marker+" "+p, true
			}
			set("message.content", p)
		}
	case "assistant":
		r.Get("message.content").ForEach(func(k, b gjson.Result) bool {
			base := "message.content." + k.String()
			switch b.Get("type").Str {
			case "text":
				set(base+".text", paragraph(rng))
			case "thinking":
				set(base+".thinking", sentence(rng, 10+rng.IntN(30)))
			case "tool_use":
				b.Get("input").ForEach(func(ik, iv gjson.Result) bool {
					switch ik.Str {
					case "command":
						set(base+".input.command", words[rng.IntN(len(words))]+" "+sentence(rng, 2+rng.IntN(4)))
					case "description", "message", "prompt":
						set(base+".input."+ik.Str, sentence(rng, 3+rng.IntN(8)))
					case "content", "new_string":
						set(base+".input."+ik.Str, paragraph(rng))
					}
					return true
				})
			}
			return true
		})
	}
	return l, err
}

func sentence(rng *rand.Rand, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		// Zipf-like: common words often, rare ones seldom.
		k := int(float64(len(words)) * rng.Float64() * rng.Float64() * rng.Float64())
		b.WriteString(words[k])
	}
	b.WriteByte('.')
	return b.String()
}

func paragraph(rng *rand.Rand) string {
	var b strings.Builder
	for i := range 2 + rng.IntN(8) {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(sentence(rng, 5+rng.IntN(20)))
	}
	return b.String()
}
