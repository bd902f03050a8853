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

// appendRawBody appends body, the inside of a valid JSON string token of a
// line in valid UTF-8, when it is exactly what appendEscapedString would
// write for its text: its escapes are all among \" \\ \b \f \n \r \t, and
// it holds no '<', '>', '&', U+2028 or U+2029. Otherwise it returns dst
// unchanged and false.
func appendRawBody(dst []byte, body string) ([]byte, bool) {
	for i := 0; i < len(body); {
		for i+8 <= len(body) && safeWord(binary.LittleEndian.Uint64(sbytes(body[i:i+8]))) {
			i += 8
		}
		if i >= len(body) {
			break
		}
		switch c := body[i]; {
		case c == '\\':
			if i+1 >= len(body) {
				return dst, false
			}
			switch body[i+1] {
			case '"', '\\', 'b', 'f', 'n', 'r', 't':
				i += 2
				continue
			}
			return dst, false
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRuneInString(body[i:])
			if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
				return dst, false
			}
			i += size
		case safeASCII[c]:
			i++
		default:
			return dst, false
		}
	}
	return append(dst, body...), true
}

// appendTextToken appends the body of the string token opening at b[q]
// when it is exactly what appendEscapedString would write for its text (as
// appendRawBody decides), and returns the offset just past the token; it
// finds the closing quote and checks the body in one pass. Otherwise (or
// if the token does not end) it returns dst unchanged and false.
func appendTextToken(dst []byte, b string, q int) ([]byte, int, bool) {
	start := q + 1
	for i := start; i < len(b); {
		for i+8 <= len(b) && safeWord(binary.LittleEndian.Uint64(sbytes(b[i:i+8]))) {
			i += 8
		}
		if i >= len(b) {
			break
		}
		switch c := b[i]; {
		case c == '"':
			return append(dst, b[start:i]...), i + 1, true
		case c == '\\':
			if i+1 >= len(b) {
				return dst, 0, false
			}
			switch b[i+1] {
			case '"', '\\', 'b', 'f', 'n', 'r', 't':
				i += 2
				continue
			}
			return dst, 0, false
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRuneInString(b[i:])
			if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
				return dst, 0, false
			}
			i += size
		case safeASCII[c]:
			i++
		default:
			return dst, 0, false
		}
	}
	return dst, 0, false
}
