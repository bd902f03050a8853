package eventlog

import (
	"bytes"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
)

// The global budget evicts an exited session's memory first, then the
// oldest frames; evicted frames are on disk, not lost.
func TestLogBudgetEvictsExitedFirst(t *testing.T) {
	dir := t.TempDir()
	b := NewBudget(4000)
	log := testDiscardLogger()
	exited := testHub("s-exited", log, b, 1<<20, 1<<20, func() string { return dir })
	live := testHub("s-live", log, b, 1<<20, 1<<20, func() string { return dir })
	other := testHub("s-other", log, b, 1<<20, 1<<20, func() string { return dir })
	for seq := int64(1); seq <= 10; seq++ {
		testAppend(t, other, seq, testFrame(seq, 95)) // the oldest frames
	}
	for seq := int64(1); seq <= 15; seq++ {
		testAppend(t, exited, seq, testFrame(seq, 95))
	}
	exited.SetExited()
	_, exMem0, _ := exited.EvictionInfo()
	_, otherMem0, _ := other.EvictionInfo()
	seq := int64(0)
	appendLive := func(n int) {
		for range n {
			seq++
			if testAppend(t, live, seq, testFrame(seq, 95)) {
				b.Trim()
			}
			if b.Used().Load() > 4000 {
				t.Fatalf("logs hold %d bytes of memory, budget 4000", b.Used().Load())
			}
		}
	}
	appendLive(20) // just over the budget
	_, exMem, _ := exited.EvictionInfo()
	_, otherMem, _ := other.EvictionInfo()
	_, liveMem, _ := live.EvictionInfo()
	if exMem >= exMem0 || otherMem != otherMem0 || liveMem < 1900 {
		t.Fatalf("memory: exited %d (was %d), other %d (was %d), live %d: want the exited session's evicted first", exMem, exMem0, otherMem, otherMem0, liveMem)
	}
	// More: the exited session's memory is all gone, then the oldest
	// frames (the other session's) go.
	appendLive(15)
	_, exMem, _ = exited.EvictionInfo()
	_, otherMem, _ = other.EvictionInfo()
	if exMem != 0 || otherMem >= otherMem0 {
		t.Fatalf("memory: exited %d, other %d (was %d): want the exited one's evicted, then the oldest", exMem, otherMem, otherMem0)
	}
	for _, h := range []*Hub{exited, other, live} {
		if first, _ := h.Seqs(); first != 1 {
			t.Errorf("%s: first seq %d: evicted frames were lost", h.name, first)
		}
	}
}

// testBehindSub is a subscription of a bare client (no connection) that
// fell behind after being live, catching up from seq next.
func testBehindSub(h *Hub, next int64) *Subscription {
	c := &testReader{}
	sub := &Subscription{s: c, key: c, next: next, wasLive: true}
	h.mu.Lock()
	h.subs[c] = sub
	h.mu.Unlock()
	return sub
}

// testReader is a Subscriber that keeps what it is given.
type testReader struct {
	frames     [][]byte
	dead       bool
	killReason string
}

func (r *testReader) Send(frame []byte) { r.frames = append(r.frames, frame) }
func (r *testReader) Push(frame []byte) { r.frames = append(r.frames, frame) }
func (r *testReader) Event(_ int64, frame []byte) Delivery {
	r.frames = append(r.frames, frame)
	return Delivered
}
func (r *testReader) CatchUp()             {}
func (r *testReader) CaughtUp()            {}
func (r *testReader) Forget()              {}
func (r *testReader) Lagged(reason string) { r.dead, r.killReason = true, reason }

// testHub is a hub of a log of memMax and diskMax bytes in dir, a member
// of b (when not nil).
func testHub(name string, log *slog.Logger, b *Budget, memMax, diskMax int64, dir func() string) *Hub {
	return NewHub(HubConfig{Name: name, Log: log, Budget: b, MemMax: memMax, DiskMax: diskMax, Dir: dir})
}

// At the hub: the pushes made while a subscription is behind come out of
// pull right after the event each followed, chunks cut there, whatever the
// chunk size; those made after its last pull come out of goLive first;
// nothing twice.
func TestHubPullKeepsPushesInPlace(t *testing.T) {
	dir := t.TempDir()
	h := testHub("s-test", testDiscardLogger(), nil, 1<<20, 1<<20, func() string { return dir })
	sub := testBehindSub(h, 1)
	var want []string
	for seq := int64(1); seq <= 600; seq++ {
		testAppend(t, h, seq, []byte(fmt.Sprintf("e%d", seq)))
		want = append(want, fmt.Sprintf("e%d", seq))
		if seq%97 == 0 || seq == 255 || seq == 256 || seq == 257 {
			p := fmt.Sprintf("p%d", seq)
			h.Push([]byte(p))
			want = append(want, p)
		}
		if seq == 300 {
			h.PushState([]byte("s300a"), "a")
			h.PushState([]byte("s300b"), "b") // replaces s300a: no event between
			want = append(want, "s300b")
		}
	}
	var got []string
	for range 100 {
		frames, atEnd := h.Pull(sub)
		for _, f := range frames {
			got = append(got, string(f))
		}
		if atEnd {
			break
		}
	}
	h.Push([]byte("late")) // after its last pull, before it turns live
	want = append(want, "late")
	more, ok := h.GoLive(sub, func(*Subscription) [][]byte { return [][]byte{[]byte("extra")} })
	if !ok {
		t.Fatal("goLive refused at the end of the log")
	}
	for _, f := range more {
		got = append(got, string(f))
	}
	want = append(want, "extra")
	if !slices.Equal(got, want) {
		t.Fatalf("frames out of place:\n got  %v\n want %v", got, want)
	}
	if len(sub.pending) != 0 || sub.pendBytes != 0 || sub.stateKey != "b" {
		t.Fatalf("after turning live: %d pending (%d bytes), sentState %q", len(sub.pending), sub.pendBytes, sub.stateKey)
	}
}

// Pushes kept for a subscription that is behind are bounded: over 1 MiB
// its reader is closed (Lagged: 1008 in proxy) with a reason saying why, and nothing more is
// kept.
func TestHubPendingPushesBounded(t *testing.T) {
	dir := t.TempDir()
	h := testHub("s-test", testDiscardLogger(), nil, 1<<20, 1<<20, func() string { return dir })
	testAppend(t, h, 1, []byte("e1"))
	sub := testBehindSub(h, 1)
	big := bytes.Repeat([]byte("x"), 100<<10)
	for range 10 {
		h.Push(big)
	}
	c := sub.s.(*testReader)
	if c.dead || sub.pendBytes != 10*100<<10 {
		t.Fatalf("1000 KiB kept: dead %v, %d bytes kept", c.dead, sub.pendBytes)
	}
	h.Push(big)
	// Lagged: in proxy, the client is closed 1008 (TestLaggedClosesPolicyViolation).
	if !c.dead || !strings.Contains(c.killReason, "slow consumer: 10 pushes (1024000 bytes) waiting while catching up on session s-test") {
		t.Fatalf("over the bound: dead %v, reason %q", c.dead, c.killReason)
	}
	h.Push(big)
	if sub.pendBytes != 0 || len(sub.pending) != 0 {
		t.Fatalf("still kept after the close: %d bytes", sub.pendBytes)
	}
}

// testAppend appends frame to h's log as event seq, which must be the seq
// the hub gives it, and returns whether the memory budget is exceeded.
func testAppend(t *testing.T, h *Hub, seq int64, frame []byte) bool {
	t.Helper()
	var got int64
	_, over := h.Append(func(s int64) []byte { got = s; return frame })
	if got != seq {
		t.Fatalf("the hub gave event seq %d, want %d", got, seq)
	}
	return over
}
