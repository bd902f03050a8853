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
