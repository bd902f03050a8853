package stream

import (
	"bytes"
	"encoding/binary"
	"sort"
	"strings"

	"github.com/tidwall/gjson"
)

// Long lines are read through a skeleton: a copy of the line in which every
// long plain string (one with no escapes and no control characters) is
// replaced by "". A stream-json line of megabytes is almost all base64 or
// text in a handful of strings, so its skeleton is a few kilobytes. gjson
// validates and navigates the skeleton; values and edit offsets are mapped
// back to the line through the spans. Building the skeleton is one pass of
// bytes.IndexByte (vectorized) and a word-at-a-time control-character check,
// instead of gjson walking each megabyte string byte by byte several times.
//
// Replacing a valid string token by "" keeps the JSON valid, and strings that
// are not plain are kept, so the skeleton is valid JSON exactly when the line
// is.

const (
	// skeletonBytes: lines at least this long are read through a skeleton.
	skeletonBytes = 64 << 10
	// longString: strings at least this long go out of the skeleton.
	longString = 1 << 10
)

// span is one long string taken out of the skeleton.
type span struct {
	skel       int // offset of its "" in the skeleton
	start, end int // the string token in the line, quotes included
	removed    int // bytes removed by this span and all before it
}

// skeleton builds the skeleton of line into n.skel and n.spans. It returns
// false when line is not valid JSON text in a way the scan can see (an
// unterminated string, nesting deeper than maxDepth).
func (n *Normalizer) skeleton(line []byte) ([]byte, bool) {
	out, spans := n.skel[:0], n.spans[:0]
	removed, depth := 0, 0
	for i := 0; i < len(line); {
		j := bytes.IndexByte(line[i:], '"')
		seg := line[i:]
		if j >= 0 {
			seg = line[i : i+j]
		}
		for _, c := range seg {
			switch c {
			case '{', '[':
				if depth++; depth > maxDepth {
					return nil, false
				}
			case '}', ']':
				depth--
			}
		}
		if j < 0 {
			out = append(out, seg...)
			break
		}
		q := i + j
		end := stringEnd(bstr(line), q)
		if end < 0 {
			return nil, false
		}
		if end-q-2 >= n.longMin && plainString(line[q+1:end-1]) && !isKey(line, end) {
			out = append(out, seg...)
			removed += end - q - 2
			spans = append(spans, span{skel: len(out), start: q, end: end, removed: removed})
			out = append(out, '"', '"')
		} else {
			out = append(out, line[i:end]...)
		}
		i = end
	}
	n.skel, n.spans = out, spans
	return out, true
}

// isKey reports whether the string token ending at b[end] is an object key:
// a colon follows it.
func isKey(b []byte, end int) bool {
	for ; end < len(b); end++ {
		switch b[end] {
		case ' ', '\t', '\r', '\n':
			continue
		case ':':
			return true
		}
		return false
	}
	return false
}

// get returns the text of the value at path in v (see str). A plain key is
// looked up with member, a path with gjson.
func (n *Normalizer) get(v gjson.Result, path string) string {
	if strings.IndexByte(path, '.') < 0 {
		return n.str(n.member(v, path))
	}
	return n.str(v.Get(path))
}

// plainString reports whether a string's body has no backslash and no
// control character: its text is its bytes.
func plainString(body []byte) bool {
	return bytes.IndexByte(body, '\\') < 0 && !hasControl(body)
}

// hasControl reports whether b holds a byte below 0x20, eight at a time
// (32 per test while there are that many). A byte below 0x20 is the only
// one whose subtraction borrows, so no other sets a high bit of
// (x-0x20…)&^x: the test has no false answer.
func hasControl(b []byte) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	const k = 0x20 * ones
	for len(b) >= 32 {
		x0 := binary.LittleEndian.Uint64(b)
		x1 := binary.LittleEndian.Uint64(b[8:])
		x2 := binary.LittleEndian.Uint64(b[16:])
		x3 := binary.LittleEndian.Uint64(b[24:])
		if ((x0-k)&^x0|(x1-k)&^x1|(x2-k)&^x2|(x3-k)&^x3)&highs != 0 {
			return true
		}
		b = b[32:]
	}
	for len(b) >= 8 {
		x := binary.LittleEndian.Uint64(b)
		if (x-0x20*ones)&^x&highs != 0 {
			return true
		}
		b = b[8:]
	}
	for _, c := range b {
		if c < 0x20 {
			return true
		}
	}
	return false
}

// orig maps an offset in the view (the skeleton, or the line itself) to the
// line.
func (n *Normalizer) orig(off int) int {
	i := sort.Search(len(n.spans), func(i int) bool { return n.spans[i].skel >= off })
	if i == 0 {
		return off
	}
	return off + n.spans[i-1].removed
}

// origRaw returns the bytes of the line that value v of the view stands for.
func (n *Normalizer) origRaw(v gjson.Result) []byte {
	return n.line[n.orig(v.Index):n.orig(v.Index+len(v.Raw))]
}

// str returns the text of value v of the view: for a string taken out of
// the skeleton, the original (plain, so unescaped) bytes without copying;
// otherwise v.String().
func (n *Normalizer) str(v gjson.Result) string {
	if v.Type == gjson.String && len(v.Raw) == 2 && len(n.spans) > 0 {
		i := sort.Search(len(n.spans), func(i int) bool { return n.spans[i].skel >= v.Index })
		if i < len(n.spans) && n.spans[i].skel == v.Index {
			sp := n.spans[i]
			return bstr(n.line[sp.start+1 : sp.end-1])
		}
	}
	return v.String()
}
