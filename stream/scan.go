package stream

import (
	"strings"
	"unsafe"

	"github.com/tidwall/gjson"
)

// A walker over JSON that gjson has validated: the hot paths read objects
// and arrays of the view with it instead of gjson's ForEach and Get. It
// relies on the JSON being valid (Normalize checks that first), so it only
// looks for the bytes that end a value: strings are skipped with
// strings.IndexByte (vectorized), nesting is counted between them. Each
// value it yields is a gjson.Result as gjson would make it (Type, Raw,
// Index, Str), so the rest of the code is the same either way.
//
// A line is read several times: once to find its top-level members, then
// down to each tool result, its content array, each part. So that each
// large object or array is walked over once, not once per reading, the
// validator records where every container of memoMin bytes or more ends
// (n.conts, in the order they open, so sorted by where they start), and the
// walker steps over such a container at once: a Result from gjson or from
// the walker, both substrings of the view, is found in the table by its
// offset in the view.

// memoMin is the size from which a container is recorded in n.conts.
const memoMin = 256

// cont is a container of the view of memoMin bytes or more: where it
// starts and the offset just past it.
type cont struct{ start, end int }

// contLen returns the length of the recorded container s starts with, if s
// is a substring of the view that starts one.
func (n *Normalizer) contLen(s string) (int, bool) {
	off := int(uintptr(unsafe.Pointer(unsafe.StringData(s))) - uintptr(unsafe.Pointer(unsafe.StringData(n.view))))
	if len(n.conts) == 0 || off < 0 || off >= len(n.view) {
		return 0, false
	}
	lo, hi := 0, len(n.conts)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if n.conts[m].start < off {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(n.conts) && n.conts[lo].start == off {
		return n.conts[lo].end - off, true
	}
	return 0, false
}

// each calls f with each value in v, as v.ForEach does: the elements of
// an array, the member values of an object, v itself for any other value.
func (n *Normalizer) each(v gjson.Result, f func(v gjson.Result) bool) {
	switch {
	case v.IsArray():
		n.eachElement(v, f)
	case v.IsObject():
		n.eachMember(v, func(_ string, m rawValue) bool { return f(m.result()) })
	case v.Exists():
		f(v)
	}
}

// eachElement calls f with each element of array arr, until f returns
// false.
func (n *Normalizer) eachElement(arr gjson.Result, f func(v gjson.Result) bool) {
	b, base := arr.Raw, arr.Index
	i := skipSpace(b, 1)
	for i < len(b) && b[i] != ']' {
		end := n.valueEnd(b, i)
		if !f(result(b[i:end], base+i)) {
			return
		}
		i = skipSpace(b, end)
		if i < len(b) && b[i] == ',' {
			i = skipSpace(b, i+1)
		}
	}
}

// rawValue is a value found by the walker, made into a gjson.Result only
// when it is wanted.
type rawValue struct {
	raw   string
	index int
}

func (v rawValue) result() gjson.Result {
	if v.raw == "" {
		return gjson.Result{}
	}
	return result(v.raw, v.index)
}

func (v rawValue) isString() bool { return v.raw != "" && v.raw[0] == '"' }

// eachMember calls f with the (unescaped) key and the value of each member
// of object obj, in order, until f returns false.
func (n *Normalizer) eachMember(obj gjson.Result, f func(key string, v rawValue) bool) {
	n.walkMembers(obj.Raw, obj.Index, 0, f)
}

// walkMembers calls f with each member of the object opening at b[i] (b
// being a value found at index base), and returns the offset just past the
// object, or -1 when f stopped the walk.
func (n *Normalizer) walkMembers(b string, base, i int, f func(key string, v rawValue) bool) int {
	i = skipSpace(b, i+1)
	for i < len(b) && b[i] == '"' {
		kend := strEnd(b, i)
		key := b[i+1 : kend-1]
		if strings.IndexByte(key, '\\') >= 0 {
			key = gjson.Parse(b[i:kend]).Str
		}
		i = skipSpace(b, kend)
		i = skipSpace(b, i+1) // the colon
		end := n.valueEnd(b, i)
		if !f(key, rawValue{b[i:end], base + i}) {
			return -1
		}
		i = skipSpace(b, end)
		if i < len(b) && b[i] == ',' {
			i = skipSpace(b, i+1)
		}
	}
	return min(i+1, len(b)) // past the '}'
}

// member returns the value of the first member of obj named key, as
// obj.Get(key) does for a plain key, or an empty Result.
func (n *Normalizer) member(obj gjson.Result, key string) gjson.Result {
	return n.rawMember(obj, key).result()
}

// rawMember is member without making the Result (which, for a string with
// escapes, unescapes it): the caller may look at the value's first byte.
func (n *Normalizer) rawMember(obj gjson.Result, key string) rawValue {
	var out rawValue
	if !obj.IsObject() {
		return out
	}
	n.eachMember(obj, func(k string, v rawValue) bool {
		if k == key {
			out = v
			return false
		}
		return true
	})
	return out
}

// isContainer reports whether v is an object or an array.
func (v rawValue) isContainer() bool { return v.raw != "" && (v.raw[0] == '{' || v.raw[0] == '[') }

// result makes the gjson.Result of the value raw found at index.
func result(raw string, index int) gjson.Result {
	var r gjson.Result
	switch raw[0] {
	case '{', '[':
		r = gjson.Result{Type: gjson.JSON, Raw: raw}
	case '"':
		if strings.IndexByte(raw, '\\') < 0 {
			r = gjson.Result{Type: gjson.String, Raw: raw, Str: raw[1 : len(raw)-1]}
		} else {
			r = gjson.Parse(raw)
		}
	default:
		r = gjson.Parse(raw)
	}
	r.Index = index
	return r
}

// skipSpace returns the offset of the first byte at or after b[i] that is
// not JSON whitespace. Between tokens there is usually none: a first byte
// above ' ' is ruled out with one comparison.
func skipSpace(b string, i int) int {
	for i < len(b) && b[i] <= ' ' && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// valueEnd returns the offset just past the value starting at b[i].
func (n *Normalizer) valueEnd(b string, i int) int {
	switch b[i] {
	case '"':
		return strEnd(b, i)
	case '{', '[':
		if k, ok := n.contLen(b[i:]); ok {
			return i + k
		}
		// A small container (or one of a text that was not validated):
		// walk over it.
		depth := 0
		for j := i; j < len(b); {
			switch b[j] {
			case '"':
				j = strEnd(b, j)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
			j++
		}
		return len(b)
	}
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}

// strEnd returns the offset just past the closing quote of the string
// token opening at b[q], or len(b) if it does not end (the walker reads
// validated JSON, where it does).
func strEnd(b string, q int) int {
	if end := stringEnd(b, q); end >= 0 {
		return end
	}
	return len(b)
}

// stringEnd returns the offset just past the closing quote of the string
// token opening at b[q], or -1 if it does not end. It is the one scanner
// for the end of a string of the walker and of the skeleton: it looks at a
// short string (a key) byte by byte, then searches for '"' with
// strings.IndexByte (vectorized) and counts the backslashes before it.
func stringEnd(b string, q int) int {
	i := q + 1
	for k := i; k < len(b) && k < q+17; k++ {
		switch b[k] {
		case '"':
			return k + 1
		case '\\':
			goto long
		}
	}
	i = min(q+17, len(b))
long:
	for {
		j := strings.IndexByte(b[i:], '"')
		if j < 0 {
			return -1
		}
		i += j
		k := i - 1
		for k > q && b[k] == '\\' {
			k--
		}
		if (i-1-k)%2 == 0 {
			return i + 1
		}
		i++
	}
}
