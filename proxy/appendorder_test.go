package proxy

import (
	"sync"
	"testing"

	"github.com/ccproxy/ccproxy/stream"
)

// Two stdout loops — an old claude process's last lines and its
// successor's first — may log events of one session at once: every event
// gets a seq of its own, in order (the seq was read before the session's
// lock was taken, so two events could be given the same one, and the log
// panicked on the second).
func TestAppendEventConcurrent(t *testing.T) {
	ts := startServer(t, Options{})
	sess := ts.srv.newSession(sessionConfig{cwd: ts.srv.opts.Project})
	ev := stream.NewNormalizer(stream.Options{}).Normalize([]byte(`{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"hi"}]}}`))
	const perLoop = 20000
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range 2 {
		wg.Go(func() {
			<-start
			for range perLoop {
				sess.appendEvent(nil, &ev)
			}
		})
	}
	close(start)
	wg.Wait()
	if first, last := sess.hub.seqs(); first != 1 || last != 2*perLoop {
		t.Fatalf("the log holds seqs %d..%d, want 1..%d", first, last, 2*perLoop)
	}
}
