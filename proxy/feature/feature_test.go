package feature

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"slices"
	"testing"

	"github.com/ccproxy/ccproxy/protocol"
)

// conn records the replies of one request; Go runs f at once.
type conn struct {
	replies []protocol.Data
	errs    []error
}

func (c *conn) Context() context.Context                 { return context.Background() }
func (c *conn) Go(f func())                              { f() }
func (c *conn) Reply(_ json.RawMessage, d protocol.Data) { c.replies = append(c.replies, d) }
func (c *conn) ReplyErr(_ json.RawMessage, err error)    { c.errs = append(c.errs, err) }
func (c *conn) Log() *slog.Logger                        { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func TestTable(t *testing.T) {
	off := false
	list := Now(protocol.TypeSessionList, func(context.Context, *conn, *protocol.SessionList) (protocol.Data, error) {
		return protocol.SessionListResult{}, nil
	})
	files := Later(protocol.TypeSessionFiles, func(*conn, *protocol.SessionFiles) (SlowPart, error) {
		return nil, protocol.Errorf(protocol.CodeUnknownSession, "no session")
	})
	tab := Table[*conn]{
		{Capability: "a", Types: []Type[*conn]{list}},
		{Capability: "b", Offered: func() bool { return off }, Types: []Type[*conn]{files}},
		{Capability: "c", Types: []Type[*conn]{WithOffer(func() bool { return off }, Now(protocol.TypeHistoryList, func(context.Context, *conn, *protocol.HistoryList) (protocol.Data, error) {
			return nil, nil
		}))}},
	}
	if got := tab.Capabilities(); !slices.Equal(got, []string{"a", "c"}) {
		t.Errorf("capabilities %v, want a c", got)
	}
	if _, ok := tab.Lookup(protocol.TypeSessionFiles); ok {
		t.Error("a type of a feature not offered is offered")
	}
	if _, ok := tab.Lookup(protocol.TypeHistoryList); ok {
		t.Error("a type whose own offer is off is offered")
	}
	if _, ok := tab.Lookup("nope"); ok {
		t.Error("an unknown type is offered")
	}
	rt, ok := tab.Lookup(protocol.TypeSessionList)
	if !ok {
		t.Fatal("session/list not offered")
	}
	c := &conn{}
	rt.Serve(c, json.RawMessage(`1`), &protocol.SessionList{})
	rt.Serve(c, json.RawMessage(`2`), &protocol.SessionFiles{}) // the wrong data: unknown_type
	if len(c.replies) != 1 || len(c.errs) != 1 {
		t.Fatalf("replies %v errors %v: want one of each", c.replies, c.errs)
	}
	if e, ok := c.errs[0].(*protocol.Error); !ok || e.Code != protocol.CodeUnknownType {
		t.Errorf("mismatched data: %v, want unknown_type", c.errs[0])
	}
	c = &conn{}
	files.Serve(c, json.RawMessage(`3`), &protocol.SessionFiles{}) // the quick part's error, answered at once
	if len(c.errs) != 1 || len(c.replies) != 0 {
		t.Errorf("later's quick error: replies %v errors %v", c.replies, c.errs)
	}
}
