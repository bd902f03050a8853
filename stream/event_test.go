package stream

import "testing"

// A cloned event keeps its text after the Normalizer reuses its buffers
// for the next lines; the event Normalize returned does not have to.
func TestEventCloneOutlivesNormalize(t *testing.T) {
	n := NewNormalizer(Options{})
	first := `{"type":"system","subtype":"status","status":"one","session_id":"s-1","uuid":"u-1"}`
	ev := n.Normalize([]byte(first))
	c := ev.Clone()
	for range 3 {
		n.Normalize([]byte(`{"type":"assistant","session_id":"s-2","uuid":"u-2","message":{"content":[{"type":"text","text":"` + "\u00e9\u00e9\u00e9" + `"}]}}`))
	}
	if string(c.JSON) != first || c.Type != TypeSystem || c.Subtype != "status" || c.SessionID != "s-1" || c.UUID != "u-1" {
		t.Errorf("the clone changed: %+v %s", c, c.JSON)
	}
}
