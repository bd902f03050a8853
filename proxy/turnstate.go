package proxy

// Turn state: which turn claude runs, read from its events (see the
// comment below and proxy/doc.go's State section).

import (
	"crypto/sha256"
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

// turnKey identifies a user turn written to claude, to recognize its
// replay: the length and sha256 of its text, and whether it is a slash
// command.
type turnKey struct {
	n     int
	sum   [sha256.Size]byte
	slash bool
}

// maxQueuedTurns bounds the user turns written to claude and not yet seen
// starting; beyond, session/send gets limit_exceeded.
const maxQueuedTurns = 1024

func keyOf(text string) turnKey {
	return turnKey{n: len(text), sum: sha256.Sum256([]byte(text)), slash: strings.HasPrefix(text, "/")}
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

// queueTurnLocked notes that the user turn line (built by package stream)
// is being written to claude, and returns its key.
func (s *Session) queueTurnLocked(line []byte) turnKey {
	text, _ := userText(gjson.GetBytes(line, "message.content"))
	k := keyOf(text)
	s.queued = append(s.queued, k)
	s.settleStateLocked()
	return k
}

// turnEventLocked moves the turn state on an event of the current process.
func (s *Session) turnEventLocked(ev *stream.Event) {
	switch ev.Type {
	case stream.TypeSystem:
		if ev.Subtype == stream.SubtypeInit {
			s.inTurn = true
			s.settleStateLocked()
		}
	case stream.TypeAssistant, stream.TypeStreamEvent:
		if !s.inTurn {
			s.inTurn = true
			s.settleStateLocked()
		}
	case stream.TypeUser:
		// Replays matter only while turns are queued (so the common case
		// parses nothing), and only inside a turn: outside one, claude
		// replays the output of commands such as set_model.
		if len(s.queued) == 0 || !s.inTurn || !gjson.GetBytes(ev.JSON, "isReplay").Bool() {
			return
		}
		text, ok := userText(gjson.GetBytes(ev.JSON, "message.content"))
		if !ok || strings.HasPrefix(text, "<local-command-") {
			return
		}
		s.takeQueuedLocked(text)
		s.replays, s.turnReplayed = true, true
	case stream.TypeResult:
		switch {
		case s.turnReplayed || len(s.queued) == 0:
		case !s.replays:
			// A claude that echoes no user turn: each result ends one.
			s.queued = slices.Delete(s.queued, 0, 1)
		case s.queued[0].slash && gjson.GetBytes(ev.JSON, "num_turns").Int() == 0:
			// A command claude ran itself (/cost, /compact): its turn
			// echoes no user message and asks the model nothing.
			s.queued = slices.Delete(s.queued, 0, 1)
		}
		s.inTurn, s.turnReplayed = false, false
		s.settleStateLocked()
	}
}

// takeQueuedLocked removes the queued turns a replay with text stands for:
// the oldest ones whose texts, joined with "\n", are text; when none
// match, all of them (claude took what it had).
func (s *Session) takeQueuedLocked(text string) {
	pos := 0
	for i, k := range s.queued {
		if pos+k.n > len(text) || sha256.Sum256([]byte(text[pos:pos+k.n])) != k.sum {
			break
		}
		pos += k.n
		if pos == len(text) {
			s.queued = slices.Delete(s.queued, 0, i+1)
			return
		}
		if text[pos] != '\n' {
			break
		}
		pos++
	}
	s.log.Debug("a replayed user message matches no queued turn; taking them all", "queued", len(s.queued))
	s.queued = s.queued[:0]
}

// unqueueLocked forgets a queued turn that could not be written.
func (s *Session) unqueueLocked(k turnKey) {
	for i := len(s.queued) - 1; i >= 0; i-- {
		if s.queued[i] == k {
			s.queued = slices.Delete(s.queued, i, i+1)
			return
		}
	}
}

// settleStateLocked sets running or idle from the turn state (while the
// session is running or idle: not while it starts, restarts or has
// exited), and begins a deferred restart once no turn is in flight.
func (s *Session) settleStateLocked() {
	if s.state == protocol.StateRunning || s.state == protocol.StateIdle {
		s.setStateLocked(s.busyState(), "")
	}
	if s.restartWanted && !s.busyLocked() {
		s.beginRestartLocked()
	}
}
