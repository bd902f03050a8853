package stream

import (
	"encoding/binary"
	"slices"
	"unicode/utf8"
)

// appendJSONString appends s as a JSON string, byte for byte as
// gjson.AppendJSONString does: control characters, '"' and '\' are
// escaped, so are '<', '>' and '&' (\u003c…), U+2028 and U+2029; invalid
// UTF-8 becomes U+FFFD. Runs of bytes that need no escaping (base64, most
// text) are found eight bytes at a time and copied in bulk; gjson appends
// them one byte at a time. FuzzAppendJSONString compares the two.
func appendJSONString(dst []byte, s string) []byte {
	dst = slices.Grow(dst, len(s)+2)
	dst = append(dst, '"')
	dst = appendEscapedString(dst, s)
	return append(dst, '"')
}

// appendEscapedString appends the inside of JSON string s: appendJSONString
// without the quotes.
func appendEscapedString(dst []byte, s string) []byte {
	start, i := 0, 0
	for i < len(s) {
		for i+8 <= len(s) && safeWord(binary.LittleEndian.Uint64(sbytes(s[i:i+8]))) {
			i += 8
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if safeASCII[c] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			dst = appendEscaped(dst, c)
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, "\uFFFD"...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\u202`...)
			dst = append(dst, hexDigits[r&0xF])
		default:
			i += size // part of the run
			continue
		}
		i += size
		start = i
	}
	return append(dst, s[start:]...)
}

const hexDigits = "0123456789abcdef"

// safeASCII[c] says whether ASCII byte c goes into a JSON string as is.
var safeASCII = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// safeWord reports whether none of the eight bytes of x needs escaping or
// is non-ASCII.
func safeWord(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	hasZero := func(y uint64) uint64 { return (y - ones) &^ y & highs }
	bad := x & highs                    // non-ASCII
	bad |= (x - 0x20*ones) &^ x & highs // control characters
	bad |= hasZero(x ^ '"'*ones)
	bad |= hasZero(x ^ '\\'*ones)
	bad |= hasZero(x ^ '<'*ones)
	bad |= hasZero(x ^ '>'*ones)
	bad |= hasZero(x ^ '&'*ones)
	return bad == 0
}

// appendEscaped appends the escape sequence of ASCII byte c.
func appendEscaped(dst []byte, c byte) []byte {
	switch c {
	case '"', '\\':
		return append(dst, '\\', c)
	case '\b':
		return append(dst, '\\', 'b')
	case '\f':
		return append(dst, '\\', 'f')
	case '\n':
		return append(dst, '\\', 'n')
	case '\r':
		return append(dst, '\\', 'r')
	case '\t':
		return append(dst, '\\', 't')
	}
	return append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
}

// appendTextToken appends what appendEscapedString writes for the text of
// the (valid) JSON string token opening at b[q], read straight from the
// token in one pass — without unescaping it into a string first — and
// returns the offset just past the token. Runs that need no change are
// copied in bulk; escapes appendEscapedString writes the same way are kept;
// the others are rewritten as it writes their characters ('<' becomes
// \u003c, \/ becomes /, \u00e9 becomes é). It gives up (dst unchanged, ok
// false) on what it does not read the way gjson does — escaped surrogates,
// invalid UTF-8 — and on a token that does not end; the caller then
// unescapes with gjson. FuzzAppendTextToken compares it with gjson.
func appendTextToken(dst []byte, b string, q int) (out []byte, end int, ok bool) {
	mark := len(dst)
	start := q + 1 // the run not copied yet
	for i := start; i < len(b); {
		for i+8 <= len(b) && safeWord(binary.LittleEndian.Uint64(sbytes(b[i:i+8]))) {
			i += 8
		}
		if i >= len(b) {
			break
		}
		c := b[i]
		switch {
		case c == '"':
			return append(dst, b[start:i]...), i + 1, true
		case c == '\\':
			if i+1 >= len(b) {
				return dst[:mark], 0, false
			}
			switch b[i+1] {
			case '"', '\\', 'b', 'f', 'n', 'r', 't':
				i += 2 // written the same way: part of the run
				continue
			case '/':
				dst = append(append(dst, b[start:i]...), '/')
			case 'u':
				r, ok := hex4(b[i+2:])
				if !ok || r >= 0xD800 && r < 0xE000 {
					return dst[:mark], 0, false
				}
				dst = appendEscapedRune(append(dst, b[start:i]...), r)
				i += 4
			default:
				return dst[:mark], 0, false
			}
			i += 2
			start = i
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRuneInString(b[i:])
			if r == utf8.RuneError && size == 1 {
				return dst[:mark], 0, false
			}
			if r == '\u2028' || r == '\u2029' {
				dst = appendEscapedRune(append(dst, b[start:i]...), r)
				start = i + size
			}
			i += size
		case safeASCII[c]:
			i++
		case c < ' ':
			return dst[:mark], 0, false // not valid JSON
		default: // '<', '>', '&'
			dst = appendEscaped(append(dst, b[start:i]...), c)
			i++
			start = i
		}
	}
	return dst[:mark], 0, false
}

// appendEscapedRune appends rune r as appendEscapedString writes it.
func appendEscapedRune(dst []byte, r rune) []byte {
	switch {
	case r < utf8.RuneSelf && safeASCII[r]:
		return append(dst, byte(r))
	case r < utf8.RuneSelf:
		return appendEscaped(dst, byte(r))
	case r == '\u2028' || r == '\u2029':
		return append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
	}
	return utf8.AppendRune(dst, r)
}

// hex4 reads the four hex digits at the start of s.
func hex4(s string) (rune, bool) {
	if len(s) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range []byte(s[:4]) {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
