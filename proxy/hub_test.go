package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ccproxy/ccproxy/protocol"

	"github.com/ccproxy/ccproxy/proxy/eventlog"
)

type timeT = time.Time

// A client that keeps reading gets every event of a turn much larger than
// its queue and than the log's memory: the part evicted from memory comes
// back from disk. One that subscribes after the disk budget dropped the
// start gets session/gap, then the rest.
func TestReplayFromDisk(t *testing.T) {
	t.Parallel()
	ts := startServer(t, Options{ReplayOptions: ReplayOptions{ReplayBytes: 64 << 10, ReplayDiskBytes: 1 << 20}, WebSocketOptions: WebSocketOptions{SendQueueFrames: 4}})
	a := ts.dial(t)
	s := a.create(nil)
	a.turn(s, "flood 200 2000") // 400 KB: 6 times the memory
	all := a.events(s)
	checkSeqs(t, all, 1)

	b := ts.dial(t)
	var sub protocol.SessionSubscribeResult
	mustUnmarshal(t, b.do(protocol.TypeSessionSubscribe, map[string]any{"session": s, "afterSeq": 0}), &sub)
	if sub.FirstSeq != 1 {
		t.Fatalf("first seq %d: the log lost events within its disk budget", sub.FirstSeq)
	}
	b.waitEvent(0, s, "replay end", func(ev protocol.SessionEvent) bool { return ev.Seq == sub.LastSeq })
	got := b.events(s)
	checkSeqs(t, got, 1)
	for i := range got {
		if !bytes.Equal(got[i].Event, all[i].Event) {
			t.Fatalf("event %d differs between live and replay from disk", got[i].Seq)
		}
	}

	// 3 MB more: beyond the disk budget.
	a.turn(s, "flood 1500 2000")
	c := ts.dial(t)
	mustUnmarshal(t, c.do(protocol.TypeSessionSubscribe, map[string]any{"session": s, "afterSeq": 0}), &sub)
	if sub.FirstSeq <= 1 {
		t.Fatal("the log still reaches back to 1")
	}
	var gap protocol.SessionGap
	c.waitPush(0, protocol.TypeSessionGap, &gap, nil)
	c.waitEvent(0, s, "replay end", func(ev protocol.SessionEvent) bool { return ev.Seq == sub.LastSeq })
	checkSeqs(t, c.events(s), gap.FirstSeq)
}

// An exited session is reaped SessionTTL after its exit: its subscribers
// get session/state closed (reason reaped), it is gone from session/list
// and its spill files are removed. (It does not count against
// MaxSessions meanwhile: evict_test.go.)
func TestExitedSessionReaped(t *testing.T) {
	spool := t.TempDir()
	ts := startServer(t, Options{SessionLimits: SessionLimits{MaxSessions: 1, SessionTTL: waitTimeout}, ReplayOptions: ReplayOptions{ReplayBytes: 4 << 10, SpoolDir: spool}})
	c := ts.dial(t)
	s := c.create(nil)
	c.turn(s, "flood 50 1000") // spills to disk
	if files := spillFiles(t, spool); len(files) == 0 {
		t.Fatal("nothing spilled")
	}
	c.send(protocol.TypeSessionSend, map[string]any{"session": s, "text": "exit 3"})
	c.waitPush(0, protocol.TypeSessionExited, nil, nil)

	// Reap it now (as the reap loop does once the TTL has passed).
	ts.srv.reapExited(reapLater(t, ts, s))
	var st protocol.SessionState
	c.waitPush(0, protocol.TypeSessionState, &st, func(raw json.RawMessage) bool {
		return strings.Contains(string(raw), `"closed"`)
	})
	if st.Reason != protocol.ReasonReaped {
		t.Errorf("state %+v, want closed, reason reaped", st)
	}
	var list protocol.SessionListResult
	mustUnmarshal(t, c.do(protocol.TypeSessionList, map[string]any{}), &list)
	if len(list.Sessions) != 0 {
		t.Errorf("session/list after the reap: %+v", list.Sessions)
	}
	if files := spillFiles(t, spool); len(files) != 0 {
		t.Errorf("spill files left: %v", files)
	}
	c.create(nil)
}

// The reap loop does it by itself once the TTL has passed.
func TestReapLoop(t *testing.T) {
	ts := startServer(t, Options{SessionLimits: SessionLimits{SessionTTL: 1}})
	c := ts.dial(t)
	s := c.create(nil)
	c.send(protocol.TypeSessionSend, map[string]any{"session": s, "text": "exit 3"})
	var st protocol.SessionState
	c.waitPush(0, protocol.TypeSessionState, &st, func(raw json.RawMessage) bool {
		return strings.Contains(string(raw), `"reaped"`)
	})
}

// reapLater returns a time after s's TTL.
func reapLater(t *testing.T, ts *testServer, id string) (now timeT) {
	t.Helper()
	sess, err := ts.srv.session(id)
	if err != nil {
		t.Fatal(err)
	}
	at, ok := sess.exitTime()
	if !ok {
		t.Fatal("not exited")
	}
	return at.Add(ts.srv.opts.SessionTTL)
}

func spillFiles(t *testing.T, root string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, "*", "*.log"))
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// A frame that would take the inbound budget over its bound is read to
// its end, discarded and refused with limit_exceeded naming the request by
// its id (read from the frame's first bytes); the connection goes on, and
// once the budget is free the same frame is accepted.
func TestInboundBudget(t *testing.T) {
	ts := startServer(t, Options{WebSocketOptions: WebSocketOptions{MaxFrameBytes: 1 << 20, InboundBytes: 1 << 20}})
	c := ts.dial(t)
	s := c.create(nil)
	// Another connection is in the middle of a large frame.
	if !ts.srv.inbound.TryAcquire(1<<20 - 32<<10) {
		t.Fatal("budget")
	}
	big := map[string]any{"session": s, "text": "echo " + strings.Repeat("y", 200<<10)}
	id := c.send(protocol.TypeSessionSend, big)
	f, _ := c.waitFor(0, "refusal", func(f rawFrame) bool { return f.Type == protocol.TypeReply && f.OK != nil && !*f.OK })
	if string(f.ID) != string(id) {
		t.Errorf("refusal has id %s, want the request's %s", f.ID, id)
	}
	var e struct {
		Error protocol.Error `json:"error"`
	}
	json.Unmarshal(f.raw, &e)
	if e.Error.Code != protocol.CodeLimitExceeded || !strings.Contains(e.Error.Message, "refused") {
		t.Fatalf("reply %s, want limit_exceeded", f.raw)
	}
	ts.srv.inbound.Release(1<<20 - 32<<10)
	c.do(protocol.TypeSessionSend, big) // accepted now
	// The read pump gives a frame's budget back before it reads the next.
	c.do(protocol.TypeSessionList, map[string]any{})
	used := ts.srv.inbound.Used()
	if used > 64<<10 { // the small list frame may still be held
		t.Errorf("budget still holds %d bytes", used)
	}
}

// A client whose socket accepts nothing for WriteWait is closed, as
// before the log was the only buffer; the others go on.
func TestStalledClientClosed(t *testing.T) {
	ts := startServer(t, Options{WebSocketOptions: WebSocketOptions{SendQueueFrames: 16, WriteWait: 300 * time.Millisecond}})
	fast := ts.dial(t)
	s := fast.create(nil)
	slow := dialSlow(t, ts, s)
	closed := false
	for i := 0; i < 200 && !closed; i++ {
		fast.turn(s, "flood 8 50000")
		closed = strings.Contains(ts.logBuf.String(), `msg="dropping websocket client"`)
	}
	if !closed {
		t.Fatal("the stalled client was never closed")
	}
	// The drop is a WARN with its reason and bound, as a full queue's is.
	if log := ts.logBuf.String(); !strings.Contains(log, `level=WARN msg="dropping websocket client" conn=c-000002 reason="slow consumer: its connection accepted nothing for 300ms (write timeout)`) {
		t.Errorf("the drop was not logged as a WARN with its reason:\n%s", lastBytes(log, 4000))
	}
	checkSeqs(t, fast.events(s), 1)
	slow.startReading()
	slow.waitClosed()
	fast.turn(s, "after")
	checkSeqs(t, fast.events(s), 1)
}

// A client that fell behind still gets the permission pushes of that
// time: the request and its resolution, and then, reading again, every
// event and the state it missed; nothing twice.
func TestBehindClientGetsPermissionPushes(t *testing.T) {
	ts := startServer(t, Options{ReplayOptions: ReplayOptions{ReplayBytes: 1 << 20}, WebSocketOptions: WebSocketOptions{SendQueueFrames: 16, WriteWait: waitTimeout}})
	fast := ts.dial(t)
	s := fast.create(nil)
	slow := dialSlow(t, ts, s)
	for i := 0; i < 40 && !strings.Contains(ts.logBuf.String(), "client fell behind"); i++ {
		fast.turn(s, "flood 8 50000")
	}
	if !strings.Contains(ts.logBuf.String(), "client fell behind") {
		t.Fatal("the slow client never fell behind")
	}
	from := fast.count()
	fast.send(protocol.TypeSessionSend, map[string]any{"session": s, "text": "perm Bash"})
	var req protocol.PermissionRequest
	fast.waitPush(from, protocol.TypePermissionRequest, &req, nil)
	fast.do(protocol.TypePermissionRespond, map[string]any{"session": s, "requestId": req.RequestID, "behavior": "deny"})
	answerText(t, fast, from, s)
	fast.waitEvent(from, s, "the result", isResult)
	all := fast.events(s)

	slow.startReading()
	slow.waitEvent(0, s, "the last event", func(ev protocol.SessionEvent) bool { return ev.Seq == all[len(all)-1].Seq })
	checkSeqs(t, slow.events(s), 1)
	var got protocol.PermissionResolved
	slow.waitPush(0, protocol.TypePermissionResolved, &got, nil)
	reqs := 0
	for _, f := range slow.snapshot() {
		if f.Type == protocol.TypePermissionRequest {
			reqs++
		}
	}
	if got.RequestID != req.RequestID || reqs != 1 {
		t.Errorf("the slow client got %d requests and resolution %+v", reqs, got)
	}
	// It is live again and knows the state.
	fast.turn(s, "again")
	last := fast.events(s)[len(fast.events(s))-1].Seq
	slow.waitEvent(0, s, "the new turn", func(ev protocol.SessionEvent) bool { return ev.Seq == last })
	checkSeqs(t, slow.events(s), 1)
}

// A client that fell behind receives the pushes in the same places among
// the events as a live client: permission/request, permission/resolved
// and session/state each right after the event it followed, not before
// events that came earlier nor after later ones.
func TestBehindClientKeepsPushOrder(t *testing.T) {
	ts := startServer(t, Options{ReplayOptions: ReplayOptions{ReplayBytes: 1 << 20}, WebSocketOptions: WebSocketOptions{SendQueueFrames: 16, WriteWait: waitTimeout}})
	fast := ts.dial(t)
	s := fast.create(nil)
	slow := dialSlow(t, ts, s)
	for i := 0; i < 40 && !strings.Contains(ts.logBuf.String(), "client fell behind"); i++ {
		fast.turn(s, "flood 8 50000")
	}
	if !strings.Contains(ts.logBuf.String(), "client fell behind") {
		t.Fatal("the slow client never fell behind")
	}
	// Far more than its socket buffers and a pull (4 MiB) hold: it stays
	// behind until it reads again.
	for i := 0; i < 15; i++ {
		fast.turn(s, "flood 8 50000")
	}
	before := fast.events(s)
	mark := before[len(before)-1].Seq // the slow client is behind here

	from := fast.count()
	fast.send(protocol.TypeSessionSend, map[string]any{"session": s, "text": "perm Bash"})
	var req protocol.PermissionRequest
	fast.waitPush(from, protocol.TypePermissionRequest, &req, nil)
	fast.do(protocol.TypePermissionRespond, map[string]any{"session": s, "requestId": req.RequestID, "behavior": "deny"})
	answerText(t, fast, from, s)
	fast.waitEvent(from, s, "the result", isResult)
	fast.turn(s, "flood 8 50000")

	slow.startReading()
	last := fast.events(s)[len(fast.events(s))-1].Seq
	slow.waitEvent(0, s, "the last event", func(ev protocol.SessionEvent) bool { return ev.Seq == last })
	// Live again: a new turn reaches it in order too.
	fast.turn(s, "again")
	last = fast.events(s)[len(fast.events(s))-1].Seq
	slow.waitEvent(0, s, "the new turn", func(ev protocol.SessionEvent) bool { return ev.Seq == last })

	want, got := pushOrder(t, fast.snapshot(), s, mark, last), pushOrder(t, slow.snapshot(), s, mark, last)
	if !slices.Contains(want, "permission/request "+req.RequestID) || !slices.Contains(want, "permission/resolved "+req.RequestID) {
		t.Fatalf("the live client's frames lack the permission pushes: %v", want)
	}
	if !slices.Equal(got, want) {
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		t.Fatalf("the client that fell behind got the frames in another order than the live one; first difference at %d:\n got  %v\n want %v",
			i, got[max(0, i-3):min(len(got), i+5)], want[max(0, i-3):min(len(want), i+5)])
	}
	checkSeqs(t, slow.events(s), 1)
}

// pushOrder lists the frames of session s from the event after seq mark
// to event last: "event <seq>", "<push type> <request id or state>";
// consecutive session/state pushes count as the last of them. A
// permission push before mark is an error: it would be out of place.
func pushOrder(t *testing.T, frames []rawFrame, s string, mark, last int64) []string {
	t.Helper()
	var out []string
	in := false
	for _, f := range frames {
		var d struct {
			Session   string `json:"session"`
			RequestID string `json:"requestId"`
			State     string `json:"state"`
		}
		if f.ev != nil {
			if f.ev.Session != s {
				continue
			}
			if in = f.ev.Seq > mark; in {
				out = append(out, fmt.Sprintf("event %d", f.ev.Seq))
			}
			if f.ev.Seq == last {
				break
			}
			continue
		}
		switch f.Type {
		case protocol.TypePermissionRequest, protocol.TypePermissionResolved, protocol.TypeSessionState, protocol.TypeSessionExited:
		default:
			continue
		}
		if json.Unmarshal(f.Data, &d) != nil || d.Session != s {
			continue
		}
		if !in {
			if d.RequestID != "" {
				t.Errorf("%s %s came before event %d, though the request was made after it", f.Type, d.RequestID, mark+1)
			}
			continue
		}
		tok := f.Type + " " + d.RequestID + d.State
		if f.Type == protocol.TypeSessionState && len(out) > 0 && strings.HasPrefix(out[len(out)-1], protocol.TypeSessionState) {
			out[len(out)-1] = tok
			continue
		}
		out = append(out, tok)
	}
	return out
}

// permission/resolved comes before claude's events that follow the
// answer, for a live client too: the answer is given and the resolution
// pushed under the session's lock, which claude's events need.
func TestResolvedBeforeEventsAfterAnswer(t *testing.T) {
	ts := startServer(t, Options{})
	c := ts.dial(t)
	s := c.create(nil)
	for range 20 {
		from := c.count()
		c.send(protocol.TypeSessionSend, map[string]any{"session": s, "text": "perm Bash"})
		var req protocol.PermissionRequest
		c.waitPush(from, protocol.TypePermissionRequest, &req, nil)
		c.do(protocol.TypePermissionRespond, map[string]any{"session": s, "requestId": req.RequestID, "behavior": "allow"})
		_, ans := c.waitEvent(from, s, "the fake's report of the answer", func(ev protocol.SessionEvent) bool {
			return strings.HasPrefix(textOf(ev), "permission answer: ")
		})
		res := c.waitPush(from, protocol.TypePermissionResolved, nil, nil)
		if res > ans {
			t.Fatalf("permission/resolved (frame %d) came after claude's event that followed the answer (frame %d)", res, ans)
		}
		c.waitEvent(from, s, "the result", isResult)
	}
}

// fullDisk is a spill file on a disk that fills up for a moment: the
// first write past room bytes (of all the process's spill files) fails
// with ENOSPC; later ones succeed (space was freed).
type fullDisk struct {
	eventlog.SpillFile
	used   *atomic.Int64
	room   int64
	failed *atomic.Bool
}

func (f fullDisk) WriteAt(p []byte, off int64) (int, error) {
	if f.used.Add(int64(len(p))) > f.room && f.failed.CompareAndSwap(false, true) {
		return 0, &fs.PathError{Op: "write", Path: "spill", Err: syscall.ENOSPC}
	}
	return f.SpillFile.WriteAt(p, off)
}

// A spill that fails (a full disk) is logged, counted in /metrics
// (ccproxy_replay_log_spill_failures_total), and a subscriber that lost
// events by it gets session/gap, then the rest.
func TestSpillFailureCountedAndGap(t *testing.T) {
	var used atomic.Int64
	var failed atomic.Bool
	ts := startServer(t, Options{
		ReplayOptions: ReplayOptions{ReplayBytes: 64 << 10, ReplayDiskBytes: 8 << 20, spillCreate: func(path string) (eventlog.SpillFile, error) {
			f, err := eventlog.CreateSpillFile(path)
			if err != nil {
				return nil, err
			}
			return fullDisk{SpillFile: f, used: &used, room: 300 << 10, failed: &failed}, nil
		}},
	})
	m, _ := scrape(t, ts)
	wantMetrics(t, "at start", m, map[string]float64{"ccproxy_replay_log_spill_failures_total": 0})

	a := ts.dial(t)
	s := a.create(nil)
	a.turn(s, "flood 400 2000") // 800 KB: the disk is full at 300 KB
	m, _ = scrape(t, ts)
	if n := m["ccproxy_replay_log_spill_failures_total"]; !failed.Load() || n != 1 {
		t.Errorf("ccproxy_replay_log_spill_failures_total %v after a write failed (%v) with ENOSPC, want 1", n, failed.Load())
	}
	if !strings.Contains(ts.logBuf.String(), "spilling to disk failed") || !strings.Contains(ts.logBuf.String(), "no space left on device") {
		t.Error("the failed spill was not logged with its cause")
	}

	c := ts.dial(t)
	var sub protocol.SessionSubscribeResult
	mustUnmarshal(t, c.do(protocol.TypeSessionSubscribe, map[string]any{"session": s, "afterSeq": 0}), &sub)
	if sub.FirstSeq <= 1 {
		t.Fatalf("first seq %d: the log still reaches back to 1 after its disk part was given up", sub.FirstSeq)
	}
	var gap protocol.SessionGap
	c.waitPush(0, protocol.TypeSessionGap, &gap, nil)
	if gap.FirstSeq != sub.FirstSeq {
		t.Errorf("gap %+v, want it to name the first seq held, %d", gap, sub.FirstSeq)
	}
	c.waitEvent(0, s, "replay end", func(ev protocol.SessionEvent) bool { return ev.Seq == sub.LastSeq })
	checkSeqs(t, c.events(s), gap.FirstSeq)
}

// A subscription whose pushes kept while it is behind went over their
// bound (eventlog.Subscriber.Lagged) closes its client 1008 with the
// reason (TestHubPendingPushesBounded, in eventlog, checks the reason).
func TestLaggedClosesPolicyViolation(t *testing.T) {
	c := newClient(&Server{log: slog.New(slog.DiscardHandler)}, "c-test", nil, nil)
	sub := &subscription{c: c}
	sub.Lagged("slow consumer: 10 pushes (1024000 bytes) waiting while catching up on session s-test")
	if dead, code, reason := c.conn.Killed(); !dead || code != 1008 || reason != "slow consumer: 10 pushes (1024000 bytes) waiting while catching up on session s-test" {
		t.Fatalf("lagged: dead %v, code %d, reason %q", dead, code, reason)
	}
}
