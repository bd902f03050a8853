package mcpsession

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/proxy/mcphub"
)

// fakeSession answers control requests with answer and records what the
// part asked of it.
type fakeSession struct {
	launched map[string]bool
	answer   func(subtype string, fields any) (json.RawMessage, error)
	calls    []string
	sent     []map[string]json.RawMessage // the servers of each mcp_set_servers
	restarts []string
	status   int
}

func (f *fakeSession) Call(_ context.Context, subtype string, fields any) (json.RawMessage, bool, error) {
	f.calls = append(f.calls, subtype)
	if subtype == "mcp_set_servers" {
		f.sent = append(f.sent, fields.(map[string]any)["servers"].(map[string]json.RawMessage))
	}
	resp, err := f.answer(subtype, fields)
	return resp, false, err
}
func (f *fakeSession) Launched() (map[string]bool, bool) { return f.launched, true }
func (f *fakeSession) RequestRestart(why string)         { f.restarts = append(f.restarts, why) }
func (f *fakeSession) RefreshStatus()                    { f.status++ }

type target struct{ cfg *mcphub.Config }

func (t target) Config() *mcphub.Config { return t.cfg }

func newPart(f *fakeSession, servers ...string) *Part {
	cfg := &mcphub.Config{Servers: map[string]json.RawMessage{}}
	for _, s := range servers {
		cfg.Servers[s] = json.RawMessage(`{"command":"x","args":[]}`)
	}
	return New(f, Config{Target: target{cfg}, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), ControlTimeout: time.Second})
}

func ok(string, any) (json.RawMessage, error) { return json.RawMessage(`{}`), nil }

// A server claude was launched with that left the configuration: a
// restart, nothing sent (mcp_set_servers cannot remove it).
func TestApplyRestartsForALaunchedServerGone(t *testing.T) {
	f := &fakeSession{launched: map[string]bool{"a": true, "gone": true}, answer: ok}
	newPart(f, "a", "b").Apply()
	if len(f.restarts) != 1 || len(f.calls) != 0 {
		t.Fatalf("restarts %v calls %v: want one restart, nothing sent", f.restarts, f.calls)
	}
}

// A server toggled off in the session stays out of later mcp_set_servers;
// claude's refusal restarts the session.
func TestApplyLeavesToggledOffOut(t *testing.T) {
	f := &fakeSession{answer: ok}
	m := newPart(f, "a", "b")
	if err := m.Toggle(context.Background(), "b", false, nil); err != nil {
		t.Fatal(err)
	}
	m.Apply()
	if len(f.sent) != 1 || len(f.sent[0]) != 1 || f.sent[0]["a"] == nil || f.status != 1 {
		t.Fatalf("sent %v, status asked %d: want only a, then mcp_status", f.sent, f.status)
	}
	f.answer = func(subtype string, _ any) (json.RawMessage, error) {
		if subtype == "mcp_set_servers" {
			return nil, errors.New("refused")
		}
		return json.RawMessage(`{}`), nil
	}
	m.Apply()
	if len(f.restarts) != 1 {
		t.Fatalf("restarts %v after a refusal, want one", f.restarts)
	}
	f.answer = ok
	f.calls = nil
	m.ReapplyOff() // a new process: b disabled again
	if len(f.calls) != 1 || f.calls[0] != "mcp_toggle" {
		t.Fatalf("calls %v, want one mcp_toggle", f.calls)
	}
}

func TestClientServers(t *testing.T) {
	code := func(err error) protocol.Code {
		var e *protocol.Error
		if errors.As(err, &e) {
			return e.Code
		}
		return ""
	}
	if cs, err := ClientServers(nil, false); cs != nil || err != nil {
		t.Errorf("none: %v %v", cs, err)
	}
	raw := json.RawMessage(`{"w":{"command":"x","args":[]}}`)
	if _, err := ClientServers(raw, false); code(err) != protocol.CodeBadRequest {
		t.Errorf("a proxy that takes none: %v", err)
	}
	if cs, err := ClientServers(raw, true); err != nil || cs == nil {
		t.Errorf("taken: %v %v", cs, err)
	}
	if _, err := ClientServers(json.RawMessage(`{"w":7}`), true); code(err) != protocol.CodeBadRequest {
		t.Errorf("a bad definition: %v", err)
	}
}
