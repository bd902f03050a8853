package proxy

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gorilla/websocket"

	"github.com/ccproxy/ccproxy/protocol"
)

// TestInvalidUTF8Frames: a text frame that is not valid UTF-8 — in the
// frame's structure, in the id, in a field value — gets a bad_request
// reply with id null that is itself valid UTF-8 and never echoes the raw
// bytes; the connection stays open, and another client of the same
// session is not affected.
func TestInvalidUTF8Frames(t *testing.T) {
	ts := startServer(t, Options{})
	c, other := ts.dial(t), ts.dial(t)
	s := c.create(nil)
	other.do(protocol.TypeSessionSubscribe, map[string]any{"session": s})

	for _, tc := range []struct{ name, frame string }{
		{"frame", "{\"type\":\"session/list\",\"id\":1,\"data\":{}}\xff\xfe"},
		{"id", "{\"type\":\"session/list\",\"id\":\"req-\xff\xfe-1\",\"data\":{}}"},
		{"field", "{\"type\":\"session/send\",\"id\":\"r-2\",\"data\":{\"session\":\"" + s + "\",\"text\":\"hi \xc3\x28 there\"}}"},
		{"type", "{\"type\":\"session/\xe2\x82\",\"id\":\"r-3\",\"data\":{}}"},
		{"session", "{\"type\":\"session/subscribe\",\"id\":\"r-4\",\"data\":{\"session\":\"s-\xff\"}}"},
	} {
		from := c.count()
		if err := c.conn.WriteMessage(websocket.TextMessage, []byte(tc.frame)); err != nil {
			t.Fatal(err)
		}
		f, _ := c.waitFor(from, "the reply to the frame with invalid UTF-8 in its "+tc.name, func(f rawFrame) bool { return f.Type == protocol.TypeReply })
		if !utf8.Valid(f.raw) {
			t.Errorf("%s: the reply is not valid UTF-8: %q", tc.name, f.raw)
		}
		if f.OK == nil || *f.OK || f.Error == nil || f.Error.Code != protocol.CodeBadRequest || string(f.ID) != "null" ||
			!strings.Contains(f.Error.Message, "not valid UTF-8") {
			t.Errorf("%s: want a bad_request about UTF-8 with id null, got %s", tc.name, f.raw)
		}
	}
	// The connection and the session live on, for both clients.
	fromOther := other.count()
	c.turn(s, "still fine")
	other.waitEvent(fromOther, s, "the turn, seen by the other client", func(ev protocol.SessionEvent) bool { return textOf(ev) == "echo: still fine" })
	checkSeqs(t, other.events(s), 1)
}
