// Package usage counts what a session's turns used, for session/state's
// usage (SPEC §4): each result event gives the turn's tokens (its usage:
// the sum over the turn's API calls) and claude's total_cost_usd, which is
// the conversation's cost so far: claude carries it over --resume, so a
// turn's cost is the difference from the total seen before it (the first
// turn of a session that resumed a conversation has no earlier total: its
// cost is not known and counts as 0). How full the context window is comes
// from claude's get_context_usage, asked after each turn (totalTokens of
// maxTokens), and until it answers from the last API call's usage (the
// turn's last assistant event); the window also from the result's
// modelUsage contextWindow.
//
// A State is not safe for concurrent use: its owner (a proxy Session)
// guards it with its own lock. The package starts no goroutines.
package usage

import (
	"github.com/tidwall/gjson"

	"github.com/ccproxy/ccproxy/protocol"
)

// State is what a session's turns used.
type State struct {
	total         protocol.TokenUsage
	last          *protocol.TokenUsage
	turns         int64
	claudeCost    float64 // total_cost_usd of the last result (the conversation's, as claude counts it)
	seenCost      bool    // claudeCost was set by a result of this session
	contextTokens int64
	contextWindow int64
	lastCall      int64  // the context the last API call of the main conversation took (its assistant event's usage)
	gen           uint64 // counts changes
}

// Gen counts the changes: what a session/state told can be compared.
func (u *State) Gen() uint64 { return u.gen }

// NoteAssistant notes the context an API call took: the input (cached or
// not) and output tokens of an assistant event of the main conversation
// (not a subagent's).
func (u *State) NoteAssistant(ev []byte) {
	if gjson.GetBytes(ev, "parent_tool_use_id").String() != "" {
		return
	}
	us := gjson.GetBytes(ev, "message.usage")
	if n := us.Get("input_tokens").Int() + us.Get("cache_read_input_tokens").Int() + us.Get("cache_creation_input_tokens").Int() + us.Get("output_tokens").Int(); n > 0 {
		u.lastCall = n
	}
}

// NoteResult counts the turn a result event ends. resumed says that the
// session's conversation was resumed (its claude knew an earlier cost).
func (u *State) NoteResult(result []byte, resumed bool) {
	r := gjson.ParseBytes(result)
	us := r.Get("usage")
	t := protocol.TokenUsage{
		InputTokens:         max(0, us.Get("input_tokens").Int()),
		OutputTokens:        max(0, us.Get("output_tokens").Int()),
		CacheReadTokens:     max(0, us.Get("cache_read_input_tokens").Int()),
		CacheCreationTokens: max(0, us.Get("cache_creation_input_tokens").Int()),
	}
	if c := r.Get("total_cost_usd"); c.Exists() {
		cost := c.Float()
		switch {
		case u.seenCost:
			t.CostUSD = max(0, cost-u.claudeCost)
		case !resumed:
			t.CostUSD = max(0, cost)
		}
		u.claudeCost, u.seenCost = cost, true
	}
	r.Get("modelUsage").ForEach(func(_, m gjson.Result) bool {
		if w := m.Get("contextWindow").Int(); w > 0 {
			u.contextWindow = w
		}
		return true
	})
	if u.lastCall > 0 {
		u.contextTokens = u.lastCall // until get_context_usage answers
	}
	u.total.InputTokens += t.InputTokens
	u.total.OutputTokens += t.OutputTokens
	u.total.CacheReadTokens += t.CacheReadTokens
	u.total.CacheCreationTokens += t.CacheCreationTokens
	u.total.CostUSD += t.CostUSD
	u.last = &t
	u.turns++
	u.gen++
}

// NoteContext takes claude's answer to get_context_usage; it reports
// whether anything changed.
func (u *State) NoteContext(resp []byte) bool {
	r := gjson.ParseBytes(resp)
	used, window := r.Get("totalTokens").Int(), r.Get("maxTokens").Int()
	if used < 0 || window < 0 || (used == u.contextTokens && (window == 0 || window == u.contextWindow)) {
		return false
	}
	u.contextTokens = used
	if window > 0 {
		u.contextWindow = window
	}
	u.gen++
	return true
}

// Info is session/state's usage: nil before the first turn ended.
func (u *State) Info() *protocol.SessionUsage {
	if u.turns == 0 && u.contextTokens == 0 {
		return nil
	}
	su := &protocol.SessionUsage{Total: u.total, Turns: u.turns, ContextTokens: u.contextTokens, ContextWindow: u.contextWindow}
	if u.last != nil {
		l := *u.last
		su.LastTurn = &l
	}
	return su
}
