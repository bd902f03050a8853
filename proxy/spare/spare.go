package spare

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ccproxy/ccproxy/proxy/claudecli"
	"github.com/ccproxy/ccproxy/stream"
)

// Spare is one claude started with --await-claim and parked, waiting for
// a claim. Its process is Cli; Tag is what the pool's Config.Current
// returned when it was launched (what its command line holds, e.g. the
// MCP configuration), and Data what Launch returned with it.
type Spare struct {
	Cli  *claudecli.Client
	Tag  any
	Data any

	release  func()
	launched time.Time
	booted   bool // it has answered a control request: it reads stdin, a claim is answered at once (Pool.mu)
	route    atomic.Pointer[Route]
	taken    chan struct{} // closed by Take: the watcher ends, the taker owns the process

	// A claim made ahead of need (Config.Ahead). ahead is what was asked
	// (nil: none, or refused; Pool.mu); aheadDone is made with it (Pool.mu,
	// then never changed) and closed when claude answered, after aheadRes
	// and aheadErr are written; broken marks one whose claim went
	// unanswered (Pool.mu): the owner closes it.
	ahead     *Claim
	aheadDone chan struct{}
	aheadRes  Claimed
	aheadErr  error
	broken    bool
	hold      holdBuffer // its output from the claim's answer to Adopt
}

// Bounds of what a spare claimed ahead of need keeps of its output until a
// session adopts it (claude prints nothing then, measured; a spare that
// does and passes a bound is not used: Ahead reports it).
const (
	maxHeldEvents = 256
	maxHeldBytes  = 1 << 20
)

// holdBuffer is the output of a spare claimed ahead of need, kept for the
// session that adopts it.
type holdBuffer struct {
	mu       sync.Mutex
	evs      []*stream.Event
	bytes    int
	overflow bool
}

// Route is where a claimed spare's output goes: the handlers of the
// session that took it.
type Route struct {
	OnEvent          func(ev *stream.Event)
	OnControlRequest func(c *claudecli.Client, req claudecli.ControlRequest)
	OnControlCancel  func(requestID string)
}

// Handlers returns the handlers Config.Launch gives claudecli.Start: they
// pass the process's output to the route the claim installs and drop it
// before (system/ui_invalidate always).
func (sp *Spare) Handlers() (onEvent func(*stream.Event), onRequest func(*claudecli.Client, claudecli.ControlRequest), onCancel func(string)) {
	onEvent = func(ev *stream.Event) {
		if ev.Type == stream.TypeSystem && ev.Subtype == "ui_invalidate" {
			return
		}
		if r := sp.route.Load(); r != nil && r.OnEvent != nil {
			r.OnEvent(ev)
		}
	}
	onRequest = func(c *claudecli.Client, req claudecli.ControlRequest) {
		if r := sp.route.Load(); r != nil && r.OnControlRequest != nil {
			r.OnControlRequest(c, req)
			return
		}
		c.Answer(stream.ControlError(req.ID, fmt.Sprintf("a parked spare takes no control request of subtype %q", req.Subtype)))
	}
	onCancel = func(id string) {
		if r := sp.route.Load(); r != nil && r.OnControlCancel != nil {
			r.OnControlCancel(id)
		}
	}
	return onEvent, onRequest, onCancel
}

// Claim is the claim_session request (docs/CLI-NOTES.md): the session's
// directory, its permission mode, and whether the answer carries what an
// initialize answer would (Claimed.Initialize).
type Claim struct {
	Cwd               string `json:"cwd"`
	PermissionMode    string `json:"permission_mode,omitempty"`
	IncludeInitialize bool   `json:"include_initialize,omitempty"`
}

// Claimed is claude's answer to a claim.
type Claimed struct {
	SessionID  string          `json:"session_id"`
	Cwd        string          `json:"cwd"`
	ParkedMs   int64           `json:"parked_ms"`
	Initialize json.RawMessage `json:"initialize,omitempty"` // with IncludeInitialize
}

// Claim sends claim_session and waits for the answer, at most until ctx
// is done (or the process's ControlTimeout). On success route gets the
// process's output from the answer on: nothing claude prints after it is
// lost, nothing before it reaches the route. On an error (a refusal such
// as cwd_not_found, a timeout, the process gone, ctx) the spare gets no
// route; the caller closes it.
func (sp *Spare) Claim(ctx context.Context, c Claim, route *Route) (Claimed, error) {
	type result struct {
		resp json.RawMessage
		err  error
	}
	ch := make(chan result, 1)
	id, err := sp.Cli.CallAsync("claim_session", c, func(resp json.RawMessage, err error) {
		if err == nil {
			sp.route.Store(route) // on the stdout goroutine: before the next line is read
		}
		ch <- result{resp, err}
	})
	if err != nil {
		return Claimed{}, err
	}
	var r result
	select {
	case r = <-ch:
	case <-ctx.Done():
		sp.Cli.Forget(id)
		return Claimed{}, ctx.Err()
	}
	if r.err != nil {
		return Claimed{}, r.err
	}
	var out Claimed
	if err := json.Unmarshal(r.resp, &out); err != nil {
		return Claimed{}, fmt.Errorf("claim_session answer: %w", err)
	}
	return out, nil
}

// sameClaim reports whether a spare claimed for a serves a session that
// would claim b: the same directory and permission mode ("" is claude's
// default mode).
func sameClaim(a, b Claim) bool {
	mode := func(m string) string {
		if m == "default" {
			return ""
		}
		return m
	}
	return filepath.Clean(a.Cwd) == filepath.Clean(b.Cwd) && mode(a.PermissionMode) == mode(b.PermissionMode)
}

// holdRoute returns the route a claim made ahead of need installs: events
// are kept (bounded) for Adopt, a control request of claude's is refused
// (none comes before a turn).
func (sp *Spare) holdRoute() *Route {
	r := &Route{
		OnControlRequest: func(c *claudecli.Client, req claudecli.ControlRequest) {
			c.Answer(stream.ControlError(req.ID, fmt.Sprintf("a spare claimed ahead of need takes no control request of subtype %q", req.Subtype)))
		},
	}
	r.OnEvent = func(ev *stream.Event) {
		h := &sp.hold
		h.mu.Lock()
		if cur := sp.route.Load(); cur != r { // adopted meanwhile
			h.mu.Unlock()
			if cur.OnEvent != nil {
				cur.OnEvent(ev)
			}
			return
		}
		defer h.mu.Unlock()
		if h.overflow {
			return
		}
		if len(h.evs) >= maxHeldEvents || h.bytes+len(ev.JSON) > maxHeldBytes {
			h.overflow = true
			h.evs, h.bytes = nil, 0
			return
		}
		h.evs = append(h.evs, ev.Clone()) // ev is valid only during this call
		h.bytes += len(ev.JSON)
	}
	return r
}

// Ahead reports whether the spare was claimed ahead of need and, if so,
// waits for claude's answer (at most until ctx is done): the claim's
// answer, or why the spare cannot be used (its output passed the hold's
// bound, the claim failed). A spare not claimed ahead (ok false) is
// claimed with Claim.
func (sp *Spare) Ahead(ctx context.Context) (c Claimed, ok bool, err error) {
	if sp.aheadDone == nil {
		return Claimed{}, false, nil
	}
	select {
	case <-sp.aheadDone:
	case <-ctx.Done():
		return Claimed{}, true, fmt.Errorf("the claim made ahead of need: %w", ctx.Err())
	}
	var refused *claudecli.CLIError
	if errors.As(sp.aheadErr, &refused) {
		return Claimed{}, false, nil // parked unclaimed: claim it now
	}
	if sp.aheadErr != nil {
		return Claimed{}, true, fmt.Errorf("the claim made ahead of need: %w", sp.aheadErr)
	}
	sp.hold.mu.Lock()
	over := sp.hold.overflow
	sp.hold.mu.Unlock()
	if over {
		return Claimed{}, true, fmt.Errorf("the spare printed more than %d events or %d bytes between its claim and its use", maxHeldEvents, maxHeldBytes)
	}
	return sp.aheadRes, true, nil
}

// Adopt routes the output of a spare claimed ahead of need (Ahead ok, no
// error) to route: first what it printed since the claim, in order, then
// the rest, as Claim's route gets it.
func (sp *Spare) Adopt(route *Route) {
	h := &sp.hold
	for {
		h.mu.Lock()
		evs := h.evs
		h.evs, h.bytes = nil, 0
		if len(evs) == 0 {
			sp.route.Store(route)
			h.mu.Unlock()
			return
		}
		h.mu.Unlock()
		for _, ev := range evs {
			if route.OnEvent != nil {
				route.OnEvent(ev)
			}
		}
	}
}

// Release frees what the spare's command line names (Launch's release);
// the taker calls it once the process has exited.
func (sp *Spare) Release() {
	if sp.release != nil {
		sp.release()
	}
}

// Close ends the spare's process (stdin EOF, then claudecli's grace and
// signals), waits for it and frees what it holds.
func (sp *Spare) Close() {
	sp.Cli.Close()
	sp.Release()
}

// Parked is how long the spare has been parked.
func (sp *Spare) Parked() time.Duration { return time.Since(sp.launched) }
