package stream

import (
	"bytes"
	"testing"

	"github.com/tidwall/gjson"
)

// checkWalker compares the walker with gjson on every value of v, down to
// depth 8: each with ForEach, member with Get, value for value (Type, Raw,
// Index, Str).
func checkWalker(t *testing.T, n *Normalizer, v gjson.Result, depth int) {
	t.Helper()
	var want []gjson.Result
	v.ForEach(func(_, e gjson.Result) bool { want = append(want, e); return true })
	var got []gjson.Result
	n.each(v, func(e gjson.Result) bool { got = append(got, e); return true })
	if len(got) != len(want) {
		t.Fatalf("each(%.100s): %d values, ForEach %d", v.Raw, len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.Type != w.Type || g.Raw != w.Raw || g.Index != w.Index || g.Str != w.Str {
			t.Fatalf("each(%.100s) value %d: got %+v, ForEach gives %+v", v.Raw, i, g, w)
		}
		if depth > 0 && (g.IsObject() || g.IsArray()) {
			checkWalker(t, n, g, depth-1)
		}
	}
	if v.IsObject() {
		v.ForEach(func(k, _ gjson.Result) bool {
			if !gjson.ValidBytes([]byte(`"`+k.Str+`"`)) || k.Str == "" || bytes.ContainsAny([]byte(k.Str), ".*?#@|\\!=<>%~") {
				return true // not a plain gjson path
			}
			g, w := n.member(v, k.Str), v.Get(k.Str)
			if g.Type != w.Type || g.Raw != w.Raw || g.Index != w.Index || g.Str != w.Str {
				t.Fatalf("member(%.100s, %q) = %+v, Get gives %+v", v.Raw, k.Str, g, w)
			}
			return true
		})
	}
}

// TestWalker checks the walker against gjson on every line of the
// transcripts.
func TestWalker(t *testing.T) {
	for _, rel := range transcripts(t) {
		for _, line := range bytes.Split(readTranscript(t, rel), []byte("\n")) {
			if !gjson.ValidBytes(line) {
				continue
			}
			n := NewNormalizer(Options{})
			checkWalker(t, n, gjson.ParseBytes(line), 8)
		}
	}
}

// FuzzWalker checks the walker against gjson on valid JSON.
func FuzzWalker(f *testing.F) {
	for _, s := range []string{`{"a":1,"b":[1,"x",{"c":null}],"a":2}`, `[ "a\"b" , {"k\u0041":"v\\"} , true , -1.5e3 ]`,
		"{\"t\":\"\\u2028\",\r\n\"u\":[[[]],{}]}", `{"type":"text","text":"` + string(bytes.Repeat([]byte("ab\\\"c"), 100)) + `"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !gjson.Valid(s) {
			return
		}
		n := NewNormalizer(Options{})
		checkWalker(t, n, gjson.Parse(s), 8)
	})
}
