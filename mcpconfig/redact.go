package mcpconfig

import (
	"encoding/json"
	"net/url"
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
// that is not a URL with a scheme is returned unchanged. It is
// (*Secrets)(nil).RedactURL: Secrets.RedactURL also masks path segments
// that are known secrets.
func RedactURL(s string) string { return (*Secrets)(nil).RedactURL(s) }

// RedactURL masks the secrets of URL s: those of the package-level
// RedactURL, and every path segment that is one of the values of sec (as
// written or decoded), e.g. a token put in the path.
func (sec *Secrets) RedactURL(s string) string {
	return maskSpans(s, urlSecretSpans(s, sec.has))
}

// maskSpans masks the byte ranges spans of s (in order, not overlapping)
// with MaskValue.
func maskSpans(s string, spans [][2]int) string {
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
// out; text that is not a URL with a scheme has none. The scrubber
// (Secrets.Scrub) masks these wherever they appear in a server's messages.
func URLSecrets(s string) []string {
	var out []string
	for _, sp := range urlSecretSpans(s, nil) {
		if sp[0] < sp[1] {
			out = append(out, s[sp[0]:sp[1]])
		}
	}
	return out
}

// urlSecretSpans finds the secret parts of URL s, in order, as byte ranges
// [start, end) (some may be empty): user info, the path segments for which
// secretSegment (may be nil) is true, query values and the fragment. The
// URL is split by hand rather than by net/url, which rejects or silently
// drops what is not well formed (a bad escape in the query, say) and
// decodes what it keeps: the secrets must be found as written, whatever the
// URL looks like.
func urlSecretSpans(s string, secretSegment func(string) bool) [][2]int {
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
	pathEnd := frag
	if q := strings.IndexByte(s[rest:frag], '?'); q >= 0 {
		pathEnd = rest + q
	}
	if secretSegment != nil {
		for start := rest; start < pathEnd; {
			if s[start] == '/' {
				start++
				continue
			}
			end := pathEnd
			if j := strings.IndexByte(s[start:pathEnd], '/'); j >= 0 {
				end = start + j
			}
			seg := s[start:end]
			dec, err := url.PathUnescape(seg)
			if secretSegment(seg) || (err == nil && dec != seg && secretSegment(dec)) {
				spans = append(spans, [2]int{start, end})
			}
			start = end
		}
	}
	if pathEnd < frag {
		for start := pathEnd + 1; ; {
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

// SecretName reports whether a flag, variable or header name looks like
// it holds a secret (its value is masked in every view).
func SecretName(name string) bool { return looksSecret(name) }

func looksSecret(name string) bool {
	n := strings.ToLower(name)
	for _, w := range secretWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// isHeaderFlag reports whether flag (with its dashes) passes HTTP headers,
// as mcp-remote's --header, curl's -H and the like do: -H, --header,
// --headers, and any --X-header / --X-headers.
func isHeaderFlag(flag string) bool {
	if flag == "-H" {
		return true
	}
	if !strings.HasPrefix(flag, "--") {
		return false
	}
	n := strings.ToLower(flag[2:])
	return n == "header" || n == "headers" || strings.HasSuffix(n, "-header") || strings.HasSuffix(n, "-headers") ||
		strings.HasSuffix(n, "_header") || strings.HasSuffix(n, "_headers")
}

// headerValue splits a header-shaped text "Name: value" (also "Name:value",
// the form mcp-remote documents) and returns where the value starts; ok is
// false when s is not shaped like a header: a name of letters, digits, '-'
// and '_', not starting with '-', then ':'.
func headerValue(s string) (name string, valueStart int, ok bool) {
	c := strings.IndexByte(s, ':')
	if c <= 0 || s[0] == '-' || strings.HasPrefix(s[c:], "://") {
		return "", 0, false
	}
	for i := 0; i < c; i++ {
		b := s[i]
		if !(b == '-' || b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z') {
			return "", 0, false
		}
	}
	v := c + 1
	for v < len(s) && s[v] == ' ' {
		v++
	}
	return s[:c], v, true
}

// RedactArgs masks secret-looking command-line arguments (see
// Secrets.RedactArgs); it is (*Secrets)(nil).RedactArgs.
func RedactArgs(args []string) []string { return (*Secrets)(nil).RedactArgs(args) }

// RedactArgs masks secret-looking command-line arguments: the value of
// --token=V style flags (and the argument after a bare --token flag), NAME=V
// pairs with a secret-looking NAME, header values (after -H, --header,
// --headers, in --header=V, and in an argument shaped "Authorization: V" or
// "X-Api-Key: V" whose name looks secret; the header name stays visible),
// the secrets of URLs (see Secrets.RedactURL), and every argument or NAME=V
// value that is one of the values of sec.
//
// Arguments split at spaces, as `claude mcp list` prints them, are handled
// too: after a header name with nothing behind it ("Authorization:"), the
// arguments up to the next one starting with "-" are masked.
func (sec *Secrets) RedactArgs(args []string) []string {
	spans := argSecretSpans(args, sec)
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = maskSpans(a, spans[i])
	}
	return out
}

// ArgSecrets lists the secret parts of args as written: what RedactArgs
// masks (without known secret values).
func ArgSecrets(args []string) []string {
	var out []string
	for i, sps := range argSecretSpans(args, nil) {
		for _, sp := range sps {
			if sp[0] < sp[1] {
				out = append(out, args[i][sp[0]:sp[1]])
			}
		}
	}
	return out
}

// argSecretSpans finds the secret parts of each argument, as byte ranges
// (see RedactArgs). It is the one reading of arguments behind RedactArgs
// and ArgSecrets, so what is shown and what is scrubbed cannot disagree.
func argSecretSpans(args []string, sec *Secrets) [][][2]int {
	const (
		plain      = iota
		maskNext   // the argument after a secret-looking flag
		headerNext // the argument after a header flag
		maskRun    // arguments after "Authorization:", up to the next flag
	)
	out := make([][][2]int, len(args))
	whole := func(a string) [][2]int { return [][2]int{{0, len(a)}} }
	state := plain
	// header masks the value of header text h (at offset off of its
	// argument), or all of it when it is not shaped like a header, and
	// starts a run when the value is empty.
	header := func(h string, off int) [][2]int {
		if _, v, ok := headerValue(h); ok {
			if v == len(h) {
				state = maskRun
				return nil
			}
			return [][2]int{{off + v, off + len(h)}}
		}
		return [][2]int{{off, off + len(h)}}
	}
	for i, a := range args {
		if state == maskRun {
			if !strings.HasPrefix(a, "-") {
				out[i] = whole(a)
				continue
			}
			state = plain
		}
		switch st := state; {
		case st == maskNext:
			state = plain
			out[i] = whole(a)
			continue
		case st == headerNext:
			state = plain
			out[i] = header(a, 0)
			continue
		}
		if n, _, ok := headerValue(a); ok && looksSecret(n) {
			out[i] = header(a, 0)
			continue
		}
		name, val, hasEq := strings.Cut(a, "=")
		off := len(name) + 1
		switch {
		case hasEq && strings.HasPrefix(name, "-") && isHeaderFlag(name):
			out[i] = header(val, off)
		case hasEq && !strings.Contains(name, "://") && (looksSecret(name) || sec.has(val)):
			out[i] = [][2]int{{off, len(a)}}
		case hasEq && !strings.Contains(name, "://") && strings.Contains(val, "://"):
			for _, sp := range urlSecretSpans(val, sec.has) {
				out[i] = append(out[i], [2]int{off + sp[0], off + sp[1]})
			}
		case strings.Contains(a, "://"):
			out[i] = urlSecretSpans(a, sec.has)
		case sec.has(a):
			out[i] = whole(a)
		case strings.HasPrefix(a, "-") && !hasEq:
			if isHeaderFlag(a) {
				state = headerNext
			} else if looksSecret(a) {
				state = maskNext
			}
		}
	}
	return out
}

// redactDefinition builds the redacted view of a valid server definition:
// env and header values masked, URL and argument secrets masked (by
// position, and wherever a URL path segment or an argument is one of the
// values of sec), and every string inside unknown keys masked (they may
// hold OAuth secrets and the like). "type" and "command" are shown as
// written; keys keep their order.
func redactDefinition(fields object, size int, sec *Secrets) json.RawMessage {
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
			b = appendString(b, sec.RedactURL(val.Str))
		case k == "args" && val.IsArray():
			var args []string
			val.ForEach(func(_, el gjson.Result) bool { args = append(args, el.String()); return true })
			args = sec.RedactArgs(args)
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
