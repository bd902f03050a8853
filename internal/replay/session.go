package replay

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// session is the state of one Run. It is owned by Run's goroutine: only
// that goroutine reads msgs and writes out.
type session struct {
	ctx  context.Context
	t    *Transcript
	opts Options
	pace func(kind) time.Duration
	log  *slog.Logger
	msgs <-chan input // nil once stdin has ended
	out  *bufio.Writer

	queue []input // user turns waiting
	eof   bool

	next        int // the next turn of the transcript
	initialized bool

	sessionID      string
	oldID, newID   []byte // the recorded session id and this session's
	model          string
	permissionMode string
	servers        []*server

	// While a turn plays.
	playing     bool
	interrupted bool
	pending     string  // the request id of the prompt awaiting an answer
	pendingLine *line   // its recorded request
	answer      *answer // its answer, once it came
	cancelled   *line   // a prompt withdrawn by an interrupt
	turnStart   time.Time
	jitter      uint32
}

// server is an MCP server as the replayer reports it.
type server struct {
	name, status, source string
	recorded             bool            // in the transcript's init
	disabled             bool            // by mcp_toggle
	config               json.RawMessage // mcp_set_servers' entry, for servers added that way
}

// answer is the host's reply to a can_use_tool request.
type answer struct {
	raw     []byte
	allow   bool
	message string // why it was denied
}

func newSession(ctx context.Context, r *Replayer, msgs <-chan input, stdout io.Writer) *session {
	s := &session{ctx: ctx, t: r.t, opts: r.opts, pace: r.pace, log: r.opts.Logger, msgs: msgs,
		out: bufio.NewWriterSize(stdout, 64<<10), jitter: 1}
	s.sessionID = r.opts.SessionID
	if s.sessionID == "" {
		s.sessionID = newUUID()
	}
	if r.t.SessionID != "" && r.t.SessionID != s.sessionID {
		// Everywhere, not only in session_id: the CLI also puts it in
		// paths (tool-results/<session>/...).
		s.oldID, s.newID = []byte(r.t.SessionID), []byte(s.sessionID)
	}
	init := r.t.Turns[0].lines[0].raw
	s.model = gjson.GetBytes(init, "model").String()
	if r.opts.Model != "" {
		s.model = r.opts.Model
	}
	s.permissionMode = gjson.GetBytes(init, "permissionMode").String()
	if r.opts.PermissionMode != "" {
		s.permissionMode = r.opts.PermissionMode
	}
	gjson.GetBytes(init, "mcp_servers").ForEach(func(_, v gjson.Result) bool {
		s.servers = append(s.servers, &server{name: v.Get("name").String(), status: v.Get("status").String(),
			source: v.Get("source").String(), recorded: true})
		return true
	})
	return s
}

// emit writes one event line, with the recorded session id replaced.
func (s *session) emit(raw []byte) error {
	if s.oldID != nil {
		raw = bytes.ReplaceAll(raw, s.oldID, s.newID)
	}
	s.out.Write(raw)
	s.out.WriteByte('\n')
	if err := s.out.Flush(); err != nil {
		return fmt.Errorf("replay: writing stdout: %w", err)
	}
	return nil
}

// emitJSON marshals v and emits it.
func (s *session) emitJSON(v any) error {
	b, err := marshal(v)
	if err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	return s.emit(b)
}

// turnState is what playTurn tracks to end a turn properly.
type turnState struct {
	open    []string          // tool_use ids announced and not yet answered, in order
	denied  map[string]string // tool_use id -> deny message
	denials []any             // result.permission_denials
	asked   *line             // a prompt sent and not yet waited for
	result  []byte            // a result line to model synthetic results on
}

// playTurn plays the next recorded turn for the user message u, or the
// canned reply when there are none left.
func (s *session) playTurn(u input) error {
	s.playing, s.interrupted, s.turnStart = true, false, time.Now()
	defer func() { s.playing, s.pending, s.pendingLine, s.answer, s.cancelled = false, "", nil, nil, nil }()
	if s.next >= len(s.t.Turns) {
		return s.playCanned(u)
	}
	turn := s.t.Turns[s.next]
	s.next++
	st := &turnState{denied: map[string]string{}, result: turn.lines[len(turn.lines)-1].raw}
	for i := range turn.lines {
		l := &turn.lines[i]
		switch {
		case l.kind == kindStream && !s.opts.PartialMessages,
			l.kind == kindEcho && !s.opts.ReplayUserMessages,
			l.kind == kindPromptEcho:
			continue
		}
		// The CLI finishes streaming the message while a prompt waits;
		// anything else waits for the answer.
		if st.asked != nil && l.kind != kindStream {
			if err := s.awaitAnswer(st); err != nil {
				return s.stop(err, st)
			}
		}
		if err := s.pause(s.delay(l)); err != nil {
			return s.stop(err, st)
		}
		var err error
		switch l.kind {
		case kindInit:
			err = s.emit(s.initLine(l.raw))
		case kindEcho:
			err = s.emit(s.echoLine(u))
		case kindPrompt:
			err = s.ask(l, st)
		case kindToolUse:
			err = s.emit(l.raw)
			st.open = append(st.open, l.toolUses...)
		case kindToolResult:
			raw := l.raw
			for _, id := range l.toolResults {
				if msg, ok := st.denied[id]; ok {
					raw = denyResult(raw, id, msg)
				}
				st.open = remove(st.open, id)
			}
			err = s.emit(raw)
		case kindResult:
			raw := l.raw
			if len(st.denials) > 0 {
				raw = setJSON(raw, "permission_denials", st.denials)
			}
			err = s.emit(raw)
		default:
			err = s.emit(l.raw)
		}
		if err != nil {
			return s.stop(err, st)
		}
	}
	return nil
}

// ask emits a recorded can_use_tool request under a fresh request id;
// awaitAnswer then waits for the host's answer.
func (s *session) ask(l *line, st *turnState) error {
	id := newUUID()
	raw, err := sjson.SetBytes(l.raw, "request_id", id)
	if err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	if err := s.emit(raw); err != nil {
		return err
	}
	s.pending, s.pendingLine, s.answer, st.asked = id, l, nil, l
	return nil
}

// awaitAnswer waits for the answer to the prompt st.asked. It returns
// errInterrupted when an interrupt came first (control has withdrawn the
// prompt then).
func (s *session) awaitAnswer(st *turnState) error {
	l := st.asked
	st.asked = nil
	for s.answer == nil {
		switch {
		case s.interrupted:
			return errInterrupted
		case s.eof:
			// As with the CLI, a prompt fails once stdin is closed.
			s.answer = &answer{message: "Tool permission request failed: stdin was closed before the prompt was answered"}
			continue
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
	ans := s.answer
	s.pending, s.pendingLine, s.answer = "", nil, nil
	if s.opts.ReplayUserMessages && ans.raw != nil {
		if err := s.emit(ans.raw); err != nil {
			return err
		}
	}
	if !ans.allow {
		st.denied[l.toolUseID] = ans.message
		st.denials = append(st.denials, denial(l))
	}
	return nil
}

// answerPrompt takes a control_response from the host: the answer to the
// pending prompt, or (ignored) a reply to nothing the replayer asked.
func (s *session) answerPrompt(in input) {
	resp := gjson.GetBytes(in.raw, "response")
	id := resp.Get("request_id").String()
	if s.pending == "" || id != s.pending {
		s.log.Warn("replay: ignoring a control_response to no pending request", "line", in.n, "request_id", id)
		return
	}
	a := &answer{raw: in.raw}
	switch {
	case resp.Get("subtype").String() == "error":
		a.message = "Tool permission request failed: " + resp.Get("error").String()
	case resp.Get("response.behavior").String() == "allow":
		a.allow = true
	case resp.Get("response.behavior").String() == "deny":
		a.message = resp.Get("response.message").String()
	default:
		a.message = "Tool permission request failed: the answer has no behavior allow or deny"
	}
	s.answer = a
}

// stop ends a turn early. An interrupt is not an error: the turn ends as
// the CLI ends it (the pending prompt withdrawn, is_error results for the
// tools in flight, an "[Request interrupted by user…]" message, an
// error_during_execution result) and Run goes on. Other errors end Run.
func (s *session) stop(err error, st *turnState) error {
	if !errors.Is(err, errInterrupted) {
		return err
	}
	s.interrupted = false
	cancelled := s.cancelled
	s.cancelled = nil
	text, terminal, stopReason := "[Request interrupted by user]", "aborted_streaming", any(nil)
	if len(st.open) > 0 {
		text, terminal, stopReason = "[Request interrupted by user for tool use]", "aborted_tools", "tool_use"
	}
	for _, id := range st.open {
		content := interruptedToolText + interruptedRunningText
		if cancelled != nil && cancelled.toolUseID == id {
			// Refused before it ran: the prompt was withdrawn.
			content = interruptedToolText
			st.denials = append(st.denials, denial(cancelled))
		}
		ev := append(s.userEvent([]any{map[string]any{"type": "tool_result", "content": content, "is_error": true, "tool_use_id": id}}),
			field{"tool_use_result", "User rejected tool use"},
			field{"tool_result_meta", []any{map[string]any{"id": id, "non_execution_kind": "user-rejected"}}})
		if err := s.emitJSON(ev); err != nil {
			return err
		}
	}
	if err := s.emitJSON(s.userEvent([]any{map[string]any{"type": "text", "text": text}})); err != nil {
		return err
	}
	return s.emit(s.resultLine(st.result, map[string]any{
		"subtype":            "error_during_execution",
		"is_error":           true,
		"stop_reason":        stopReason,
		"terminal_reason":    terminal,
		"errors":             []string{"[ede_diagnostic] result_type=user last_content_type=n/a stop_reason=" + fmt.Sprint(orNull(stopReason))},
		"permission_denials": orEmpty(st.denials),
		"total_cost_usd":     0,
	}, true))
}

// What the CLI 2.1.329 puts in the tool_result of a tool call stopped by
// an interrupt: the first part alone when the call was waiting for
// permission, both when it was running.
const (
	interruptedToolText    = "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed."
	interruptedRunningText = " Correction to the text above: this call was stopped while running, not refused before it ran. It may have run in part or in full, and its changes may have been written. No permission prompt was involved. Work it started elsewhere (a remote command, a background process) may still be running, so check before starting the same work again. The instruction to stop and wait still stands."
)

// denial is the permission_denials entry for a prompted tool call.
func denial(l *line) any {
	input := json.RawMessage(l.toolInput)
	if len(input) == 0 {
		input = json.RawMessage("{}")
	}
	return map[string]any{"tool_name": l.toolName, "tool_use_id": l.toolUseID, "tool_input": input}
}

// delay is the pause before emitting l at speed 1.
func (s *session) delay(l *line) time.Duration {
	if s.pace != nil {
		return s.pace(l.kind)
	}
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	switch l.kind {
	case kindInit:
		return 0 // the CLI starts a turn at once
	case kindEcho, kindPromptEcho:
		return ms(5)
	case kindStream:
		switch l.ev {
		case "":
			return 0 // system/thinking_tokens rides along with a delta
		case "message_start":
			return ms(450)
		case "content_block_start":
			return ms(60)
		case "content_block_delta":
			switch l.delta {
			case "text_delta", "thinking_delta":
				return ms(20 + s.rand(21))
			case "input_json_delta":
				return ms(25)
			}
		}
		return ms(10)
	case kindToolResult:
		return ms(700)
	case kindPrompt:
		return ms(150)
	case kindResult:
		return ms(60)
	}
	if l.typ == "assistant" {
		if s.opts.PartialMessages {
			return ms(5)
		}
		return ms(800) // the whole message at once: as long as it takes to "write" it
	}
	return ms(20)
}

// rand returns a pseudo-random number in [0, n): deterministic, enough to
// make the pace uneven.
func (s *session) rand(n uint32) int {
	s.jitter = s.jitter*1664525 + 1013904223
	return int((s.jitter >> 16) % n)
}

// ---------------------------------------------------------------- events

// initLine is a recorded system/init with the session's current model,
// permission mode and MCP servers.
func (s *session) initLine(raw []byte) []byte {
	servers := make([]ordered, 0, len(s.servers))
	for _, sv := range s.servers {
		servers = append(servers, ordered{{"name", sv.name}, {"status", sv.currentStatus()}, {"source", sv.source}})
	}
	raw = setJSON(raw, "mcp_servers", servers)
	if s.model != "" {
		raw = setJSON(raw, "model", s.model)
	}
	if s.permissionMode != "" {
		raw = setJSON(raw, "permissionMode", s.permissionMode)
	}
	return raw
}

// echoLine is the CLI's echo of the host's user message.
func (s *session) echoLine(u input) []byte {
	var msg bytes.Buffer
	if err := json.Compact(&msg, []byte(gjson.GetBytes(u.raw, "message").Raw)); err != nil {
		msg.Reset()
		msg.WriteString(`{"role":"user","content":""}`)
	}
	b, _ := marshal(ordered{ // as the CLI prints it
		{"type", "user"}, {"message", json.RawMessage(msg.Bytes())}, {"session_id", s.sessionID},
		{"parent_tool_use_id", nil}, {"uuid", newUUID()}, {"timestamp", timestamp()}, {"isReplay", true},
	})
	return b
}

// userEvent is a user event with the given content blocks.
func (s *session) userEvent(content []any) ordered {
	return ordered{
		{"type", "user"},
		{"message", map[string]any{"role": "user", "content": content}},
		{"parent_tool_use_id", nil},
		{"session_id", s.sessionID},
		{"uuid", newUUID()},
		{"timestamp", timestamp()},
	}
}

// resultLine is tmpl (a recorded result) with fields set, a new uuid, this
// turn's duration and one model turn; drop removes the result text.
func (s *session) resultLine(tmpl []byte, fields map[string]any, drop bool) []byte {
	raw := tmpl
	if drop {
		raw = deleteKey(raw, "result")
	}
	fields["uuid"] = newUUID()
	fields["session_id"] = s.sessionID
	fields["duration_ms"] = time.Since(s.turnStart).Milliseconds()
	fields["num_turns"] = 1
	for _, k := range sortedKeys(fields) {
		raw = setJSON(raw, k, fields[k])
	}
	return raw
}

// denyResult rewrites the tool_result of tool_use id in a recorded user
// event as the CLI writes a denied call.
func denyResult(raw []byte, id, msg string) []byte {
	idx := -1
	gjson.GetBytes(raw, "message.content").ForEach(func(k, b gjson.Result) bool {
		if b.Get("type").String() == "tool_result" && b.Get("tool_use_id").String() == id {
			idx = int(k.Int())
			return false
		}
		return true
	})
	if idx < 0 {
		return raw
	}
	p := fmt.Sprintf("message.content.%d", idx)
	raw = setJSON(raw, p, map[string]any{"type": "tool_result", "content": msg, "is_error": true, "tool_use_id": id})
	if len(gjson.GetBytes(raw, "message.content").Array()) == 1 {
		raw = setJSON(raw, "tool_use_result", "Error: "+msg)
		raw = setJSON(raw, "tool_result_meta", []any{map[string]any{"id": id, "non_execution_kind": "permission-rule",
			"permission_decision": map[string]any{"decision": "reject", "source": "user_reject"}}})
	}
	return raw
}

// ---------------------------------------------------------------- helpers

// setJSON sets path in raw to v, leaving raw as it was if that fails
// (paths here are fixed and values marshal, so it does not).
func setJSON(raw []byte, path string, v any) []byte {
	b, err := marshal(v)
	if err != nil {
		return raw
	}
	out, err := sjson.SetRawBytes(raw, path, b)
	if err != nil {
		return raw
	}
	return out
}

// deleteKey removes path from raw, if it is there.
func deleteKey(raw []byte, path string) []byte {
	if !gjson.GetBytes(raw, path).Exists() {
		return raw
	}
	if b, err := sjson.DeleteBytes(raw, path); err == nil {
		return b
	}
	return raw
}

// marshal encodes v without HTML escaping and without a newline.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// field is a member of an ordered object.
type field struct {
	k string
	v any
}

// ordered is a JSON object that keeps its keys in order.
type ordered []field

func (o ordered) MarshalJSON() ([]byte, error) {
	buf := []byte{'{'}
	for i, kv := range o {
		if i > 0 {
			buf = append(buf, ',')
		}
		k, _ := json.Marshal(kv.k)
		v, err := marshal(kv.v)
		if err != nil {
			return nil, err
		}
		buf = append(append(append(buf, k...), ':'), v...)
	}
	return append(buf, '}'), nil
}

func sortedKeys(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }

func remove(ids []string, id string) []string {
	for i, x := range ids {
		if x == id {
			return append(ids[:i:i], ids[i+1:]...)
		}
	}
	return ids
}

func orEmpty(v []any) []any {
	if v == nil {
		return []any{}
	}
	return v
}

func orNull(v any) any {
	if v == nil {
		return "null"
	}
	return v
}

// newUUID returns a random version 4 UUID.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func timestamp() string { return time.Now().UTC().Format("2006-01-02T15:04:05.000Z") }
