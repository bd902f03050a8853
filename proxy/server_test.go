package proxy

import (
	"sync"
	"testing"
	"time"

	"github.com/ccproxy/ccproxy/protocol"
)

// blockSpawn makes the first claude that src's configuration starts wait,
// inside mcphub.Config.Spawn, until release is called (tests defer it too, so
// that it runs before startServer's cleanup stops the server); entered is
// closed once it waits.
func blockSpawn(src *testSource) (entered <-chan struct{}, release func()) {
	cfg := src.Current()
	spawn := cfg.Spawn
	in, out := make(chan struct{}), make(chan struct{})
	var first, done sync.Once
	cfg.Spawn = func() ([]string, func(), error) {
		first.Do(func() {
			close(in)
			<-out
		})
		return spawn()
	}
	release = func() { done.Do(func() { close(out) }) }
	return in, release
}

func waitClosedOrFail(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(waitTimeout):
		t.Fatalf("waiting for %s: nothing in %v", what, waitTimeout)
	}
}

// While a session's claude is being started, the server lock is not held:
// other connections' requests are answered, and the session being started
// counts against maxSessions.
func TestCreateDoesNotHoldUpOthers(t *testing.T) {
	src := newTestSource(t, map[string]string{"alpha": `{"command":"a","args":[]}`})
	entered, release := blockSpawn(src)
	defer release()
	ts := startServer(t, Options{SessionLimits: SessionLimits{MaxSessions: 1}, MCPOptions: MCPOptions{MCP: src}})
	c1, c2 := ts.dial(t), ts.dial(t)
	id := c1.send(protocol.TypeSessionCreate, map[string]any{})
	waitClosedOrFail(t, entered, "claude being started")

	var list protocol.SessionListResult
	mustUnmarshal(t, c2.do(protocol.TypeSessionList, map[string]any{}), &list)
	if len(list.Sessions) != 0 {
		t.Errorf("session/list while the first session starts: %+v", list.Sessions)
	}
	if e := c2.doErr(protocol.TypeSessionCreate, map[string]any{}); e.Code != protocol.CodeLimitExceeded {
		t.Errorf("a second session while the first starts (maxSessions 1): %v, want limit_exceeded", e)
	}
	c3 := ts.dial(t) // new connections are accepted too
	c3.do(protocol.TypeSessionList, map[string]any{})

	release()
	if rep := c1.reply(id); !*rep.OK {
		t.Fatalf("session/create: %s", rep.raw)
	}
	mustUnmarshal(t, c2.do(protocol.TypeSessionList, map[string]any{}), &list)
	if len(list.Sessions) != 1 {
		t.Errorf("session/list after the start: %+v", list.Sessions)
	}
}

// A shutdown that begins while a session's claude is being started does
// not wait for it; the claude started then is stopped, the session never
// registered, and nothing is left running (checked by startServer).
func TestCreateDuringShutdown(t *testing.T) {
	src := newTestSource(t, map[string]string{"alpha": `{"command":"a","args":[]}`})
	entered, release := blockSpawn(src)
	defer release()
	ts := startServer(t, Options{MCPOptions: MCPOptions{MCP: src}})
	c := ts.dial(t)
	c.send(protocol.TypeSessionCreate, map[string]any{})
	waitClosedOrFail(t, entered, "claude being started")

	stopped := make(chan error, 1)
	go func() { stopped <- ts.stop() }()
	// Serve marks the shutdown before anything else; the test has no
	// event to wait for, so it looks.
	for deadline := time.Now().Add(waitTimeout); !ts.srv.isShuttingDown(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the shutdown did not begin")
		}
	}
	release()
	if err := <-stopped; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	ts.srv.mu.Lock()
	n, starting := len(ts.srv.sessions), ts.srv.starting
	ts.srv.mu.Unlock()
	if n != 0 || starting != 0 {
		t.Errorf("after the shutdown: %d sessions, %d starting; want none", n, starting)
	}
	waitNoLeftovers(t, ts.marker)
}
