package mcpconfig

import "strings"

// LookupFunc looks up an environment variable, like os.LookupEnv.
type LookupFunc func(name string) (value string, ok bool)

// Expand expands ${VAR} and ${VAR:-default} in s the way Claude Code does
// (measured on 2.1.329):
//
//   - A reference is "${", at least one character other than "}", and "}".
//     The text inside is split at the first ":-" into name and default; the
//     name is used as written (no trimming, no validation).
//   - A defined variable expands to its value, even when empty; the default
//     is used only when the variable is undefined.
//   - An undefined variable without a default stays literal, and its name is
//     returned in missing (once per name, in order of appearance).
//   - Bare $VAR is never expanded; there is no escape ("\${X}" expands X).
//   - Expansion is single-pass: expanded text is not expanded again.
func Expand(s string, lookup LookupFunc) (out string, missing []string) {
	refs := references(s)
	if len(refs) == 0 {
		return s, nil
	}
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	for _, r := range refs {
		b.WriteString(s[last:r.start])
		name, def, hasDef := strings.Cut(r.inner(s), ":-")
		if v, ok := lookup(name); ok {
			b.WriteString(v)
		} else if hasDef {
			b.WriteString(def)
		} else {
			b.WriteString(s[r.start:r.end])
			missing = appendUnique(missing, name)
		}
		last = r.end
	}
	b.WriteString(s[last:])
	return b.String(), missing
}

func appendUnique(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// refSpan is one ${...} reference in a string: s[start:end].
type refSpan struct{ start, end int }

// inner is the text between "${" and "}".
func (r refSpan) inner(s string) string { return s[r.start+2 : r.end-1] }

// references finds the ${...} references of s, in order: "${", at least
// one character other than "}", and the first "}" after them. Expand and
// MaskValue both read references with it, so they cannot disagree.
func references(s string) []refSpan {
	var spans []refSpan
	off := 0
	for {
		i := strings.Index(s[off:], "${")
		if i < 0 {
			return spans
		}
		i += off
		j := strings.IndexByte(s[i+2:], '}')
		if j < 0 {
			return spans
		}
		if j == 0 {
			off = i + 1
			continue
		}
		spans = append(spans, refSpan{i, i + 3 + j})
		off = i + 3 + j
	}
}
