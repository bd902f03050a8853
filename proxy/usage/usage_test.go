package usage

import "testing"

// The usage part: a turn's tokens are its result's usage, its cost the
// growth of claude's total_cost_usd (0 for the first turn of a resumed
// conversation, whose earlier cost is unknown); the context comes from
// the last main-conversation API call until get_context_usage answers.
func TestUsageState(t *testing.T) {
	for _, resumed := range []bool{false, true} {
		var u State
		if u.Info() != nil {
			t.Fatal("usage before any turn")
		}
		u.NoteAssistant([]byte(`{"type":"assistant","message":{"usage":{"input_tokens":100,"cache_read_input_tokens":50,"cache_creation_input_tokens":5,"output_tokens":7}}}`))
		u.NoteAssistant([]byte(`{"type":"assistant","parent_tool_use_id":"t1","message":{"usage":{"input_tokens":999999}}}`)) // a subagent's
		u.NoteResult([]byte(`{"type":"result","total_cost_usd":0.5,"usage":{"input_tokens":100,"output_tokens":10,"cache_read_input_tokens":50,"cache_creation_input_tokens":5},"modelUsage":{"m":{"contextWindow":200000}}}`), resumed)
		u.NoteResult([]byte(`{"type":"result","total_cost_usd":0.75,"usage":{"input_tokens":200,"output_tokens":20}}`), resumed)
		got := u.Info()
		firstCost := 0.5
		if resumed {
			firstCost = 0
		}
		if got.Turns != 2 || got.Total.InputTokens != 300 || got.Total.OutputTokens != 30 || got.Total.CacheReadTokens != 50 || got.Total.CacheCreationTokens != 5 || got.Total.CostUSD != firstCost+0.25 {
			t.Errorf("resumed %v: total %+v turns %d", resumed, got.Total, got.Turns)
		}
		if got.LastTurn == nil || got.LastTurn.InputTokens != 200 || got.LastTurn.CostUSD != 0.25 {
			t.Errorf("resumed %v: last turn %+v", resumed, got.LastTurn)
		}
		if got.ContextTokens != 162 || got.ContextWindow != 200000 {
			t.Errorf("resumed %v: context %d of %d, want 162 (the last call) of 200000", resumed, got.ContextTokens, got.ContextWindow)
		}
		if !u.NoteContext([]byte(`{"totalTokens":1234,"maxTokens":1000000}`)) || u.Info().ContextTokens != 1234 || u.Info().ContextWindow != 1000000 {
			t.Errorf("after get_context_usage: %+v", u.Info())
		}
		if u.NoteContext([]byte(`{"totalTokens":1234,"maxTokens":1000000}`)) {
			t.Error("the same context counted as a change")
		}
	}
}
