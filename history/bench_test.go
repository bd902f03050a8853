package history_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ccproxy/ccproxy/history"
	"github.com/ccproxy/ccproxy/stream"
)

// capturedLines returns the lines of the real 2.1.330 session file.
func capturedLines(tb testing.TB) [][]byte {
	tb.Helper()
	m, _ := filepath.Glob(filepath.Join("..", "testdata", "history", "2.1.330", "projects", "*", "*.jsonl"))
	if len(m) != 1 {
		tb.Fatalf("captured session files: %v", m)
	}
	b, err := os.ReadFile(m[0])
	if err != nil {
		tb.Fatal(err)
	}
	return bytes.SplitAfter(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
}

func writeLines(tb testing.TB, path string, lines [][]byte, size int64) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tb.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriter(f)
	var n int64
	for i := 0; ; i++ {
		l := lines[i%len(lines)]
		if size > 0 && n >= size || size <= 0 && i == len(lines) {
			break
		}
		if l[len(l)-1] != '\n' {
			l = append(l[:len(l):len(l)], '\n')
		}
		w.Write(l)
		n += int64(len(l))
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
}

// projectOf500 makes a projects directory with 500 sessions in 10 projects,
// cut from the real captured session at different lengths.
func projectOf500(b *testing.B) string {
	b.Helper()
	lines := capturedLines(b)
	root := b.TempDir()
	for i := range 500 {
		n := 10 + (i*37)%(len(lines)-10)
		p := filepath.Join(root, fmt.Sprintf("-home-user-project%d", i%10), fmt.Sprintf("%08d-0000-4000-8000-000000000000.jsonl", i))
		writeLines(b, p, lines[:n], 0)
	}
	return root
}

// BenchmarkList500Warm lists 500 sessions (all in one page, and the first
// page of 50) with the index already built: target < 50 ms.
func BenchmarkList500Warm(b *testing.B) {
	root := projectOf500(b)
	ctx := context.Background()
	for _, limit := range []int{500, 50} {
		b.Run(fmt.Sprint("limit=", limit), func(b *testing.B) {
			st := open(b, root)
			if p, err := st.List(ctx, history.ListOptions{Limit: 500}); err != nil || p.Total != 500 {
				b.Fatalf("%d sessions, %v", p.Total, err)
			}
			read := st.BytesRead()
			for b.Loop() {
				if _, err := st.List(ctx, history.ListOptions{Limit: limit}); err != nil {
					b.Fatal(err)
				}
			}
			if st.BytesRead() != read {
				b.Errorf("warm lists read %d bytes of session files", st.BytesRead()-read)
			}
		})
	}
}

// BenchmarkList500Cold builds the index of 500 sessions from nothing.
func BenchmarkList500Cold(b *testing.B) {
	root := projectOf500(b)
	ctx := context.Background()
	for b.Loop() {
		st := open(b, root)
		if _, err := st.List(ctx, history.ListOptions{Limit: 50}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadFirstPage50MB reads the first page (200 events) of a 50 MB
// session made of the real captured records repeated: target < 100 ms.
func BenchmarkReadFirstPage50MB(b *testing.B) {
	root := b.TempDir()
	id := "00000000-0000-4000-8000-000000000050"
	writeLines(b, filepath.Join(root, "-home-user-big", id+".jsonl"), capturedLines(b), 50<<20)
	ctx := context.Background()
	st := open(b, root)
	for _, mode := range []stream.AttachmentMode{stream.AttachInline, stream.AttachSink} {
		b.Run(mode.String(), func(b *testing.B) {
			opts := history.ReadOptions{ID: id, Normalize: stream.Options{Attachments: mode, Sink: &memSink{}}}
			for b.Loop() {
				p, err := st.Read(ctx, opts)
				if err != nil || len(p.Events) < history.DefaultReadLimit || !p.More {
					b.Fatalf("%d events, more %v, %v", len(p.Events), p.More, err)
				}
			}
		})
	}
}
