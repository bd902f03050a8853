package mcpconfig

import (
	"encoding/binary"
	"slices"
	"strings"
	"unsafe"
)

// matcher is Secrets.Scrub's single-pass replacer over every value and
// configured URL of a set. Every value has at least MinSecretLen = 8
// bytes, so any occurrence covers five 4-byte grams, one of which starts
// at a multiple of 5: scrub reads the text once, in steps of five bytes,
// loads the 4 bytes there as one word and tests one bit of a small filter
// (a hash of the gram; set for the grams at offsets 0–4 of every
// pattern), so that a miss — nearly every step — costs a load, a multiply
// and a test. On a hit it looks up the 8-byte words at the five starts
// the gram may belong to and compares the patterns that begin with them,
// longest first. The cost is one pass over the text whatever the number of
// values, where the former scrub made one pass per value.
//
// A matcher is immutable once built and safe for concurrent use.
type matcher struct {
	filter [filterBits / 64]uint64 // bit hash(gram) of the grams at offsets 0–4 of every pattern
	pats   map[uint64][]pattern    // by first 8-byte word, longest first
	short  []pattern               // URLs under 8 bytes: replaced one by one first
	one    *pattern                // the only pattern, if so (a single API key, say): found with strings.Index
}

// pattern is a value (masked) or a configured URL (replaced by its
// redacted form).
type pattern struct {
	s    string
	repl string // a URL's redacted form; "" for a value (Mask)
	word bool   // matched only as a whole word (a value under WordSecretLen)
}

const (
	filterBits = 1 << 16 // 8 KiB: stays in the first-level cache
	gramLen    = 4
	gramStep   = MinSecretLen - gramLen + 1 // 5: every value covers a gram starting at a multiple of it
)

func filterHash(g uint32) uint32 { return (g * 0x9e3779b1) >> (32 - 16) }

func newMatcher(values []string, urls [][2]string) *matcher {
	m := &matcher{pats: map[uint64][]pattern{}}
	add := func(p pattern) {
		if len(p.s) < MinSecretLen {
			m.short = append(m.short, p)
			return
		}
		b := []byte(p.s)
		for k := range gramStep {
			h := filterHash(binary.LittleEndian.Uint32(b[k:]))
			m.filter[h/64] |= 1 << (h % 64)
		}
		w := binary.LittleEndian.Uint64(b)
		m.pats[w] = append(m.pats[w], p)
	}
	for _, u := range urls {
		add(pattern{s: u[0], repl: u[1]})
	}
	for _, v := range values {
		add(pattern{s: v, word: len(v) < WordSecretLen})
	}
	for _, ps := range m.pats {
		// Longest first: a value that is a prefix of another does not
		// cut it short. A URL and a value equal: the URL's redaction.
		slices.SortStableFunc(ps, func(x, y pattern) int { return len(y.s) - len(x.s) })
	}
	slices.SortStableFunc(m.short, func(x, y pattern) int { return len(y.s) - len(x.s) })
	if len(m.pats) == 1 {
		for _, ps := range m.pats {
			if len(ps) == 1 && ps[0].repl == "" {
				m.one = &ps[0]
			}
		}
	}
	return m
}

// scrubOne is scrub for a set of one value: strings.Index (vectorized)
// beats the gram filter when there is a single pattern to look for.
func (m *matcher) scrubOne(text string) string {
	v := m.one.s
	var b strings.Builder
	last := 0
	runStart, runEnd := -1, -1
	for from := 0; from <= len(text)-len(v); {
		k := strings.Index(text[from:], v)
		if k < 0 {
			break
		}
		i, end := from+k, from+k+len(v)
		from = i + 1
		if m.one.word && (i > 0 && isWordByte(text[i-1]) || end < len(text) && isWordByte(text[end])) {
			continue
		}
		if i < runEnd { // overlapping the previous match: one run
			runEnd = end
			continue
		}
		if runEnd >= 0 {
			b.WriteString(text[last:runStart])
			b.WriteString(Mask)
			last = runEnd
		} else {
			b.Grow(len(text))
		}
		runStart, runEnd = i, end
	}
	if runEnd < 0 {
		return text
	}
	b.WriteString(text[last:runStart])
	b.WriteString(Mask)
	b.WriteString(text[runEnd:])
	return b.String()
}

// scrub returns text with every pattern replaced (see Secrets.Scrub).
func (m *matcher) scrub(text string) string {
	for _, p := range m.short {
		text = strings.ReplaceAll(text, p.s, p.repl)
	}
	n := len(text)
	if n < MinSecretLen {
		return text
	}
	if m.one != nil {
		return m.scrubOne(text)
	}
	tb := unsafe.Slice(unsafe.StringData(text), n) // read only
	var b strings.Builder
	last := 0                  // text[:last] is in b (or needs no change)
	runStart, runEnd := -1, -1 // a run of overlapping values, masked once it ends
	grow := func() {
		if b.Cap() == 0 {
			b.Grow(n)
		}
	}
	flush := func() {
		if runEnd >= 0 {
			grow()
			b.WriteString(text[last:runStart])
			b.WriteString(Mask)
			last = runEnd
			runStart, runEnd = -1, -1
		}
	}
	// try matches the patterns at i, a start not yet tried, in order.
	try := func(i int) {
		if i < last || i+MinSecretLen > n {
			return // inside a replaced URL, or no room
		}
		for _, p := range m.pats[binary.LittleEndian.Uint64(tb[i:])] {
			end := i + len(p.s)
			if end > n || text[i:end] != p.s {
				continue
			}
			if p.word && (i > 0 && isWordByte(text[i-1]) || end < n && isWordByte(text[end])) {
				continue
			}
			if i < runEnd { // inside a run: a value reaching further extends it
				if p.repl == "" && end > runEnd {
					runEnd = end
				}
				return
			}
			flush()
			if p.repl == "" {
				runStart, runEnd = i, end
				return
			}
			grow()
			b.WriteString(text[last:i])
			b.WriteString(p.repl)
			last = end
			return
		}
	}
	for j := 0; j+gramLen <= n; j += gramStep {
		h := filterHash(binary.LittleEndian.Uint32(tb[j:]))
		if m.filter[h/64]&(1<<(h%64)) == 0 {
			continue
		}
		for k := gramStep - 1; k >= 0; k-- { // the starts j-4 … j, in order
			if j-k >= 0 {
				try(j - k)
			}
		}
	}
	flush()
	if last == 0 {
		return text
	}
	b.WriteString(text[last:])
	return b.String()
}
