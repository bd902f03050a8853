package mcpconfig

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// A secret the text scrub could not mask without breaking the JSON (one
// spanning a quote) is masked string by string (ScrubJSON's fallback).
func TestScrubJSONStrings(t *testing.T) {
	in := []byte(`{"type":"user","message":{"content":[{"type":"tool_result","content":"key=ab\"cdefghijkl and more"}]},"n":1.50}`)
	scrub := func(s string) string { return strings.ReplaceAll(s, `ab"cdefghijkl`, "***") }
	out, ok := scrubJSONStrings(in, scrub)
	if !ok || !json.Valid(out) || bytes.Contains(out, []byte("cdefghijkl")) || !bytes.Contains(out, []byte(`key=*** and more`)) || !bytes.Contains(out, []byte(`"n":1.50`)) {
		t.Errorf("scrubJSONStrings = %s, %v", out, ok)
	}
	if out, ok := ScrubJSON([]byte(`{"a":"plain"}`), scrub); !ok || string(out) != `{"a":"plain"}` {
		t.Errorf("ScrubJSON of a value without secrets = %s, %v", out, ok)
	}
}
