package proxy

import (
	"strings"
	"testing"
)

// TestLoginOutput: the URL is found on its own line (escapes removed),
// once; an overlong line is cut, not kept whole; the last line is kept.
func TestLoginOutput(t *testing.T) {
	long := strings.Repeat("x", 3*loginOutputBytes)
	for _, tc := range []struct {
		name, in, url, last string
	}{
		{"plain", "Starting…\nVisit this URL to authorize:\n  https://a.example/authorize?x=1\n\nWaiting…\nAuthenticated.\n", "https://a.example/authorize?x=1", "Authenticated."},
		{"osc8", "  \x1b]8;;http://h/a?b\x07http://h/a?b\x1b]8;;\x07\r\n", "http://h/a?b", "http://h/a?b"},
		{"first only", "  http://h/1\n  http://h/2\n", "http://h/1", "http://h/2"},
		{"not alone on its line", "see http://h/1 now\n", "", "see http://h/1 now"},
		{"overlong", long + "\n  http://h/after\nend", "http://h/after", "end"},
		{"none", "", "", ""},
	} {
		urls := make(chan string, 1)
		var o loginOutput
		o.read(strings.NewReader(tc.in), urls)
		got := ""
		select {
		case got = <-urls:
		default:
		}
		if got != tc.url || o.lastLine() != tc.last {
			t.Errorf("%s: url %q, last %q; want %q, %q", tc.name, got, truncate(o.lastLine(), 40), tc.url, tc.last)
		}
	}
}
