package stream

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden/stream")

const (
	transcriptsDir = "../testdata/transcripts"
	goldenDir      = "../testdata/golden/stream"
)

// transcripts lists every captured stream-json file: *.jsonl and *.jsonl.gz
// under testdata/transcripts, as paths relative to it.
func transcripts(t testing.TB) []string {
	t.Helper()
	var names []string
	err := filepath.WalkDir(transcriptsDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && (strings.HasSuffix(p, ".jsonl") || strings.HasSuffix(p, ".jsonl.gz")) {
			rel, _ := filepath.Rel(transcriptsDir, p)
			names = append(names, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(names) == 0 {
		t.Fatal("no transcripts found")
	}
	return names
}

func readTranscript(t testing.TB, rel string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(transcriptsDir, rel))
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasSuffix(rel, ".gz") {
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		if data, err = io.ReadAll(zr); err != nil {
			t.Fatal(err)
		}
	}
	return data
}

// normalizeAll runs a whole input through a Reader and a Normalizer and
// returns the output lines.
func normalizeAll(t testing.TB, in []byte, opts Options, maxLine int) [][]byte {
	t.Helper()
	return normalizeLines(t, in, NewNormalizer(opts), maxLine)
}

// normalizeLines runs a whole input through a Reader and n.
func normalizeLines(t testing.TB, in []byte, n *Normalizer, maxLine int) [][]byte {
	return mapLines(t, in, maxLine, func(line []byte) []byte { return bytes.Clone(n.Normalize(line).JSON) })
}

// mapLines runs a whole input through a Reader and returns what f makes
// of each line.
func mapLines(t testing.TB, in []byte, maxLine int, f func(line []byte) []byte) [][]byte {
	t.Helper()
	r := NewReader(bytes.NewReader(in), maxLine)
	var out [][]byte
	for {
		line, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, f(line))
	}
}

func TestGolden(t *testing.T) {
	for _, rel := range transcripts(t) {
		t.Run(rel, func(t *testing.T) {
			in := readTranscript(t, rel)
			lines := normalizeAll(t, in, Options{Attachments: AttachStrip}, 0)
			got := append(bytes.Join(lines, []byte("\n")), '\n')

			golden := filepath.Join(goldenDir, strings.TrimSuffix(rel, ".gz"))
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./stream -run TestGolden -update)", err)
			}
			compareJSONLines(t, got, want)
		})
	}
}

// compareJSONLines compares two JSON-lines texts line by line, semantically.
func compareJSONLines(t *testing.T, got, want []byte) {
	t.Helper()
	g := bytes.Split(bytes.TrimSpace(got), []byte("\n"))
	w := bytes.Split(bytes.TrimSpace(want), []byte("\n"))
	if len(g) != len(w) {
		t.Fatalf("%d lines, golden has %d", len(g), len(w))
	}
	for i := range g {
		var gv, wv any
		if err := json.Unmarshal(g[i], &gv); err != nil {
			t.Fatalf("line %d is not JSON: %v", i+1, err)
		}
		if err := json.Unmarshal(w[i], &wv); err != nil {
			t.Fatalf("golden line %d is not JSON: %v", i+1, err)
		}
		if !reflect.DeepEqual(gv, wv) {
			t.Errorf("line %d differs from the golden file\n got: %.600s\nwant: %.600s", i+1, g[i], w[i])
		}
	}
}

// TestTranscriptProperties checks, on every real transcript, what every
// webview relies on: one JSON object per line; no tool_result content left
// as an array; every inline attachment's data matching its size and sha256;
// and normalizing twice giving the same bytes.
func TestTranscriptProperties(t *testing.T) {
	for _, rel := range transcripts(t) {
		t.Run(rel, func(t *testing.T) {
			in := readTranscript(t, rel)
			once := normalizeAll(t, in, Options{Attachments: AttachInline}, 0)
			var results, atts int
			for i, line := range once {
				if !json.Valid(line) || line[0] != '{' {
					t.Fatalf("line %d is not a JSON object: %.200s", i+1, line)
				}
				ev := gjson.ParseBytes(line)
				check := func(block gjson.Result) {
					if block.Get("type").Str != "tool_result" {
						return
					}
					results++
					if block.Get("content").Type != gjson.String {
						t.Errorf("line %d: tool_result content is %s, want a string", i+1, block.Get("content").Type)
					}
					block.Get("attachments").ForEach(func(_, a gjson.Result) bool {
						atts++
						data, err := base64.StdEncoding.DecodeString(a.Get("data").Str)
						if err != nil {
							t.Errorf("line %d: attachment data: %v", i+1, err)
							return true
						}
						sum := sha256.Sum256(data)
						if hex.EncodeToString(sum[:]) != a.Get("sha256").Str || int64(len(data)) != a.Get("size").Int() {
							t.Errorf("line %d: attachment %s does not match its data", i+1, a.Get("sha256").Str)
						}
						return true
					})
				}
				ev.Get("message.content").ForEach(func(_, b gjson.Result) bool { check(b); return true })
				if tur := ev.Get("tool_use_result.content"); tur.Exists() && tur.IsArray() {
					t.Errorf("line %d: tool_use_result.content is still an array", i+1)
				}
			}
			twice := normalizeAll(t, bytes.Join(once, []byte("\n")), Options{Attachments: AttachInline}, 1<<30)
			if !reflect.DeepEqual(once, twice) {
				t.Errorf("normalizing twice changed the output")
			}
			t.Logf("%d events, %d tool results, %d attachments", len(once), results, atts)
		})
	}
}
