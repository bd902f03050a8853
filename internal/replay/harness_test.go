package replay

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/ccproxy/ccproxy/internal/testkit"
	"github.com/ccproxy/ccproxy/stream"
)

// waitLimit only bounds a test that would otherwise hang; nothing waits
// for it to pass.
const waitLimit = 20 * time.Second

// host drives a Replayer over pipes, like the proxy drives the CLI: it
// writes stdin lines, reads every stdout line through a stream.Normalizer
// and checks it comes out as a real event.
type host struct {
	t      *testing.T
	stdin  *io.PipeWriter
	lines  <-chan string // raw stdout lines
	done   chan error    // Run's result
	norm   *stream.Normalizer
	cancel context.CancelFunc
	all    []string // every line read so far
}

func demo(t *testing.T) *Transcript {
	t.Helper()
	tr, err := Demo()
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// start runs a Replayer of tr with opts (Speed 0 unless set) on pipes.
func start(t *testing.T, tr *Transcript, opts Options) *host {
	t.Helper()
	r, err := New(tr, opts)
	if err != nil {
		t.Fatal(err)
	}
	return startReplayer(t, r)
}

// startReplayer runs r on pipes.
func startReplayer(t *testing.T, r *Replayer) *host {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	h := &host{t: t, stdin: inW, done: make(chan error, 1),
		norm: stream.NewNormalizer(stream.Options{Attachments: stream.AttachInline}), cancel: cancel}
	go func() {
		err := r.Run(ctx, inR, outW)
		outW.CloseWithError(io.EOF)
		inR.Close() // ends the reader goroutine when Run stopped first
		h.done <- err
	}()
	t.Cleanup(func() {
		cancel()
		inW.Close()
		select {
		case <-h.done:
		case <-time.After(waitLimit):
			t.Error("Run did not return after the test")
		}
	})
	// Registered last, so its cleanup runs first: the reader stops and
	// closes stdout, so a Run blocked writing an unread line returns.
	h.lines = testkit.ReadLines(t, outR, 1024)
	return h
}

// sendRaw writes line and a newline: for lines no builder makes.
func (h *host) sendRaw(line string) {
	h.t.Helper()
	h.write([]byte(line+"\n"), nil)
}

// write writes a stdin line built by package stream (ending in "\n"), as
// the proxy writes it; err is the builder's.
func (h *host) write(line []byte, err error) {
	h.t.Helper()
	if err != nil {
		h.t.Fatal(err)
	}
	if _, err := h.stdin.Write(line); err != nil {
		h.t.Fatalf("writing stdin: %v", err)
	}
}

func (h *host) user(text string) {
	h.t.Helper()
	h.write(stream.UserTurn(text, nil))
}

func (h *host) control(id, subtype string, fields any) {
	h.t.Helper()
	h.write(stream.ControlRequest(id, subtype, fields))
}

// answer replies success to the control request id (a permission prompt).
func (h *host) answer(id string, response any) {
	h.t.Helper()
	h.write(stream.ControlSuccess(id, response))
}

// answerError replies an error to the control request id.
func (h *host) answerError(id, message string) {
	h.t.Helper()
	h.write(stream.ControlError(id, message), nil)
}

// event is a stdout line read back: raw and normalized.
type event struct {
	raw  string
	norm gjson.Result
	typ  string
	sub  string
}

// next returns the next stdout line, checked: one JSON object per line
// that the normalizer takes as a real event (never noise), with no
// tool_result content left as an array.
func (h *host) next() event {
	h.t.Helper()
	select {
	case line, ok := <-h.lines:
		if !ok {
			h.t.Fatalf("stdout ended (Run: %v); lines so far:\n%s", h.result(), strings.Join(tail(h.all, 5), "\n"))
		}
		h.all = append(h.all, line)
		if !gjson.Valid(line) || !strings.HasPrefix(line, "{") {
			h.t.Fatalf("stdout line is not a JSON object: %.200s", line)
		}
		ev := h.norm.Normalize([]byte(line))
		if ev.Type == stream.TypeCCProxy || ev.Type == "" {
			h.t.Fatalf("the normalizer did not take the line as an event (%s/%s): %.200s", ev.Type, ev.Subtype, line)
		}
		norm := gjson.ParseBytes(append([]byte(nil), ev.JSON...))
		norm.Get("message.content").ForEach(func(_, b gjson.Result) bool {
			if b.Get("type").Str == "tool_result" && b.Get("content").Type != gjson.String {
				h.t.Errorf("normalized tool_result content is not text: %.200s", b.Raw)
			}
			return true
		})
		return event{raw: line, norm: norm, typ: ev.Type, sub: ev.Subtype}
	case <-time.After(waitLimit):
		h.t.Fatalf("no stdout line within %v; lines so far:\n%s", waitLimit, strings.Join(tail(h.all, 5), "\n"))
	}
	return event{}
}

// until reads lines up to and including the first that pred accepts.
func (h *host) until(what string, pred func(event) bool) (seen []event) {
	h.t.Helper()
	for {
		ev := h.next()
		seen = append(seen, ev)
		if pred(ev) {
			return seen
		}
		if ev.typ == "result" && !strings.Contains(what, "result") {
			h.t.Fatalf("a result came while waiting for %s", what)
		}
	}
}

// turn reads one whole turn: up to and including its result.
func (h *host) turn() []event {
	h.t.Helper()
	return h.until("the result", func(e event) bool { return e.typ == "result" })
}

// result waits for Run to return.
func (h *host) result() error {
	select {
	case err := <-h.done:
		h.done <- err
		return err
	case <-time.After(waitLimit):
		return errors.New("Run did not return")
	}
}

func (h *host) end() error {
	h.stdin.Close()
	return h.result()
}

func tail(s []string, n int) []string {
	if len(s) > n {
		s = s[len(s)-n:]
	}
	out := make([]string, len(s))
	for i, l := range s {
		if len(l) > 300 {
			l = l[:300] + "…"
		}
		out[i] = l
	}
	return out
}

func isType(typ, sub string) func(event) bool {
	return func(e event) bool { return e.typ == typ && (sub == "" || e.sub == sub) }
}

func count(evs []event, pred func(event) bool) int {
	n := 0
	for _, e := range evs {
		if pred(e) {
			n++
		}
	}
	return n
}

// proxyOptions are the options `ccproxy replay-claude` gets from the
// flags the proxy passes.
func proxyOptions() Options {
	return Options{PartialMessages: true, ReplayUserMessages: true}
}
