package replay

import (
	"strings"
	"time"
)

// CannedReply is the answer to every turn after the transcript's last.
const CannedReply = "This demo has no more scripted replies: everything so far was a replay of a real Claude Code session, " +
	"recorded by ccproxy's test suite. To chat for real, install the Claude Code CLI " +
	"(npm install -g @anthropic-ai/claude-code) and run ccproxy serve without --demo."

// playCanned answers a turn the transcript has no reply for: system/init,
// the echo, the text (streamed, with partial messages), the result.
func (s *session) playCanned(u input) error {
	last := s.t.Turns[len(s.t.Turns)-1]
	st := &turnState{result: last.lines[len(last.lines)-1].raw}
	step := func(d time.Duration, raw []byte) error {
		if err := s.pause(d); err != nil {
			return err
		}
		return s.emit(raw)
	}
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }

	if err := step(0, s.initLine(last.lines[0].raw)); err != nil {
		return s.stop(err, st)
	}
	if s.opts.ReplayUserMessages {
		if err := step(ms(5), s.echoLine(u)); err != nil {
			return s.stop(err, st)
		}
	}
	msgID := "msg_replay_" + strings.ReplaceAll(newUUID(), "-", "")[:20]
	words := strings.SplitAfter(CannedReply, " ")
	usage := map[string]any{"input_tokens": 0, "output_tokens": len(words)}
	streamEvent := func(ev any) []byte {
		b, _ := marshal(ordered{{"type", "stream_event"}, {"event", ev}, {"session_id", s.sessionID},
			{"parent_tool_use_id", nil}, {"uuid", newUUID()}})
		return b
	}
	if s.opts.PartialMessages {
		evs := [][]byte{
			streamEvent(map[string]any{"type": "message_start", "message": map[string]any{"id": msgID, "type": "message",
				"role": "assistant", "model": s.model, "content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": usage}}),
			streamEvent(map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}}),
		}
		delays := []time.Duration{ms(450), ms(60)}
		for i := 0; i < len(words); i += 3 {
			chunk := strings.Join(words[i:min(i+3, len(words))], "")
			evs = append(evs, streamEvent(map[string]any{"type": "content_block_delta", "index": 0,
				"delta": map[string]any{"type": "text_delta", "text": chunk}}))
			delays = append(delays, ms(20+s.rand(21)))
		}
		for i, ev := range evs {
			if err := step(delays[i], ev); err != nil {
				return s.stop(err, st)
			}
		}
	}
	assistant, _ := marshal(ordered{{"type", "assistant"}, {"message", ordered{{"id", msgID}, {"type", "message"},
		{"role", "assistant"}, {"model", s.model}, {"content", []any{map[string]any{"type": "text", "text": CannedReply}}},
		{"stop_reason", nil}, {"stop_sequence", nil}, {"usage", usage}}},
		{"parent_tool_use_id", nil}, {"session_id", s.sessionID}, {"uuid", newUUID()}, {"timestamp", timestamp()}})
	d := ms(5)
	if !s.opts.PartialMessages {
		d = ms(800)
	}
	if err := step(d, assistant); err != nil {
		return s.stop(err, st)
	}
	if s.opts.PartialMessages {
		for _, ev := range []any{
			map[string]any{"type": "content_block_stop", "index": 0},
			map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": "end_turn", "stop_sequence": nil}, "usage": usage},
			map[string]any{"type": "message_stop"},
		} {
			if err := step(ms(10), streamEvent(ev)); err != nil {
				return s.stop(err, st)
			}
		}
	}
	result := s.resultLine(st.result, map[string]any{
		"subtype":            "success",
		"is_error":           false,
		"result":             CannedReply,
		"stop_reason":        "end_turn",
		"terminal_reason":    "completed",
		"permission_denials": []any{},
		"total_cost_usd":     0,
		"duration_api_ms":    0,
	}, false)
	result = deleteKey(result, "errors")
	if err := step(ms(60), result); err != nil {
		return s.stop(err, st)
	}
	return nil
}
