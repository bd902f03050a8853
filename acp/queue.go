package acp

import "sync"

// promptQueue is the order of a session's prompts and its running turn:
// which prompt may run (one turn at a time), which were cancelled before
// their turn began (session/cancel), which newer prompt replaces the
// running turn, and the handing of a turn's end to its prompt. It holds no
// lock of its own: it is a part of its session, guarded by session.mu,
// and every method whose name ends in Locked is called with that held
// (entered is a channel used without it).
//
// Numbers: the guard counts each session/prompt the SDK will dispatch
// (received, receiveLocked), each Prompt takes the next number as it
// starts (started, startLocked), and a session/cancel cancels every
// prompt numbered up to the received count once started caught up with
// it (cancelBeforeLocked). The newest prompt (latest) replaces the
// running turn; an older one still waiting gives way. Waiting prompts
// look again when wake is closed (and replaced).
type promptQueue struct {
	turn      *turn         // the running turn (nil between turns)
	abandoned bool          // the running turn's prompt answered cancelled after a failed interrupt; the turn's result ends it
	cancelled bool          // the running turn is interrupted (or being interrupted)
	received  int           // session/prompt requests the guard passed on for this session
	started   int           // session/prompt requests that reached Prompt (each Prompt's number)
	entered   chan struct{} // a Prompt has started (cap 1): for the guard's wait before a session/cancel
	cancelTo  int           // prompts numbered up to this were cancelled (session/cancel) before their turn began
	latest    int           // the newest valid prompt: an older one still waiting for its turn gives way
	wake      chan struct{} // closed (and replaced) when cancelTo or latest changes: waiting prompts look again
}

func newPromptQueue() promptQueue {
	return promptQueue{entered: make(chan struct{}, 1), wake: make(chan struct{})}
}

// turn is one prompt's turn of a session.
type turn struct {
	result chan *Result  // the turn's end, for its prompt (room for one)
	gaveUp chan struct{} // closed (under session.mu) when an interrupt of the turn failed: its prompt answers cancelled
	done   chan struct{} // closed (under session.mu) when the turn is over: the session takes another
	sent   chan struct{} // closed when session/send was written (the proxy takes an interrupt after it), or when the turn was not sent (unsent): an interrupt goes after it

	unsent bool // the prompt returned before sending the turn (a resume failed, or it was cancelled or closed meanwhile): nothing to interrupt (session.mu)

	ending       bool           // its prompt is returning: no new interrupt targets it (session.mu)
	interrupting sync.WaitGroup // interrupts of it in flight: the turn ends after them, so none reaches the next
}

func newTurn() *turn {
	return &turn{result: make(chan *Result, 1), gaveUp: make(chan struct{}), done: make(chan struct{}), sent: make(chan struct{})}
}

// endTurnLocked ends t if it is the running turn.
func (q *promptQueue) endTurnLocked(t *turn) {
	if q.turn == t {
		q.turn, q.abandoned = nil, false
		close(t.done)
	}
}

// wakeLocked has the prompts waiting for their turn look again.
func (q *promptQueue) wakeLocked() {
	close(q.wake)
	q.wake = make(chan struct{})
}

// receiveLocked counts a session/prompt the guard passes on to the SDK.
func (q *promptQueue) receiveLocked() { q.received++ }

// startLocked numbers a Prompt that has begun, and returns its number.
func (q *promptQueue) startLocked() int {
	q.started++
	return q.started
}

// enter signals the guard (waiting in cancelBefore) that a Prompt began.
// It never blocks; it is called without the lock.
func (q *promptQueue) enter() {
	select {
	case q.entered <- struct{}{}:
	default:
	}
}

// newestLocked notes that prompt seq is valid: if it is the newest, older
// prompts waiting for their turn give way to it.
func (q *promptQueue) newestLocked(seq int) {
	if seq > q.latest {
		q.latest = seq
		q.wakeLocked()
	}
}

// take is what takeLocked decided for a prompt waiting for its turn.
type take int

const (
	took     take = iota // the prompt's turn is the running turn now
	stale                // cancelled, replaced or closed before its turn began: it answers cancelled, nothing sent
	blocked              // the running turn's prompt gave up on it and it has not ended: the prompt is refused
	mustWait             // another turn runs: interrupt it, wait for its end (or wake), look again
)

// takeLocked decides for prompt seq, whose turn is t: when no turn runs,
// t becomes the running turn (not cancelled). When another runs, it
// returns that turn and the wake channel to wait on with mustWait.
// closing is the session's closing flag.
func (q *promptQueue) takeLocked(seq int, t *turn, closing bool) (take, *turn, <-chan struct{}) {
	switch {
	case seq <= q.cancelTo || seq < q.latest || closing:
		return stale, nil, nil
	case q.turn == nil:
		q.turn, q.cancelled = t, false
		return took, nil, nil
	case q.abandoned:
		return blocked, nil, nil
	}
	return mustWait, q.turn, q.wake
}

// cancelBeforeLocked is a session/cancel's step in the guard: once every
// session/prompt passed on before it has its number (started caught up
// with received), those up to here are cancelled (the running one by
// Cancel's interrupt) and it reports false; else true: wait on entered
// and look again.
func (q *promptQueue) cancelBeforeLocked() (behind bool) {
	if q.started < q.received {
		return true
	}
	q.cancelTo = q.received
	q.wakeLocked()
	return false
}

// resyncLocked puts the counts back in step when a session/prompt the
// guard counted never reached Prompt.
func (q *promptQueue) resyncLocked() { q.received = q.started }

// deliverLocked hands a turn's end (nil: the session ended) to the
// running turn's prompt, and reports whether it ended an abandoned turn
// instead (its prompt had answered already).
func (q *promptQueue) deliverLocked(r *Result) (endedAbandoned bool) {
	t := q.turn
	switch {
	case t == nil:
	case q.abandoned: // its prompt has answered: the turn is over now
		q.endTurnLocked(t)
		return true
	default:
		select {
		case t.result <- r:
		default: // a result is already waiting
		}
	}
	return false
}

// runsOn reports whether t, whose prompt gave up on it, has not ended: its
// result has not come (deliverLocked, under s.mu, either sent it to
// t.result or will see the turn abandoned).
func (s *session) runsOn(t *turn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(t.result) == 0
}
