package history_test

import (
	"context"
	"errors"
	"testing"

	"github.com/ccproxy/ccproxy/history"
)

// Message finds a record by uuid with its parent, and tells a prompt from
// a tool result, a message of the CLI's own and an assistant message; an
// unknown uuid is ErrNoMessage, an unknown session ErrNotFound.
func TestMessage(t *testing.T) {
	root, cwd := t.TempDir(), "/work/proj"
	writeSession(t, root, cwd, "s1",
		`{"type":"queue-operation","operation":"enqueue"}`+"\n",
		`{"type":"user","uuid":"u1","parentUuid":null,"message":{"role":"user","content":"first"}}`+"\n",
		`{"type":"assistant","uuid":"a1","parentUuid":"u1","message":{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Read","input":{}}]}}`+"\n",
		`{"type":"user","uuid":"r1","parentUuid":"a1","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"x"}]}}`+"\n",
		`{"type":"user","uuid":"m1","parentUuid":"r1","isMeta":true,"message":{"role":"user","content":"<local-command-caveat>"}}`+"\n",
		`{"type":"user","uuid":"u2","parentUuid":"m1","message":{"role":"user","content":[{"type":"text","text":"second"},{"type":"image","source":{}}]}}`+"\n",
	)
	st := open(t, root)
	ctx := context.Background()
	for _, c := range []struct {
		uuid, typ, parent string
		prompt            bool
	}{
		{"u1", "user", "", true},
		{"a1", "assistant", "u1", false},
		{"r1", "user", "a1", false},
		{"m1", "user", "r1", false},
		{"u2", "user", "m1", true},
	} {
		m, err := st.Message(ctx, "s1", cwd, c.uuid)
		if err != nil {
			t.Fatalf("%s: %v", c.uuid, err)
		}
		if m.UUID != c.uuid || m.Type != c.typ || m.Parent != c.parent || m.Prompt != c.prompt {
			t.Errorf("%s: %+v, want type %s parent %q prompt %v", c.uuid, m, c.typ, c.parent, c.prompt)
		}
	}
	if _, err := st.Message(ctx, "s1", cwd, "nope"); !errors.Is(err, history.ErrNoMessage) {
		t.Errorf("unknown uuid: %v", err)
	}
	if _, err := st.Message(ctx, "s2", cwd, "u1"); !errors.Is(err, history.ErrNotFound) {
		t.Errorf("unknown session: %v", err)
	}
	if _, err := st.Message(ctx, "../s1", cwd, "u1"); !errors.Is(err, history.ErrBadID) {
		t.Errorf("bad id: %v", err)
	}
}
