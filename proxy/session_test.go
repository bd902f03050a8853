package proxy

import (
	"encoding/json"
	"strings"
	"testing"

	protocol "github.com/ccproxy/ccproxy/webview-protocol"
)

// textOf returns the text of an assistant event ("" for others).
func textOf(ev protocol.SessionEvent) string {
	var e struct {
		Type    string `json:"type"`
		Message struct {
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		} `json:"message"`
	}
	json.Unmarshal(ev.Event, &e)
	if e.Type != "assistant" {
		return ""
	}
	var b strings.Builder
	for _, c := range e.Message.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

// turn sends text and waits for the turn's result; it returns the events
// of the turn.
func (c *wsClient) turn(session, text string) []protocol.SessionEvent {
	c.t.Helper()
	from := c.count()
	c.do(protocol.TypeSessionSend, map[string]any{"session": session, "text": text})
	c.waitEvent(from, session, "result of "+text, isResult)
	var out []protocol.SessionEvent
	for _, f := range c.snapshot()[from:] {
		if f.ev != nil && f.ev.Session == session {
			out = append(out, *f.ev)
		}
	}
	return out
}

func TestMultiTurnChat(t *testing.T) {
	ts := startServer(t, Options{})
	c := ts.dial(t)
	var hello protocol.Hello
	c.waitPush(0, protocol.TypeHello, &hello, nil)
	if hello.Protocol != "1" || hello.Claude == nil || hello.Claude.Version != "2.1.329" {
		t.Errorf("hello = %+v", hello)
	}
	s := c.create(nil)
	evs := c.turn(s, "hello there")
	if got := textOf(evs[len(evs)-2]); got != "echo: hello there" {
		t.Errorf("assistant text = %q", got)
	}
	c.turn(s, "second turn")
	all := c.events(s)
	checkSeqs(t, all, 1)
	if len(all) != 8 {
		t.Errorf("%d events, want 8 (init, delta, assistant, result per turn)", len(all))
	}
}
