package idle

import (
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"
)

// fakeSession records what the Suspender asks of it.
type fakeSession struct {
	st                      Status
	suspends, resumes, ends int
}

func (f *fakeSession) Status() Status      { return f.st }
func (f *fakeSession) Suspend(string)      { f.suspends++ }
func (f *fakeSession) Resume()             { f.resumes++ }
func (f *fakeSession) End() (after func()) { f.ends++; return nil }

// clock arms timers that fire when the test says.
type clock struct{ armed []func() }

func (c *clock) after(_ time.Duration, f func()) func() bool {
	i := len(c.armed)
	c.armed = append(c.armed, f)
	return func() bool {
		if c.armed[i] == nil {
			return false
		}
		c.armed[i] = nil
		return true
	}
}

// fire runs the last armed timer (outside the session's lock, as a timer does).
func (c *clock) fire(t *testing.T) {
	t.Helper()
	i := len(c.armed) - 1
	if i < 0 || c.armed[i] == nil {
		t.Fatal("no timer armed")
	}
	f := c.armed[i]
	c.armed[i] = nil
	f()
}

func newTest() (*sync.Mutex, *fakeSession, *clock, *Suspender) {
	var mu sync.Mutex
	f := &fakeSession{}
	c := &clock{}
	u := New(&mu, f, Config{Timeout: time.Minute, After: c.after, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	return &mu, f, c, u
}

func TestSuspendWakeWhileStopping(t *testing.T) {
	mu, f, c, u := newTest()
	f.st = Status{Idle: true, Quiet: true}
	mu.Lock()
	u.NoteStateLocked(true)
	mu.Unlock()
	c.fire(t)
	if f.suspends != 1 || !u.SuspendedLocked() || !u.AtRestLocked() {
		t.Fatalf("suspends %d suspended %v", f.suspends, u.SuspendedLocked())
	}
	mu.Lock()
	u.WakeLocked() // claude still stopping: resumed once it has stopped
	if f.resumes != 0 {
		t.Fatal("resumed before claude stopped")
	}
	u.StoppedLocked()
	if f.resumes != 1 || u.AtRestLocked() {
		t.Fatalf("resumes %d at rest %v after the stop", f.resumes, u.AtRestLocked())
	}
	if !u.ResumedLocked() || u.SuspendedLocked() {
		t.Fatal("the resume was not noted")
	}
	mu.Unlock()
	u.Wait()
}

func TestNotQuietRearms(t *testing.T) {
	mu, f, c, u := newTest()
	f.st = Status{Idle: true} // a permission asked outside a turn
	mu.Lock()
	u.NoteStateLocked(true)
	mu.Unlock()
	c.fire(t)
	if f.suspends != 0 {
		t.Fatal("suspended while not quiet")
	}
	f.st.Quiet = true
	c.fire(t) // armed again
	if f.suspends != 1 {
		t.Fatal("not suspended once quiet")
	}
	mu.Lock()
	u.StoppedLocked() // nothing wanted: at rest
	if f.resumes != 0 || !u.AtRestLocked() {
		t.Fatal("want at rest")
	}
	u.CloseLocked() // at rest: the exit is reported now
	mu.Unlock()
	if f.ends != 1 {
		t.Fatalf("ends %d, want 1", f.ends)
	}
	u.Wait()
}

func TestDisarmedTimerDoesNothing(t *testing.T) {
	mu, f, _, u := newTest()
	f.st = Status{Idle: true, Quiet: true}
	mu.Lock()
	u.NoteStateLocked(true)
	g := u.GenLocked()
	u.NoteStateLocked(false) // running again
	mu.Unlock()
	u.Fired(g) // the earlier timer, already firing when it was stopped
	if f.suspends != 0 {
		t.Fatal("a disarmed timer suspended the session")
	}
	u.Wait()
}
