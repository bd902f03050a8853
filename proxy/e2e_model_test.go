package proxy

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/ccproxy/ccproxy/protocol"
)

// The real CLI: session/state lists claude's models and reports "default"
// after a first turn; session/setModel to another value of the list is
// taken (claude answers the model id it resolved), every subscriber is
// told, and the next turn's API request carries that model.
func TestE2ESetModel(t *testing.T) {
	t.Parallel()
	e := startE2E(t, Options{})
	c := e.dial(t)
	s := c.create(nil)
	c.turn(s, "PING-1")

	var sub protocol.SessionSubscribeResult
	mustUnmarshal(t, e.dial(t).do(protocol.TypeSessionSubscribe, map[string]any{"session": s}), &sub)
	if sub.Model != "default" {
		t.Errorf("model after the first turn %q, want default", sub.Model)
	}
	values := make([]string, len(sub.Models))
	for i, m := range sub.Models {
		values[i] = m.Value
		if m.DisplayName == "" || m.Description == "" {
			t.Errorf("model %+v lacks a displayName or description", m)
		}
	}
	if !slices.Contains(values, "default") || !slices.Contains(values, "haiku") {
		t.Fatalf("models %v, want default and haiku among them", values)
	}
	first := e.api.MessageRequests()
	if len(first) == 0 || strings.Contains(first[len(first)-1].Model, "haiku") {
		t.Fatalf("the first turn's model: %+v", first)
	}

	from := c.count()
	var res protocol.SessionSetModelResult
	mustUnmarshal(t, c.do(protocol.TypeSessionSetModel, map[string]any{"session": s, "model": "haiku"}), &res)
	if res.Model != "haiku" || !strings.Contains(res.ResolvedModel, "haiku") {
		t.Errorf("reply %+v", res)
	}
	var st protocol.SessionState
	c.waitPush(from, protocol.TypeSessionState, &st, func(raw json.RawMessage) bool { return strings.Contains(string(raw), `"model":"haiku"`) })

	n := len(e.api.MessageRequests())
	evs := c.turn(s, "PING-2")
	reqs := e.api.MessageRequests()[n:]
	if len(reqs) == 0 || reqs[0].Model != res.ResolvedModel {
		t.Errorf("the API requests after setModel %+v, want model %q", reqs, res.ResolvedModel)
	}
	if !strings.Contains(string(evs[0].Event), `"model":"`+res.ResolvedModel+`"`) {
		t.Errorf("system/init after setModel: %.300s", evs[0].Event)
	}
	mustUnmarshal(t, e.dial(t).do(protocol.TypeSessionSubscribe, map[string]any{"session": s}), &sub)
	if sub.Model != "haiku" {
		t.Errorf("model after the turn %q, want haiku", sub.Model)
	}
}
