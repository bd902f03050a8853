package mcpconfig

import (
	"bytes"
	"encoding/json"
	"unsafe"
)

// ScrubJSON returns the JSON value b with scrub (a Secrets' Scrub) applied
// to its text, b itself when scrub changes nothing: as one text when that
// leaves valid JSON, else string by string (every string and key decoded,
// scrubbed and encoded again), for a secret the plain text scrub could not
// mask without breaking the JSON (one spanning a quote or an escape). ok is
// false when b had to be decoded and could not be: the caller must then
// not pass b on.
func ScrubJSON(b []byte, scrub func(string) string) (out []byte, ok bool) {
	text := unsafe.String(unsafe.SliceData(b), len(b))
	s := scrub(text)
	if s == text {
		return b, true
	}
	if json.Valid([]byte(s)) {
		return []byte(s), true
	}
	return scrubJSONStrings(b, scrub)
}

// scrubJSONStrings applies scrub to every string (and key) of the JSON
// value b and encodes it again.
func scrubJSONStrings(b []byte, scrub func(string) string) ([]byte, bool) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return nil, false
	}
	var walk func(any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case string:
			return scrub(x)
		case []any:
			for i := range x {
				x[i] = walk(x[i])
			}
		case map[string]any:
			m := make(map[string]any, len(x))
			for k, e := range x {
				m[scrub(k)] = walk(e)
			}
			return m
		}
		return v
	}
	out, err := json.Marshal(walk(v))
	if err != nil {
		return nil, false
	}
	return out, true
}
