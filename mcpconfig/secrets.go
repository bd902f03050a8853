package mcpconfig

import (
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/tidwall/gjson"
)

// MinSecretLen is the length in bytes of the shortest value a Secrets set
// holds. Shorter values ("true", "prod", "8080", "1") are settings rather
// than secrets worth the name, and masking them wherever they appear would
// turn ordinary text into asterisks; they are still masked where they stand
// as an env or header value, after a secret-looking flag, and so on (the
// views mask by position, not by value).
//
// Eight bytes also let Scrub find every value by its first eight bytes
// (see matcher).
const MinSecretLen = 8

// WordSecretLen: Scrub masks a value shorter than this only where it stands
// alone (not inside a longer word of letters, digits and '_'), so that a
// value such as "staging" does not mangle "staging-area" into "***-area"
// less than it must, nor "prestaging" at all; longer values are masked
// wherever they appear.
const WordSecretLen = 12

// Secrets is a set of secret values: the configured values of MCP server
// definitions (see Server.Secrets) and the values of secret-looking
// environment variables (see EnvSecrets). It is the one mechanism that
// keeps them out of what clients, the call log and the log see: the
// redacted views mask URL path segments and arguments equal to one of its
// values (Secrets.RedactURL, Secrets.RedactArgs), and Scrub masks them in
// free text such as a server's stderr or error messages.
//
// A Secrets is immutable once built and safe for concurrent use; the nil
// *Secrets is the empty set.
type Secrets struct {
	values []string    // distinct, each at least MinSecretLen bytes, longest first
	urls   [][2]string // a configured URL and its redacted form, replaced whole by Scrub

	once sync.Once
	m    *matcher // Scrub's automaton, built at its first call
}

// matcher returns the set's matcher, built once.
func (sec *Secrets) matcher() *matcher {
	sec.once.Do(func() { sec.m = newMatcher(sec.values, sec.urls) })
	return sec.m
}

// NewSecrets returns the set of values (those shorter than MinSecretLen are
// left out).
func NewSecrets(values ...string) *Secrets {
	var b secretsBuilder
	for _, v := range values {
		b.add(v)
	}
	return b.done()
}

// MergeSecrets returns the union of sets (nil sets are skipped).
func MergeSecrets(sets ...*Secrets) *Secrets {
	var b secretsBuilder
	for _, s := range sets {
		if s == nil {
			continue
		}
		for _, v := range s.values {
			b.add(v)
		}
		for _, u := range s.urls {
			b.addURL(u[0])
		}
	}
	return b.done()
}

// secretEnvWords mark the names of environment variables whose values
// EnvSecrets collects (case-insensitive substrings).
var secretEnvWords = []string{"key", "token", "secret", "passw", "credential", "auth"}

// SecretEnvName reports whether an environment variable name looks secret:
// it contains KEY, TOKEN, SECRET, PASSWORD (PASSW), CREDENTIAL or AUTH, in
// any case (ANTHROPIC_API_KEY, GITHUB_TOKEN, CLAUDE_CODE_OAUTH_TOKEN).
func SecretEnvName(name string) bool {
	n := strings.ToLower(name)
	for _, w := range secretEnvWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// EnvSecrets returns the values of the variables of environ ("NAME=value"
// entries, as os.Environ gives them) whose names look secret (see
// SecretEnvName).
func EnvSecrets(environ []string) *Secrets {
	var b secretsBuilder
	for _, kv := range environ {
		if name, val, ok := strings.Cut(kv, "="); ok && SecretEnvName(name) {
			b.add(val)
		}
	}
	return b.done()
}

// ProcessSecrets returns the secret-named environment values (see
// EnvSecrets) of ccproxy itself (os.Environ now: call it once, at start,
// and keep the set) and of each environ given: the environment claude or a server is
// started with, which may hold values ccproxy's own does not (a session's
// or an option's). With the configured values of an MCP configuration
// (Config.Secrets, merged with MergeSecrets) they are the set every text a
// tool or server wrote is scrubbed of before it leaves ccproxy.
func ProcessSecrets(environs ...[]string) *Secrets {
	sets := []*Secrets{EnvSecrets(os.Environ())}
	for _, env := range environs {
		sets = append(sets, EnvSecrets(env))
	}
	return MergeSecrets(sets...)
}

// Values returns the values of the set, longest first.
func (sec *Secrets) Values() []string {
	if sec == nil {
		return nil
	}
	return slices.Clone(sec.values)
}

// has reports whether v is one of the values.
func (sec *Secrets) has(v string) bool {
	if sec == nil || len(v) < MinSecretLen {
		return false
	}
	return slices.Contains(sec.values, v)
}

// Scrub masks every value of the set in text (see WordSecretLen), and
// replaces each configured URL by its redacted form. Use it on all text
// that comes from a server or a process ccproxy started (stderr tails,
// error messages, tool results) before a client, the call log or the log
// sees it.
//
// It reads text once, whatever the number of values (see matcher): at
// each position the longest value or URL that starts there is taken;
// values that overlap (one starting inside another's match) are masked
// as one run, so no part of either is left in clear. When nothing
// matches, text itself is returned.
func (sec *Secrets) Scrub(text string) string {
	if sec == nil {
		return text
	}
	return sec.matcher().scrub(text)
}

// ScrubCut is Scrub for text cut out of a longer one (the tail of a
// stream, say): with cutStart, a value cut at the start of text (text
// begins with the end of a value) is masked too, and with cutEnd a value
// cut at its end (text ends with the beginning of a value), when at least
// minCutLen bytes of it remain (fewer tell little, and matching them
// would mask ordinary text).
func (sec *Secrets) ScrubCut(text string, cutStart, cutEnd bool) string {
	text = sec.Scrub(text)
	if sec == nil {
		return text
	}
	for _, v := range sec.values {
		for k := len(v) - 1; cutStart && k >= minCutLen; k-- {
			if strings.HasPrefix(text, v[len(v)-k:]) {
				text = Mask + text[k:]
				break
			}
		}
		for k := len(v) - 1; cutEnd && k >= minCutLen; k-- {
			if strings.HasSuffix(text, v[:k]) {
				text = text[:len(text)-k] + Mask
				break
			}
		}
	}
	return text
}

// minCutLen is the shortest part of a cut value ScrubCut masks.
const minCutLen = 4

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// secretsBuilder collects values for a Secrets.
type secretsBuilder struct {
	values []string
	urls   []string // redacted in done, once every value is known
}

// add adds v, and for "Bearer abc"-like values their last word too (a
// server may echo the token alone).
func (b *secretsBuilder) add(v string) {
	if len(v) < MinSecretLen || onlyReferences(v) { // "${TOKEN}" names a secret, it is none
		return
	}
	if !slices.Contains(b.values, v) {
		b.values = append(b.values, v)
	}
	if i := strings.LastIndexByte(v, ' '); i >= 0 {
		b.add(v[i+1:])
	}
}

// addURL adds a configured URL, which Scrub replaces by its redacted form.
// onlyReferences reports whether v is made of ${VAR} references alone
// (MaskValue leaves it as it is).
func onlyReferences(v string) bool {
	if !strings.Contains(v, "${") {
		return false
	}
	at := 0
	for _, r := range references(v) {
		if r.start != at {
			return false
		}
		at = r.end
	}
	return at == len(v)
}

func (b *secretsBuilder) addURL(raw string) {
	if !slices.Contains(b.urls, raw) {
		b.urls = append(b.urls, raw)
	}
}

// addURLParts adds the secret parts of URL raw, as written and decoded.
func (b *secretsBuilder) addURLParts(raw string) {
	for _, v := range URLSecrets(raw) {
		b.add(v)
		// A server may echo a value decoded ("a b" for "a%20b").
		if dec, err := url.QueryUnescape(v); err == nil && dec != v {
			b.add(dec)
		}
	}
}

func (b *secretsBuilder) addArgParts(args []string) {
	for _, v := range ArgSecrets(args) {
		b.add(v)
	}
}

func (b *secretsBuilder) done() *Secrets {
	// Longest first, so that a value inside a longer one does not break it
	// up before it is masked whole.
	slices.SortStableFunc(b.values, func(x, y string) int { return len(y) - len(x) })
	sec := &Secrets{values: b.values}
	for _, u := range b.urls {
		// The URL's redacted form also masks its path segments that are
		// secrets.
		if red := sec.RedactURL(u); red != u {
			sec.urls = append(sec.urls, [2]string{u, red})
		}
	}
	if len(sec.values) == 0 && len(sec.urls) == 0 {
		return nil
	}
	return sec
}

// definitionSecrets collects the configured secrets of a valid server
// definition (its fields as written): env and header values, the secret
// parts of its URL and arguments, every string of unknown keys, the value
// of every ${VAR} it uses (and the default of ${VAR:-default}), each as
// written and as expanded with lookup. "type" and "command" are not
// secrets.
func definitionSecrets(fields object, lookup LookupFunc) *Secrets {
	var b secretsBuilder
	refs := func(s string) {
		for _, r := range references(s) {
			name, def, hasDef := strings.Cut(r.inner(s), ":-")
			if lookup != nil {
				if v, ok := lookup(name); ok {
					b.add(v)
					continue
				}
			}
			if hasDef {
				b.add(def)
			}
		}
	}
	exp := func(s string) string {
		if lookup == nil {
			return s
		}
		out, _ := Expand(s, lookup)
		return out
	}
	var walk func(v gjson.Result)
	walk = func(v gjson.Result) { // every string inside v is a secret
		switch {
		case v.Type == gjson.String:
			b.add(v.Str)
			if strings.Contains(v.Str, "${") {
				refs(v.Str)
				b.add(exp(v.Str))
			}
		case v.IsObject(), v.IsArray():
			v.ForEach(func(_, el gjson.Result) bool { walk(el); return true })
		}
	}
	for _, f := range fields {
		switch k, val := f.key, f.val; {
		case k == "type":
		case k == "command" && val.Type == gjson.String:
			refs(val.Str)
		case k == "url" && val.Type == gjson.String:
			refs(val.Str)
			b.addURLParts(val.Str)
			b.addURL(val.Str)
			if e := exp(val.Str); e != val.Str {
				b.addURLParts(e)
				b.addURL(e)
			}
		case k == "args" && val.IsArray():
			var raw, expanded []string
			hasRefs := false
			val.ForEach(func(_, el gjson.Result) bool {
				a := el.String()
				raw = append(raw, a)
				if strings.Contains(a, "${") {
					refs(a)
					hasRefs = true
				}
				return true
			})
			b.addArgParts(raw)
			if hasRefs {
				for _, a := range raw {
					expanded = append(expanded, exp(a))
				}
				b.addArgParts(expanded)
			}
		default: // env, headers and anything unknown
			walk(val)
		}
	}
	return b.done()
}
