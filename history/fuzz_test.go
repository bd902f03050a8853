package history_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/ccproxy/ccproxy/history"
	"github.com/ccproxy/ccproxy/protocol"
)

// FuzzSessionFile: whatever a session file holds, List and Read never fail
// on it, every event is one valid JSON object, and reading page by page
// ends.
func FuzzSessionFile(f *testing.F) {
	lines := capturedLines(f)
	// Small records only: the fuzzer mutates small inputs faster.
	var small [][]byte
	for _, l := range lines {
		if len(l) < 2048 {
			small = append(small, l)
		}
	}
	for i := 0; i+3 <= len(small); i += 5 {
		f.Add(bytes.Join(small[i:i+3], nil))
	}
	f.Add([]byte("{\"type\":\"user\",\"message\":{\"content\":[{\"type\":\"tool_result\",\"content\":[{\"type\":\"image\"}]}]}}\n{\n\n\x00\xff"))
	f.Add([]byte(`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"x","name":"mcp__a__b"}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		root := t.TempDir()
		dir := filepath.Join(root, "-p")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "s.jsonl"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		st, err := history.Open(history.Options{Root: root, MaxLine: 1 << 12, MaxTitle: 16})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		lp, err := st.List(ctx, history.ListOptions{})
		if err != nil || len(lp.Sessions) != 1 {
			t.Fatalf("list: %+v, %v", lp, err)
		}
		if s := lp.Sessions[0]; len(s.Title) > 16+len("…") {
			t.Errorf("title of %d bytes", len(s.Title))
		}
		opts := history.ReadOptions{ID: "s", Limit: 2}
		for range len(data) + 2 {
			p, err := st.Read(ctx, opts)
			if err != nil {
				t.Fatalf("read at %q: %v", opts.Cursor, err)
			}
			for _, ev := range p.Events {
				if !gjson.ValidBytes(ev.JSON) || !gjson.ParseBytes(ev.JSON).IsObject() {
					t.Fatalf("event is not a JSON object: %q", ev.JSON)
				}
			}
			if !p.More {
				return
			}
			if p.Next == opts.Cursor {
				t.Fatalf("no progress at %s", p.Next)
			}
			opts.Cursor = p.Next
		}
		t.Fatal("reading page by page did not end")
	})
}

// A title CleanTitle accepts is one the protocol accepts (and the CLI
// keeps whole): one line, 1 to 200 characters, valid UTF-8.
func FuzzCleanTitle(f *testing.F) {
	for _, s := range []string{"Fix the bug", " padded ", "", "two\nlines", "é" + strings.Repeat("x", 199), "\u00a0", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := history.CleanTitle(s)
		if err != nil {
			if !errors.Is(err, history.ErrBadTitle) {
				t.Fatalf("CleanTitle(%q): %v is not ErrBadTitle", s, err)
			}
			return
		}
		if perr := (protocol.HistoryRename{ID: "s1", Title: got}).Validate(); perr != nil {
			t.Fatalf("CleanTitle(%q) = %q, which the protocol refuses: %v", s, got, perr)
		}
		if got != strings.TrimSpace(got) || utf8.RuneCountInString(got) > history.MaxTitleChars {
			t.Fatalf("CleanTitle(%q) = %q", s, got)
		}
	})
}
