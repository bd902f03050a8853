package rewind

import (
	"slices"
	"testing"

	"github.com/ccproxy/ccproxy/history"
	"github.com/ccproxy/ccproxy/protocol"
)

// Claude runs with file checkpoints unless the environment says otherwise.
func TestWithFileCheckpoints(t *testing.T) {
	env := []string{"A=1"}
	if got := WithFileCheckpoints(env); !slices.Equal(got, []string{"A=1", FileCheckpointsEnv + "=1"}) || len(env) != 1 {
		t.Errorf("%v (input %v)", got, env)
	}
	off := []string{FileCheckpointsEnv + "=0"}
	if got := WithFileCheckpoints(off); !slices.Equal(got, off) {
		t.Errorf("the user's setting replaced: %v", got)
	}
}

// The refusals name what is wrong: an exited session, one not ready, a
// turn running (not for a dry run).
func TestRefusal(t *testing.T) {
	code := func(err error) protocol.Code {
		if e, ok := err.(*protocol.Error); ok {
			return e.Code
		}
		return ""
	}
	ready := State{ID: "s1", State: "idle", Ready: true}
	if err := Refusal(ready, false); err != nil {
		t.Errorf("an idle session: %v", err)
	}
	if c := code(Refusal(State{ID: "s1", Gone: true}, true)); c != protocol.CodeSessionExited {
		t.Errorf("exited: %q", c)
	}
	if c := code(Refusal(State{ID: "s1", State: "starting"}, true)); c != protocol.CodeBadRequest {
		t.Errorf("starting: %q", c)
	}
	busy := ready
	busy.TurnRunning = true
	if err := Refusal(busy, true); err != nil {
		t.Errorf("a dry run during a turn: %v", err)
	}
	if c := code(Refusal(busy, false)); c != protocol.CodeBadRequest {
		t.Errorf("a turn running: %q", c)
	}
	if got := describeMessage(history.Message{Type: "user"}); got == "user" {
		t.Errorf("a user record that is no prompt: %q", got)
	}
	if got := capFiles(nil); got == nil || len(got) != 0 {
		t.Errorf("capFiles(nil) = %#v, want an empty list", got)
	}
}
