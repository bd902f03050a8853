package claudecli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ccproxy/ccproxy/stream"
)

// events collects what OnEvent delivered.
type events struct {
	mu   sync.Mutex
	list []string // type subtype: JSON
	ch   chan struct{}
}

func newEvents() *events { return &events{ch: make(chan struct{}, 1000)} }

func (e *events) on(ev *stream.Event) {
	e.mu.Lock()
	e.list = append(e.list, ev.Type+" "+ev.Subtype+": "+string(ev.JSON))
	e.mu.Unlock()
	e.ch <- struct{}{}
}

// waitResult waits for the next result event and returns the events up to it.
func (e *events) waitResult(t *testing.T, from int) []string {
	t.Helper()
	for {
		e.mu.Lock()
		for i := from; i < len(e.list); i++ {
			if strings.HasPrefix(e.list[i], "result ") {
				out := append([]string(nil), e.list[from:i+1]...)
				e.mu.Unlock()
				return out
			}
		}
		e.mu.Unlock()
		select {
		case <-e.ch:
		case <-time.After(30 * time.Second):
			t.Fatalf("no result; events: %q", e.list)
		}
	}
}

func start(t *testing.T, cfg Config, env ...string) *Client {
	t.Helper()
	cfg.Path = fakeClaudePath
	cfg.Env = append(os.Environ(), env...)
	c, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func turn(t *testing.T, c *Client, text string) {
	t.Helper()
	line, err := stream.UserTurn(text, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Send(context.Background(), line); err != nil {
		t.Fatal(err)
	}
}

// Events arrive in order; control responses are matched to their requests
// and never reach OnEvent; claude's error answer is a *CLIError.
func TestEventsAndCalls(t *testing.T) {
	evs := newEvents()
	c := start(t, Config{OnEvent: evs.on})
	ctx := context.Background()
	resp, err := c.Call(ctx, "initialize", map[string]any{"hooks": nil})
	if err != nil || !strings.Contains(string(resp), `"commands"`) {
		t.Fatalf("initialize = %s, %v", resp, err)
	}
	_, err = c.Call(ctx, "no_such_thing", nil)
	var ce *CLIError
	if !errors.As(err, &ce) || !strings.Contains(ce.Msg, "Unsupported control request subtype: no_such_thing") {
		t.Errorf("unknown subtype: %v, want claude's error", err)
	}
	turn(t, c, "one")
	turn(t, c, "two")
	got := append(evs.waitResult(t, 0), evs.waitResult(t, 3)...)
	want := []string{"system init", "assistant ", "result success", "system init", "assistant ", "result success"}
	if len(got) != len(want) {
		t.Fatalf("events %q", got)
	}
	for i, w := range want {
		if !strings.HasPrefix(got[i], w+": ") {
			t.Errorf("event %d = %q, want %s", i, got[i], w)
		}
	}
	if !strings.Contains(got[1], "echo: one") || !strings.Contains(got[4], "echo: two") {
		t.Errorf("turns out of order: %q", got)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if ex := c.Exit(); ex.Code == nil || *ex.Code != 0 || ex.Signal != nil {
		t.Errorf("exit = code %v signal %v, want code 0", deref(ex.Code), deref(ex.Signal))
	}
	if _, err := c.Call(ctx, "initialize", nil); !errors.Is(err, ErrExited) {
		t.Errorf("call after exit: %v, want ErrExited", err)
	}
	if err := c.Send(ctx, []byte("{}\n")); !errors.Is(err, ErrStdinClosed) {
		t.Errorf("send after exit: %v, want ErrStdinClosed", err)
	}
}

// A request claude does not answer in time is forgotten with ErrTimeout;
// requests pending when claude exits fail at once with ErrExited, and the
// exit reports the code and stderr tail.
func TestCallTimeoutAndExit(t *testing.T) {
	c := start(t, Config{ControlTimeout: 50 * time.Millisecond})
	if _, err := c.Call(context.Background(), "slow", nil); !errors.Is(err, ErrTimeout) {
		t.Errorf("unanswered: %v, want ErrTimeout", err)
	}

	c2 := start(t, Config{ControlTimeout: time.Hour})
	got := make(chan error, 1)
	if _, err := c2.CallAsync("slow", nil, func(_ json.RawMessage, err error) { got <- err }); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	forgotten := make(chan error, 1)
	go func() { _, err := c2.Call(ctx, "slow", nil); forgotten <- err }()
	turn(t, c2, "exit 3")
	if err := <-got; !errors.Is(err, ErrExited) {
		t.Errorf("pending at exit: %v, want ErrExited", err)
	}
	<-c2.Done()
	cancel()
	if err := <-forgotten; !errors.Is(err, ErrExited) && !errors.Is(err, context.Canceled) {
		t.Errorf("Call pending at exit: %v", err)
	}
	ex := c2.Exit()
	if ex.Code == nil || *ex.Code != 3 || !strings.Contains(ex.StderrTail, "bye") {
		t.Errorf("exit = code %v, stderr %q; want 3, bye", ex.Code, ex.StderrTail)
	}
}

// Claude's own control requests go to OnControlRequest (answered with
// Answer) or, without a handler, get an error answer; cancellations go to
// OnControlCancel.
func TestClaudeRequests(t *testing.T) {
	evs := newEvents()
	var reqs []ControlRequest
	cancelled := make(chan string, 1)
	c := start(t, Config{
		OnEvent: evs.on,
		OnControlRequest: func(c *Client, req ControlRequest) {
			req.Line = nil // valid only during the call
			reqs = append(reqs, req)
			if req.ID == "fake-req-1" && len(reqs) == 1 {
				line, _ := stream.ControlSuccess(req.ID, map[string]any{"behavior": "allow", "updatedInput": map[string]any{}})
				if err := c.Answer(line); err != nil {
					t.Error(err)
				}
			}
		},
		OnControlCancel: func(id string) { cancelled <- id },
	})
	turn(t, c, "ask")
	got := evs.waitResult(t, 0)
	if len(reqs) != 1 || reqs[0].Subtype != "can_use_tool" || !strings.Contains(strings.Join(got, "\n"), `\"behavior\":\"allow\"`) {
		t.Errorf("requests %+v, events %q", reqs, got)
	}
	turn(t, c, "cancel")
	evs.waitResult(t, len(got))
	if id := <-cancelled; id != "fake-req-1" {
		t.Errorf("cancelled %q", id)
	}

	evs2 := newEvents()
	c2 := start(t, Config{OnEvent: evs2.on})
	turn(t, c2, "ask")
	if got := strings.Join(evs2.waitResult(t, 0), "\n"); !strings.Contains(got, `\"subtype\":\"error\"`) || !strings.Contains(got, "can_use_tool") {
		t.Errorf("without a handler: %q, want an error answer", got)
	}
}

// Close: stdin EOF first; a claude that ignores it gets SIGTERM, one that
// ignores that too gets SIGKILL. Close is idempotent and may run
// concurrently; every call returns once the process is gone.
func TestCloseEscalates(t *testing.T) {
	// A step the fake obeys gets a grace far longer than any machine needs
	// (so a loaded machine cannot make it escalate); a step it ignores gets
	// a short one, so the test does not wait long for what must not happen.
	const obeyed, ignored = time.Minute, 50 * time.Millisecond
	for _, tc := range []struct {
		name, signal          string
		env                   []string
		closeGrace, termGrace time.Duration
	}{
		{"eof", "", nil, obeyed, obeyed},
		{"term", "SIGTERM", []string{"FAKE_IGNORE_EOF=1"}, ignored, obeyed},
		{"kill", "SIGKILL", []string{"FAKE_IGNORE_EOF=1", "FAKE_IGNORE_TERM=1"}, ignored, ignored},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := start(t, Config{CloseGrace: tc.closeGrace, TermGrace: tc.termGrace}, tc.env...)
			if _, err := c.Call(context.Background(), "initialize", nil); err != nil {
				t.Fatal(err) // the fake is up and has set its signal handling
			}
			var wg sync.WaitGroup
			for range 3 {
				wg.Add(1)
				go func() { defer wg.Done(); c.Close() }()
			}
			wg.Wait()
			select {
			case <-c.Done():
			default:
				t.Fatal("Close returned before Done")
			}
			ex := c.Exit()
			switch {
			case tc.signal == "" && (ex.Code == nil || *ex.Code != 0):
				t.Errorf("exit = code %v signal %v, want code 0", deref(ex.Code), deref(ex.Signal))
			case tc.signal != "" && (ex.Signal == nil || *ex.Signal != tc.signal):
				t.Errorf("exit = code %v signal %v, want %s", deref(ex.Code), deref(ex.Signal), tc.signal)
			}
		})
	}
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// OnControlDone is told each request's subtype and outcome before its
// callback (success, claude's error, timeout, exit); a forgotten request is
// not reported. OnNormalized is called for the first stdout line, then one
// in NormalizeSampleEvery.
func TestObservers(t *testing.T) {
	type done struct {
		subtype string
		err     error
	}
	var mu sync.Mutex
	var got []done
	var normalized int
	evs := newEvents()
	cfg := Config{
		ControlTimeout: time.Hour, // only the client made for it below times out
		OnEvent:        evs.on,
		OnControlDone: func(subtype string, took time.Duration, err error) {
			if took < 0 {
				t.Errorf("%s took %v", subtype, took)
			}
			mu.Lock()
			got = append(got, done{subtype, err})
			mu.Unlock()
		},
		OnNormalized: func(took time.Duration) {
			mu.Lock()
			normalized++
			mu.Unlock()
		},
	}
	c := start(t, cfg)
	ctx := context.Background()
	c.Call(ctx, "initialize", nil)
	c.Call(ctx, "no_such_thing", nil)
	cT := start(t, Config{ControlTimeout: 50 * time.Millisecond, OnControlDone: cfg.OnControlDone})
	cT.Call(ctx, "slow", nil) // times out: the fake never answers it
	turn(t, cT, "exit 0")
	<-cT.Done()
	for i := range NormalizeSampleEvery {
		turn(t, c, fmt.Sprintf("turn %d", i))
		evs.waitResult(t, 3*i)
	}
	turn(t, c, "exit 0")
	<-c.Done()
	// A request pending at exit, and a forgotten one, on a second client
	// whose requests never time out (so the exit surely comes first).
	c2 := start(t, Config{ControlTimeout: time.Hour, OnControlDone: cfg.OnControlDone})
	id, _ := c2.CallAsync("slow", nil, func(json.RawMessage, error) { t.Error("forgotten request's callback called") })
	c2.Forget(id)
	pending := make(chan error, 1)
	c2.CallAsync("slow", nil, func(_ json.RawMessage, err error) { pending <- err })
	turn(t, c2, "exit 0")
	<-pending
	<-c2.Done()

	mu.Lock()
	defer mu.Unlock()
	var ce *CLIError
	if len(got) != 4 || got[0] != (done{"initialize", nil}) || got[1].subtype != "no_such_thing" || !errors.As(got[1].err, &ce) ||
		got[2].subtype != "slow" || !errors.Is(got[2].err, ErrTimeout) || got[3].subtype != "slow" || !errors.Is(got[3].err, ErrExited) {
		t.Errorf("OnControlDone got %+v", got)
	}
	// 2 control responses (slow gets none) + 3 events a turn.
	lines := 2 + 3*NormalizeSampleEvery
	if min, max := 1+(lines-1)/NormalizeSampleEvery, 1+(lines+8)/NormalizeSampleEvery; normalized < min || normalized > max {
		t.Errorf("OnNormalized called %d times for ~%d lines, want %d..%d", normalized, lines, min, max)
	}
}
