package fakeapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// Options tune a Server. The zero value is usable.
type Options struct {
	// Logger receives one line per request; nil discards.
	Logger *slog.Logger
	// Fallback answers what the Responder leaves unanswered; nil means a
	// short text, "OK.".
	Fallback Responder
	// ChunkRunes is the largest text delta, in runes (default 16). Texts are
	// always cut into at least three deltas when they are long enough.
	ChunkRunes int
	// MaxBodyBytes bounds a request body (default 64 MiB); a larger body gets
	// a 413 request_too_large error.
	MaxBodyBytes int64
	// MaxRequests and MaxRecordedBytes bound what Requests keeps (default 512
	// requests, 128 MiB of bodies); the oldest are dropped first, counted by
	// Dropped, and the first drop is logged.
	MaxRequests      int
	MaxRecordedBytes int64
}

// Server is a fake Anthropic Messages API on a loopback httptest server.
// It is safe for concurrent use. Close stops it and waits for its handlers.
type Server struct {
	ts       *httptest.Server
	respond  Responder
	fallback Responder
	opts     Options
	log      *slog.Logger

	mu       sync.Mutex
	seq      int
	msgSeq   int
	toolSeq  int
	reqs     []*Request
	recorded int // requests ever recorded (dropped ones included)
	recBytes int64
	dropped  int
	changed  chan struct{} // closed and replaced when a request is recorded
	closed   bool
}

// NewServer starts a fake API that answers Messages requests with respond
// (nil: everything gets the fallback). Close it when done.
func NewServer(respond Responder, opts *Options) *Server {
	s := &Server{respond: respond, changed: make(chan struct{})}
	if opts != nil {
		s.opts = *opts
	}
	if s.opts.ChunkRunes <= 0 {
		s.opts.ChunkRunes = 16
	}
	if s.opts.MaxBodyBytes <= 0 {
		s.opts.MaxBodyBytes = 64 << 20
	}
	if s.opts.MaxRequests <= 0 {
		s.opts.MaxRequests = 512
	}
	if s.opts.MaxRecordedBytes <= 0 {
		s.opts.MaxRecordedBytes = 128 << 20
	}
	s.log = s.opts.Logger
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.fallback = s.opts.Fallback
	if s.fallback == nil {
		s.fallback = func(*Request) *Reply { return Say("OK.") }
	}
	s.ts = httptest.NewServer(http.HandlerFunc(s.serveHTTP))
	return s
}

// Start is NewServer for tests: the server is closed when the test ends.
func Start(t testing.TB, respond Responder) *Server {
	t.Helper()
	s := NewServer(respond, nil)
	t.Cleanup(s.Close)
	return s
}

// URL is the base URL (http://127.0.0.1:PORT), the value for
// ANTHROPIC_BASE_URL.
func (s *Server) URL() string { return s.ts.URL }

// Close stops the server, ending streams in progress, and waits for the
// handlers to return. It may be called more than once.
func (s *Server) Close() {
	s.mu.Lock()
	already := s.closed
	s.closed = true
	s.mu.Unlock()
	if already {
		return
	}
	s.ts.CloseClientConnections()
	s.ts.Close()
}

// Env is the environment for running the Claude Code CLI against this
// server with home as HOME: the API URL and a fake key, no nonessential
// traffic, no retries, no auto-update or telemetry, temp files under
// home/tmp, and PATH, LANG, LC_ALL, TZ and USER from this process. It does
// not inherit anything else, so the developer's own Claude settings and keys
// never leak into a test. The caller creates home (and may append entries;
// later entries win in os/exec).
func (s *Server) Env(home string) []string {
	env := []string{
		"HOME=" + home,
		"ANTHROPIC_BASE_URL=" + s.URL(),
		"ANTHROPIC_API_KEY=sk-test",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"CLAUDE_CODE_MAX_RETRIES=0",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1",
		"CLAUDE_CODE_TMPDIR=" + filepath.Join(home, "tmp"),
		"TMPDIR=" + filepath.Join(home, "tmp"),
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
	}
	for _, k := range []string{"PATH", "LANG", "LC_ALL", "TZ", "USER", "LOGNAME"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// Requests returns the recorded requests, oldest first (see Options for the
// bounds). The requests must not be modified.
func (s *Server) Requests() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Request(nil), s.reqs...)
}

// MessageRequests returns the recorded POST /v1/messages requests.
func (s *Server) MessageRequests() []*Request {
	var out []*Request
	for _, r := range s.Requests() {
		if r.Kind == KindMessages {
			out = append(out, r)
		}
	}
	return out
}

// Dropped counts the requests dropped from the record because a bound was
// hit.
func (s *Server) Dropped() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dropped
}

// WaitFor waits until a recorded request satisfies pred (looking at those
// already recorded first) and returns it, or returns ctx's error.
func (s *Server) WaitFor(ctx context.Context, pred func(*Request) bool) (*Request, error) {
	seen := 0
	for {
		s.mu.Lock()
		reqs, ch, total := s.reqs, s.changed, s.recorded
		s.mu.Unlock()
		// reqs may have lost old entries; only look at the ones not seen yet.
		start := len(reqs) - (total - seen)
		if start < 0 {
			start = 0
		}
		for _, r := range reqs[start:] {
			if pred(r) {
				return r, nil
			}
		}
		seen = total
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, fmt.Errorf("fakeapi: waiting for a request: %w", ctx.Err())
		}
	}
}

func (s *Server) record(r *Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, r)
	s.recorded++
	s.recBytes += int64(len(r.Body))
	drop := 0
	for len(s.reqs)-drop > 1 && (len(s.reqs)-drop > s.opts.MaxRequests || s.recBytes > s.opts.MaxRecordedBytes) {
		s.recBytes -= int64(len(s.reqs[drop].Body))
		drop++
	}
	if drop > 0 {
		if s.dropped == 0 {
			s.log.Warn("fakeapi: request record is full, dropping the oldest",
				"max_requests", s.opts.MaxRequests, "max_recorded_bytes", s.opts.MaxRecordedBytes)
		}
		s.dropped += drop
		// A new array: snapshots taken by Requests and WaitFor share the old one.
		s.reqs = append([]*Request(nil), s.reqs[drop:]...)
	}
	close(s.changed)
	s.changed = make(chan struct{})
}

func (s *Server) serveHTTP(w http.ResponseWriter, hr *http.Request) {
	s.mu.Lock()
	s.seq++
	seq := s.seq
	s.mu.Unlock()

	req := &Request{
		Seq:      seq,
		Time:     time.Now(),
		Kind:     KindOther,
		Method:   hr.Method,
		Path:     hr.URL.Path,
		RawQuery: hr.URL.RawQuery,
		Header:   redact(hr.Header),
	}
	switch {
	case hr.Method == http.MethodPost && hr.URL.Path == "/v1/messages":
		req.Kind = KindMessages
	case hr.Method == http.MethodPost && hr.URL.Path == "/v1/messages/count_tokens":
		req.Kind = KindCountTokens
	}

	body, err := io.ReadAll(http.MaxBytesReader(w, hr.Body, s.opts.MaxBodyBytes))
	req.Body = body
	if err != nil {
		s.record(req)
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			s.writeError(w, &APIError{Status: 413, Message: fmt.Sprintf("request body is larger than %d bytes", mbe.Limit)})
			return
		}
		s.writeError(w, &APIError{Status: 400, Message: fmt.Sprintf("reading the request body: %v", err)})
		return
	}
	if req.Kind != KindOther {
		req.parseBody()
	}
	s.record(req)
	s.log.Debug("fakeapi: request", "seq", seq, "method", req.Method, "path", req.Path,
		"model", req.Model, "tools", len(req.Tools), "messages", len(req.Messages), "bytes", len(body))

	switch req.Kind {
	case KindOther:
		s.writeError(w, &APIError{Status: 404, Message: fmt.Sprintf("fakeapi does not serve %s %s", hr.Method, hr.URL.Path)})
		return
	case KindCountTokens:
		writeJSON(w, http.StatusOK, map[string]any{"input_tokens": estimateTokens(len(body))})
		return
	}
	if req.ParseErr != nil {
		s.writeError(w, &APIError{Status: 400, Message: req.ParseErr.Error()})
		return
	}
	rep, err := s.reply(req)
	if err != nil {
		s.writeError(w, &APIError{Status: 500, Message: err.Error()})
		return
	}
	if rep.Error != nil {
		s.writeError(w, rep.Error)
		return
	}
	msg, err := s.build(req, rep)
	if err != nil {
		s.writeError(w, &APIError{Status: 500, Message: err.Error()})
		return
	}
	if !req.Stream {
		writeJSON(w, http.StatusOK, msg.final())
		return
	}
	s.stream(hr.Context(), w, msg, rep)
}

// reply runs the responder, turning a panic into an error.
func (s *Server) reply(req *Request) (rep *Reply, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("fakeapi: responder panicked on request %d: %v", req.Seq, p)
			s.log.Error("fakeapi: responder panicked", "seq", req.Seq, "panic", fmt.Sprint(p))
		}
	}()
	if s.respond != nil {
		rep = s.respond(req)
	}
	if rep == nil {
		rep = s.fallback(req)
	}
	if rep == nil {
		rep = Say("OK.")
	}
	return rep, nil
}

func redact(h http.Header) http.Header {
	c := h.Clone()
	for _, k := range []string{"X-Api-Key", "Authorization"} {
		if c.Get(k) != "" {
			c.Set(k, "REDACTED")
		}
	}
	return c
}

func estimateTokens(bytes int) int {
	if n := bytes / 4; n > 0 {
		return n
	}
	return 1
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"type":"error","error":{"type":"api_error","message":"fakeapi: cannot encode the answer"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Request-Id", "req_fake")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func (s *Server) writeError(w http.ResponseWriter, e *APIError) {
	s.log.Debug("fakeapi: error answer", "status", e.status(), "type", e.errType())
	writeJSON(w, e.status(), e.body())
}

// message is a reply made concrete: ids assigned, inputs marshalled.
type message struct {
	id, model  string
	blocks     []builtBlock
	stopReason string
	inTokens   int
	outTokens  int
}

type builtBlock struct {
	Block
	input json.RawMessage
}

func (s *Server) build(req *Request, rep *Reply) (*message, error) {
	s.mu.Lock()
	s.msgSeq++
	m := &message{id: fmt.Sprintf("msg_fake_%04d", s.msgSeq), model: req.Model, inTokens: estimateTokens(len(req.Body))}
	s.mu.Unlock()
	if m.model == "" {
		m.model = "claude-fake"
	}
	hasTool := false
	out := 0
	for i, b := range rep.Blocks {
		bb := builtBlock{Block: b}
		switch b.Type {
		case "text", "thinking":
			out += len(b.Text)
		case "tool_use":
			hasTool = true
			in := b.Input
			if in == nil {
				in = map[string]any{}
			}
			raw, err := json.Marshal(in)
			if err != nil {
				return nil, fmt.Errorf("fakeapi: block %d (tool_use %s): input does not marshal: %w", i, b.Name, err)
			}
			if len(raw) == 0 || raw[0] != '{' {
				return nil, fmt.Errorf("fakeapi: block %d (tool_use %s): input must be a JSON object, got %s", i, b.Name, clip(string(raw), 40))
			}
			bb.input = raw
			out += len(raw)
			if bb.ID == "" {
				s.mu.Lock()
				s.toolSeq++
				bb.ID = fmt.Sprintf("toolu_fake_%04d", s.toolSeq)
				s.mu.Unlock()
			}
		default:
			return nil, fmt.Errorf("fakeapi: block %d has unknown type %q (want text, tool_use or thinking)", i, b.Type)
		}
		if b.Type == "thinking" && bb.Signature == "" {
			bb.Signature = "fake-signature"
		}
		m.blocks = append(m.blocks, bb)
	}
	m.stopReason = rep.StopReason
	if m.stopReason == "" {
		m.stopReason = "end_turn"
		if hasTool {
			m.stopReason = "tool_use"
		}
	}
	m.outTokens = estimateTokens(out)
	return m, nil
}

func (m *message) usage(out int) map[string]any {
	return map[string]any{"input_tokens": m.inTokens, "output_tokens": out,
		"cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
}

// final is the whole message, for a non-streaming answer.
func (m *message) final() map[string]any {
	content := make([]any, len(m.blocks))
	for i, b := range m.blocks {
		content[i] = b.complete()
	}
	return map[string]any{"id": m.id, "type": "message", "role": "assistant", "model": m.model,
		"content": content, "stop_reason": m.stopReason, "stop_sequence": nil, "usage": m.usage(m.outTokens)}
}

func (b builtBlock) complete() map[string]any {
	switch b.Type {
	case "tool_use":
		return map[string]any{"type": "tool_use", "id": b.ID, "name": b.Name, "input": b.input}
	case "thinking":
		return map[string]any{"type": "thinking", "thinking": b.Text, "signature": b.Signature}
	default:
		return map[string]any{"type": "text", "text": b.Text}
	}
}

// stream writes the message as SSE events.
func (s *Server) stream(ctx context.Context, w http.ResponseWriter, m *message, rep *Reply) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("Request-Id", "req_fake")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	first := true
	send := func(name string, data map[string]any) bool {
		if !first && rep.ChunkDelay > 0 {
			t := time.NewTimer(rep.ChunkDelay)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return false
			}
		}
		first = false
		data["type"] = name
		b, err := json.Marshal(data)
		if err != nil {
			s.log.Error("fakeapi: encoding an SSE event", "event", name, "err", err)
			return false
		}
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		return ctx.Err() == nil
	}

	start := map[string]any{"id": m.id, "type": "message", "role": "assistant", "model": m.model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": m.usage(1)}
	if !send("message_start", map[string]any{"message": start}) || !send("ping", map[string]any{}) {
		return
	}
	if rep.Wait != nil {
		select {
		case <-rep.Wait:
		case <-ctx.Done():
			return
		}
	}
	for i, b := range m.blocks {
		var startBlock map[string]any
		var deltas []map[string]any
		switch b.Type {
		case "text":
			startBlock = map[string]any{"type": "text", "text": ""}
			for _, c := range chunk(b.Text, s.opts.ChunkRunes) {
				deltas = append(deltas, map[string]any{"type": "text_delta", "text": c})
			}
		case "thinking":
			startBlock = map[string]any{"type": "thinking", "thinking": "", "signature": ""}
			for _, c := range chunk(b.Text, s.opts.ChunkRunes) {
				deltas = append(deltas, map[string]any{"type": "thinking_delta", "thinking": c})
			}
			deltas = append(deltas, map[string]any{"type": "signature_delta", "signature": b.Signature})
		case "tool_use":
			startBlock = map[string]any{"type": "tool_use", "id": b.ID, "name": b.Name, "input": map[string]any{}}
			for _, c := range chunk(string(b.input), 4*s.opts.ChunkRunes) {
				deltas = append(deltas, map[string]any{"type": "input_json_delta", "partial_json": c})
			}
		}
		if !send("content_block_start", map[string]any{"index": i, "content_block": startBlock}) {
			return
		}
		for _, d := range deltas {
			if !send("content_block_delta", map[string]any{"index": i, "delta": d}) {
				return
			}
		}
		if !send("content_block_stop", map[string]any{"index": i}) {
			return
		}
	}
	if rep.StreamError != nil {
		send("error", map[string]any{"error": rep.StreamError.body()["error"]})
		return
	}
	if !send("message_delta", map[string]any{
		"delta": map[string]any{"stop_reason": m.stopReason, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": m.outTokens},
	}) {
		return
	}
	send("message_stop", map[string]any{})
}

// chunk cuts s into pieces of at most max runes (at least three pieces when
// s has three runes or more), preferring to cut after a space. Pieces never
// split a rune. An empty s gives no pieces.
func chunk(s string, max int) []string {
	n := utf8.RuneCountInString(s)
	if n == 0 {
		return nil
	}
	size := max
	if n/3 < size {
		size = n / 3
	}
	if size < 1 {
		size = 1
	}
	var out []string
	for len(s) > 0 {
		cut, runes, lastSpace := len(s), 0, -1
		for i, r := range s {
			if runes == size {
				cut = i
				if lastSpace > 0 && size > 4 {
					cut = lastSpace
				}
				break
			}
			runes++
			if r == ' ' {
				lastSpace = i + 1
			}
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	return out
}

// LastRequestWith returns the last Messages request whose prompt holds
// text.
func (s *Server) LastRequestWith(text string) (*Request, error) {
	reqs := s.MessageRequests()
	for i := len(reqs) - 1; i >= 0; i-- {
		if strings.Contains(reqs[i].Prompt(), text) {
			return reqs[i], nil
		}
	}
	return nil, fmt.Errorf("no request with %q among %d", text, len(reqs))
}
