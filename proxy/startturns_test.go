//go:build unix

package proxy

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/ccproxy/ccproxy/protocol"
)

// initGate is a FIFO the fake claude (FAKE_INIT_GATE) reads before it
// answers initialize: until open, the session's claude is starting.
type initGate struct {
	t    *testing.T
	path string
	once sync.Once
}

// newInitGate makes the FIFO; at the end of the test (before the server
// stops) a fake still waiting on it is let go.
func newInitGate(t *testing.T) *initGate {
	t.Helper()
	path := filepath.Join(t.TempDir(), "init-gate")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	return &initGate{t: t, path: path}
}

func (g *initGate) env() string { return "FAKE_INIT_GATE=" + g.path }

// open lets the fake answer initialize; it waits until the fake reads the
// FIFO (it has been started). Only the first call does anything.
func (g *initGate) open() { g.once.Do(func() { g.write(os.O_WRONLY) }) }

// release lets a fake that still waits go, without waiting for one.
func (g *initGate) release() { g.once.Do(func() { g.write(os.O_WRONLY | syscall.O_NONBLOCK) }) }

func (g *initGate) write(flag int) {
	f, err := os.OpenFile(g.path, flag, 0)
	if err != nil {
		if flag&syscall.O_NONBLOCK == 0 {
			g.t.Error(err)
		}
		return // O_NONBLOCK: no reader (ENXIO)
	}
	f.Write([]byte{1})
	f.Close()
}

// claude's answer to initialize carries its slash commands: subscribers
// get them as session/commands before any turn (claude prints no
// system/init until one); a subscriber that comes later gets them when it
// turns live; a system/commands_changed event pushes the new list after
// it. Entries with a name ccproxy cannot report are left out.
func TestSessionCommandsBeforeFirstTurn(t *testing.T) {
	t.Parallel()
	cmds := `[{"name":"mycmd","description":"my command (project)","argumentHint":"[x]","aliases":["m"]},{"name":"bad\u0001name"},{"name":""},{"name":"compact","description":"` + strings.Repeat("é", 600) + `"}]`
	ts := startServer(t, Options{}, "FAKE_REPLAY=1", "FAKE_COMMANDS="+cmds)
	c := ts.dial(t)
	s := c.create(nil)
	var got protocol.SessionCommands
	i := c.waitPush(0, protocol.TypeSessionCommands, &got, nil)
	if err := got.Validate(); err != nil {
		t.Fatalf("session/commands does not validate: %v", err)
	}
	if got.Session != s || len(got.Commands) != 2 || got.Commands[0].Name != "mycmd" || got.Commands[0].ArgumentHint != "[x]" ||
		len(got.Commands[0].Aliases) != 1 || got.Commands[1].Name != "compact" || len(got.Commands[1].Description) != protocol.MaxCommandDescriptionBytes {
		t.Fatalf("session/commands: %+v", got)
	}
	if evs := c.events(s); len(evs) != 0 {
		t.Fatalf("events before the first turn: %d", len(evs))
	}

	late := ts.dial(t)
	late.do(protocol.TypeSessionSubscribe, map[string]any{"session": s})
	var again protocol.SessionCommands
	late.waitPush(0, protocol.TypeSessionCommands, &again, nil)
	if len(again.Commands) != 2 {
		t.Fatalf("a later subscriber: %+v", again)
	}

	c.do(protocol.TypeSessionSend, map[string]any{"session": s, "text": "commands later other"})
	_, ev := c.waitEvent(i, s, "commands_changed", func(ev protocol.SessionEvent) bool { return eventType(ev) == "system/commands_changed" })
	var changed protocol.SessionCommands
	c.waitPush(ev, protocol.TypeSessionCommands, &changed, nil)
	if len(changed.Commands) != 2 || changed.Commands[0].Name != "later" || changed.Commands[1].Name != "other" {
		t.Fatalf("after commands_changed: %+v", changed)
	}
}

// A turn sent while claude is still starting is held by the proxy (it has
// not reached claude); session/interrupt withdraws it and is answered at
// once, without waiting for claude, and the send is answered cancelled.
// Once claude is ready the session takes the next turn as usual, and
// claude never ran the withdrawn one.
func TestInterruptWithdrawsTurnHeldWhileStarting(t *testing.T) {
	t.Parallel()
	gate := newInitGate(t)
	ts := startServer(t, Options{}, "FAKE_REPLAY=1", gate.env())
	t.Cleanup(gate.release) // should the test fail before the gate opens
	c := ts.dial(t)
	s := c.create(nil)
	send := c.send(protocol.TypeSessionSend, map[string]any{"session": s, "text": "withdrawn turn"})
	// claude cannot answer before the gate opens: the reply is the proxy's.
	c.do(protocol.TypeSessionInterrupt, map[string]any{"session": s})
	rep := c.reply(send)
	if rep.OK == nil || *rep.OK || rep.Error == nil || rep.Error.Code != protocol.CodeCancelled {
		t.Fatalf("the held turn's session/send: want the error cancelled, got %s", rep.raw)
	}
	from := c.count()
	gate.open()
	c.waitState(from, protocol.StateIdle)
	c.do(protocol.TypeSessionSend, map[string]any{"session": s, "text": "next turn"})
	c.waitEvent(from, s, "the next turn's answer", func(ev protocol.SessionEvent) bool { return textOf(ev) == "echo: next turn" })
	for _, ev := range c.events(s) {
		if strings.Contains(string(ev.Event), "withdrawn turn") {
			t.Fatalf("claude got the withdrawn turn: %s", ev.Event)
		}
	}
}

// An interrupt racing claude becoming ready: the held turn is either
// withdrawn (its send answered cancelled, claude never sees it) or written
// before the interrupt, which then ends it (a "hang" turn ends only by an
// interrupt that reaches claude after it). Never the interrupt first and
// the turn after it, uninterrupted. The session takes the next turn.
func TestInterruptRacesClaudeReady(t *testing.T) {
	t.Parallel()
	gate := newInitGate(t)
	ts := startServer(t, Options{}, "FAKE_REPLAY=1", gate.env())
	t.Cleanup(gate.release)
	c := ts.dial(t)
	s := c.create(nil)
	send := c.send(protocol.TypeSessionSend, map[string]any{"session": s, "text": "hang"})
	opened := make(chan struct{})
	go func() { defer close(opened); gate.open() }()
	c.do(protocol.TypeSessionInterrupt, map[string]any{"session": s})
	<-opened
	rep := c.reply(send)
	switch {
	case rep.OK != nil && *rep.OK:
		// Written before the interrupt: the interrupt ends it (an
		// interrupt before it would leave it hanging: a result success
		// after 60 s).
		ev, _ := c.waitEvent(0, s, "the hang turn's result", isResult)
		if eventType(ev) != "result/error_during_execution" {
			t.Fatalf("the turn was not interrupted (the interrupt reached claude before it): %s", ev.Event)
		}
		t.Log("the turn was written, then interrupted")
	case rep.Error != nil && rep.Error.Code == protocol.CodeCancelled:
		t.Log("the turn was withdrawn")
	default:
		t.Fatalf("session/send: %s", rep.raw)
	}
	from := c.count()
	c.do(protocol.TypeSessionSend, map[string]any{"session": s, "text": "next turn"})
	c.waitEvent(from, s, "the next turn's answer", func(ev protocol.SessionEvent) bool { return textOf(ev) == "echo: next turn" })
}
