package proxy

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ccproxy/ccproxy/protocol"
)

// waitSpares waits until the server has n spares parked (on the pool's
// change signal, never a sleep).
func waitSpares(t *testing.T, ts *testServer, n int) {
	t.Helper()
	waitPool(t, ts, fmt.Sprintf("%d spares parked", n), func() bool { return ts.srv.spares.Ready() == n })
}

// waitPool waits until cond holds, checked at each change of the parked
// spares (never a sleep).
func waitPool(t *testing.T, ts *testServer, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(waitTimeout)
	for {
		ch := ts.srv.spares.Changed()
		if cond() {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("waiting for %s: %d spares booted, %d parked after %v", what, ts.srv.spares.Ready(), ts.srv.spares.Parked(), waitTimeout)
		}
	}
}

// createIn creates a session in dir and checks that its first turn runs
// there.
func createIn(t *testing.T, c *wsClient, dir string) string {
	t.Helper()
	s := c.create(map[string]any{"cwd": dir})
	if cwd, _ := initOf(t, c.turn(s, "hello")); cwd != dir {
		t.Errorf("first turn ran in %q, want %q", cwd, dir)
	}
	return s
}

// initOf returns the first system/init event of evs.
func initOf(t *testing.T, evs []protocol.SessionEvent) (cwd, mode string) {
	t.Helper()
	for _, ev := range evs {
		if eventType(ev) == "system/init" {
			var e struct {
				Cwd            string `json:"cwd"`
				PermissionMode string `json:"permissionMode"`
			}
			mustUnmarshal(t, ev.Event, &e)
			return e.Cwd, e.PermissionMode
		}
	}
	t.Fatalf("no system/init among %d events", len(evs))
	return "", ""
}

func warm(n int) Options { return Options{CLIOptions: CLIOptions{WarmSpares: n}} }

// With --warm 2, one spare is claimed ahead of need for the project
// directory and the default mode, the other stays parked. A session/create
// in another directory and mode takes the parked one, claimed for its cwd
// and mode (its first turn runs there); one with neither takes the one
// claimed ahead (its first turn runs in the project); the models of the
// claims' initialize reach the sessions, nothing of the parked processes
// reaches clients, and new spares are parked in the background. With
// only the spare claimed ahead parked, a create in another directory
// spawns claude (ahead_other).
func TestWarmSpareTakenForCreate(t *testing.T) {
	ts := startServer(t, warm(2), "FAKE_REPLAY=1")
	waitSpares(t, ts, 2)
	c := ts.dial(t)
	dir := t.TempDir()
	from := c.count()
	s := c.create(map[string]any{"cwd": dir, "permissionMode": "acceptEdits"})
	evs := c.turn(s, "hello")
	if cwd, mode := initOf(t, evs); cwd != dir || mode != "acceptEdits" {
		t.Errorf("first turn ran in %q with mode %q, want %q, acceptEdits", cwd, mode, dir)
	}
	sa := c.create(nil)
	if cwd, mode := initOf(t, c.turn(sa, "hello")); cwd != ts.srv.opts.Project || mode != "default" {
		t.Errorf("the session on the spare claimed ahead: first turn ran in %q with mode %q, want %q, default", cwd, mode, ts.srv.opts.Project)
	}
	var st protocol.SessionState
	c.waitPush(from, protocol.TypeSessionState, &st, func(raw json.RawMessage) bool { return strings.Contains(string(raw), `"models"`) })
	for _, id := range []string{s, sa} {
		for _, ev := range c.events(id) {
			if strings.Contains(string(ev.Event), "ui_invalidate") {
				t.Errorf("a parked spare's event reached the session: %s", ev.Event)
			}
		}
	}
	waitSpares(t, ts, 2) // replaced
	m, _ := scrape(t, ts)
	wantMetrics(t, "after two creates", m, map[string]float64{
		`ccproxy_spare_takes_total{result="taken"}`:       1,
		`ccproxy_spare_takes_total{result="taken_ahead"}`: 1,
		`ccproxy_spare_takes_total{result="none"}`:        0,
		`ccproxy_spare_launches_total`:                    4,
		`ccproxy_spares`:                                  2,
	})
	log := ts.logBuf.String()
	if !strings.Contains(log, "claude taken from the spares\"") || !strings.Contains(log, "claimed_ahead=true") {
		t.Errorf("the log does not say the sessions took a spare each way:\n%s", lastBytes(log, 3000))
	}
	// A create that needs a model of its own does not take it.
	s2 := c.create(map[string]any{"cwd": dir, "model": "sonnet"})
	c.turn(s2, "hi")
	m, _ = scrape(t, ts)
	wantMetrics(t, "after a create with a model", m, map[string]float64{
		`ccproxy_spare_takes_total{result="unfit"}`: 1,
		`ccproxy_spares`: 2,
	})
}

// With --warm 1 the spare is claimed ahead for the project directory: a
// create in another directory does not take it (ahead_other) and gets a
// claude spawned there; the spare stays parked for the next session in
// the project, which takes it.
func TestWarmSpareClaimedAheadElsewhere(t *testing.T) {
	ts := startServer(t, warm(1))
	waitSpares(t, ts, 1)
	c := ts.dial(t)
	createIn(t, c, t.TempDir())
	m, _ := scrape(t, ts)
	wantMetrics(t, "after a create elsewhere", m, map[string]float64{
		`ccproxy_spare_takes_total{result="ahead_other"}`: 1,
		`ccproxy_spare_takes_total{result="taken_ahead"}`: 0,
		`ccproxy_spare_launches_total`:                    1,
		`ccproxy_spares`:                                  1,
	})
	s2 := c.create(map[string]any{"cwd": ts.srv.opts.Project, "permissionMode": "default"})
	if cwd, _ := initOf(t, c.turn(s2, "hello")); cwd != ts.srv.opts.Project {
		t.Errorf("first turn ran in %q, want %q", cwd, ts.srv.opts.Project)
	}
	m, _ = scrape(t, ts)
	wantMetrics(t, "after a create in the project", m, map[string]float64{`ccproxy_spare_takes_total{result="taken_ahead"}`: 1})
}

// A configuration change while a spare is being launched: the spare
// launched with the old configuration is closed and replaced, and the
// next session runs the new configuration's servers.
func TestWarmSpareConfigChangeWhileLaunching(t *testing.T) {
	src := newTestSource(t, map[string]string{"a": `{"command":"a","args":[]}`})
	launching, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	opts := warm(1)
	opts.MCP = src
	opts.beforeSpare = func() {
		once.Do(func() { close(launching); <-release })
	}
	ts := startServer(t, opts)
	<-launching
	src.set(map[string]string{"b": `{"command":"b","args":[]}`}, nil)
	ts.srv.applyMCP() // what the MCP loop does on the change (it may run it too)
	close(release)
	// The spare launched with "a" is replaced by one with "b": the old one
	// is gone once it counts as replaced, so one parked after that is new.
	waitPool(t, ts, "the stale spare replaced", func() bool {
		m, _ := scrape(t, ts)
		return m[`ccproxy_spare_replaced_total`] == 1 && ts.srv.spares.Ready() == 1
	})
	c := ts.dial(t)
	s := c.create(nil)
	c.turn(s, "hi")
	sess, err := ts.srv.session(s)
	if err != nil {
		t.Fatal(err)
	}
	sess.mu.Lock()
	launched := sess.proc.cur.mcpLaunched
	sess.mu.Unlock()
	if !launched["b"] || launched["a"] {
		t.Errorf("the session's claude was launched with servers %v, want b", launched)
	}
	m, _ := scrape(t, ts)
	wantMetrics(t, "after the create", m, map[string]float64{`ccproxy_spare_takes_total{result="taken_ahead"}`: 1})
}

// Shutdown while a spare is being launched: Serve returns and no process
// is left (startServer's cleanup checks).
func TestWarmSpareShutdownWhileLaunching(t *testing.T) {
	launching, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	opts := warm(1)
	opts.beforeSpare = func() { once.Do(func() { close(launching); <-release }) }
	ts := startServer(t, opts)
	<-launching
	stopped := make(chan error, 1)
	go func() { stopped <- ts.stop() }()
	close(release)
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
}

// Shutdown while a claim is under way (claude never answers it): the
// claim is cancelled at once, not after ControlTimeout (Serve returns);
// the create is answered shutting_down, unless the connection closed
// first; nothing is left running.
func TestWarmSpareShutdownDuringClaim(t *testing.T) {
	opts := warm(1)
	opts.ControlTimeout = 2 * waitTimeout // a claim that waited for it would fail the test
	taken := make(chan struct{}, 4)
	opts.beforeSpare = func() {
		select {
		case taken <- struct{}{}:
		default:
		}
	}
	ts := startServer(t, opts, "FAKE_IGNORE_CONTROL=claim_session")
	<-taken // the first spare: parked, its claim ahead of need never answered
	waitPool(t, ts, "the spare parked", func() bool { return ts.srv.spares.Parked() == 1 })
	c := ts.dial(t)
	id := c.send(protocol.TypeSessionCreate, map[string]any{})
	<-taken // its replacement is launched once it is taken: the claim is under way
	if err := ts.stop(); err != nil {
		t.Fatal(err)
	}
	// Its reply, if it came before the connection closed (1001), says so.
	c.waitClosed()
	for _, f := range c.snapshot() {
		if f.Type == protocol.TypeReply && string(f.ID) == string(id) && (f.OK == nil || *f.OK || f.Error == nil || f.Error.Code != protocol.CodeShuttingDown) {
			t.Errorf("create during shutdown: %s, want shutting_down", f.raw)
		}
	}
}

// Two creates race for one spare (claimed ahead for the project): one takes
// it, the other spawns claude at once (it does not wait for the next
// spare); both sessions answer.
func TestWarmSpareTwoCreatesRace(t *testing.T) {
	opts := warm(1)
	hold := make(chan struct{})
	var n int
	var mu sync.Mutex
	opts.beforeSpare = func() {
		mu.Lock()
		n++
		first := n == 1
		mu.Unlock()
		if !first {
			<-hold // no replacement until the test ends
		}
	}
	ts := startServer(t, opts)
	t.Cleanup(func() { close(hold) }) // runs before the server stops
	waitSpares(t, ts, 1)
	a, b := ts.dial(t), ts.dial(t)
	ida := a.send(protocol.TypeSessionCreate, map[string]any{})
	idb := b.send(protocol.TypeSessionCreate, map[string]any{})
	var sessions []string
	for _, x := range []struct {
		c  *wsClient
		id json.RawMessage
	}{{a, ida}, {b, idb}} {
		f := x.c.reply(x.id)
		if f.OK == nil || !*f.OK {
			t.Fatalf("create: %s", f.raw)
		}
		var r protocol.SessionCreateResult
		mustUnmarshal(t, f.Data, &r)
		x.c.do(protocol.TypeSessionSubscribe, map[string]any{"session": r.Session})
		sessions = append(sessions, r.Session)
	}
	a.turn(sessions[0], "one")
	b.turn(sessions[1], "two")
	m, _ := scrape(t, ts)
	wantMetrics(t, "after two creates", m, map[string]float64{
		`ccproxy_spare_takes_total{result="taken_ahead"}`: 1,
		`ccproxy_spare_takes_total{result="none"}`:        1,
	})
}

// A spare whose claim is refused (cwd_not_found) is closed; the session
// gets a claude spawned as usual, and the log says why.
func TestWarmSpareClaimRefused(t *testing.T) {
	ts := startServer(t, warm(1), "FAKE_CLAIM_REFUSE=1")
	waitSpares(t, ts, 1)
	c := ts.dial(t)
	createIn(t, c, t.TempDir())
	log := ts.logBuf.String()
	if !strings.Contains(log, "the spare claude did not take the session; starting claude as usual") || !strings.Contains(log, "cwd_not_found") {
		t.Errorf("the log does not say the claim was refused and why:\n%s", lastBytes(log, 3000))
	}
	waitSpares(t, ts, 1) // and it is replaced
	m, _ := scrape(t, ts)
	wantMetrics(t, "after the refusal", m, map[string]float64{
		`ccproxy_spare_takes_total{result="refused"}`: 1,
		`ccproxy_spare_takes_total{result="taken"}`:   1,
	})
}

// A spare that exits while parked is replaced after a backoff, reported
// in the log and the metrics; sessions still start (spawned).
func TestWarmSpareExitsBackoff(t *testing.T) {
	ts := startServer(t, warm(1), "FAKE_SPARE_EXIT=1")
	for {
		ch := ts.srv.spares.Changed()
		m, _ := scrape(t, ts)
		if m[`ccproxy_spare_failures_total`] >= 2 {
			break
		}
		select {
		case <-ch:
		case <-time.After(waitTimeout):
			t.Fatal("no spare failure counted")
		}
	}
	if !strings.Contains(ts.logBuf.String(), "a spare claude exited while parked; launching another after a backoff") {
		t.Error("the log does not report the spare's exit")
	}
	c := ts.dial(t)
	s := c.create(nil)
	c.turn(s, "hi")
}
