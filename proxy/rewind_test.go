package proxy

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ccproxy/ccproxy/protocol"
)

// session/rewind refuses, with an error naming the field: a session with
// no conversation yet (to), one whose turn runs (session: interrupt
// first); an unknown session is unknown_session. The session lives on.
func TestRewindRefusals(t *testing.T) {
	ts := startServer(t, Options{})
	c := ts.dial(t)
	s := c.create(nil)
	const to = "4f22914e-e6b0-49b4-930d-d7f769d40513"
	field := func(e *protocol.Error) string {
		if e == nil || e.Details == nil || len(e.Details.Fields) != 1 {
			return ""
		}
		return e.Details.Fields[0].Path
	}
	var st protocol.SessionState
	c.waitPush(0, protocol.TypeSessionState, &st, func(raw json.RawMessage) bool { return strings.Contains(string(raw), `"idle"`) })
	if e := c.doErr(protocol.TypeSessionRewind, map[string]any{"session": s, "to": to}); e == nil || e.Code != protocol.CodeBadRequest || field(e) != "data.to" {
		t.Errorf("rewind before any turn: %+v, want bad_request naming data.to", e)
	}

	from := c.count()
	c.do(protocol.TypeSessionSend, map[string]any{"session": s, "text": "hang"})
	c.waitEvent(from, s, "the turn started", func(ev protocol.SessionEvent) bool { return textOf(ev) == "working on it" })
	e := c.doErr(protocol.TypeSessionRewind, map[string]any{"session": s, "to": to, "files": true})
	if e == nil || e.Code != protocol.CodeBadRequest || field(e) != "data.session" || !strings.Contains(e.Message, "session/interrupt") {
		t.Errorf("rewind during a turn: %+v, want bad_request naming data.session that says to interrupt", e)
	}
	c.do(protocol.TypeSessionInterrupt, map[string]any{"session": s})
	c.waitEvent(from, s, "result", isResult)
	c.turn(s, "still there")

	if e := c.doErr(protocol.TypeSessionRewind, map[string]any{"session": "s-nope", "to": to}); e == nil || e.Code != protocol.CodeUnknownSession {
		t.Errorf("rewind of an unknown session: %+v", e)
	}
	if e := c.doErr(protocol.TypeSessionRewind, map[string]any{"session": s, "to": "-rf"}); e == nil || e.Code != protocol.CodeBadRequest || field(e) != "data.to" {
		t.Errorf("a to that reads as a flag: %+v", e)
	}
}
