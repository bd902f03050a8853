package proxy

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ccproxy/ccproxy/protocol"
)

// exitSession has the fake claude of s exit by itself and waits until c
// is told.
func exitSession(t *testing.T, c *wsClient, s string) {
	t.Helper()
	from := c.count()
	c.send(protocol.TypeSessionSend, map[string]any{"session": s, "text": "exit 3"})
	c.waitPush(from, protocol.TypeSessionExited, nil, func(raw json.RawMessage) bool { return strings.Contains(string(raw), s) })
}

// waitForgotten waits for the session/state closed of s after frame from
// and returns its reason.
func waitForgotten(t *testing.T, c *wsClient, from int, s string) string {
	t.Helper()
	var st protocol.SessionState
	c.waitPush(from, protocol.TypeSessionState, &st, func(raw json.RawMessage) bool {
		return strings.Contains(string(raw), s) && strings.Contains(string(raw), `"state":"closed"`)
	})
	return st.Reason
}

// closedCount counts the session/state closed pushes of s that c got.
func closedCount(c *wsClient, s string) int {
	n := 0
	for _, f := range c.snapshot() {
		if f.Type == protocol.TypeSessionState && strings.Contains(string(f.Data), s) && strings.Contains(string(f.Data), `"state":"closed"`) {
			n++
		}
	}
	return n
}

func sessionIDs(t *testing.T, c *wsClient) []string {
	t.Helper()
	var list protocol.SessionListResult
	mustUnmarshal(t, c.do(protocol.TypeSessionList, map[string]any{}), &list)
	var ids []string
	for _, s := range list.Sessions {
		ids = append(ids, s.Session)
	}
	slices.Sort(ids)
	return ids
}

func sorted(ids ...string) []string {
	slices.Sort(ids)
	return ids
}

// At maxSessions, a session/create evicts the session that exited longest
// ago instead of refusing: its subscribers get session/state closed,
// reason evicted, and its id becomes unknown; the other exited session
// stays until it is the oldest. Live sessions count: with all of them
// live, limit_exceeded.
func TestCreateEvictsOldestExited(t *testing.T) {
	ts := startServer(t, Options{SessionLimits: SessionLimits{MaxSessions: 3, SessionTTL: waitTimeout}})
	c := ts.dial(t)
	s1, s2, s3 := c.create(nil), c.create(nil), c.create(nil)
	exitSession(t, c, s1)
	exitSession(t, c, s2)

	from := c.count()
	s4 := c.create(nil)
	if r := waitForgotten(t, c, from, s1); r != protocol.ReasonEvicted {
		t.Errorf("the evicted session's state: reason %q, want %q", r, protocol.ReasonEvicted)
	}
	if got, want := sessionIDs(t, c), sorted(s2, s3, s4); !slices.Equal(got, want) {
		t.Errorf("sessions after the first eviction: %v, want %v", got, want)
	}
	if n := closedCount(c, s2); n != 0 {
		t.Errorf("the younger exited session was closed too (%d)", n)
	}
	if e := c.doErr(protocol.TypeSessionSubscribe, map[string]any{"session": s1}); e.Code != protocol.CodeUnknownSession {
		t.Errorf("subscribe to the evicted session: %v, want unknown_session", e)
	}

	from = c.count()
	s5 := c.create(nil)
	if r := waitForgotten(t, c, from, s2); r != protocol.ReasonEvicted {
		t.Errorf("the second evicted session's state: reason %q", r)
	}
	if e := c.doErr(protocol.TypeSessionCreate, map[string]any{}); e.Code != protocol.CodeLimitExceeded {
		t.Errorf("create with maxSessions live sessions: %v, want limit_exceeded", e)
	}
	if got, want := sessionIDs(t, c), sorted(s3, s4, s5); !slices.Equal(got, want) {
		t.Errorf("sessions: %v, want %v", got, want)
	}
	if n := closedCount(c, s1); n != 1 {
		t.Errorf("the evicted session got %d session/state closed, want 1", n)
	}
}

// A session/create racing the exit of another session's claude
// (maxSessions 2, both live): it is refused while that session still
// counts, or evicts it once it has exited; never both, never more than
// maxSessions sessions. How long the proxy takes to see a fake's exit is
// measured first (a probe session, closed after); the create then follows
// the exit by a random delay up to twice that, so that over many runs
// both outcomes occur. Run with -race -count=30.
func TestCreateRacesExit(t *testing.T) {
	ts := startServer(t, Options{SessionLimits: SessionLimits{MaxSessions: 2, SessionTTL: waitTimeout}})
	c, c2 := ts.dial(t), ts.dial(t)
	probe := c.create(nil)
	start := time.Now()
	exitSession(t, c, probe)
	after := time.Duration(rand.Int64N(int64(2*time.Since(start)) + 1))
	c.do(protocol.TypeSessionClose, map[string]any{"session": probe})
	s1, s2 := c.create(nil), c.create(nil)
	from := c.count()
	c.send(protocol.TypeSessionSend, map[string]any{"session": s1, "text": "exit 3"})
	time.Sleep(after)
	rep := c2.reply(c2.send(protocol.TypeSessionCreate, map[string]any{}))
	if !*rep.OK {
		if rep.Error.Code != protocol.CodeLimitExceeded {
			t.Fatalf("create racing an exit: %s", rep.raw)
		}
		t.Logf("refused: the exit was seen after the create (sent %v after it)", after)
		c.waitPush(from, protocol.TypeSessionExited, nil, func(raw json.RawMessage) bool { return strings.Contains(string(raw), s1) })
		if got := sessionIDs(t, c); !slices.Equal(got, sorted(s1, s2)) {
			t.Fatalf("sessions after a refused create: %v", got)
		}
		rep = c2.reply(c2.send(protocol.TypeSessionCreate, map[string]any{}))
		if !*rep.OK {
			t.Fatalf("create after the exit: %s", rep.raw)
		}
	} else {
		t.Logf("evicted: the exit was seen before the create (sent %v after it)", after)
	}
	var res protocol.SessionCreateResult
	mustUnmarshal(t, rep.Data, &res)
	if r := waitForgotten(t, c, from, s1); r != protocol.ReasonEvicted {
		t.Errorf("the exited session's state: reason %q, want evicted", r)
	}
	// Its exit was told before its eviction, once.
	var exited []int
	for i, f := range c.snapshot()[from:] {
		if f.Type == protocol.TypeSessionExited && strings.Contains(string(f.Data), s1) {
			exited = append(exited, i)
		}
	}
	if len(exited) != 1 {
		t.Errorf("%d session/exited for the evicted session, want 1", len(exited))
	}
	if got, want := sessionIDs(t, c), sorted(s2, res.Session); !slices.Equal(got, want) {
		t.Errorf("sessions: %v, want %v", got, want)
	}
	if n := closedCount(c, s1); n != 1 {
		t.Errorf("%d session/state closed for the evicted session, want 1", n)
	}
}

// Two session/creates racing for the one evictable slot (maxSessions 2,
// one live session, one exited): one evicts the exited session and
// starts, the other is refused; the exited session is evicted once.
// Run with -race -count=30.
func TestCreatesRaceForOneSlot(t *testing.T) {
	ts := startServer(t, Options{SessionLimits: SessionLimits{MaxSessions: 2, SessionTTL: waitTimeout}})
	c := ts.dial(t)
	s1, s2 := c.create(nil), c.create(nil)
	exitSession(t, c, s2)
	from := c.count()
	a, b := ts.dial(t), ts.dial(t)
	var wg sync.WaitGroup
	reps := make([]rawFrame, 2)
	for i, cl := range []*wsClient{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			reps[i] = cl.reply(cl.send(protocol.TypeSessionCreate, map[string]any{}))
		}()
	}
	wg.Wait()
	var created []string
	for _, rep := range reps {
		if *rep.OK {
			var res protocol.SessionCreateResult
			mustUnmarshal(t, rep.Data, &res)
			created = append(created, res.Session)
		} else if rep.Error.Code != protocol.CodeLimitExceeded {
			t.Errorf("a racing create: %s", rep.raw)
		}
	}
	if len(created) != 1 {
		t.Fatalf("%d creates succeeded, want 1: %s / %s", len(created), reps[0].raw, reps[1].raw)
	}
	if r := waitForgotten(t, c, from, s2); r != protocol.ReasonEvicted {
		t.Errorf("the exited session's state: reason %q, want evicted", r)
	}
	if got, want := sessionIDs(t, c), sorted(s1, created[0]); !slices.Equal(got, want) {
		t.Errorf("sessions: %v, want %v", got, want)
	}
	if n := closedCount(c, s2); n != 1 {
		t.Errorf("%d session/state closed for the evicted session, want 1", n)
	}
}
