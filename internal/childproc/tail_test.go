package childproc

import (
	"strings"
	"testing"
)

func TestTail(t *testing.T) {
	tests := []struct {
		writes    []string
		max       int
		want      string
		truncated bool
	}{
		{[]string{"abc", "def"}, 10, "abcdef", false},
		{[]string{"line one\n", "line two\n", "end"}, 13, "line two\nend", true},
		{[]string{strings.Repeat("x", 20) + "\nlast"}, 8, "last", true},
		{[]string{"ab€cd"}, 4, "\uFFFDcd"[len("\uFFFD"):], true}, // cut inside €: starts at the next character
		{[]string{"bad \xff"}, 10, "bad \uFFFD", false},
	}
	for _, tt := range tests {
		tl := NewTail(tt.max)
		for _, w := range tt.writes {
			if n, err := tl.Write([]byte(w)); n != len(w) || err != nil {
				t.Fatalf("Write = %d, %v", n, err)
			}
		}
		if got, tr := tl.Text(); got != tt.want || tr != tt.truncated {
			t.Errorf("%q max %d: Text = %q, %v; want %q, %v", tt.writes, tt.max, got, tr, tt.want, tt.truncated)
		}
	}
}

func TestHead(t *testing.T) {
	h := NewHead(5)
	for _, w := range []string{"abc", "defg", "h"} {
		if n, err := h.Write([]byte(w)); n != len(w) || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	if h.String() != "abcde" || !h.truncated {
		t.Errorf("Head = %q (truncated %v), want the first 5 bytes, truncated", h.String(), h.truncated)
	}
}
