package proxy

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/ccproxy/ccproxy/protocol"
)

// The server's lifecycle. Serve opens its long-lived components in the
// order of components and, once its context is done (or the listener
// fails), marks the registry shutting (no connection, session or request
// starts after that) and closes them in reverse, each close cancelling
// what the component runs and waiting for it, as litestream's
// components Open and Close. Closing in reverse is what orders shutdown:
//
//	open:   spool → connections → sessions → spares → requests → logins → loops → http
//	close:  http (no new connection; 5 s for the others to finish their
//	        HTTP requests) → loops (mcp and reap loops stopped) → logins
//	        (running logins stopped, their failed pushes queued) → requests
//	        (cancelled, their shutting_down replies queued; the call log
//	        closed) → spares (a claim under way cancelled, the parked
//	        spares closed: package proxy/spare) → sessions (closed: session/exited reason shutdown,
//	        every claude gone) → connections (each closed with 1001 after
//	        what is queued, their handlers waited for) → spool (the logs
//	        freed, their spill files closed, the directory removed)
//
// Each component owns its goroutines: nothing adds to another's
// WaitGroup. A close error is logged, the first returned by Serve.

// A component is one long-lived part of a running Server.
type component struct {
	name  string
	open  func() error                    // nil: nothing to start
	close func(ctx context.Context) error // cancels, then waits
}

// components are the server's components in the order they open.
func (s *Server) components(web *httpComponent) []component {
	var loopCtx context.Context
	var stopLoops context.CancelFunc
	var loops sync.WaitGroup
	var sessions []*Session
	return []component{
		{name: "spool",
			open: func() error { s.spool.Dir(); return nil }, // removes what a killed ccproxy left, makes ours
			close: func(context.Context) error {
				for _, sess := range sessions {
					// The clients are gone: free the logs, closing their
					// spill files before the spool directory is removed
					// (Windows cannot remove an open file).
					sess.hub.release()
				}
				s.spool.Close()
				return nil
			}},
		{name: "connections", close: func(context.Context) error {
			s.mu.Lock()
			for c := range s.clients {
				c.closeGracefully()
			}
			s.mu.Unlock()
			s.handlers.Wait()
			return nil
		}},
		{name: "sessions", close: func(context.Context) error {
			s.mu.Lock()
			for _, sess := range s.sessions {
				sessions = append(sessions, sess)
			}
			s.mu.Unlock()
			var wg sync.WaitGroup
			for _, sess := range sessions {
				wg.Add(1)
				go func() { defer wg.Done(); sess.close(protocol.ExitShutdown) }()
			}
			wg.Wait()
			return nil
		}},
		{name: "spares", // after the sessions: closed before them (a claim under way is cancelled)
			open:  func() error { s.spares.Open(); return nil },
			close: s.spares.Close},
		{name: "requests",
			open: func() error { s.calls.Start(); return nil },
			close: func(ctx context.Context) error {
				closeRequests(s.log, s.calls, s.hist) // each Close cancels, refuses new requests, then waits
				return nil
			}},
		{name: "logins", close: s.mcpf.logins.Close},
		{name: "loops",
			open: func() error {
				loopCtx, stopLoops = context.WithCancel(context.Background())
				loops.Add(2)
				go func() { defer loops.Done(); s.mcpLoop(loopCtx) }()
				go func() { defer loops.Done(); s.reapLoop(loopCtx) }()
				return nil
			},
			close: func(context.Context) error { stopLoops(); loops.Wait(); return nil }},
		{name: "http", open: web.open, close: web.close},
	}
}

// openAll opens comps in order; on an error it returns how many opened.
func openAll(comps []component) (int, error) {
	for i, c := range comps {
		if c.open != nil {
			if err := c.open(); err != nil {
				return i, err
			}
		}
	}
	return len(comps), nil
}

// closeAll closes comps in reverse order, logging errors; it returns the
// first.
func closeAll(log *slog.Logger, comps []component) error {
	var first error
	for i := len(comps) - 1; i >= 0; i-- {
		if err := comps[i].close(context.Background()); err != nil {
			log.Warn("closing "+comps[i].name, "err", err)
			if first == nil {
				first = err
			}
		}
	}
	return first
}

// httpComponent is the HTTP server on the listener.
type httpComponent struct {
	hs   *http.Server
	ln   net.Listener
	log  *slog.Logger
	errc chan error // Serve's result; nil once Serve read it
}

func (h *httpComponent) open() error {
	h.errc = make(chan error, 1)
	go func() { h.errc <- h.hs.Serve(h.ln) }()
	return nil
}

// close stops accepting, gives the HTTP requests in flight 5 s (hijacked
// websockets are the connections component's), and returns Serve's
// error, if any but ErrServerClosed.
func (h *httpComponent) close(context.Context) error {
	shutCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := h.hs.Shutdown(shutCtx); err != nil {
		h.log.Warn("http shutdown", "err", err)
		h.hs.Close()
	}
	if h.errc == nil {
		return nil
	}
	if err := <-h.errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
