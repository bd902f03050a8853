package stream

import (
	"encoding/binary"
	"math/bits"
	"unicode/utf8"
)

// validator checks JSON text exactly as gjson.Valid does (same grammar,
// same answer on every input: FuzzValid compares them), and records on the
// way what the walker would otherwise find with a second pass: the members
// of the top-level object (n.top) and the large containers (n.conts). Its
// strings are checked eight bytes at a time.
type validator struct {
	n       *Normalizer
	b       string
	badUTF8 bool   // a string holds bytes that are not UTF-8
	esc     bool   // the last string checked holds a backslash escape
	cr      bool   // a raw '\r' was skipped as whitespace
	typ     [2]int // what object(…, rec) found, as topMember.typ
}

// topMember is a member of a line's top-level object: its key token and
// its value, as offsets in the view; and when the value is an object, typ:
// its first "type" member's value (the member gjson and n.get find), or
// noType when it has none, or unknownType when a key before it was
// written with escapes (then only unescaping tells).
type topMember struct{ key, val, typ [2]int }

var (
	noType      = [2]int{}
	unknownType = [2]int{-1, -1}
)

// topMax bounds the top-level members recorded; a line with more is walked.
const topMax = 32

// valid reports whether view is valid JSON, filling n.top (nil when the
// top-level value is not an object or has more than topMax members) and
// n.conts.
func (n *Normalizer) valid(view string) bool {
	v := validator{n: n, b: view}
	n.view = view
	n.conts = n.conts[:0]
	n.top = n.top[:0]
	n.topOK = true
	n.badUTF8, n.sawCR = false, false
	i := v.space(0)
	if i == len(view) {
		return false
	}
	var ok bool
	if view[i] == '{' {
		i, ok = v.object(i, true, false)
	} else {
		n.topOK = false
		i, ok = v.value(i)
	}
	n.badUTF8 = v.badUTF8
	if !ok {
		return false
	}
	i = v.space(i)
	n.sawCR = v.cr
	return i == len(view)
}

func (v *validator) value(i int) (int, bool) {
	b := v.b
	switch b[i] {
	case '{':
		return v.object(i, false, false)
	case '[':
		return v.array(i)
	case '"':
		return v.str(i + 1)
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return validNumber(b, i)
	case 't':
		return validLiteral(b, i, "true")
	case 'f':
		return validLiteral(b, i, "false")
	case 'n':
		return validLiteral(b, i, "null")
	}
	return i, false
}

// open records that a container starts at b[start] and returns its place
// in n.conts, for close.
func (v *validator) open(start int) int {
	n := v.n
	n.conts = append(n.conts, cont{start: start})
	return len(n.conts) - 1
}

// close records that the container at place k in n.conts ends at end, or
// forgets it if it is small; the containers in it, smaller, are already
// forgotten then, so it is the last one.
func (v *validator) close(k, end int) {
	n := v.n
	if end-n.conts[k].start >= memoMin {
		n.conts[k].end = end
	} else {
		n.conts = n.conts[:k]
	}
}

// object checks the object opening at b[start]; top says whether it is the
// line's top-level object, whose members are recorded. When rec is set, it
// leaves in v.typ the object's "type" member as topMember.typ describes.
func (v *validator) object(start int, top, rec bool) (int, bool) {
	b := v.b
	c := v.open(start)
	i := v.space(start + 1)
	if i == len(b) {
		return i, false
	}
	if b[i] == '}' {
		v.close(c, i+1)
		return i + 1, true
	}
	for {
		if i == len(b) || b[i] != '"' {
			return i, false
		}
		k := i
		var ok bool
		v.esc = false
		if i, ok = v.str(i + 1); !ok {
			return i, false
		}
		kend, kesc := i, v.esc
		if i = v.space(i); i == len(b) || b[i] != ':' {
			return i, false
		}
		if i = v.space(i + 1); i == len(b) {
			return i, false
		}
		val := i
		if top {
			mt := noType
			if b[i] == '{' {
				v.typ = noType
				i, ok = v.object(i, false, true)
				mt = v.typ
			} else {
				i, ok = v.value(i)
			}
			if !ok {
				return i, false
			}
			if n := v.n; len(n.top) < topMax {
				n.top = append(n.top, topMember{[2]int{k, kend}, [2]int{val, i}, mt})
			} else {
				n.topOK = false
			}
		} else {
			if i, ok = v.value(i); !ok {
				return i, false
			}
			if rec && v.typ == noType {
				if kesc {
					v.typ = unknownType
				} else if kend-k == 6 && b[k+1:k+5] == "type" {
					v.typ = [2]int{val, i}
				}
			}
		}
		if i = v.space(i); i == len(b) {
			return i, false
		}
		switch b[i] {
		case '}':
			v.close(c, i+1)
			return i + 1, true
		case ',':
			i = v.space(i + 1)
		default:
			return i, false
		}
	}
}

// array checks the array opening at b[start]. Its opening and separators
// are object's, written out again: a function for them shared by the two is
// not inlined, and cost the validator 5% on the text mix.
func (v *validator) array(start int) (int, bool) {
	b := v.b
	c := v.open(start)
	i := v.space(start + 1)
	if i == len(b) {
		return i, false
	}
	if b[i] == ']' {
		v.close(c, i+1)
		return i + 1, true
	}
	for {
		var ok bool
		if i == len(b) {
			return i, false
		}
		if i, ok = v.value(i); !ok {
			return i, false
		}
		if i = v.space(i); i == len(b) {
			return i, false
		}
		switch b[i] {
		case ']':
			v.close(c, i+1)
			return i + 1, true
		case ',':
			i = v.space(i + 1)
		default:
			return i, false
		}
	}
}

// str checks the string whose body starts at b[i] and returns the offset
// past its closing quote. It finds the next '"', '\\', control character or
// non-ASCII byte eight bytes at a time; a non-ASCII character that is not
// valid UTF-8 is noted in v.badUTF8 (it does not make the JSON invalid, as
// for gjson.Valid).
func (v *validator) str(i int) (int, bool) {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	b := v.b
	for {
		for {
			if i+8 <= len(b) {
				x := binary.LittleEndian.Uint64(sbytes(b[i : i+8]))
				q, bs := x^'"'*ones, x^'\\'*ones
				// The lowest byte flagged is the first special one.
				if m := (x | (x-0x20*ones)&^x | (q-ones)&^q | (bs-ones)&^bs) & highs; m != 0 {
					i += bits.TrailingZeros64(m) >> 3
					break
				}
				i += 8
				continue
			}
			for i < len(b) && b[i] >= ' ' && b[i] < utf8.RuneSelf && b[i] != '"' && b[i] != '\\' {
				i++
			}
			break
		}
		if i >= len(b) {
			return i, false
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, true
		case c < ' ':
			return i, false
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRuneInString(b[i:])
			if r == utf8.RuneError && size == 1 {
				v.badUTF8 = true
			}
			i += size
			continue
		}
		// A backslash.
		v.esc = true
		i++
		if i == len(b) {
			return i, false
		}
		switch b[i] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		case 'u':
			for range 4 {
				i++
				if i >= len(b) || !isHex(b[i]) {
					return i, false
				}
			}
		default:
			return i, false
		}
		i++
	}
}

// space is skipSpace noting in v.cr a '\r' it skips: in valid JSON a raw
// '\r' can only be whitespace between tokens, so the line holds one if and
// only if the validator skipped one.
func (v *validator) space(i int) int {
	b := v.b
	for i < len(b) && b[i] <= ' ' && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		v.cr = v.cr || b[i] == '\r'
		i++
	}
	return i
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// validNumber checks the number starting at b[i].
func validNumber(b string, i int) (int, bool) {
	if b[i] == '-' {
		if i++; i == len(b) || !isDigit(b[i]) {
			return i, false
		}
	}
	if b[i] == '0' {
		i++
	} else {
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	if i < len(b) && b[i] == '.' {
		if i++; i == len(b) || !isDigit(b[i]) {
			return i, false
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		if i++; i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i == len(b) || !isDigit(b[i]) {
			return i, false
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	return i, true
}

func validLiteral(b string, i int, lit string) (int, bool) {
	if len(b)-i >= len(lit) && b[i:i+len(lit)] == lit {
		return i + len(lit), true
	}
	return i, false
}
