package remote

import (
	"strings"
	"testing"
)

// TestParseOrigin: origins are normalized; one that no browser can send (a
// port out of range, an empty port, a path, even a lone "/", a user) is
// refused saying why.
func TestParseOrigin(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{"https://App.Example:8443", "https://app.example:8443", ""},
		{"http://x.example", "http://x.example", ""},
		{"http://[::1]:3000", "http://[::1]:3000", ""},
		{"http://[::1]", "http://[::1]", ""},
		{"null", "null", ""},
		{"http://x.example:99999", "", `port "99999" is not a port number (1 to 65535)`},
		{"http://x.example:0", "", `port "0" is not a port number`},
		{"http://x.example:", "", `port "" is not a port number`},
		{"http://[::1]:65536", "", `port "65536" is not a port number`},
		{"http://x.example/app", "", "want scheme://host[:port]"},
		// Exactly scheme://host[:port] (SPEC §1.3): nothing is trimmed.
		{"http://127.0.0.1:8080/", "", `not even a trailing "/"`},
		{"http://x.example/", "", `not even a trailing "/"`},
		{"http://x.example?", "", "want scheme://host[:port]"},
		{"http://x.example#", "", "want scheme://host[:port]"},
		{"http://x.example?a=b", "", "want scheme://host[:port]"},
		{"http://user@x.example", "", "no user"},
		{"http://user:pw@x.example:8080", "", "no user"},
		{"x.example", "", "want scheme://host[:port]"},
		{"http:x.example", "", "want scheme://host[:port]"},
		// Scheme and host are case-insensitive; the default port is the
		// origin without one; a port is a number.
		{"HTTP://X.Example:8080", "http://x.example:8080", ""},
		{"http://x.example:80", "http://x.example", ""},
		{"https://x.example:443", "https://x.example", ""},
		{"https://x.example:80", "https://x.example:80", ""},
		{"http://x.example:443", "http://x.example:443", ""},
		{"https://[::1]:443", "https://[::1]", ""},
		{"http://x.example:08080", "http://x.example:8080", ""},
		{"vscode-webview://1abc", "vscode-webview://1abc", ""},
	} {
		got, err := ParseOrigin(tc.in)
		if tc.err == "" && (err != nil || got != tc.want) {
			t.Errorf("ParseOrigin(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
		if tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("ParseOrigin(%q) = %q, %v; want an error with %q", tc.in, got, err, tc.err)
		}
	}
}

// TestPolicyDefaultPort: an own origin on the scheme's default port
// matches without the port, as browsers send it, and only that scheme;
// the base URL keeps the port (moved from proxy.TestOriginExactMatch).
func TestPolicyDefaultPort(t *testing.T) {
	p := NewPolicy(nil)
	p.SetServed(443, []string{"box.example"}, true)
	for origin, want := range map[string]bool{
		"https://box.example":      true,
		"https://BOX.example:443":  true,
		"https://box.example/":     false,
		"https://box.example:8443": false,
		"http://box.example":       false,
	} {
		if got := p.Allowed(origin); got != want {
			t.Errorf("served on https port 443: Origin %q allowed %v, want %v", origin, got, want)
		}
	}
	if p.BaseURL() != "https://box.example:443" {
		t.Errorf("base URL %q", p.BaseURL())
	}
}
