package spare

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/ccproxy/ccproxy/proxy/claudecli"
	"github.com/ccproxy/ccproxy/stream"
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
	sp := p.Take(int64(0), Claim{})
	if sp == nil {
		t.Fatal("no spare taken")
	}
	if p.Take(int64(7), Claim{}) != nil {
		t.Error("a spare of another tag was taken")
	}
	waitUntil(t, p, "the taken one replaced", func() bool { return p.Parked() == 2 && started.Load() == 3 })
	sp.Close()
	tag.Store(1)
	p.Refresh()
	// The stale ones are closed before the new ones are launched.
	waitUntil(t, p, "2 parked for the new tag", func() bool { return p.Parked() == 2 && started.Load() == 5 })
	if p.Take(int64(0), Claim{}) != nil {
		t.Error("a stale spare was taken")
	}
	p.Close(t.Context())
	p.Close(t.Context())
	if p.Parked() != 0 || p.Take(int64(1), Claim{}) != nil {
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
	sp := p.Take(0, Claim{})
	if sp == nil || int64(sp.Cli.PID()) != bootedPID.Load() {
		t.Fatalf("took %v, want the booted spare (pid %d)", sp, bootedPID.Load())
	}
	defer sp.Close()
	// Its replacement boots too and is taken; the next replacement is held
	// back, so the spare still starting is the only one parked.
	waitUntil(t, p, "the replacement booted", func() bool { return p.Parked() == 2 && p.Ready() == 1 })
	if b := p.Take(0, Claim{}); b == nil {
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
	if got := p.Take(0, Claim{}); got != starting {
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

// launchFake starts the fake claude as a spare (--await-claim) with env.
func launchFake(env ...string) func(sp *Spare) (*claudecli.Client, any, func(), error) {
	return launchFakeTimeout(0, env...)
}

// launchFakeTimeout is launchFake with claudecli's ControlTimeout.
func launchFakeTimeout(timeout time.Duration, env ...string) func(sp *Spare) (*claudecli.Client, any, func(), error) {
	return func(sp *Spare) (*claudecli.Client, any, func(), error) {
		onEvent, onRequest, onCancel := sp.Handlers()
		cli, err := claudecli.Start(claudecli.Config{Path: fakeClaudePath, ControlTimeout: timeout,
			Args: []string{"-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose", "--await-claim"},
			Env:  append(os.Environ(), env...), OnEvent: onEvent, OnControlRequest: onRequest, OnControlCancel: onCancel})
		return cli, nil, nil, err
	}
}

// heldAhead takes the spare claimed ahead for dir once it has booted and
// makes sure what it printed after the claim's answer has been read: a
// control request's answer comes after it on claude's stdout.
func heldAhead(t *testing.T, p *Pool, dir string) *Spare {
	t.Helper()
	waitUntil(t, p, "the spare claimed ahead", func() bool { return p.Ready() == 1 })
	sp := p.Take(nil, Claim{Cwd: dir})
	if sp == nil {
		t.Fatal("the spare claimed ahead for the directory was not handed out")
	}
	if _, err := sp.Cli.Call(t.Context(), "mcp_status", nil); err != nil {
		t.Fatal(err)
	}
	return sp
}

// A spare claimed ahead of need: what it prints between the claim and its
// adoption is kept and handed to the adopter first, in order, then its
// later output; a session for another directory is not given it.
func TestAheadHeldThenAdopted(t *testing.T) {
	dir := t.TempDir()
	p := New(Config{N: 1, Launch: launchFake("FAKE_CLAIM_EVENTS=3"), Current: func() any { return nil },
		Ahead: func() *Claim { return &Claim{Cwd: dir} }})
	p.Open()
	defer p.Close(t.Context())
	waitUntil(t, p, "the spare claimed ahead", func() bool { return p.Ready() == 1 })
	if sp := p.Take(nil, Claim{Cwd: t.TempDir()}); sp != nil {
		t.Fatal("a spare claimed ahead for the project was handed out for another directory")
	}
	sp := heldAhead(t, p, dir)
	defer sp.Close()
	c, ok, err := sp.Ahead(t.Context())
	if !ok || err != nil || c.Cwd != dir || len(c.Initialize) == 0 {
		t.Fatalf("Ahead = %+v, %v, %v; want the claim of %s with its initialize", c, ok, err, dir)
	}
	got := make(chan string, 16)
	sp.Adopt(&Route{OnEvent: func(ev *stream.Event) { got <- ev.Subtype + ":" + gjson.GetBytes(ev.JSON, "status").Str }})
	next := func() string {
		select {
		case g := <-got:
			return g
		case <-time.After(30 * time.Second):
			t.Fatal("no event reached the adopter")
			return ""
		}
	}
	for i := 1; i <= 3; i++ {
		if g, want := next(), fmt.Sprintf("status:claimed-%d", i); g != want {
			t.Fatalf("event %d after the adoption: %q, want %q", i, g, want)
		}
	}
	// Its later output goes straight to the route: a turn's events.
	if err := sp.Cli.SendAsync([]byte(`{"type":"user","message":{"role":"user","content":"hello"}}` + "\n")); err != nil {
		t.Fatal(err)
	}
	if g := next(); g != "init:" {
		t.Errorf("the first event of the turn: %q, want init", g)
	}
}

// A spare claimed ahead that prints more than the hold's bound before a
// session adopts it is not used: Ahead says why.
func TestAheadHoldBound(t *testing.T) {
	dir := t.TempDir()
	p := New(Config{N: 1, Launch: launchFake(fmt.Sprintf("FAKE_CLAIM_EVENTS=%d", maxHeldEvents+1)), Current: func() any { return nil },
		Ahead: func() *Claim { return &Claim{Cwd: dir} }})
	p.Open()
	defer p.Close(t.Context())
	sp := heldAhead(t, p, dir)
	defer sp.Close()
	if _, ok, err := sp.Ahead(t.Context()); !ok || err == nil || !strings.Contains(err.Error(), "more than 256 events") {
		t.Errorf("Ahead = %v, %v; want the bound passed", ok, err)
	}
}

// A claim made ahead that claude refuses (a directory gone) leaves the
// spare parked unclaimed: it is handed out for any claim and claimed then.
func TestAheadRefusedStaysParked(t *testing.T) {
	gone := filepath.Join(t.TempDir(), "gone")
	p := New(Config{N: 1, Launch: launchFake(), Current: func() any { return nil },
		Ahead: func() *Claim { return &Claim{Cwd: gone} }})
	p.Open()
	defer p.Close(t.Context())
	waitUntil(t, p, "the spare parked after the refusal", func() bool { return p.Ready() == 1 })
	dir := t.TempDir()
	sp := p.Take(nil, Claim{Cwd: dir})
	if sp == nil {
		t.Fatal("the spare whose claim ahead was refused was not handed out")
	}
	defer sp.Close()
	if _, ok, err := sp.Ahead(t.Context()); ok || err != nil {
		t.Fatalf("Ahead = %v, %v; want not claimed ahead", ok, err)
	}
	if c, err := sp.Claim(t.Context(), Claim{Cwd: dir, IncludeInitialize: true}, &Route{}); err != nil || c.Cwd != dir {
		t.Errorf("claim after the refusal: %+v, %v", c, err)
	}
}

// A claim made ahead that claude never answers (ControlTimeout) marks the
// spare broken: the owner closes it, counts a failure (not a
// replacement) and, after the backoff, launches another.
func TestAheadUnansweredClosed(t *testing.T) {
	dir := t.TempDir()
	var started atomic.Int64
	launch := launchFakeTimeout(300*time.Millisecond, "FAKE_IGNORE_CONTROL=claim_session")
	p := New(Config{N: 1, Current: func() any { return nil }, Backoff: 10 * time.Millisecond,
		Launch: func(sp *Spare) (*claudecli.Client, any, func(), error) {
			started.Add(1)
			return launch(sp)
		},
		Ahead: func() *Claim { return &Claim{Cwd: dir} }})
	p.Open()
	defer p.Close(t.Context())
	waitUntil(t, p, "a broken spare closed and another launched", func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.counts.failed >= 1 && started.Load() >= 2
	})
	p.mu.Lock()
	replaced := p.counts.replaced
	p.mu.Unlock()
	if replaced != 0 {
		t.Errorf("a broken spare counted as replaced for a configuration change: %d", replaced)
	}
}
