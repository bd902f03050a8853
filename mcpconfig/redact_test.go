package mcpconfig

import (
	"slices"
	"strings"
	"testing"
)

func TestExpandMeasured(t *testing.T) {
	// Each case was run through the real CLI 2.1.329 (a stdio server that
	// printed its arguments) with FOO=foo-val, EMPTY="" and nothing else.
	env := map[string]string{"FOO": "foo-val", "EMPTY": ""}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	for _, tt := range []struct {
		in, want string
		missing  []string
	}{
		{"${EMPTY:-d1}", "", nil}, // defined but empty: no default
		{"${UNSET}", "${UNSET}", []string{"UNSET"}},
		{"${UNSET:-}", "", nil},
		{"${FOO}", "foo-val", nil},
		{"$FOO", "$FOO", nil},
		{"${FOO:-d2}", "foo-val", nil},
		{"${A:-${FOO}}", "${FOO}", nil},
		{"${UNSET:-a:-b}", "a:-b", nil},
		{"pre${FOO}post${FOO}", "prefoo-valpostfoo-val", nil},
		{"${ FOO }", "${ FOO }", []string{" FOO "}},
		{"${}", "${}", nil},
		{"$${FOO}", "$foo-val", nil},
		{`\${FOO}`, `\foo-val`, nil},
		{"${UNSET-dd}", "${UNSET-dd}", []string{"UNSET-dd"}},
		{"${FOO:=x}", "${FOO:=x}", []string{"FOO:=x"}},
		{"${UNSET}${UNSET}", "${UNSET}${UNSET}", []string{"UNSET"}},
	} {
		got, missing := Expand(tt.in, lookup)
		if got != tt.want || !slices.Equal(missing, tt.missing) {
			t.Errorf("Expand(%q) = %q %q, want %q %q", tt.in, got, missing, tt.want, tt.missing)
		}
	}
}

func TestRedaction(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"", ""},
		{"hunter2", "***"},
		{"${TOKEN}", "${TOKEN}"},
		{"Bearer ${TOKEN}", "***${TOKEN}"},
		{"${A}:${B}", "${A}***${B}"},
		{"${KEY:-fallback}", "${KEY:-***}"},
		{"${KEY:-}", "${KEY:-}"},
	} {
		if got := MaskValue(tt.in); got != tt.want {
			t.Errorf("MaskValue(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	for _, tt := range []struct{ in, want string }{
		{"https://mcp.example.com/mcp", "https://mcp.example.com/mcp"},
		{"https://user:pw@h:8443/p?a=1&token=xyz#frag", "https://***:***@h:8443/p?a=***&token=***#***"},
		{"https://tok@h/", "https://***@h/"},
		{"http://${USER}:${PASS}@h/?k=${KEY}", "http://${USER}:${PASS}@h/?k=${KEY}"},
		{"http://h/?flag", "http://h/?***"},
		{"not a url", "not a url"},
		{"ws://h/a@b", "ws://h/a@b"}, // an @ in the path is not user info
	} {
		if got := RedactURL(tt.in); got != tt.want {
			t.Errorf("RedactURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	for _, tt := range []struct {
		in   string
		want []string
	}{
		{"https://mcp.example.com/mcp", nil},
		{"https://user:pw@h:8443/p?a=1&token=xyz#frag", []string{"user", "pw", "1", "xyz", "frag"}},
		{"https://h/mcp?key=abc%zzdef&flag&empty=", []string{"abc%zzdef", "flag"}}, // as written, even where net/url gives up
		{"ws://h/a@b", nil},
		{"not a url?key=v", nil},
	} {
		got := URLSecrets(tt.in)
		if !slices.Equal(got, tt.want) {
			t.Errorf("URLSecrets(%q) = %q, want %q", tt.in, got, tt.want)
		}
		red := RedactURL(tt.in)
		for _, v := range got {
			if strings.Contains(red, v) {
				t.Errorf("RedactURL(%q) = %q shows the secret %q", tt.in, red, v)
			}
		}
	}
	in := []string{"-y", "--api-key", "sk-1", "--password=pw", "GITHUB_TOKEN=t", "--db", "postgres://u:p@h/db", "--url=http://u:p@h/", "--token=https://x", "--verbose", "plain", "--auth"}
	want := []string{"-y", "--api-key", "***", "--password=***", "GITHUB_TOKEN=***", "--db", "postgres://***:***@h/db", "--url=http://***:***@h/", "--token=***", "--verbose", "plain", "--auth"}
	if got := RedactArgs(in); !slices.Equal(got, want) {
		t.Errorf("RedactArgs:\n got %q\nwant %q", got, want)
	}
}
