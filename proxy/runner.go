package proxy

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/ccproxy/ccproxy/protocol"
)

// asyncRunner runs the slow requests of one feature (history/list and
// history/read; mcp/probe, mcp/tools, mcp/call, mcp/log and mcp/test) in
// goroutines of their connections, at most cap(slots) at once over all
// connections, and replies with what each returns.
//
// Goroutines: each request runs in a goroutine owned by its connection
// (client.async, joined when the connection ends) and counted in wg, with a
// context that ends with the connection or with the runner (shutdown).
// Server.Serve calls shutdown when it begins to shut down and wait before
// it closes the connections, so that every request cancelled by the
// shutdown has queued its reply (shutting_down) by then. mu orders the
// cancellation of ctx and each wg.Add before shutdown's wait: a request that
// comes after shutdown is refused with shutting_down and never started.
type asyncRunner struct {
	// noun names the requests in the limit_exceeded message: "%d <noun>
	// are running".
	noun string
	// toError turns what a request's do returned into its reply error
	// (and logs what the client is not told); it is called only when
	// neither the connection nor the runner has ended.
	toError func(c *client, typ string, err error) error
	slots   chan struct{} // one per running request

	ctx    context.Context // cancelled by shutdown (under mu)
	cancel context.CancelFunc

	mu sync.Mutex
	wg sync.WaitGroup // the running requests

	// running, when set (tests only), is called in the request's
	// goroutine before do, with do's context.
	running func(ctx context.Context, typ string)
}

// newAsyncRunner returns a runner of at most limit requests at once.
func newAsyncRunner(limit int, noun string, toError func(c *client, typ string, err error) error) *asyncRunner {
	r := &asyncRunner{noun: noun, toError: toError, slots: make(chan struct{}, limit)}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	return r
}

// run runs do in a goroutine of connection c, with a context that ends
// with the connection or the runner, and replies with what do returns:
// its data; shutting_down when the runner was shut down meanwhile; nothing
// when the connection is gone; else toError's error. A request beyond the
// limit gets limit_exceeded, and one after shutdown shutting_down, without
// running.
func (r *asyncRunner) run(c *client, id json.RawMessage, typ string, do func(ctx context.Context) (protocol.Data, error)) {
	r.mu.Lock()
	if r.ctx.Err() != nil {
		r.mu.Unlock()
		c.replyErr(id, shuttingDown(typ))
		return
	}
	select {
	case r.slots <- struct{}{}:
	default:
		r.mu.Unlock()
		c.replyErr(id, protocol.Errorf(protocol.CodeLimitExceeded, "%s: %d %s are running; wait for one to finish", typ, cap(r.slots), r.noun))
		return
	}
	r.wg.Add(1)
	r.mu.Unlock()
	c.async(func() {
		defer r.wg.Done()
		defer func() { <-r.slots }()
		ctx, cancel := context.WithCancel(c.ctx)
		defer cancel()
		stop := context.AfterFunc(r.ctx, cancel)
		defer stop()
		if r.running != nil {
			r.running(ctx, typ)
		}
		data, err := do(ctx)
		switch {
		case err == nil:
			c.reply(id, data)
		case r.ctx.Err() != nil:
			c.replyErr(id, shuttingDown(typ))
		case c.ctx.Err() != nil:
			// The connection is gone: nobody to answer.
		default:
			c.replyErr(id, r.toError(c, typ, err))
		}
	})
}

// shutdown cancels the running requests and refuses new ones
// (shutting_down). It may be called more than once.
func (r *asyncRunner) shutdown() {
	r.mu.Lock()
	r.cancel()
	r.mu.Unlock()
}

// wait returns once every request started before shutdown has queued its
// reply (or found its connection gone). Call it after shutdown.
func (r *asyncRunner) wait() { r.wg.Wait() }

func shuttingDown(typ string) error {
	return protocol.Errorf(protocol.CodeShuttingDown, "%s: ccproxy is shutting down", typ)
}
