package runner

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"

	"github.com/ccproxy/ccproxy/protocol"
)

// Conn is the connection a request came on.
type Conn interface {
	// Context ends when the connection ends.
	Context() context.Context
	// Go runs f in a goroutine the connection owns and joins when it ends.
	Go(f func())
	// Reply queues the successful reply to request id.
	Reply(id json.RawMessage, data protocol.Data)
	// ReplyErr queues the error reply to request id.
	ReplyErr(id json.RawMessage, err error)
	// Log is the connection's logger.
	Log() *slog.Logger
}

// Runner runs the requests of one feature; see the package comment.
type Runner struct {
	// noun names the requests in the limit_exceeded message: "%d <noun>
	// are running".
	noun string
	// toError turns what a request's do returned into its reply error
	// (and logs what the client is not told, on log, the connection's
	// logger); it is called only when neither the connection nor the
	// runner has ended.
	toError func(log *slog.Logger, typ string, err error) error
	slots   chan struct{} // one per running request

	ctx    context.Context // cancelled by Shutdown (under mu)
	cancel context.CancelFunc

	mu sync.Mutex
	wg sync.WaitGroup // the running requests

	// running, when set (tests only, SetRunning), is called in the
	// request's goroutine before do, with do's context.
	running func(ctx context.Context, typ string)
}

// New returns a runner of at most limit requests at once.
func New(limit int, noun string, toError func(log *slog.Logger, typ string, err error) error) *Runner {
	r := &Runner{noun: noun, toError: toError, slots: make(chan struct{}, limit)}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	return r
}

// Limit is the number of requests that may run at once.
func (r *Runner) Limit() int { return cap(r.slots) }

// SetRunning sets a function each request calls in its goroutine before
// do, with do's context (tests only: to hold requests while they run).
// Call it before the first request.
func (r *Runner) SetRunning(f func(ctx context.Context, typ string)) { r.running = f }

// Run runs do in a goroutine of connection c, with a context that ends
// with the connection or the runner, and replies with what do returns:
// its data; shutting_down when the runner was shut down meanwhile; nothing
// when the connection is gone; else toError's error. A request beyond the
// limit gets limit_exceeded, and one after Shutdown shutting_down, without
// running.
func (r *Runner) Run(c Conn, id json.RawMessage, typ string, do func(ctx context.Context) (protocol.Data, error)) {
	r.mu.Lock()
	if r.ctx.Err() != nil {
		r.mu.Unlock()
		c.ReplyErr(id, ShuttingDown(typ))
		return
	}
	select {
	case r.slots <- struct{}{}:
	default:
		r.mu.Unlock()
		c.ReplyErr(id, protocol.Errorf(protocol.CodeLimitExceeded, "%s: %d %s are running; wait for one to finish", typ, cap(r.slots), r.noun))
		return
	}
	r.wg.Add(1)
	r.mu.Unlock()
	connCtx := c.Context()
	c.Go(func() {
		defer r.wg.Done()
		defer func() { <-r.slots }()
		ctx, cancel := context.WithCancel(connCtx)
		defer cancel()
		stop := context.AfterFunc(r.ctx, cancel)
		defer stop()
		if r.running != nil {
			r.running(ctx, typ)
		}
		data, err := do(ctx)
		switch {
		case err == nil:
			c.Reply(id, data)
		case r.ctx.Err() != nil:
			c.ReplyErr(id, ShuttingDown(typ))
		case connCtx.Err() != nil:
			// The connection is gone: nobody to answer.
		default:
			c.ReplyErr(id, r.toError(c.Log(), typ, err))
		}
	})
}

// Shutdown cancels the running requests and refuses new ones
// (shutting_down). It may be called more than once.
func (r *Runner) Shutdown() {
	r.mu.Lock()
	r.cancel()
	r.mu.Unlock()
}

// Close shuts the runner down and returns once every request started
// before has queued its reply (or found its connection gone), or with
// ctx's error when ctx ends first. It may be called more than once.
func (r *Runner) Close(ctx context.Context) error {
	r.Shutdown()
	done := make(chan struct{})
	go func() { r.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ShuttingDown is the reply error of request typ refused or cut short by
// the shutdown.
func ShuttingDown(typ string) error {
	return protocol.Errorf(protocol.CodeShuttingDown, "%s: ccproxy is shutting down", typ)
}
