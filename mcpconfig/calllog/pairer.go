package calllog

import (
	"encoding/json"
	"time"

	"github.com/tidwall/gjson"

	"github.com/ccproxy/ccproxy/stream"
)

// DefaultMaxPending bounds the MCP tool calls a Pairer waits on.
const DefaultMaxPending = 1024

// PairerOptions configure a Pairer.
type PairerOptions struct {
	// MaxPending bounds the tool_use blocks waiting for their result; when
	// it is reached the oldest is forgotten (counted by Dropped; its
	// result, if it comes, is logged without a duration). Default
	// DefaultMaxPending.
	MaxPending int
	// KeepIO puts inputs and outputs in the entries (set it to
	// Log.StoresIO()).
	KeepIO bool
	// MaxIOBytes caps what KeepIO holds per input or output. Default
	// DefaultMaxIOBytes.
	MaxIOBytes int
}

// Pairer turns the normalized events of one session into call log entries:
// it remembers each MCP tool_use (an assistant tool_use block with the
// "mcp" annotation package stream adds) and, when the user event with its
// tool_result arrives, emits an entry with the duration between the two
// and the size of the result. A tool_result of an MCP tool whose tool_use
// was not seen (forgotten, or before the Pairer started) still gives an
// entry, without duration; a repeated tool_result gives none. Other tools
// are ignored. Not safe for concurrent use.
type Pairer struct {
	session string
	opts    PairerOptions
	pending map[string]pending
	order   []string // tool_use ids in arrival order (may hold stale ids)
	done    map[string]bool
	doneQ   []string
	dropped int
}

type pending struct {
	server, tool string
	at           time.Time
	input        json.RawMessage
}

// NewPairer returns a Pairer for session (the id entries carry).
func NewPairer(session string, opts PairerOptions) *Pairer {
	if opts.MaxPending <= 0 {
		opts.MaxPending = DefaultMaxPending
	}
	if opts.MaxIOBytes <= 0 {
		opts.MaxIOBytes = DefaultMaxIOBytes
	}
	return &Pairer{session: session, opts: opts, pending: map[string]pending{}, done: map[string]bool{}}
}

// Observe takes one normalized event, seen at time at, and returns the
// entries it completes (usually none or one; several for a user event
// with several tool results).
func (p *Pairer) Observe(ev stream.Event, at time.Time) []Entry {
	switch ev.Type {
	case stream.TypeAssistant:
		gjson.GetBytes(ev.JSON, "message.content").ForEach(func(_, b gjson.Result) bool {
			if b.Get("type").String() == "tool_use" {
				p.start(b, at)
			}
			return true
		})
	case stream.TypeUser:
		var out []Entry
		gjson.GetBytes(ev.JSON, "message.content").ForEach(func(_, b gjson.Result) bool {
			if b.Get("type").String() == "tool_result" {
				if e, ok := p.finish(b, at); ok {
					out = append(out, e)
				}
			}
			return true
		})
		return out
	}
	return nil
}

func (p *Pairer) start(b gjson.Result, at time.Time) {
	id := b.Get("id").String()
	server, tool := b.Get("mcp.server").String(), b.Get("mcp.tool").String()
	if id == "" || server == "" || tool == "" {
		return
	}
	if _, ok := p.pending[id]; ok {
		return // the same tool_use again (a streamed start, a replay)
	}
	for len(p.pending) >= p.opts.MaxPending {
		p.evictOldest()
	}
	pd := pending{server: server, tool: tool, at: at}
	if p.opts.KeepIO {
		pd.input = capInput(json.RawMessage(b.Get("input").Raw), p.opts.MaxIOBytes)
	}
	p.pending[id] = pd
	p.order = append(p.order, id)
	p.compact()
}

func (p *Pairer) evictOldest() {
	for len(p.order) > 0 {
		id := p.order[0]
		p.order = p.order[1:]
		if _, ok := p.pending[id]; ok {
			delete(p.pending, id)
			p.dropped++
			return
		}
	}
}

// compact drops ids of finished calls from the front of order, and
// rebuilds it when stale ids make up most of it, so order stays bounded.
func (p *Pairer) compact() {
	for len(p.order) > 0 {
		if _, ok := p.pending[p.order[0]]; ok {
			break
		}
		p.order = p.order[1:]
	}
	if len(p.order) > 2*p.opts.MaxPending {
		live := make([]string, 0, len(p.pending))
		for _, id := range p.order {
			if _, ok := p.pending[id]; ok {
				live = append(live, id)
			}
		}
		p.order = live
	}
}

func (p *Pairer) finish(b gjson.Result, at time.Time) (Entry, bool) {
	id := b.Get("tool_use_id").String()
	if id == "" || p.done[id] {
		return Entry{}, false
	}
	pd, ok := p.pending[id]
	if ok {
		delete(p.pending, id)
		p.compact()
	} else {
		pd.server, pd.tool = b.Get("mcp.server").String(), b.Get("mcp.tool").String()
		if pd.server == "" || pd.tool == "" {
			return Entry{}, false // not an MCP tool
		}
	}
	p.markDone(id)
	content := b.Get("content")
	text := content.Raw
	if content.Type == gjson.String {
		text = content.String()
	}
	size := int64(len(text))
	b.Get("attachments").ForEach(func(_, a gjson.Result) bool {
		size += a.Get("size").Int()
		return true
	})
	e := Entry{
		Time: at.UTC(), Kind: KindSession, Session: p.session,
		Server: pd.server, Tool: pd.tool, ToolUseID: id,
		IsError: b.Get("is_error").Bool(), ResultBytes: size,
	}
	if ok {
		d := float64(at.Sub(pd.at).Microseconds()) / 1000
		e.DurationMs = &d
	}
	if p.opts.KeepIO {
		e.Input = pd.input
		e.Output = capOutput(&text, p.opts.MaxIOBytes)
	}
	return e, true
}

// markDone remembers a finished id (bounded) so a repeated result is not
// logged twice.
func (p *Pairer) markDone(id string) {
	p.done[id] = true
	p.doneQ = append(p.doneQ, id)
	if len(p.doneQ) > p.opts.MaxPending {
		delete(p.done, p.doneQ[0])
		p.doneQ = p.doneQ[1:]
	}
}

// Dropped is the number of waiting calls forgotten because MaxPending was
// reached.
func (p *Pairer) Dropped() int { return p.dropped }
