package wsconn

import "sync"

// Budget is a count of bytes in use, bounded; safe for concurrent use.
type Budget struct {
	mu   sync.Mutex
	max  int64
	used int64
}

// NewBudget returns a budget of max bytes.
func NewBudget(max int64) *Budget { return &Budget{max: max} }

// Max is the budget's bound.
func (b *Budget) Max() int64 { return b.max }

// TryAcquire takes n bytes if they fit, and reports whether they did; it
// never waits.
func (b *Budget) TryAcquire(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n > b.max {
		return false
	}
	b.used += n
	return true
}

// Release gives back n bytes taken by TryAcquire.
func (b *Budget) Release(n int64) {
	b.mu.Lock()
	b.used -= n
	b.mu.Unlock()
}

// Used returns the bytes taken now.
func (b *Budget) Used() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}
