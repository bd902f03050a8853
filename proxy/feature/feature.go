package feature

import (
	"context"
	"encoding/json"
	"reflect"

	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/proxy/runner"
)

// Table is the proxy's features, in the order hello announces their
// capabilities.
type Table[C runner.Conn] []Feature[C]

// A Feature is one capability and the request types it serves.
type Feature[C runner.Conn] struct {
	Capability string
	// Offered reports whether the server offers the feature; nil: always.
	Offered func() bool
	Types   []Type[C]
}

// Type is one request type of a feature.
type Type[C runner.Conn] struct {
	Name string
	// Offered, when set, narrows the feature's offer for this type
	// (mcp/test needs a prober besides mcp.manage).
	Offered func() bool
	// Serve serves one decoded request of connection c; it sees that the
	// request gets exactly one reply.
	Serve func(c C, id json.RawMessage, req protocol.Data)
	Data  reflect.Type // the protocol type Serve takes (for the tests)
}

// Handler takes a request and returns its reply's data or an error (a
// *protocol.Error is sent as it is; any other is logged and sent as
// internal). ctx ends with the connection.
type Handler[C runner.Conn, T protocol.Data] func(ctx context.Context, c C, d T) (protocol.Data, error)

// SlowPart is the part of a request that runs in a goroutine of the
// connection; ctx ends with the connection.
type SlowPart func(ctx context.Context) (protocol.Data, error)

// as converts the decoded data to the handler's type; a mismatch (a table
// entry and the protocol's decoding disagreeing) is answered as an unknown
// type, as dispatch did before the table.
func as[T protocol.Data](c runner.Conn, id json.RawMessage, typ string, req protocol.Data) (T, bool) {
	d, ok := req.(T)
	if !ok {
		c.ReplyErr(id, protocol.Errorf(protocol.CodeUnknownType, "unknown request type %.60q", typ))
	}
	return d, ok
}

// ReplyWith replies to request id with res, or with err when it is not nil.
func ReplyWith(c runner.Conn, id json.RawMessage, res protocol.Data, err error) {
	if err != nil {
		c.ReplyErr(id, err)
		return
	}
	c.Reply(id, res)
}

// Now: h replies at once.
func Now[C runner.Conn, T protocol.Data](typ string, h Handler[C, T]) Type[C] {
	return Type[C]{Name: typ, Data: reflect.TypeFor[T](), Serve: func(c C, id json.RawMessage, req protocol.Data) {
		if d, ok := as[T](c, id, typ, req); ok {
			res, err := h(c.Context(), c, d)
			ReplyWith(c, id, res, err)
		}
	}}
}

// Async: h runs in a goroutine of the connection.
func Async[C runner.Conn, T protocol.Data](typ string, h Handler[C, T]) Type[C] {
	return Type[C]{Name: typ, Data: reflect.TypeFor[T](), Serve: func(c C, id json.RawMessage, req protocol.Data) {
		if d, ok := as[T](c, id, typ, req); ok {
			c.Go(func() {
				res, err := h(c.Context(), c, d)
				ReplyWith(c, id, res, err)
			})
		}
	}}
}

// Later: h's quick part runs now and returns the slow part, which runs in
// a goroutine of the connection (or an error, answered at once).
func Later[C runner.Conn, T protocol.Data](typ string, h func(c C, d T) (SlowPart, error)) Type[C] {
	return Type[C]{Name: typ, Data: reflect.TypeFor[T](), Serve: func(c C, id json.RawMessage, req protocol.Data) {
		d, ok := as[T](c, id, typ, req)
		if !ok {
			return
		}
		slow, err := h(c, d)
		if err != nil {
			c.ReplyErr(id, err)
			return
		}
		c.Go(func() {
			res, err := slow(c.Context())
			ReplyWith(c, id, res, err)
		})
	}}
}

// Run: h runs under the runner r returns (runner.Runner.Run: its limit,
// its shutdown, its error mapping).
func Run[C runner.Conn, T protocol.Data](typ string, r func() *runner.Runner, h Handler[C, T]) Type[C] {
	return Type[C]{Name: typ, Data: reflect.TypeFor[T](), Serve: func(c C, id json.RawMessage, req protocol.Data) {
		if d, ok := as[T](c, id, typ, req); ok {
			r().Run(c, id, typ, func(ctx context.Context) (protocol.Data, error) { return h(ctx, c, d) })
		}
	}}
}

// Replies: h replies through c itself, exactly once.
func Replies[C runner.Conn, T protocol.Data](typ string, h func(c C, id json.RawMessage, d T)) Type[C] {
	return Type[C]{Name: typ, Data: reflect.TypeFor[T](), Serve: func(c C, id json.RawMessage, req protocol.Data) {
		if d, ok := as[T](c, id, typ, req); ok {
			h(c, id, d)
		}
	}}
}

// WithOffer narrows rt's offer to when offered holds.
func WithOffer[C runner.Conn](offered func() bool, rt Type[C]) Type[C] {
	rt.Offered = offered
	return rt
}

// Capabilities lists the capabilities offered, for hello.
func (t Table[C]) Capabilities() []string {
	var caps []string
	for _, f := range t {
		if f.Offered == nil || f.Offered() {
			caps = append(caps, f.Capability)
		}
	}
	return caps
}

// Lookup returns the request type typ and whether it is offered: its
// feature is, and the type itself (Type.Offered).
func (t Table[C]) Lookup(typ string) (*Type[C], bool) {
	for i := range t {
		f := &t[i]
		for j := range f.Types {
			rt := &f.Types[j]
			if rt.Name != typ {
				continue
			}
			ok := (f.Offered == nil || f.Offered()) && (rt.Offered == nil || rt.Offered())
			return rt, ok
		}
	}
	return nil, false
}
