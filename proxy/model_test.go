package proxy

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccproxy/ccproxy/internal/testkit/fakeclaude"
	"github.com/ccproxy/ccproxy/protocol"
)

// fakeModelInfos are the models of the fake claude's initialize reply as
// session/state reports them.
var fakeModelInfos = []protocol.ModelInfo{
	{Value: "default", DisplayName: "Default (recommended)", Description: "Use the default model (currently Fake Opus)"},
	{Value: "opus", DisplayName: "Opus", Description: "Fake Opus · for everyday tasks"},
	{Value: "sonnet", DisplayName: "Sonnet", Description: "Fake Sonnet · efficient"},
	{Value: "haiku", DisplayName: "Haiku", Description: "Fake Haiku · fastest"},
}

// waitModelState waits (from frame index from) for a session/state of s
// whose model is model, and returns it with its index.
func (c *wsClient) waitModelState(from int, s, model string) (protocol.SessionState, int) {
	c.t.Helper()
	var st protocol.SessionState
	i := c.waitPush(from, protocol.TypeSessionState, &st, func(raw json.RawMessage) bool {
		var d protocol.SessionState
		return json.Unmarshal(raw, &d) == nil && d.Session == s && d.Model == model
	})
	return st, i
}

func sameModels(a, b []protocol.ModelInfo) bool {
	return fmt.Sprint(a) == fmt.Sprint(b)
}

// session/state carries the models of claude's initialize reply (value,
// displayName, description: not resolvedModel nor the rest) and the model
// the session runs: "default" while claude runs what default resolves to;
// after session/setModel the chosen value, for every subscriber, also
// once the next system/init reports the model id it resolves to; a name
// claude does not know is taken as claude takes it. A client subscribing
// later gets both in the subscribe reply.
func TestSessionModelState(t *testing.T) {
	ts := startServer(t, Options{}, "FAKE_REPLAY=1")
	a, b := ts.dial(t), ts.dial(t)
	s := a.create(nil)
	b.do(protocol.TypeSessionSubscribe, map[string]any{"session": s})

	var st protocol.SessionState
	a.waitPush(0, protocol.TypeSessionState, &st, func(raw json.RawMessage) bool { return strings.Contains(string(raw), `"models"`) })
	if !sameModels(st.Models, fakeModelInfos) {
		t.Errorf("models %+v, want %+v", st.Models, fakeModelInfos)
	}
	for _, f := range a.snapshot() {
		if f.Type == protocol.TypeSessionState && strings.Contains(string(f.raw), "resolvedModel") {
			t.Errorf("session/state leaks resolvedModel: %s", f.raw)
		}
	}
	from := a.count()
	a.turn(s, "hello")
	a.waitModelState(from, s, "default")

	fromA, fromB := a.count(), b.count()
	var res protocol.SessionSetModelResult
	mustUnmarshal(t, a.do(protocol.TypeSessionSetModel, map[string]any{"session": s, "model": "sonnet"}), &res)
	if res != (protocol.SessionSetModelResult{Model: "sonnet", ResolvedModel: "fake-sonnet"}) {
		t.Errorf("setModel reply %+v", res)
	}
	for name, c := range map[string]*wsClient{"a": a, "b": b} {
		from := map[string]int{"a": fromA, "b": fromB}[name]
		st, _ := c.waitModelState(from, s, "sonnet")
		if st.State != protocol.StateIdle || !sameModels(st.Models, fakeModelInfos) || st.PermissionMode != protocol.PermissionModeDefault {
			t.Errorf("client %s: state after setModel %+v", name, st)
		}
	}
	// The next turn's system/init reports fake-sonnet: still "sonnet".
	from = a.count()
	evs := a.turn(s, "again")
	if init := evs[0]; !strings.Contains(string(init.Event), `"model":"fake-sonnet"`) {
		t.Errorf("system/init after setModel: %s", init.Event)
	}
	for _, f := range a.snapshot()[from:] {
		if f.Type == protocol.TypeSessionState && !strings.Contains(string(f.raw), `"model":"sonnet"`) {
			t.Errorf("a state after the turn does not say sonnet: %s", f.raw)
		}
	}

	var list protocol.SessionListResult
	mustUnmarshal(t, a.do(protocol.TypeSessionList, map[string]any{}), &list)
	if list.Sessions[0].Model != "sonnet" {
		t.Errorf("session/list model %q, want sonnet", list.Sessions[0].Model)
	}

	// A later subscriber learns both from the reply.
	c := ts.dial(t)
	var sub protocol.SessionSubscribeResult
	mustUnmarshal(t, c.do(protocol.TypeSessionSubscribe, map[string]any{"session": s}), &sub)
	if sub.Model != "sonnet" || !sameModels(sub.Models, fakeModelInfos) {
		t.Errorf("subscribe reply %+v", sub)
	}

	// A name claude does not know: taken, and the next turn runs it.
	from = a.count()
	mustUnmarshal(t, a.do(protocol.TypeSessionSetModel, map[string]any{"session": s, "model": "claude-nosuch-9"}), &res)
	if res.Model != "claude-nosuch-9" {
		t.Errorf("setModel reply %+v", res)
	}
	a.waitModelState(from, s, "claude-nosuch-9")
	if evs := a.turn(s, "third"); !strings.Contains(string(evs[0].Event), `"model":"claude-nosuch-9"`) {
		t.Errorf("system/init: %s", evs[0].Event)
	}
}

// session/setModel refuses bad values with bad_request naming the field,
// unknown sessions with unknown_session, and exited ones with
// session_exited, as session/setPermissionMode does.
func TestSetModelErrors(t *testing.T) {
	ts := startServer(t, Options{})
	c := ts.dial(t)
	s := c.create(nil)
	for name, model := range map[string]string{
		"empty":             "",
		"too long":          strings.Repeat("m", protocol.MaxModelBytes+1),
		"too long in bytes": strings.Repeat("é", protocol.MaxModelBytes/2+1),
		"newline":           "sonnet\nhaiku",
		"tab":               "a\tb",
		"del":               "a\x7fb",
		"c1":                "a\u0085b",
	} {
		er := c.doErr(protocol.TypeSessionSetModel, map[string]any{"session": s, "model": model})
		if er.Code != protocol.CodeBadRequest || !strings.Contains(er.Message, "data.model") {
			t.Errorf("%s: %+v, want bad_request naming model", name, er)
		}
	}
	er := c.doErr(protocol.TypeSessionSetModel, map[string]any{"session": s})
	if er.Code != protocol.CodeBadRequest || !strings.Contains(er.Message, "data.model") {
		t.Errorf("no model: %+v", er)
	}
	er = c.doErr(protocol.TypeSessionSetModel, map[string]any{"session": "s-nosuch", "model": "sonnet"})
	if er.Code != protocol.CodeUnknownSession {
		t.Errorf("unknown session: %+v", er)
	}
	from := c.count()
	c.send(protocol.TypeSessionSend, map[string]any{"session": s, "text": "exit 3"})
	c.waitState(from, protocol.StateExited)
	er = c.doErr(protocol.TypeSessionSetModel, map[string]any{"session": s, "model": "sonnet"})
	wantMode := c.doErr(protocol.TypeSessionSetMode, map[string]any{"session": s, "mode": "plan"})
	if er.Code != protocol.CodeSessionExited || wantMode.Code != protocol.CodeSessionExited ||
		strings.TrimPrefix(er.Message, "session/setModel") != strings.TrimPrefix(wantMode.Message, "session/setPermissionMode") {
		t.Errorf("exited session: %+v, want what setPermissionMode gives: %+v", er, wantMode)
	}
}

// Claude's refusal is a cli_error with claude's message, and the model
// stays what it was.
func TestSetModelRefused(t *testing.T) {
	ts := startServer(t, Options{}, "FAKE_REFUSE_MODEL=opus")
	c := ts.dial(t)
	s := c.create(map[string]any{"model": "haiku"})
	er := c.doErr(protocol.TypeSessionSetModel, map[string]any{"session": s, "model": "opus"})
	if er.Code != protocol.CodeCLIError || !strings.Contains(er.Message, `Model "opus" is not a recognized model id`) {
		t.Errorf("refusal: %+v", er)
	}
	var sub protocol.SessionSubscribeResult
	mustUnmarshal(t, c.do(protocol.TypeSessionSubscribe, map[string]any{"session": s}), &sub)
	if sub.Model != "haiku" {
		t.Errorf("model after the refusal %q, want haiku", sub.Model)
	}
	if evs := c.turn(s, "hi"); !strings.Contains(string(evs[0].Event), `"model":"fake-haiku"`) {
		t.Errorf("system/init: %s", evs[0].Event)
	}
}

// The models list is bounded: at most protocol.MaxModels entries, texts
// cut at their bounds (at a rune boundary), entries whose value is no
// valid model value left out; the cut is logged.
func TestSessionModelsBounded(t *testing.T) {
	var list []map[string]any
	list = append(list, map[string]any{"value": "bad\nvalue", "displayName": "Bad"})
	list = append(list, map[string]any{"value": "long", "displayName": strings.Repeat("n", 300), "description": strings.Repeat("é", 600)})
	for i := range 70 {
		list = append(list, map[string]any{"value": fmt.Sprintf("m%d", i), "resolvedModel": fmt.Sprintf("r%d", i)})
	}
	b, _ := json.Marshal(list)
	ts := startServer(t, Options{}, "FAKE_MODELS="+string(b))
	c := ts.dial(t)
	s := c.create(nil)
	var st protocol.SessionState
	c.waitPush(0, protocol.TypeSessionState, &st, func(raw json.RawMessage) bool { return strings.Contains(string(raw), `"models"`) })
	if len(st.Models) != protocol.MaxModels || st.Models[0].Value != "long" || st.Models[1].Value != "m0" || st.Models[63].Value != "m62" {
		t.Fatalf("%d models, first %+v", len(st.Models), st.Models[:2])
	}
	if d := st.Models[0].DisplayName; len(d) != protocol.MaxModelDisplayNameBytes {
		t.Errorf("displayName cut to %d bytes", len(d))
	}
	if d := st.Models[0].Description; len(d) != protocol.MaxModelDescriptionBytes || !strings.HasSuffix(d, "é") {
		t.Errorf("description cut to %d bytes, ending %q", len(d), d[len(d)-4:])
	}
	if !strings.Contains(ts.logBuf.String(), "claude offers models ccproxy does not report") {
		t.Error("the cut is not logged")
	}
	_ = s
}

// While the session restarts, session/setModel keeps the model for the new
// claude, launched with it; a model set live is what a later restart
// launches with too.
func TestSetModelAndRestart(t *testing.T) {
	argsFile := filepath.Join(t.TempDir(), "args.json")
	ts := startServer(t, Options{CLIOptions: CLIOptions{CloseGrace: waitTimeout}}, "FAKE_EXIT_ON_USR1=1", "FAKE_ARGS_FILE="+argsFile)
	c := ts.dial(t)
	s := c.create(nil)
	c.do(protocol.TypeSessionSetModel, map[string]any{"session": s, "model": "sonnet"})
	pid := fakePID(t, c, s)
	_, from := restartSession(t, ts, c, s)
	if err := killPID(pid, fakeclaude.ExitSignal); err != nil {
		t.Fatal(err)
	}
	c.waitState(from, protocol.StateIdle)
	pid = fakePID(t, c, s)
	if args := fakeArgs(t, argsFile); argValue(args, "--model") != "sonnet" {
		t.Errorf("the restarted claude's arguments %v, want --model sonnet", args)
	}

	_, from = restartSession(t, ts, c, s)
	var res protocol.SessionSetModelResult
	mustUnmarshal(t, c.do(protocol.TypeSessionSetModel, map[string]any{"session": s, "model": "-haiku"}), &res)
	if res.Model != "-haiku" {
		t.Errorf("setModel during the restart: %+v", res)
	}
	c.waitModelState(from, s, "-haiku")
	if err := killPID(pid, fakeclaude.ExitSignal); err != nil {
		t.Fatal(err)
	}
	newPID := fakePID(t, c, s)
	if args := fakeArgs(t, argsFile); !strings.Contains(strings.Join(args, " "), "--model=-haiku") {
		t.Errorf("the restarted claude's arguments %v, want --model=-haiku", args)
	}
	killPID(newPID, fakeclaude.ExitSignal)
}

// A subscription catching up (told the state by its subscribe reply) is
// sent a session/state when it turns live if the model changed meanwhile,
// though the state did not.
func TestCatchingUpToldModelChange(t *testing.T) {
	ts := startServer(t, Options{})
	c := ts.dial(t)
	s := c.create(nil)
	c.turn(s, "hello")
	sess, err := ts.srv.session(s)
	if err != nil {
		t.Fatal(err)
	}
	sess.mu.Lock()
	sub := &subscription{sentState: sess.stateKeyLocked()} // as subscribe notes it
	sub.wasLive = true                                     // only the state part of liveFramesLocked
	sess.mu.Unlock()
	c.do(protocol.TypeSessionSetModel, map[string]any{"session": s, "model": "haiku"})
	sess.mu.Lock()
	frames := sess.liveFramesLocked(sub)
	sess.mu.Unlock()
	if len(frames) != 1 || !strings.Contains(string(frames[0]), `"model":"haiku"`) {
		t.Errorf("frames on turning live after the model changed: %q", frames)
	}
}
