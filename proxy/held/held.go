// Package held keeps the user turns a proxy session holds for a claude
// that is not ready: one still starting (it has not answered initialize),
// being replaced by a restart, or suspended. A held turn has not reached
// claude: it is written once claude is ready (the session's flush, in
// order), withdrawn by session/interrupt (its session/send answered
// cancelled), or answered session_exited when no claude will come. The
// queue is bounded in turns (MaxTurns, as many as claude's stdin queue
// takes) and in bytes (MaxBytes); a turn beyond is refused by its caller
// (limit_exceeded).
//
// # Data flow
//
//	session/send while claude is not ready ─► Queue.Add (false: full) ─► the flush: Queue.Pop ─► claude's stdin,
//	  then Turn.Reply; an interrupt or the end of the session: Queue.Take ─► Turns.Reply(err)
//
// # Goroutines and locks
//
// None: a Queue is not safe for concurrent use; its owner (a proxy
// Session) guards it with its lock (Session.mu). Replies are called by
// the owner once it released its lock.
package held

import "github.com/ccproxy/ccproxy/proxy/claudecli"

const (
	// MaxTurns bounds the turns held: as many as claude's stdin queue
	// takes.
	MaxTurns = claudecli.DefaultStdinQueue
	// MaxBytes bounds the bytes of the turns held.
	MaxBytes = 64 << 20
)

// Turn is one held user turn: the line for claude's stdin and the reply
// of its session/send.
type Turn struct {
	Line  []byte
	Reply func(error)
}

// Queue is the turns held, in the order sent.
type Queue struct {
	turns []Turn
	bytes int // the size of the lines held
}

// Add holds a turn, unless the queue is full: MaxTurns turns, or MaxBytes
// with line (false; nothing is held then).
func (q *Queue) Add(line []byte, reply func(error)) bool {
	if len(q.turns) >= MaxTurns || q.bytes+len(line) > MaxBytes {
		return false
	}
	q.turns = append(q.turns, Turn{Line: line, Reply: reply})
	q.bytes += len(line)
	return true
}

// Len is the number of turns held.
func (q *Queue) Len() int { return len(q.turns) }

// Pop takes the first turn held (false: none).
func (q *Queue) Pop() (Turn, bool) {
	if len(q.turns) == 0 {
		return Turn{}, false
	}
	t := q.turns[0]
	q.turns[0] = Turn{}
	q.turns = q.turns[1:]
	q.bytes -= len(t.Line)
	return t, true
}

// Take takes every turn held, leaving the queue empty.
func (q *Queue) Take() Turns {
	ts := q.turns
	q.turns, q.bytes = nil, 0
	return ts
}

// Turns are turns taken from a queue.
type Turns []Turn

// Reply answers each turn with err (called without the owner's lock).
func (ts Turns) Reply(err error) {
	for _, t := range ts {
		t.Reply(err)
	}
}
