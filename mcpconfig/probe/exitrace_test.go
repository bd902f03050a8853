//go:build unix

package probe

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestProbeExitSeenLate: a stdio server that exits during initialize is
// reported as mcp_process_exited even when its exit is seen only after its
// stdout's EOF and after the grace the classifier waits (a loaded machine:
// the waiter goroutine has not run yet). The test holds the waiter back
// until the classifier's wait is over, so the order is fixed whatever the
// machine's speed. A server that closes its stdout and stays running is
// still a protocol error.
func TestProbeExitSeenLate(t *testing.T) {
	for _, c := range []struct {
		name, mode, code, message string
	}{
		{"exits", fakeExit, CodeProcessExited, "the server process exited with status 3 during initialize"},
		{"closes stdout and stays", fakeCloseOut, CodeProtocolError, "the server closed its stdout during initialize"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var late atomic.Int32
			release := make(chan struct{})
			free := sync.OnceFunc(func() { close(release) })
			exitObserved = func() { <-release }
			exitSeenLate = func() { late.Add(1); free() }
			defer func() { free(); exitObserved, exitSeenLate = nil, nil }()
			cfg := probeConfig(t, map[string]any{"s": fake(t, c.mode, nil)}, nil)
			p := testProber(t, func(o *ProberOptions) { o.Timeout = time.Minute; o.Grace = 20 * time.Millisecond })
			r, err := p.Probe(context.Background(), cfg, "s")
			if err != nil {
				t.Fatal(err)
			}
			if n := late.Load(); n != 1 {
				t.Fatalf("the exit was seen late %d times, want 1 (the test's order did not hold)", n)
			}
			if r.OK || r.Error == nil || r.Error.Code != c.code || !strings.Contains(r.Error.Message, c.message) {
				t.Errorf("got %+v, want %s %q", r.Error, c.code, c.message)
			}
		})
	}
}

// TestProbeExitSeenAfterDeadline: a stdio server that exits during
// initialize, before the timeout, is reported as mcp_process_exited even
// when its exit is seen only after the timeout's deadline (a loaded
// machine). The test holds the waiter goroutine back until the context of
// the failure is done.
func TestProbeExitSeenAfterDeadline(t *testing.T) {
	release := make(chan struct{})
	free := sync.OnceFunc(func() { close(release) })
	var expiredEarly atomic.Bool
	exitObserved = func() { <-release }
	classifying = func(ctx context.Context) {
		expiredEarly.Store(ctx.Err() != nil)
		go func() { <-ctx.Done(); free() }()
	}
	defer func() { free(); exitObserved, classifying = nil, nil }()
	cfg := probeConfig(t, map[string]any{"s": fake(t, fakeExit, nil)}, nil)
	// The server must start and exit within the timeout; 5 s is generous.
	p := testProber(t, func(o *ProberOptions) { o.Timeout = 5 * time.Second; o.Grace = 20 * time.Millisecond })
	r, err := p.Probe(context.Background(), cfg, "s")
	if err != nil {
		t.Fatal(err)
	}
	if expiredEarly.Load() {
		t.Fatalf("the timeout expired before the server's failure was seen (a machine too slow for this test): %+v", r.Error)
	}
	if r.OK || r.Error == nil || r.Error.Code != CodeProcessExited || !strings.Contains(r.Error.Message, "exited with status 3 during initialize") {
		t.Errorf("got %+v, want %s", r.Error, CodeProcessExited)
	}
}
