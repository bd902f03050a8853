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
			t.Fatalf("waiting for %s: %d spares parked", what, p.Parked())
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
	waitUntil(t, p, "2 parked", func() bool { return p.Parked() == 2 })
	sp := p.Take(int64(0))
	if sp == nil {
		t.Fatal("no spare taken")
	}
	if p.Take(int64(7)) != nil {
		t.Error("a spare of another tag was taken")
	}
	waitUntil(t, p, "the taken one replaced", func() bool { return p.Parked() == 2 && started.Load() == 3 })
	sp.Close()
	tag.Store(1)
	p.Refresh()
	// The stale ones are closed before the new ones are launched.
	waitUntil(t, p, "2 parked for the new tag", func() bool { return p.Parked() == 2 && started.Load() == 5 })
	if p.Take(int64(0)) != nil {
		t.Error("a stale spare was taken")
	}
	p.Close(t.Context())
	p.Close(t.Context())
	if p.Parked() != 0 || p.Take(int64(1)) != nil {
		t.Error("spares left after Close")
	}
}

// A stand-in that boots at once: it answers the first control request
// (the pool's probe) with success, then reads stdin until EOF.
const answerFirst = `read l; id=$(printf '%s' "$l" | sed -n 's/.*"request_id":"\([^"]*\)".*/\1/p'); ` +
	`printf '{"type":"control_response","response":{"subtype":"success","request_id":"%s","response":{}}}\n' "$id"; cat >/dev/null`

// A spare counts as ready once it answers the probe; Take hands out a
// booted spare before one still starting, and one still starting when no
// other is parked; the two are counted apart.
func TestPoolTakesBootedFirst(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	var bootedPID atomic.Int64
	launch := func(sp *Spare) (*claudecli.Client, any, func(), error) {
		script := "cat >/dev/null" // the first launched never boots
		if n.Add(1) > 1 {
			script = answerFirst
		}
		onEvent, onRequest, onCancel := sp.Handlers()
		cli, err := claudecli.Start(claudecli.Config{Path: sh, Args: []string{"-c", script},
			OnEvent: onEvent, OnControlRequest: onRequest, OnControlCancel: onCancel})
		if err == nil && script == answerFirst && bootedPID.Load() == 0 {
			bootedPID.Store(int64(cli.PID()))
		}
		return cli, nil, nil, err
	}
	hold := make(chan struct{}) // the fourth launch waits for the test's end
	p := New(Config{N: 2, Launch: launch, Current: func() any { return 0 }, BeforeLaunch: func() {
		if n.Load() >= 3 {
			<-hold
		}
	}})
	p.Open()
	defer p.Close(t.Context())
	defer close(hold)
	waitUntil(t, p, "2 parked, 1 booted", func() bool { return p.Parked() == 2 && p.Ready() == 1 })
	sp := p.Take(0)
	if sp == nil || int64(sp.Cli.PID()) != bootedPID.Load() {
		t.Fatalf("took %v, want the booted spare (pid %d)", sp, bootedPID.Load())
	}
	defer sp.Close()
	// Its replacement boots too and is taken; the next replacement is held
	// back, so the spare still starting is the only one parked.
	waitUntil(t, p, "the replacement booted", func() bool { return p.Parked() == 2 && p.Ready() == 1 })
	if b := p.Take(0); b == nil {
		t.Fatal("no booted spare taken")
	} else {
		defer b.Close()
	}
	p.mu.Lock()
	var starting *Spare
	for _, r := range p.ready {
		if !r.booted {
			starting = r
		}
	}
	p.mu.Unlock()
	if starting == nil {
		t.Fatal("the spare that never boots is not parked")
	}
	if got := p.Take(0); got != starting {
		t.Errorf("took %v, want the spare still starting %v", got, starting)
	} else {
		defer got.Close()
	}
	p.mu.Lock()
	k := p.counts
	p.mu.Unlock()
	if k.taken != 2 || k.takenStarting != 1 {
		t.Errorf("counted %d taken, %d taken starting; want 2 and 1", k.taken, k.takenStarting)
	}
}
