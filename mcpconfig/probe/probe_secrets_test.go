package probe

import (
	"strings"
	"testing"

	"github.com/ccproxy/ccproxy/mcpconfig"
)

// TestScrubberFindsURLSecretsLikeRedactURL: the scrubber masks exactly the
// URL parts mcpconfig.RedactURL masks, also in URLs net/url reads
// differently (a bad escape in the query, a value it would decode).
func TestScrubberFindsURLSecretsLikeRedactURL(t *testing.T) {
	for _, tt := range []struct {
		url     string
		secrets []string // each must be masked when it appears alone
	}{
		{"https://h/mcp?key=abc%zzdef123xyz", []string{"abc%zzdef123xyz"}},
		{"https://h/mcp?key=tok%20en-5678&x=y;z=secret-semicolon", []string{"tok%20en-5678", "tok en-5678", "y;z=secret-semicolon"}},
		{"https://alice-user:p%41ss-word-99@h/mcp#frag-secret", []string{"alice-user", "p%41ss-word-99", "pAss-word-99", "frag-secret"}},
	} {
		s := newScrubber([]byte(`{"type":"http","url":"` + tt.url + `"}`))
		for _, secret := range tt.secrets {
			text := "the server said: rejected " + secret + " (try again)"
			if got := s.clean(text); strings.Contains(got, secret) || !strings.Contains(got, mcpconfig.Mask) {
				t.Errorf("%s: clean(%q) = %q", tt.url, text, got)
			}
		}
		if got := s.clean("connecting to " + tt.url); got != "connecting to "+mcpconfig.RedactURL(tt.url) {
			t.Errorf("%s: the URL is cleaned to %q", tt.url, got)
		}
	}
}
