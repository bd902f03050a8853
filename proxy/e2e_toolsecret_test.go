package proxy

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	protocol "github.com/ccproxy/ccproxy/webview-protocol"
)

// A tool that prints its environment (the everything server's get-env,
// called by claude) reaches clients with the server's configured secret
// masked: in the live event, in the replay log a new subscriber reads,
// and nowhere else in any frame.
func TestE2EToolResultSecretMasked(t *testing.T) {
	e := startE2E(t, Options{})
	c := e.dial(t)
	s := c.create(nil)
	trs := toolResults(t, c.turn(s, "GETENV please"))
	if len(trs) != 1 || trs[0].IsError || !strings.Contains(string(trs[0].Content), `CCPROXY_E2E_KEY`) {
		t.Fatalf("get-env's result: %+v", trs)
	}
	if !strings.Contains(string(trs[0].Content), `\"CCPROXY_E2E_KEY\": \"***\"`) {
		t.Errorf("get-env's result does not show the secret masked: %s", trs[0].Content)
	}
	// The replay log, as a client subscribing afresh reads it.
	c2 := e.dial(t)
	from := c2.count()
	c2.do(protocol.TypeSessionSubscribe, map[string]any{"session": s})
	c2.waitEvent(from, s, "the replayed result", isResult)
	for _, cl := range []*wsClient{c, c2} {
		frames := cl.snapshot()
		if len(frames) == 0 {
			t.Fatal("no frames")
		}
		for _, f := range frames {
			if bytes.Contains(f.raw, []byte(e2eSecret)) {
				t.Fatalf("a frame holds the configured secret: %.300s", f.raw)
			}
		}
	}
}

// scrubJSONStrings masks a secret the text scrub could not mask without
// breaking the JSON (one spanning a quote), string by string.
func TestScrubJSONStrings(t *testing.T) {
	in := []byte(`{"type":"user","message":{"content":[{"type":"tool_result","content":"key=ab\"cdefghijkl and more"}]},"n":1.50}`)
	scrub := func(s string) string { return strings.ReplaceAll(s, `ab"cdefghijkl`, "***") }
	out := scrubJSONStrings(in, scrub)
	if !json.Valid(out) || bytes.Contains(out, []byte("cdefghijkl")) || !bytes.Contains(out, []byte(`key=*** and more`)) || !bytes.Contains(out, []byte(`"n":1.50`)) {
		t.Errorf("scrubJSONStrings = %s", out)
	}
}
