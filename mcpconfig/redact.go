package mcpconfig

import (
	"encoding/json"
	"strings"

	"github.com/tidwall/gjson"
)

// Mask replaces secret text in redacted output.
const Mask = "***"

// MaskValue masks a secret value but keeps its ${VAR} references visible,
// so "Bearer ${TOKEN}" becomes "***${TOKEN}" and "${KEY:-fallback}" becomes
// "${KEY:-***}". Every run of literal text becomes Mask; "" stays "".
func MaskValue(s string) string {
	if s == "" {
		return ""
	}
	refs := references(s)
	var b strings.Builder
	last := 0
	lit := func(t string) {
		if t != "" {
			b.WriteString(Mask)
		}
	}
	for _, r := range refs {
		lit(s[last:r.start])
		if name, def, ok := strings.Cut(r.inner(s), ":-"); ok && def != "" {
			b.WriteString("${" + name + ":-" + Mask + "}")
		} else {
			b.WriteString(s[r.start:r.end])
		}
		last = r.end
	}
	lit(s[last:])
	return b.String()
}

// RedactURL masks the secrets of a URL (see URLSecrets): the user info,
// every query value and the fragment. ${VAR} references stay visible. Text
// that is not a URL with a scheme is returned unchanged.
func RedactURL(s string) string {
	spans := urlSecretSpans(s)
	if len(spans) == 0 {
		return s
	}
	var b strings.Builder
	last := 0
	for _, sp := range spans {
		b.WriteString(s[last:sp[0]])
		b.WriteString(MaskValue(s[sp[0]:sp[1]]))
		last = sp[1]
	}
	b.WriteString(s[last:])
	return b.String()
}

// URLSecrets lists the secret parts of a URL as written (not decoded), the
// parts RedactURL masks: the user name and password, every query value (a
// query part without "=" as a whole) and the fragment. Empty parts are left
// out; text that is not a URL with a scheme has none. The probe's scrubber
// masks these wherever they appear in a server's messages.
func URLSecrets(s string) []string {
	var out []string
	for _, sp := range urlSecretSpans(s) {
		if sp[0] < sp[1] {
			out = append(out, s[sp[0]:sp[1]])
		}
	}
	return out
}

// urlSecretSpans finds the secret parts of URL s, in order, as byte ranges
// [start, end) (some may be empty). The URL is split by hand rather than by
// net/url, which rejects or silently drops what is not well formed (a bad
// escape in the query, say) and decodes what it keeps: the secrets must be
// found as written, whatever the URL looks like.
func urlSecretSpans(s string) [][2]int {
	i := strings.Index(s, "://")
	if i <= 0 || strings.ContainsAny(s[:i], "/?#@ ") {
		return nil
	}
	var spans [][2]int
	auth := i + 3 // the authority is s[auth:rest]
	rest := len(s)
	if j := strings.IndexAny(s[auth:], "/?#"); j >= 0 {
		rest = auth + j
	}
	if at := strings.LastIndexByte(s[auth:rest], '@'); at >= 0 {
		userEnd := auth + at
		if c := strings.IndexByte(s[auth:userEnd], ':'); c >= 0 {
			spans = append(spans, [2]int{auth, auth + c}, [2]int{auth + c + 1, userEnd})
		} else {
			spans = append(spans, [2]int{auth, userEnd})
		}
	}
	frag := len(s)
	if j := strings.IndexByte(s[rest:], '#'); j >= 0 {
		frag = rest + j
	}
	if q := strings.IndexByte(s[rest:frag], '?'); q >= 0 {
		for start := rest + q + 1; ; {
			end := frag
			if j := strings.IndexByte(s[start:frag], '&'); j >= 0 {
				end = start + j
			}
			if eq := strings.IndexByte(s[start:end], '='); eq >= 0 {
				spans = append(spans, [2]int{start + eq + 1, end})
			} else {
				spans = append(spans, [2]int{start, end})
			}
			if end == frag {
				break
			}
			start = end + 1
		}
	}
	if frag < len(s) {
		spans = append(spans, [2]int{frag + 1, len(s)})
	}
	return spans
}

// secretWords mark flag and variable names whose values are masked.
var secretWords = []string{"token", "secret", "passw", "pwd", "key", "auth", "credential", "cookie", "session", "bearer"}

func looksSecret(name string) bool {
	n := strings.ToLower(name)
	for _, w := range secretWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// RedactArgs masks secret-looking command-line arguments: the value of
// --token=V style flags (and the argument after a bare --token flag), NAME=V
// pairs with a secret-looking NAME, and the secrets of URLs (see RedactURL).
func RedactArgs(args []string) []string {
	out := make([]string, len(args))
	maskNext := false
	for i, a := range args {
		switch {
		case maskNext:
			out[i] = MaskValue(a)
			maskNext = false
		case strings.Contains(a, "://"):
			if name, val, ok := strings.Cut(a, "="); ok && !strings.Contains(name, "://") {
				if looksSecret(name) {
					out[i] = name + "=" + MaskValue(val)
				} else {
					out[i] = name + "=" + RedactURL(val)
				}
			} else {
				out[i] = RedactURL(a)
			}
		default:
			out[i] = a
			if name, val, ok := strings.Cut(a, "="); ok {
				if looksSecret(name) {
					out[i] = name + "=" + MaskValue(val)
				}
			} else if strings.HasPrefix(a, "-") && looksSecret(a) {
				maskNext = true
			}
		}
	}
	return out
}

// redactDefinition builds the redacted view of a valid server definition:
// env and header values masked, URL and argument secrets masked, and every
// string inside unknown keys masked (they may hold OAuth secrets and the
// like). "type" and "command" are shown as written; keys keep their order.
func redactDefinition(fields object, size int) json.RawMessage {
	b := make([]byte, 0, size+16)
	b = append(b, '{')
	for i, f := range fields {
		k, val := f.key, f.val
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		switch {
		case k == "type" || k == "command":
			b = append(b, val.Raw...)
		case k == "url" && val.Type == gjson.String:
			b = appendString(b, RedactURL(val.Str))
		case k == "args" && val.IsArray():
			var args []string
			val.ForEach(func(_, el gjson.Result) bool { args = append(args, el.String()); return true })
			args = RedactArgs(args)
			n := 0
			b = appendStrings(b, val, func(string) string { n++; return args[n-1] })
		default: // env, headers and anything unknown
			b = appendMasked(b, val)
		}
	}
	return append(b, '}')
}

// appendMasked writes v with every string masked by MaskValue.
func appendMasked(b []byte, v gjson.Result) []byte {
	switch {
	case v.Type == gjson.String:
		return appendString(b, MaskValue(v.Str))
	case v.IsObject():
		b = append(b, '{')
		for i, m := range members(v) {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, m.key)
			b = append(b, ':')
			b = appendMasked(b, m.val)
		}
		return append(b, '}')
	case v.IsArray():
		b = append(b, '[')
		i := 0
		v.ForEach(func(_, el gjson.Result) bool {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendMasked(b, el)
			i++
			return true
		})
		return append(b, ']')
	}
	return append(b, v.Raw...)
}

// View is the redacted, JSON-ready view of a Config, for clients and logs
// (and `ccproxy mcp config --json`). It holds no secret.
type View struct {
	ProjectDir     string      `json:"projectDir"`
	HomeDir        string      `json:"homeDir"`
	Trusted        bool        `json:"trusted"`
	ManagedPresent bool        `json:"managed"`
	Servers        []Server    `json:"servers"`
	Errors         []FileError `json:"errors"`
	AllowedTools   []string    `json:"allowedTools"`
	// CLI lists what `claude -p` would load from the same files (before
	// ccproxy's approval filter).
	CLI []CLIServer `json:"cli"`
}

// Redacted returns the view of c that is safe to show: Server values carry
// no Raw or Expanded, only Redacted (marshalled as "config"). Slices are
// never nil, so the JSON holds [] rather than null.
func (c *Config) Redacted() View {
	v := View{
		ProjectDir:     c.ProjectDir,
		HomeDir:        c.HomeDir,
		Trusted:        c.Trusted,
		ManagedPresent: c.ManagedPresent,
		Servers:        make([]Server, 0, len(c.Servers)),
		Errors:         append([]FileError{}, c.Errors...),
		AllowedTools:   c.AllowedTools(),
		CLI:            append([]CLIServer{}, c.cli...),
	}
	for _, s := range c.Servers {
		s.Raw, s.Expanded = nil, nil
		s.Shadows = append([]Origin{}, s.Shadows...)
		s.MissingEnv = append([]string{}, s.MissingEnv...)
		v.Servers = append(v.Servers, s) // c.Servers is sorted by name
	}
	return v
}
