package eventlog

import (
	"sync"
	"sync/atomic"
)

// Member is what a Budget trims: the owner of one Log (in proxy, a
// session's hub). Each method takes the member's own lock, the one that
// guards its Log.
type Member interface {
	// EvictionInfo reports whether the member's session exited, the
	// memory bytes of its log and the stamp of its oldest frame in memory
	// (Log.MemBytes, Log.OldestStamp).
	EvictionInfo() (exited bool, mem, oldest int64)
	// Spill moves the oldest frames to disk until memory holds at most
	// keep bytes (Log.TrimMem); it returns the bytes freed.
	Spill(keep int64) int64
	// LogBytes is the memory and disk bytes of its log.
	LogBytes() (mem, disk int64)
}

// Budget bounds the memory of all replay logs together: when over
// max, exited sessions' logs are spilled to disk first, then the oldest
// events of any log.
//
// mu guards the members and serializes trims; it is never taken with a
// session's or a member's lock held (Trim and Bytes take member locks
// under it).
type Budget struct {
	max  int64
	used atomic.Int64 // memory bytes of every log (Log.global)

	mu   sync.Mutex
	hubs map[Member]struct{}
}

// NewBudget is a budget of max memory bytes for all logs.
func NewBudget(max int64) *Budget { return &Budget{max: max, hubs: map[Member]struct{}{}} }

// Max is the budget's bound.
func (b *Budget) Max() int64 { return b.max }

// Used is the memory bytes of every log: hand it to New as global.
func (b *Budget) Used() *atomic.Int64 { return &b.used }

// Over tells whether the logs hold more than the budget (then call Trim
// with no member's or session's lock held).
func (b *Budget) Over() bool { return b.used.Load() > b.max }

// Add makes h a member. It takes b.mu: no member's lock may be held.
func (b *Budget) Add(h Member) {
	b.mu.Lock()
	b.hubs[h] = struct{}{}
	b.mu.Unlock()
}

// Remove forgets h. It takes b.mu: no member's lock may be held.
func (b *Budget) Remove(h Member) {
	b.mu.Lock()
	delete(b.hubs, h)
	b.mu.Unlock()
}

// Trim spills memory to disk until the logs are under 15/16 of the
// budget: the exited sessions' logs first, then the oldest frames.
func (b *Budget) Trim() {
	b.mu.Lock()
	defer b.mu.Unlock()
	target := b.max - b.max/16
	if b.used.Load() <= target {
		return
	}
	for h := range b.hubs {
		if exited, mem, _ := h.EvictionInfo(); exited && mem > 0 {
			h.Spill(max(0, mem-(b.used.Load()-target)))
			if b.used.Load() <= target {
				return
			}
		}
	}
	for b.used.Load() > target {
		var oldest Member
		var oldestStamp, oldestMem int64
		for h := range b.hubs {
			if _, mem, st := h.EvictionInfo(); mem > 0 && (oldest == nil || st < oldestStamp) {
				oldest, oldestStamp, oldestMem = h, st, mem
			}
		}
		if oldest == nil {
			return
		}
		// A batch at a time (1 MiB or the excess), then look again.
		need := min(b.used.Load()-target, 1<<20)
		if oldest.Spill(max(0, oldestMem-need)) == 0 {
			return
		}
	}
}

// Bytes returns the memory and disk bytes of every replay log. It takes
// b.mu, then each member's lock; no session lock may be held.
func (b *Budget) Bytes() (mem, disk int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for h := range b.hubs {
		m, d := h.LogBytes()
		mem += m
		disk += d
	}
	return mem, disk
}
