package stream

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

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
			// Again, stepping over the containers the validator recorded.
			n.valid(bstr(line))
			checkWalker(t, n, gjson.Parse(bstr(line)), 8)
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
		n.valid(s)
		checkWalker(t, n, gjson.Parse(s), 8)
	})
}

// FuzzValid checks the validator against gjson.Valid, and the top-level
// members it records against gjson's ForEach.
func FuzzValid(f *testing.F) {
	for _, s := range []string{`{"a":1,"b":[1,"x",{"c":null}],"a":2}`, ` [ "a\"b" , {"k\u0041":"v\\"} , true , -1.5e3 ] `,
		"{\"t\":\"\\u2028\",\r\n\"u\":[[[]],{}]}", `{"a":01}`, `{"a":1.}`, `{"a":-}`, `{"a":1e+}`, `{"a":tru}`, `{"a":"\x01"}`,
		`{"a":"\q"}`, `{"a":"\u12g4"}`, `{"a":[1,]}`, `{"a":1,}`, `{,}`, `{"a" 1}`, `"str"`, `nul`, `{"a":{}}x`, "\xff\xfe",
		`{"type":"text","text":"` + string(bytes.Repeat([]byte("abcdefgh\\\"ij"), 100)) + `"}`, "{\"a\":\"é\xff日本\xe2\x80\"}", "{\"a\":\"abcdefg\xe2\x80\xa8xyz\"}"} {
		f.Add(s)
	}
	f.Add("{\"a\":\"abcdefg\xe2\x80\xa8xyz\xc3\"}")
	f.Add(`{"type":"stream_event","event":{"delta":{"type":"x"},"index":0,"type":"content_block_delta"}}`)
	f.Add(`{"event":{"typ\u0065":"a","type":"b"},"m":{"type" : 5 },"n":{"t":1,"type":{"type":1}}}`)
	f.Fuzz(func(t *testing.T, s string) {
		n := NewNormalizer(Options{})
		got, want := n.valid(s), gjson.Valid(s)
		if got != want {
			t.Fatalf("valid(%q) = %v, gjson.Valid %v", s, got, want)
		}
		if got && n.badUTF8 == utf8.ValidString(s) {
			t.Fatalf("valid(%q): badUTF8 %v", s, n.badUTF8)
		}
		if !got || !n.topOK {
			return
		}
		var keys []string
		gjson.Parse(s).ForEach(func(k, v gjson.Result) bool { keys = append(keys, k.Raw+"="+v.Raw); return true })
		if len(keys) != len(n.top) {
			t.Fatalf("%q: %d top-level members, ForEach %d", s, len(n.top), len(keys))
		}
		for i, m := range n.top {
			if k := s[m.key[0]:m.key[1]] + "=" + s[m.val[0]:m.val[1]]; k != keys[i] {
				t.Fatalf("%q: member %d is %s, ForEach gives %s", s, i, k, keys[i])
			}
			checkTopType(t, s, m)
		}
	})
}

// checkTopType checks the "type" the validator recorded for a top-level
// member against the walker's first "type" member (which FuzzWalker checks
// against gjson).
func checkTopType(t *testing.T, s string, m topMember) {
	t.Helper()
	if m.typ == unknownType {
		return
	}
	val := gjson.Parse(s[m.val[0]:m.val[1]])
	want := NewNormalizer(Options{}).rawMember(val, "type")
	switch {
	case m.typ == noType && want.raw != "":
		t.Fatalf("%q: member value %s: no type recorded, the walker finds %s", s, val.Raw, want.raw)
	case m.typ != noType && (s[m.typ[0]:m.typ[1]] != want.raw || m.typ[0] != m.val[0]+want.index):
		t.Fatalf("%q: member value %s: type %s at %d recorded, the walker finds %s at %d", s, val.Raw, s[m.typ[0]:m.typ[1]], m.typ[0], want.raw, m.val[0]+want.index)
	}
}

// TestTopTypes: the validator records the first "type" of each top-level
// object member, or says it cannot tell when an earlier key has escapes.
func TestTopTypes(t *testing.T) {
	for _, c := range []struct {
		line string
		want []string // per member: the type's raw value, "" none, "?" unknown
	}{
		{`{"type":"stream_event","event":{"delta":{"type":"x"},"index":0,"type":"content_block_delta"}}`, []string{"", `"content_block_delta"`}},
		{`{"event":{"type":"a","type":"b"},"m":{"type" : 5 },"n":{"t":1},"o":[{"type":"z"}]}`, []string{`"a"`, "5", "", ""}},
		{`{"event":{"typ\u0065":"a","type":"b"},"e2":{"type":"b","typ\u0065":"a"},"e3":{"k\n":1}}`, []string{"?", `"b"`, "?"}},
	} {
		n := NewNormalizer(Options{})
		if !n.valid(c.line) || !n.topOK {
			t.Fatalf("%s: not valid", c.line)
		}
		var got []string
		for _, m := range n.top {
			switch m.typ {
			case noType:
				got = append(got, "")
			case unknownType:
				got = append(got, "?")
			default:
				got = append(got, c.line[m.typ[0]:m.typ[1]])
			}
			checkTopType(t, c.line, m)
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s: types %q, want %q", c.line, got, c.want)
		}
	}
}

// TestValidTranscripts checks the validator on every transcript line and on
// each of them cut short.
func TestValidTranscripts(t *testing.T) {
	n := NewNormalizer(Options{})
	for _, rel := range transcripts(t) {
		for _, line := range bytes.Split(readTranscript(t, rel), []byte("\n")) {
			for _, l := range [][]byte{line, line[:len(line)/2], line[:max(len(line)-1, 0)]} {
				if got, want := n.valid(bstr(l)), gjson.ValidBytes(l); got != want {
					t.Fatalf("%s: valid = %v, gjson.Valid %v on %.200q", rel, got, want, l)
				}
			}
		}
	}
}

// TestContainersRecorded: the validator records every container of memoMin
// bytes or more, however many (a tool result of hundreds of large parts,
// repeated in tool_use_result), and the walker finds each by its offset.
func TestContainersRecorded(t *testing.T) {
	part := `{"type":"text","text":"` + strings.Repeat("a line of a search hit ", 12) + `"}`
	arr := "[" + strings.Repeat(part+",", 299) + part + "]"
	line := `{"type":"user","message":{"content":[{"type":"tool_result","content":` + arr + `}]},"tool_use_result":` + arr + `}`
	n := NewNormalizer(Options{})
	if !n.valid(line) {
		t.Fatal("not valid")
	}
	var large int
	var walk func(v gjson.Result)
	walk = func(v gjson.Result) {
		if !v.IsObject() && !v.IsArray() {
			return
		}
		if len(v.Raw) >= memoMin {
			large++
			if k, ok := n.contLen(v.Raw); !ok || k != len(v.Raw) {
				t.Fatalf("container at %d (%d bytes): contLen %d, %v", v.Index, len(v.Raw), k, ok)
			}
		} else if _, ok := n.contLen(v.Raw); ok {
			t.Fatalf("small container at %d recorded", v.Index)
		}
		v.ForEach(func(_, e gjson.Result) bool { walk(e); return true })
	}
	walk(gjson.Parse(line))
	if large != len(n.conts) || large < 600 {
		t.Errorf("%d large containers, %d recorded", large, len(n.conts))
	}
}

// hasControl agrees with a byte-at-a-time check for every length up to 80
// and every position of one control byte among bytes that are not (including
// 0x20, 0x7f and bytes with the high bit set, next to which a borrow
// could show).
func TestHasControl(t *testing.T) {
	naive := func(b []byte) bool {
		for _, c := range b {
			if c < 0x20 {
				return true
			}
		}
		return false
	}
	fills := []byte{0x20, 0x21, 0x7f, 0x80, 0xff, 'a'}
	for n := 0; n <= 80; n++ {
		for _, fill := range fills {
			b := bytes.Repeat([]byte{fill}, n)
			if got := hasControl(b); got {
				t.Fatalf("%d bytes of %#x: control found", n, fill)
			}
			for i := range n {
				for _, c := range []byte{0x00, 0x01, 0x1f, '\n'} {
					b[i] = c
					if got, want := hasControl(b), naive(b); got != want {
						t.Fatalf("%d bytes of %#x with %#x at %d: %v, want %v", n, fill, c, i, got, want)
					}
					b[i] = fill
				}
			}
		}
	}
}
