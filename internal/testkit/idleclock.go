package testkit

import (
	"sync"
	"testing"
	"time"
)

// IdleClock stands for time in a proxy's idle timers (proxy.Options
// IdleClock = IdleClock.After): a test fires the armed timer on demand
// instead of waiting for it.
type IdleClock struct{ armed chan *IdleTimer }

// IdleTimer is one timer armed on an IdleClock.
type IdleTimer struct {
	f             func()
	mu            sync.Mutex
	stopped, done bool
}

// NewIdleClock returns a clock that keeps up to 1024 armed timers.
func NewIdleClock() *IdleClock { return &IdleClock{armed: make(chan *IdleTimer, 1024)} }

// After arms a timer running f when fired (d is not used); it returns
// the timer's Stop.
func (c *IdleClock) After(_ time.Duration, f func()) func() bool {
	tm := &IdleTimer{f: f}
	c.armed <- tm
	return tm.stop
}

func (tm *IdleTimer) stop() bool {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	if tm.stopped || tm.done {
		return false
	}
	tm.stopped = true
	return true
}

func (tm *IdleTimer) live() bool {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return !tm.stopped && !tm.done
}

// Fire runs the timer's function unless it was stopped or has run; it
// reports whether it ran.
func (tm *IdleTimer) Fire() bool {
	tm.mu.Lock()
	if tm.stopped || tm.done {
		tm.mu.Unlock()
		return false
	}
	tm.done = true
	tm.mu.Unlock()
	tm.f()
	return true
}

// Live returns the next timer armed and not stopped, waiting up to a
// minute for one to be armed.
func (c *IdleClock) Live(t testing.TB) *IdleTimer {
	t.Helper()
	for {
		select {
		case tm := <-c.armed:
			if tm.live() {
				return tm
			}
		case <-time.After(time.Minute):
			t.Fatal("no idle timer armed within a minute")
		}
	}
}

// Fire fires the next live timer (waiting for one to be armed).
func (c *IdleClock) Fire(t testing.TB) {
	t.Helper()
	for !c.Live(t).Fire() { // stopped meanwhile: the next one
	}
}

// FireArmed fires the live timers armed so far, without waiting, and
// reports how many ran.
func (c *IdleClock) FireArmed() int {
	n := 0
	for {
		select {
		case tm := <-c.armed:
			if tm.Fire() {
				n++
			}
		default:
			return n
		}
	}
}
