package spare

import (
	"os/exec"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ccproxy/ccproxy/proxy/claudecli"
)

// A stand-in for a parked claude: reads stdin until EOF (as a spare does).
func launchCat(t *testing.T, started *atomic.Int64) func(sp *Spare) (*claudecli.Client, any, func(), error) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	return func(sp *Spare) (*claudecli.Client, any, func(), error) {
		onEvent, onRequest, onCancel := sp.Handlers()
		cli, err := claudecli.Start(claudecli.Config{Path: sh, Args: []string{"-c", "cat >/dev/null"},
			OnEvent: onEvent, OnControlRequest: onRequest, OnControlCancel: onCancel})
		if err == nil {
			started.Add(1)
		}
		return cli, nil, nil, err
	}
}

// waitUntil waits for cond, checked at each change of the parked spares.
func waitUntil(t *testing.T, p *Pool, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		ch := p.Changed()
		if cond() {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("waiting for %s: %d spares parked", what, p.Ready())
		}
	}
}

func TestBackoffDoublesToItsBound(t *testing.T) {
	p := New(Config{Backoff: time.Second, MaxBackoff: 10 * time.Second})
	for n, want := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second, 4: 8 * time.Second, 5: 10 * time.Second, 60: 10 * time.Second} {
		if got := p.backoff(n); got != want {
			t.Errorf("backoff(%d) = %v, want %v", n, got, want)
		}
	}
}

// The pool keeps N parked, hands each out once, replaces what it handed
// out and what a new tag makes stale, and Close (twice) stops them all;
// nothing is taken after.
func TestPoolTakeRefreshClose(t *testing.T) {
	var started atomic.Int64
	var tag atomic.Int64
	p := New(Config{N: 2, Launch: launchCat(t, &started), Current: func() any { return tag.Load() }})
	p.Open()
	waitUntil(t, p, "2 parked", func() bool { return p.Ready() == 2 })
	sp := p.Take(int64(0))
	if sp == nil {
		t.Fatal("no spare taken")
	}
	if p.Take(int64(7)) != nil {
		t.Error("a spare of another tag was taken")
	}
	waitUntil(t, p, "the taken one replaced", func() bool { return p.Ready() == 2 && started.Load() == 3 })
	sp.Close()
	tag.Store(1)
	p.Refresh()
	// The stale ones are closed before the new ones are launched.
	waitUntil(t, p, "2 parked for the new tag", func() bool { return p.Ready() == 2 && started.Load() == 5 })
	if p.Take(int64(0)) != nil {
		t.Error("a stale spare was taken")
	}
	p.Close(t.Context())
	p.Close(t.Context())
	if p.Ready() != 0 || p.Take(int64(1)) != nil {
		t.Error("spares left after Close")
	}
}
