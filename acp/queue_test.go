package acp

import "testing"

// A prompt takes the turn when none runs; one arriving meanwhile must
// wait (with the running turn to interrupt and the wake channel), and an
// older waiting prompt gives way to a newer one.
func TestPromptQueueTakeOrder(t *testing.T) {
	q := newPromptQueue()
	one, two, three := q.startLocked(), q.startLocked(), q.startLocked()
	t1, t2, t3 := newTurn(), newTurn(), newTurn()
	q.newestLocked(one)
	if got, _, _ := q.takeLocked(one, t1, false); got != took || q.turn != t1 {
		t.Fatalf("the first prompt: %v (turn %p), want took (%p)", got, q.turn, t1)
	}
	wake := q.wake
	q.newestLocked(two)
	if !isDone(wake) {
		t.Error("a newer prompt did not wake the waiting ones")
	}
	got, old, w := q.takeLocked(two, t2, false)
	if got != mustWait || old != t1 || w != q.wake {
		t.Errorf("the second prompt while the first runs: %v, old %p, want mustWait with the running turn %p", got, old, t1)
	}
	q.newestLocked(three)
	if got, _, _ := q.takeLocked(two, t2, false); got != stale {
		t.Errorf("an older prompt after a newer one came: %v, want stale (it gives way)", got)
	}
	q.endTurnLocked(t1)
	if !isDone(t1.done) || q.turn != nil {
		t.Error("endTurnLocked did not end the running turn")
	}
	if got, _, _ := q.takeLocked(three, t3, false); got != took {
		t.Errorf("the newest prompt once the turn ended: %v, want took", got)
	}
	if got, _, _ := q.takeLocked(three, newTurn(), true); got != stale {
		t.Errorf("a prompt of a closing session: %v, want stale", got)
	}
}

// A session/cancel waits until every prompt the guard passed on before it
// has begun, then cancels them all, but none started after.
func TestPromptQueueCancelBefore(t *testing.T) {
	q := newPromptQueue()
	q.receiveLocked()
	q.receiveLocked()
	q.startLocked()
	if !q.cancelBeforeLocked() {
		t.Fatal("a cancel with a prompt not yet begun did not wait")
	}
	two := q.startLocked()
	wake := q.wake
	if q.cancelBeforeLocked() {
		t.Fatal("a cancel with every prompt begun still waits")
	}
	if !isDone(wake) {
		t.Error("the cancel did not wake the waiting prompts")
	}
	if got, _, _ := q.takeLocked(two, newTurn(), false); got != stale {
		t.Errorf("a prompt sent before the cancel: %v, want stale", got)
	}
	q.receiveLocked()
	three := q.startLocked()
	q.newestLocked(three)
	if got, _, _ := q.takeLocked(three, newTurn(), false); got != took {
		t.Errorf("a prompt sent after the cancel: %v, want took", got)
	}
	q.receiveLocked() // a session/prompt that never reaches Prompt
	q.resyncLocked()
	if q.cancelBeforeLocked() {
		t.Error("after resync a cancel still waits")
	}
}

// A turn's end goes to its prompt once (a second result waits not); an
// abandoned turn (its prompt answered after a failed interrupt) is ended
// by its result instead, and blocks prompts until then.
func TestPromptQueueDeliver(t *testing.T) {
	q := newPromptQueue()
	if q.deliverLocked(&Result{}) {
		t.Error("a result with no turn ended one")
	}
	t1 := newTurn()
	n := q.startLocked()
	q.newestLocked(n)
	q.takeLocked(n, t1, false)
	r := &Result{Stop: "end_turn"}
	if q.deliverLocked(r) || q.deliverLocked(&Result{}) {
		t.Error("delivering to a running turn ended it")
	}
	if got := <-t1.result; got != r {
		t.Errorf("the turn got %+v, want the first result", got)
	}
	q.abandoned = true
	n2 := q.startLocked()
	q.newestLocked(n2)
	if got, _, _ := q.takeLocked(n2, newTurn(), false); got != blocked {
		t.Errorf("a prompt while an abandoned turn runs on: %v, want blocked", got)
	}
	if !q.deliverLocked(nil) || q.turn != nil || !isDone(t1.done) || q.abandoned {
		t.Error("the abandoned turn's end did not end it")
	}
}

func isDone(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
