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
	if !strings.Contains(s, "${") {
		return s, nil
	}
	var b strings.Builder
	b.Grow(len(s))
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			break
		}
		j := strings.IndexByte(s[i+2:], '}')
		if j < 0 {
			b.WriteString(s)
			break
		}
		if j == 0 { // "${}" is not a reference; look again from the next byte
			b.WriteString(s[:i+1])
			s = s[i+1:]
			continue
		}
		b.WriteString(s[:i])
		inner := s[i+2 : i+2+j]
		name, def, hasDef := strings.Cut(inner, ":-")
		if v, ok := lookup(name); ok {
			b.WriteString(v)
		} else if hasDef {
			b.WriteString(def)
		} else {
			b.WriteString(s[i : i+3+j])
			missing = appendUnique(missing, name)
		}
		s = s[i+3+j:]
	}
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

// references finds the ${...} references of s with Expand's rules.
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
