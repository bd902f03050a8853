package proxy

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/proxy/historyreq"
)

// blockRunner makes every request of r wait, once running, until release
// is closed or its context ends; each running request sends its type on
// the returned channel first. Call it before the first request is sent.
func blockRunner(r *asyncRunner, release <-chan struct{}) <-chan string {
	running := make(chan string, 64)
	r.SetRunning(func(ctx context.Context, typ string) {
		running <- typ
		select {
		case <-release:
		case <-ctx.Done():
		}
	})
	return running
}

func waitRunning(t *testing.T, running <-chan string, n int) {
	t.Helper()
	for i := range n {
		select {
		case <-running:
		case <-time.After(waitTimeout):
			t.Fatalf("%d of %d requests running after %v", i, n, waitTimeout)
		}
	}
}

// History requests running when the proxy shuts down are cancelled and
// answered shutting_down before the connection closes (1001); Serve waits
// for those replies.
func TestHistoryShutdownRepliesShuttingDown(t *testing.T) {
	project := t.TempDir()
	ts := startServer(t, Options{Project: project, HistoryOptions: HistoryOptions{HistoryHome: historyHome(t, project)}})
	release := make(chan struct{}) // never closed: only the shutdown ends the requests
	running := blockRunner(ts.srv.hist.reqs, release)
	c := ts.dial(t)
	list := c.send(protocol.TypeHistoryList, map[string]any{})
	read := c.send(protocol.TypeHistoryRead, map[string]any{"id": "00000000-0000-0000-0000-000000000000"})
	waitRunning(t, running, 2)
	if err := ts.stop(); err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct {
		typ string
		f   rawFrame
	}{{protocol.TypeHistoryList, c.reply(list)}, {protocol.TypeHistoryRead, c.reply(read)}} {
		if r.f.OK == nil || *r.f.OK || r.f.Error == nil || r.f.Error.Code != protocol.CodeShuttingDown ||
			r.f.Error.Message != r.typ+": ccproxy is shutting down" {
			t.Errorf("%s running at shutdown: %s", r.typ, r.f.raw)
		}
	}
	if ce := c.waitClosed(); ce == nil || ce.Code != 1001 {
		t.Errorf("the connection's close after the replies: %v", ce)
	}
}

// A runner that was shut down refuses new requests with shutting_down
// without running them (a request that passed the server's own check just
// before the shutdown began).
func TestRunnerRefusesAfterShutdown(t *testing.T) {
	project := t.TempDir()
	ts := startServer(t, Options{Project: project, HistoryOptions: HistoryOptions{HistoryHome: historyHome(t, project)}})
	ran := make(chan string, 1)
	ts.srv.hist.reqs.SetRunning(func(_ context.Context, typ string) { ran <- typ })
	ts.srv.hist.reqs.Shutdown()
	c := ts.dial(t)
	if e := c.doErr(protocol.TypeHistoryList, map[string]any{}); e.Code != protocol.CodeShuttingDown || e.Message != "history/list: ccproxy is shutting down" {
		t.Errorf("history/list after the runner's shutdown: %+v", e)
	}
	ts.srv.hist.reqs.Close(context.Background()) // nothing runs: returns at once
	select {
	case typ := <-ran:
		t.Errorf("%s ran after the runner's shutdown", typ)
	default:
	}
}

// At most historyreq.MaxRequests history requests run at once, over all
// connections: one more gets limit_exceeded with the message clients got
// before the runner was shared; once they end, they reply and new ones run.
func TestHistoryRequestsBound(t *testing.T) {
	project := t.TempDir()
	ts := startServer(t, Options{Project: project, HistoryOptions: HistoryOptions{HistoryHome: historyHome(t, project)}})
	release := make(chan struct{})
	running := blockRunner(ts.srv.hist.reqs, release)
	a, b := ts.dial(t), ts.dial(t)
	var ids []struct {
		c  *wsClient
		id []byte
	}
	for i := range historyreq.MaxRequests {
		c := []*wsClient{a, b}[i%2]
		ids = append(ids, struct {
			c  *wsClient
			id []byte
		}{c, c.send(protocol.TypeHistoryList, map[string]any{"all": true})})
	}
	waitRunning(t, running, historyreq.MaxRequests)
	e := b.doErr(protocol.TypeHistoryRead, map[string]any{"id": "00000000-0000-0000-0000-000000000000"})
	if want := "history/read: 8 history requests are running; wait for one to finish"; e.Code != protocol.CodeLimitExceeded || e.Message != want {
		t.Errorf("one request beyond the bound: %+v, want limit_exceeded %q", e, want)
	}
	close(release)
	for _, r := range ids {
		if f := r.c.reply(r.id); f.OK == nil || !*f.OK || !strings.Contains(string(f.Data), `"sessions":[{`) {
			t.Errorf("history/list released: %s", f.raw)
		}
	}
	a.do(protocol.TypeHistoryList, map[string]any{})
}
