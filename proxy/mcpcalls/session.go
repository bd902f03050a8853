package mcpcalls

import (
	"log/slog"
	"time"

	"github.com/ccproxy/ccproxy/mcpconfig/calllog"
	"github.com/ccproxy/ccproxy/stream"
)

// SessionCalls pairs the MCP tool calls of one session's events for the
// call log. It belongs to the session's stdout loop (not safe for
// concurrent use).
type SessionCalls struct {
	// Scrub, when set, masks the session's secrets (the servers its
	// client sent are not in the proxy's configuration). Set it before
	// the first Observe.
	Scrub func(string) string

	m          *Calls
	p          *calllog.Pairer
	maxPending int // the Pairer's MaxPending, for the log
	log        *slog.Logger
	dropped    int // p.Dropped() when last reported
}

// ForSession returns the call pairing of a session's stdout loop, or nil
// when no call log is kept.
func (m *Calls) ForSession(session string, log *slog.Logger) *SessionCalls {
	if m.clog == nil {
		return nil
	}
	return m.newSessionCalls(session, calllog.PairerOptions{KeepIO: m.clog.StoresIO(), MaxPending: calllog.DefaultMaxPending}, log)
}

func (m *Calls) newSessionCalls(session string, opts calllog.PairerOptions, log *slog.Logger) *SessionCalls {
	return &SessionCalls{m: m, p: calllog.NewPairer(session, opts), maxPending: opts.MaxPending, log: log}
}

// Observe feeds an event of the session to its Pairer and logs the calls
// it completes. Only assistant and user events that package stream marked
// as holding MCP blocks (ev.MCP) are looked at: MCP calls start with an
// annotated tool_use and end with an annotated tool_result, and every
// other event (a 5 MB Bash result, say) is passed over unparsed.
func (sc *SessionCalls) Observe(ev *stream.Event) {
	if !ev.MCP || (ev.Type != stream.TypeAssistant && ev.Type != stream.TypeUser) {
		return
	}
	for _, e := range sc.p.Observe(*ev, time.Now()) {
		if sc.Scrub != nil {
			sc.m.scrubEntry(&e, sc.Scrub)
		}
		sc.m.LogEntry(e)
	}
	if n := sc.p.Dropped(); n > sc.dropped {
		sc.dropped = n
		sc.log.Warn("MCP call log: too many tool calls awaited their results; the oldest were forgotten (their results are logged without a duration)",
			"dropped_total", n, "max_pending", sc.maxPending)
	}
}
