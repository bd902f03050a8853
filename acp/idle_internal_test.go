package acp

import (
	"context"
	"testing"

	"github.com/ccproxy/ccproxy/protocol"
)

// A session is idle (may be suspended) only when nothing of it is under
// way and its Claude session is known: each condition alone keeps it.
func TestSessionIdleConditions(t *testing.T) {
	idle := func() *session {
		return &session{claudeID: "c", asks: map[string]context.CancelFunc{}, liveState: liveState{pstate: protocol.StateIdle}}
	}
	if !idle().idleLocked() {
		t.Fatal("a session with nothing under way is not idle")
	}
	for _, c := range []struct {
		what string
		set  func(s *session)
	}{
		{"already suspended", func(s *session) { s.suspended = true }},
		{"being suspended or resumed", func(s *session) { s.moving = make(chan struct{}) }},
		{"closing", func(s *session) { s.closing = true }},
		{"a prompt or set_mode in flight", func(s *session) { s.busy = 1 }},
		{"a session/prompt on its way to Prompt", func(s *session) { s.received = 1 }},
		{"a turn (also one its prompt gave up on)", func(s *session) { s.turn = &turn{} }},
		{"a permission asked", func(s *session) { s.asks["r1"] = func() {} }},
		{"claude in a turn of its own", func(s *session) { s.pstate = protocol.StateRunning }},
		{"claude restarting", func(s *session) { s.pstate = protocol.StateRestarting }},
		{"no Claude session to resume yet", func(s *session) { s.claudeID = "" }},
	} {
		s := idle()
		c.set(s)
		if s.idleLocked() {
			t.Errorf("a session with %s is idle", c.what)
		}
	}
}
