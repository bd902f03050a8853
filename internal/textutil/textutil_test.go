package textutil

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// A cut never splits a rune: the result of valid text is valid text of at
// most n bytes plus the mark.
func TestTruncate(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly", 7, "exactly"},
		{"abcdef", 3, "abc…"},
		{"aé", 2, "a…"},  // é is 2 bytes: not split
		{"日本語", 4, "日…"}, // 3-byte runes
		{"日本語", 6, "日本…"},
		{"😀x", 3, "…"}, // a 4-byte rune cut at its start
		{"abc", 0, "…"},
		{"abc", -1, "…"},
		{"a\xffb\xfec", 2, "a\xff…"}, // invalid bytes stay as they are
	} {
		got := Truncate(tc.s, tc.n)
		if got != tc.want {
			t.Errorf("Truncate(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
	s := strings.Repeat("aé日😀", 50)
	for n := 0; n <= len(s); n++ {
		got := Truncate(s, n)
		if !utf8.ValidString(got) || len(strings.TrimSuffix(got, "…")) > n {
			t.Fatalf("Truncate(…, %d) = %q: invalid or too long", n, got)
		}
	}
}
