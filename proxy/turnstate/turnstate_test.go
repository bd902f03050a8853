package turnstate

import (
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/stream"
)

// The session's state follows claude's events: scripts of what the real
// CLI prints (docs/CLI-NOTES.md) and what the session sends, with the state
// wanted after each step.
func TestTurnStateScript(t *testing.T) {
	const (
		initEv      = `{"type":"system","subtype":"init","session_id":"x"}`
		notif       = `{"type":"system","subtype":"task_notification","task_id":"t","status":"completed"}`
		assistant   = `{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"hi"}]}}`
		toolResult  = `{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}}`
		result      = `{"type":"result","subtype":"success"}`
		interrupted = `{"type":"result","subtype":"error_during_execution"}`
		modelResult = `{"type":"result","subtype":"success","num_turns":1}`
		localResult = `{"type":"result","subtype":"success","num_turns":0}`
		run, idle   = protocol.StateRunning, protocol.StateIdle
	)
	replay := func(text string) string {
		b, _ := json.Marshal(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": text}, "isReplay": true})
		return string(b)
	}
	type step struct {
		send  string // a user turn written
		event string // or an event of claude
		want  string
	}
	send := func(text, want string) step { return step{send: text, want: want} }
	ev := func(e, want string) step { return step{event: e, want: want} }
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"user turn", []step{send("a", run), ev(initEv, run), ev(replay("a"), run), ev(assistant, run), ev(result, idle)}},
		{"self-started turn", []step{ev(notif, idle), ev(initEv, run), ev(assistant, run), ev(result, idle)}},
		{"turn started without init", []step{ev(assistant, run), ev(result, idle)}},
		{"user turn behind a self-started one", []step{
			send("a", run), ev(initEv, run), ev(replay("a"), run), ev(result, idle),
			ev(notif, idle), ev(initEv, run), send("b", run), ev(assistant, run), ev(result, run),
			ev(initEv, run), ev(replay("b"), run), ev(assistant, run), ev(result, idle)}},
		{"queued turns merged into one", []step{
			send("a", run), ev(initEv, run), ev(replay("a"), run), send("b", run), send("c", run), ev(result, run),
			ev(initEv, run), ev(replay("b\nc"), run), ev(result, idle)}},
		{"turn fed into the running turn", []step{
			send("a", run), ev(initEv, run), ev(replay("a"), run), send("b", run), ev(toolResult, run),
			ev(replay("b"), run), ev(assistant, run), ev(result, idle)}},
		{"interrupt keeps the queued turn", []step{
			send("a", run), ev(initEv, run), ev(replay("a"), run), send("b", run), ev(interrupted, run),
			ev(initEv, run), ev(replay("b"), run), ev(result, idle)}},
		{"a replay matching nothing takes every queued turn", []step{
			send("a", run), send("b", run), ev(initEv, run), ev(replay("something else"), run), ev(result, idle)}},
		{"command output is not a turn", []step{
			send("a", run), send("b", run), ev(initEv, run), ev(replay("<local-command-stdout>Set model</local-command-stdout>"), run),
			ev(replay("a"), run), ev(result, run), ev(initEv, run), ev(replay("b"), run), ev(result, idle)}},
		{"slash command run by claude itself", []step{
			send("a", run), ev(initEv, run), ev(replay("a"), run), ev(result, idle),
			send("/cost", run), ev(initEv, run), ev(assistant, run), ev(localResult, idle)}},
		{"compact", []step{
			send("a", run), ev(initEv, run), ev(replay("a"), run), ev(result, idle),
			send("/compact", run), ev(initEv, run), ev(`{"type":"system","subtype":"compact_boundary"}`, run),
			ev(replay("<local-command-stdout>Compacted </local-command-stdout>"), run), ev(localResult, idle)}},
		{"slash command behind a self-started turn", []step{
			send("a", run), ev(initEv, run), ev(replay("a"), run), ev(result, idle),
			ev(notif, idle), ev(initEv, run), send("/cost", run), ev(assistant, run), ev(modelResult, run),
			ev(initEv, run), ev(assistant, run), ev(localResult, idle)}},
		{"a claude that echoes nothing: one result per turn", []step{
			send("a", run), send("b", run), ev(initEv, run), ev(result, run), ev(initEv, run), ev(result, idle)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The session settles its state (running or idle) from the
			// turns after a turn is queued and when Event says so.
			var tr Turns
			got, log := idle, slog.New(slog.DiscardHandler)
			norm := stream.NewNormalizer(stream.Options{})
			for i, st := range tc.steps {
				what := st.event
				if st.send != "" {
					line, err := stream.UserTurn(st.send, nil)
					if err != nil {
						t.Fatal(err)
					}
					tr.Queue(line)
					got = tr.StateName()
					what = "send " + st.send
				} else {
					e := norm.Normalize([]byte(st.event))
					if tr.Event(&e, log) {
						got = tr.StateName()
					}
				}
				if got != st.want {
					t.Fatalf("step %d (%s): state %s, want %s", i, what, got, st.want)
				}
			}
		})
	}
}
