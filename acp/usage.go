package acp

// Usage for the editor (ACP, unstable in the schema of acp-go-sdk v0.13.0):
// the prompt response's usage is the turn's tokens, from the result
// event's usage (the sum over the turn's API calls); a usage_update
// session update carries how full the context window is (used/size) and
// the conversation's cost, from the result event (the window from its
// modelUsage, the cost its total_cost_usd) and the last API call's usage
// (its assistant event), sent with the result, before the prompt's answer
// (a later one could meet an editor that already quit).

import (
	sdk "github.com/coder/acp-go-sdk"
	"github.com/tidwall/gjson"

	"github.com/ccproxy/ccproxy/protocol"
)

// turnUsage is a prompt response's usage: the result event's usage; nil
// when the event has none.
func turnUsage(result gjson.Result) *sdk.Usage {
	u := result.Get("usage")
	if !u.Exists() {
		return nil
	}
	in, out := int(u.Get("input_tokens").Int()), int(u.Get("output_tokens").Int())
	read, write := int(u.Get("cache_read_input_tokens").Int()), int(u.Get("cache_creation_input_tokens").Int())
	us := &sdk.Usage{InputTokens: in, OutputTokens: out, TotalTokens: in + out + read + write}
	if read > 0 {
		us.CachedReadTokens = &read
	}
	if write > 0 {
		us.CachedWriteTokens = &write
	}
	return us
}

// usageUpdate is the usage_update for a session/state's usage, and the
// key that tells whether it changed; nil before the context window is
// known.
func usageUpdate(u *protocol.SessionUsage) (*sdk.SessionUpdate, sdk.SessionUsageUpdate) {
	if u == nil || u.ContextWindow <= 0 {
		return nil, sdk.SessionUsageUpdate{}
	}
	up := sdk.SessionUsageUpdate{SessionUpdate: "usage_update", Used: int(u.ContextTokens), Size: int(u.ContextWindow),
		Cost: &sdk.Cost{Amount: u.Total.CostUSD, Currency: "USD"}}
	return &sdk.SessionUpdate{UsageUpdate: &up}, up
}

// sameUsage reports whether two usage updates say the same.
func sameUsage(a, b sdk.SessionUsageUpdate) bool {
	return a.Used == b.Used && a.Size == b.Size && (a.Cost == nil) == (b.Cost == nil) && (a.Cost == nil || *a.Cost == *b.Cost)
}

// UsageUpdate returns the usage_update for a session/state's usage when
// it says something new (usage.go).
func (m *Mapper) UsageUpdate(u *protocol.SessionUsage) []sdk.SessionUpdate {
	up, key := usageUpdate(u)
	if up == nil || sameUsage(key, m.usage) {
		return nil
	}
	m.usage = key
	return []sdk.SessionUpdate{*up}
}

// noteCall notes the context an API call of the main conversation took.
func (m *Mapper) noteCall(e gjson.Result) {
	us := e.Get("message.usage")
	if n := us.Get("input_tokens").Int() + us.Get("cache_read_input_tokens").Int() + us.Get("cache_creation_input_tokens").Int() + us.Get("output_tokens").Int(); n > 0 {
		m.lastCall = int(n)
	}
}

// resultUsage is the usage_update a result event makes, when it says
// something new.
func (m *Mapper) resultUsage(e gjson.Result) []sdk.SessionUpdate {
	var window int64
	e.Get("modelUsage").ForEach(func(_, v gjson.Result) bool {
		window = max(window, v.Get("contextWindow").Int())
		return true
	})
	return m.UsageUpdate(&protocol.SessionUsage{Total: protocol.TokenUsage{CostUSD: e.Get("total_cost_usd").Float()},
		ContextTokens: int64(m.lastCall), ContextWindow: window})
}
