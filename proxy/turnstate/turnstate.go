package turnstate

import (
	"crypto/sha256"
	"log/slog"
	"slices"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/stream"
)

// The state of a session follows claude's events, not what was sent:
// claude also starts turns by itself (after a background task ends it
// prints task_* events, then a whole turn: system/init … result, with no
// user message), and it runs user turns written during a turn after it,
// merging those queued together into one turn, or feeding one into the
// running turn at its next tool result (docs/CLI-NOTES.md).
//
//   - A turn starts with system/init (or, should that be missing, with
//     the first assistant or stream_event): running.
//   - A user turn written to claude is queued until its replay
//     (--replay-user-messages: a user event with isReplay) shows which turn
//     took it; replays are matched by text (merged turns are joined with
//     "\n"), and one that matches nothing takes every queued turn.
//   - A result ends the running turn: idle when no written turn is still
//     queued, otherwise running until the result of the turn that takes it.
//     An interrupt ends a turn the same way (result error_during_execution).
//   - A deferred restart starts only when no turn is in flight.
//   - A slash command claude runs itself (/cost, /compact) is not echoed:
//     a result that asked the model nothing (num_turns 0) in a turn that
//     took no echoed user turn ends the oldest queued turn if it is one.
//   - A claude that has echoed no user turn so far (an impersonation without
//     --replay-user-messages) is taken to end one written turn per result.
//
// Only the current process's events count; a restart begins with none in
// flight and resets the turn state.

// Key identifies a user turn written to claude, to recognize its
// replay: the length and sha256 of its text, and whether it is a slash
// command.
type Key struct {
	n     int
	sum   [sha256.Size]byte
	slash bool
}

// MaxQueued bounds the user turns written to claude and not yet seen
// starting; beyond, session/send gets limit_exceeded.
const MaxQueued = 1024

func keyOf(text string) Key {
	return Key{n: len(text), sum: sha256.Sum256([]byte(text)), slash: strings.HasPrefix(text, "/")}
}

// userText is the text of a user message's content, for matching turns with
// their replays: the string, or its text blocks joined with "\n". ok is
// false for tool results and content of another shape.
func userText(content gjson.Result) (text string, ok bool) {
	if content.Type == gjson.String {
		return content.String(), true
	}
	if !content.IsArray() {
		return "", false
	}
	var parts []string
	ok = true
	content.ForEach(func(_, b gjson.Result) bool {
		switch b.Get("type").String() {
		case "text":
			parts = append(parts, b.Get("text").String())
		case "tool_result":
			ok = false
		}
		return ok
	})
	return strings.Join(parts, "\n"), ok
}

// Turns is the turn state of a session's current process. It is not safe
// for concurrent use: its owner's lock guards it (proxy's Session.mu).
// The zero value is the state of a new process.
type Turns struct {
	inTurn       bool  // claude runs a turn: its system/init (or first event) was seen, its result not yet
	queued       []Key // user turns written to claude and not yet seen starting (their replay), oldest first
	replays      bool  // the current process has replayed a user turn (it echoes them)
	turnReplayed bool  // a user turn was replayed in the running turn
}

// Busy reports whether a turn is in flight: claude runs one (a user
// turn or one it started by itself), or a user turn was written that has
// not started yet.
func (t *Turns) Busy() bool { return t.inTurn || len(t.queued) > 0 }

// StateName is the session's state the turns make: running or idle.
func (t *Turns) StateName() string {
	if t.Busy() {
		return protocol.StateRunning
	}
	return protocol.StateIdle
}

// Queue notes that the user turn line (built by package stream) is being
// written to claude, and returns its key. The caller settles the state.
func (t *Turns) Queue(line []byte) Key {
	text, _ := userText(gjson.GetBytes(line, "message.content"))
	k := keyOf(text)
	t.queued = append(t.queued, k)
	return k
}

// Queued is the number of user turns written and not yet seen starting.
func (t *Turns) Queued() int { return len(t.queued) }

// EndAll forgets every turn in flight (the process exited).
func (t *Turns) EndAll() { t.inTurn, t.queued = false, nil }

// Reset is the turn state of a new process: none in flight, nothing
// echoed yet.
func (t *Turns) Reset() { *t = Turns{} }

// Event moves the turn state on an event of the current process and
// reports whether the session's state must be settled.
func (t *Turns) Event(ev *stream.Event, log *slog.Logger) (settle bool) {
	switch ev.Type {
	case stream.TypeSystem:
		if ev.Subtype == stream.SubtypeInit {
			t.inTurn = true
			return true
		}
	case stream.TypeAssistant, stream.TypeStreamEvent:
		if !t.inTurn {
			t.inTurn = true
			return true
		}
	case stream.TypeUser:
		// Replays matter only while turns are queued (so the common case
		// parses nothing), and only inside a turn: outside one, claude
		// replays the output of commands such as set_model.
		if len(t.queued) == 0 || !t.inTurn || !gjson.GetBytes(ev.JSON, "isReplay").Bool() {
			return false
		}
		text, ok := userText(gjson.GetBytes(ev.JSON, "message.content"))
		if !ok || strings.HasPrefix(text, "<local-command-") {
			return false
		}
		t.take(text, log)
		t.replays, t.turnReplayed = true, true
	case stream.TypeResult:
		switch {
		case t.turnReplayed || len(t.queued) == 0:
		case !t.replays:
			// A claude that echoes no user turn: each result ends one.
			t.queued = slices.Delete(t.queued, 0, 1)
		case t.queued[0].slash && gjson.GetBytes(ev.JSON, "num_turns").Int() == 0:
			// A command claude ran itself (/cost, /compact): its turn
			// echoes no user message and asks the model nothing.
			t.queued = slices.Delete(t.queued, 0, 1)
		}
		t.inTurn, t.turnReplayed = false, false
		return true
	}
	return false
}

// take removes the queued turns a replay with text stands for: the
// oldest ones whose texts, joined with "\n", are text; when none match,
// all of them (claude took what it had).
func (t *Turns) take(text string, log *slog.Logger) {
	pos := 0
	for i, k := range t.queued {
		if pos+k.n > len(text) || sha256.Sum256([]byte(text[pos:pos+k.n])) != k.sum {
			break
		}
		pos += k.n
		if pos == len(text) {
			t.queued = slices.Delete(t.queued, 0, i+1)
			return
		}
		if text[pos] != '\n' {
			break
		}
		pos++
	}
	log.Debug("a replayed user message matches no queued turn; taking them all", "queued", len(t.queued))
	t.queued = t.queued[:0]
}

// Unqueue forgets a queued turn that could not be written.
func (t *Turns) Unqueue(k Key) {
	for i := len(t.queued) - 1; i >= 0; i-- {
		if t.queued[i] == k {
			t.queued = slices.Delete(t.queued, i, i+1)
			return
		}
	}
}
