package remote

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestLoginLimiter: failures are charged to a bucket per address that
// refills; the table is an LRU bounded in entries: the address whose last
// failure is oldest is forgotten first (reported once); a login forgets
// the address.
func TestLoginLimiter(t *testing.T) {
	now := time.Unix(1000, 0)
	l := newLoginLimiter(2, 10*time.Second, 3)
	l.now = func() time.Time { return now }
	fail := func(key string) bool {
		ok, _, _, _ := l.fail(key)
		return ok
	}
	for i, want := range []bool{true, true, false} {
		if ok := fail("a"); ok != want {
			t.Fatalf("a failure %d: %v", i+1, ok)
		}
	}
	if ok, wait, log, _ := l.fail("a"); ok || wait != 10*time.Second || log {
		t.Errorf("a again: ok %v, wait %v, log %v; want refused for 10s, not logged again", ok, wait, log)
	}
	now = now.Add(10 * time.Second)
	if !fail("a") {
		t.Errorf("a after a refill: refused")
	}
	fail("b")
	fail("c")
	fail("a") // a is now the most recent; b the least
	if _, _, _, evicted := l.fail("d"); !evicted {
		t.Error("the first eviction was not reported")
	}
	if _, kept := l.entries["b"]; kept || l.size() != 3 {
		t.Errorf("after d: b kept %v, %d remembered; want b forgotten, 3", kept, l.size())
	}
	if _, _, _, evicted := l.fail("e"); evicted {
		t.Error("the second eviction was reported again")
	}
	for i := range 1000 {
		l.fail(fmt.Sprint("x", i))
		if l.size() > 3 || len(l.entries) != l.lru.Len() {
			t.Fatalf("after %d newcomers: %d entries, %d in the map; want at most 3, equal", i+1, l.lru.Len(), len(l.entries))
		}
	}
	l.fail("z")
	l.forget("z")
	if _, kept := l.entries["z"]; kept || l.size() != 2 {
		t.Errorf("forget: z kept %v, size %d", kept, l.size())
	}

	for _, tc := range []struct{ in, want string }{
		{"192.0.2.7:5555", "192.0.2.7"},
		{"[2001:db8:1:2:3:4:5:6]:443", "2001:db8:1:2::/64"},
		{"[::ffff:192.0.2.7]:1", "192.0.2.7"},
		{strings.Repeat("x", 100), strings.Repeat("x", maxClientKey) + "…"},
	} {
		if got := clientKey(tc.in); got != tc.want {
			t.Errorf("clientKey(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestLoginLimiterBytes: a full table of the longest keys (IPv6 /64s)
// takes under 300 bytes an address, the bound login.go states.
func TestLoginLimiterBytes(t *testing.T) {
	const n = DefaultMaxLoginClients
	l := newLoginLimiter(DefaultLoginBurst, DefaultLoginEvery, n)
	keys := make([]string, 2*n)
	for i := range keys {
		keys[i] = clientKey(fmt.Sprintf("[2001:db8:%x:%x:1:2:3:4]:443", i>>16|0xf000, i&0xffff|0xf000))
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for _, k := range keys { // the second half evicts the first
		l.fail(k)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	per := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / n
	t.Logf("%d addresses (keys of %d bytes): %d bytes each", l.size(), len(keys[0]), per)
	if l.size() != n || per >= 300 {
		t.Errorf("%d addresses, %d bytes each; want %d, under 300", l.size(), per, n)
	}
	runtime.KeepAlive(keys)
	runtime.KeepAlive(l)
}
