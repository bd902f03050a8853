package replay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/ccproxy/ccproxy/stream"
	"github.com/tidwall/gjson"
)

// CLIVersion is the Claude Code version the replayer claims to be: the one
// the transcripts were captured from.
const CLIVersion = "2.1.329"

// VersionLine is what `claude --version` prints for CLIVersion.
const VersionLine = CLIVersion + " (Claude Code)"

// DefaultMaxQueued bounds the user turns waiting while a turn plays.
const DefaultMaxQueued = 64

// ErrBadInput is wrapped by the error Run returns for a stdin line the real
// CLI would die on: not a JSON object, too long, or a user message or
// control request without its required fields.
var ErrBadInput = errors.New("bad stdin line")

// Options tune a Replayer. The zero value plays without stream_events and
// without echoes, at no pace at all; cmd sets them from the CLI flags.
type Options struct {
	// Speed scales the pace: 1 is realistic (text deltas 20–40 ms apart,
	// tool results after a pause), 2 twice as fast, 0 no delays at all.
	Speed float64
	// PartialMessages emits the recorded stream_event lines
	// (--include-partial-messages); without it they are left out.
	PartialMessages bool
	// ReplayUserMessages echoes each user turn (isReplay:true) and each
	// answer to a permission prompt, as the CLI does with
	// --replay-user-messages.
	ReplayUserMessages bool
	// Model, when set, is reported in system/init (--model).
	Model string
	// PermissionMode, when set, is reported in system/init
	// (--permission-mode).
	PermissionMode string
	// SessionID replaces the recorded session id everywhere (--resume,
	// --session-id); "" means a new random one per Run.
	SessionID string
	// MaxQueued bounds the user turns that wait while a turn plays
	// (default DefaultMaxQueued); one more is a bad input.
	MaxQueued int
	// Logger gets notes on ignored input; nil discards.
	Logger *slog.Logger
}

// Replayer plays a Transcript as the Claude Code CLI would, in answer to
// what arrives on stdin. It holds no state of its own: each Run is an
// independent session, and Runs may go on concurrently.
type Replayer struct {
	t    *Transcript
	opts Options
	// pace, when set (by tests), replaces the pause before each line at
	// speed 1.
	pace func(kind) time.Duration
}

// New returns a Replayer of t. Speed must pass CheckSpeed.
func New(t *Transcript, opts Options) (*Replayer, error) {
	if t == nil || len(t.Turns) == 0 {
		return nil, errors.New("replay: a transcript with at least one turn is required")
	}
	if err := CheckSpeed(opts.Speed); err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	if opts.MaxQueued <= 0 {
		opts.MaxQueued = DefaultMaxQueued
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Replayer{t: t, opts: opts}, nil
}

// input is one stdin line, or how stdin ended.
type input struct {
	n   int // line number
	raw []byte
	typ string
	eof bool
	err error
}

// Run reads stream-json lines from stdin and writes the transcript's events
// to stdout, one JSON object and "\n" per write, until stdin ends (then it
// finishes the turns already asked for and returns nil), ctx is done
// (ctx.Err()), a line is malformed (an error wrapping ErrBadInput) or
// stdout fails.
//
// Run reads stdin in a goroutine of its own. If Run returns before stdin
// ends, that goroutine stays blocked in Read until the caller closes stdin
// (or the process exits); it never writes anything.
func (r *Replayer) Run(ctx context.Context, stdin io.Reader, stdout io.Writer) error {
	msgs := make(chan input)
	done := make(chan struct{})
	defer close(done)
	go readInput(stdin, msgs, done)

	s := newSession(ctx, r, msgs, stdout)
	return s.run()
}

// readInput sends each stdin line, then one input with eof or err set, on
// msgs; it stops when done is closed.
func readInput(stdin io.Reader, msgs chan<- input, done <-chan struct{}) {
	rd := stream.NewReader(stdin, MaxLineBytes)
	send := func(in input) bool {
		select {
		case msgs <- in:
			return true
		case <-done:
			return false
		}
	}
	for {
		b, err := rd.Next()
		n := rd.Line()
		switch {
		case errors.Is(err, io.EOF):
			send(input{n: n, eof: true})
			return
		case err != nil:
			send(input{n: n, err: fmt.Errorf("%w: stdin line %d: %v", ErrBadInput, n, err)})
			return
		case rd.Oversized() > 0:
			send(input{n: n, err: fmt.Errorf("%w: stdin line %d is longer than %d bytes", ErrBadInput, n, MaxLineBytes)})
			return
		}
		in := input{n: n, raw: bytes.Clone(b)} // b is reused by the next read
		if b[0] != '{' || !gjson.ValidBytes(b) {
			in.err = fmt.Errorf("%w: stdin line %d is not a JSON object: %.120q", ErrBadInput, n, b)
		} else {
			in.typ = gjson.GetBytes(b, "type").String()
		}
		if !send(in) || in.err != nil {
			return
		}
	}
}

// errInterrupted ends a turn that an interrupt request stopped.
var errInterrupted = errors.New("interrupted")

// pause waits d (scaled by the speed), handling whatever arrives on stdin
// meanwhile. With no delay it still handles what has already arrived. It
// returns errInterrupted when an interrupt came in during a turn.
func (s *session) pause(d time.Duration) error {
	if s.opts.Speed > 0 {
		d = time.Duration(float64(d) / s.opts.Speed)
	} else {
		d = 0
	}
	var timer <-chan time.Time
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timer = t.C
	}
	for {
		if s.interrupted {
			return errInterrupted
		}
		if d <= 0 {
			select {
			case in := <-s.msgs:
				if err := s.handle(in); err != nil {
					return err
				}
				continue
			case <-s.ctx.Done():
				return s.ctx.Err()
			default:
				return nil
			}
		}
		select {
		case in := <-s.msgs:
			if err := s.handle(in); err != nil {
				return err
			}
		case <-timer:
			return nil
		case <-s.ctx.Done():
			return s.ctx.Err()
		}
	}
}

// handle acts on one stdin line (or its end).
func (s *session) handle(in input) error {
	switch {
	case in.err != nil:
		return in.err
	case in.eof:
		s.eof, s.msgs = true, nil
		return nil
	}
	switch in.typ {
	case "user":
		msg := gjson.GetBytes(in.raw, "message")
		c := msg.Get("content")
		if !msg.IsObject() || !(c.Type == gjson.String || c.IsArray()) {
			return fmt.Errorf("%w: stdin line %d: a user message needs message.content (a string or an array of blocks)", ErrBadInput, in.n)
		}
		if len(s.queue) >= s.opts.MaxQueued {
			return fmt.Errorf("%w: stdin line %d: more than %d user turns queued while a turn plays", ErrBadInput, in.n, s.opts.MaxQueued)
		}
		s.queue = append(s.queue, in)
	case "control_request":
		return s.control(in)
	case "control_response":
		s.answerPrompt(in)
	case "control_cancel_request":
		// The host withdraws a request of its own; the replayer makes none.
	default:
		s.log.Warn("replay: ignoring a stdin line of unknown type", "line", in.n, "type", in.typ)
	}
	return nil
}

// run is the session's main loop: play a turn per user message, answer
// control requests in between.
func (s *session) run() error {
	for {
		if len(s.queue) > 0 {
			u := s.queue[0]
			s.queue = s.queue[1:]
			if err := s.playTurn(u); err != nil {
				return err
			}
			continue
		}
		if s.eof {
			return nil
		}
		select {
		case in := <-s.msgs:
			if err := s.handle(in); err != nil {
				return err
			}
		case <-s.ctx.Done():
			return s.ctx.Err()
		}
	}
}
