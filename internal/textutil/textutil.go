// Package textutil holds small text helpers shared by ccproxy's packages.
package textutil

// Truncate returns s if it is at most n bytes long; otherwise its first n
// bytes or fewer, cut at the start of a UTF-8 sequence so that no rune is
// split, followed by "…". Bytes that are not valid UTF-8 are kept as they
// are (a cut never makes valid text invalid).
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if n < 0 {
		n = 0
	}
	for n > 0 && s[n]&0xC0 == 0x80 { // a continuation byte: back off to its rune's start
		n--
	}
	return s[:n] + "…"
}
