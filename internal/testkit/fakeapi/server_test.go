package fakeapi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

type sseEvent struct {
	Name string
	Data map[string]any
}

// readSSE parses an SSE body: "event: NAME\ndata: JSON\n\n" records. It
// fails on anything else, so the format is checked too.
func readSSE(t *testing.T, r io.Reader) []sseEvent {
	t.Helper()
	var out []sseEvent
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	var cur sseEvent
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			cur.Name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &cur.Data); err != nil {
				t.Fatalf("SSE data is not JSON: %v: %q", err, line)
			}
		case line == "":
			if cur.Name == "" || cur.Data == nil {
				t.Fatalf("SSE record without event or data: %+v", cur)
			}
			if cur.Data["type"] != cur.Name {
				t.Fatalf("SSE event %q carries data of type %v", cur.Name, cur.Data["type"])
			}
			out = append(out, cur)
			cur = sseEvent{}
		default:
			t.Fatalf("unexpected SSE line %q", line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func post(t *testing.T, url string, body any) *http.Response {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(url, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func messagesBody(stream bool, prompt string) map[string]any {
	return map[string]any{
		"model": "claude-test", "max_tokens": 100, "stream": stream,
		"system":   []any{map[string]any{"type": "text", "text": "be brief"}},
		"tools":    []any{map[string]any{"name": "mcp__srv__tool", "input_schema": map[string]any{"type": "object"}}},
		"messages": []any{map[string]any{"role": "user", "content": prompt}},
	}
}

func names(evs []sseEvent) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Name)
	}
	return out
}

func TestStreamText(t *testing.T) {
	const text = "Hello there, this reply is long enough to be cut into several deltas. ünïcödé ✓"
	s := Start(t, func(*Request) *Reply { return Say(text) })
	resp := post(t, s.URL()+"/v1/messages?beta=true", messagesBody(true, "hi"))
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d, content-type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	evs := readSSE(t, resp.Body)
	var got strings.Builder
	deltas := 0
	for _, e := range evs {
		if e.Name == "content_block_delta" {
			d := e.Data["delta"].(map[string]any)
			if d["type"] != "text_delta" {
				t.Fatalf("delta type %v", d["type"])
			}
			if !utf8.ValidString(d["text"].(string)) {
				t.Fatalf("delta %q splits a rune", d["text"])
			}
			got.WriteString(d["text"].(string))
			deltas++
		}
	}
	if got.String() != text {
		t.Errorf("deltas join to %q, want %q", got.String(), text)
	}
	if deltas < 3 {
		t.Errorf("%d deltas, want several", deltas)
	}
	seq := names(evs)
	want := []string{"message_start", "ping", "content_block_start"}
	if !reflect.DeepEqual(seq[:3], want) {
		t.Errorf("events start %v, want %v", seq[:3], want)
	}
	if tail := seq[len(seq)-3:]; !reflect.DeepEqual(tail, []string{"content_block_stop", "message_delta", "message_stop"}) {
		t.Errorf("events end %v", tail)
	}
	msg := evs[0].Data["message"].(map[string]any)
	if msg["model"] != "claude-test" || msg["role"] != "assistant" || msg["id"] != "msg_fake_0001" {
		t.Errorf("message_start message = %v", msg)
	}
	md := evs[len(evs)-2].Data
	if md["delta"].(map[string]any)["stop_reason"] != "end_turn" {
		t.Errorf("message_delta = %v", md)
	}
}

func TestStreamToolUseAndThinking(t *testing.T) {
	input := map[string]any{"message": "a long enough message to be split", "n": 3.5, "nested": map[string]any{"list": []any{"x", "y"}}}
	s := Start(t, func(*Request) *Reply {
		return &Reply{Blocks: []Block{Thinking("hmm, let me think about this for a moment"), ToolUse("mcp__srv__tool", input)}}
	})
	evs := readSSE(t, post(t, s.URL()+"/v1/messages", messagesBody(true, "go")).Body)
	var thinking, partial strings.Builder
	var sig string
	var toolStart map[string]any
	for _, e := range evs {
		switch e.Name {
		case "content_block_start":
			if cb := e.Data["content_block"].(map[string]any); cb["type"] == "tool_use" {
				toolStart = cb
				if e.Data["index"].(float64) != 1 {
					t.Errorf("tool_use block index %v, want 1", e.Data["index"])
				}
			}
		case "content_block_delta":
			d := e.Data["delta"].(map[string]any)
			switch d["type"] {
			case "thinking_delta":
				thinking.WriteString(d["thinking"].(string))
			case "signature_delta":
				sig = d["signature"].(string)
			case "input_json_delta":
				partial.WriteString(d["partial_json"].(string))
			default:
				t.Errorf("unexpected delta %v", d)
			}
		case "message_delta":
			if r := e.Data["delta"].(map[string]any)["stop_reason"]; r != "tool_use" {
				t.Errorf("stop_reason %v, want tool_use", r)
			}
		}
	}
	if thinking.String() != "hmm, let me think about this for a moment" || sig == "" {
		t.Errorf("thinking %q signature %q", thinking.String(), sig)
	}
	if toolStart["id"] != "toolu_fake_0001" || toolStart["name"] != "mcp__srv__tool" {
		t.Errorf("tool_use start = %v", toolStart)
	}
	var gotInput map[string]any
	if err := json.Unmarshal([]byte(partial.String()), &gotInput); err != nil {
		t.Fatalf("input_json deltas join to invalid JSON %q: %v", partial.String(), err)
	}
	if !reflect.DeepEqual(gotInput, input) {
		t.Errorf("input = %v, want %v", gotInput, input)
	}
}

func TestNonStreaming(t *testing.T) {
	s := Start(t, func(*Request) *Reply {
		return &Reply{Blocks: []Block{Text("plain"), ToolUse("t", nil)}, StopReason: "max_tokens"}
	})
	resp := post(t, s.URL()+"/v1/messages", messagesBody(false, "x"))
	var msg struct {
		Type       string           `json:"type"`
		Content    []map[string]any `json:"content"`
		StopReason string           `json:"stop_reason"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&msg); err != nil {
		t.Fatal(err)
	}
	if msg.Type != "message" || len(msg.Content) != 2 || msg.Content[0]["text"] != "plain" ||
		msg.Content[1]["name"] != "t" || !reflect.DeepEqual(msg.Content[1]["input"], map[string]any{}) || msg.StopReason != "max_tokens" {
		t.Errorf("message = %+v", msg)
	}
}

func TestCountTokensAndErrors(t *testing.T) {
	s := Start(t, func(r *Request) *Reply {
		switch r.LastUserText() {
		case "overload":
			return Fail(529, "busy")
		case "custom":
			return &Reply{Error: &APIError{Status: 400, Type: "invalid_request_error", Message: "prompt is too long"}}
		case "panic":
			panic("scripted panic")
		case "badinput":
			return CallTool("t", []int{1})
		}
		return nil
	})
	resp := post(t, s.URL()+"/v1/messages/count_tokens", messagesBody(false, "count me"))
	var ct map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&ct); err != nil || resp.StatusCode != 200 || ct["input_tokens"].(float64) < 1 {
		t.Errorf("count_tokens: %d %v %v", resp.StatusCode, ct, err)
	}

	tests := []struct {
		name       string
		path, body string
		status     int
		errType    string
		msgHas     string
	}{
		{"overloaded", "/v1/messages", `{"messages":[{"role":"user","content":"overload"}],"stream":true}`, 529, "overloaded_error", "busy"},
		{"custom type", "/v1/messages", `{"messages":[{"role":"user","content":"custom"}]}`, 400, "invalid_request_error", "too long"},
		{"responder panic", "/v1/messages", `{"messages":[{"role":"user","content":"panic"}]}`, 500, "api_error", "scripted panic"},
		{"tool input not an object", "/v1/messages", `{"messages":[{"role":"user","content":"badinput"}]}`, 500, "api_error", "must be a JSON object"},
		{"invalid JSON", "/v1/messages", `{"messages": [`, 400, "invalid_request_error", "not a Messages API request"},
		{"bad content", "/v1/messages", `{"messages":[{"role":"user","content":42}]}`, 400, "invalid_request_error", "content"},
		{"unknown path", "/v1/complete", `{}`, 404, "not_found_error", "/v1/complete"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := http.Post(s.URL()+tt.path, "application/json", strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var e struct {
				Type  string `json:"type"`
				Error struct{ Type, Message string }
			}
			if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tt.status || e.Type != "error" || e.Error.Type != tt.errType || !strings.Contains(e.Error.Message, tt.msgHas) {
				t.Errorf("got %d %+v, want %d %s containing %q", resp.StatusCode, e, tt.status, tt.errType, tt.msgHas)
			}
		})
	}
}

func TestBodyTooLarge(t *testing.T) {
	s := NewServer(nil, &Options{MaxBodyBytes: 100})
	defer s.Close()
	resp := post(t, s.URL()+"/v1/messages", messagesBody(true, strings.Repeat("x", 200)))
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 413 || !strings.Contains(string(body), "request_too_large") {
		t.Errorf("got %d %s", resp.StatusCode, body)
	}
}

func TestStreamError(t *testing.T) {
	s := Start(t, func(*Request) *Reply {
		return &Reply{Blocks: []Block{Text("partial answer")}, StreamError: &APIError{Status: 529, Message: "Overloaded"}}
	})
	evs := readSSE(t, post(t, s.URL()+"/v1/messages", messagesBody(true, "x")).Body)
	last := evs[len(evs)-1]
	if last.Name != "error" || last.Data["error"].(map[string]any)["type"] != "overloaded_error" {
		t.Errorf("last event %+v", last)
	}
	for _, e := range evs {
		if e.Name == "message_stop" {
			t.Error("message_stop after a stream error")
		}
	}
}

// A request history as the CLI sends it: a prompt (with a system reminder
// block), a tool call, and results, one of them an error with an image.
const historyBody = `{
 "model": "claude-opus-5-5", "stream": true, "max_tokens": 1000,
 "tools": [{"name": "ToolSearch", "input_schema": {"type":"object"}}],
 "messages": [
  {"role": "user", "content": [{"type":"text","text":"<system-reminder>x</system-reminder>"},{"type":"text","text":"please DO-IT now"}]},
  {"role": "assistant", "content": [{"type":"thinking","thinking":"ok","signature":"s"},{"type":"tool_use","id":"toolu_1","name":"mcp__srv__a","input":{"k":1}},{"type":"tool_use","id":"toolu_2","name":"mcp__srv__b","input":{}}]},
  {"role": "user", "content": [
    {"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"first"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAAA"}},{"type":"text","text":"second"}]},
    {"type":"tool_result","tool_use_id":"toolu_2","content":"it broke","is_error":true}
  ]}
 ]
}`

func TestRequestParsing(t *testing.T) {
	r := &Request{Body: []byte(historyBody)}
	r.parseBody()
	if r.ParseErr != nil {
		t.Fatal(r.ParseErr)
	}
	if got := r.Prompt(); !strings.Contains(got, "please DO-IT now") {
		t.Errorf("Prompt() = %q", got)
	}
	if r.Step() != 1 {
		t.Errorf("Step() = %d, want 1", r.Step())
	}
	if r.LastUserText() != "" {
		t.Errorf("LastUserText() = %q, want empty (only tool results)", r.LastUserText())
	}
	if !r.HasTools() || !r.OffersTool("ToolSearch") || r.OffersTool("mcp__srv__a") {
		t.Errorf("tools %v", r.ToolNames())
	}
	got := r.ToolResults()
	if len(got) != 2 {
		t.Fatalf("%d tool results", len(got))
	}
	if got[0].ToolName != "mcp__srv__a" || got[0].Text != "first\nsecond" || got[0].Images() != 1 || got[0].IsError {
		t.Errorf("result 0 = %+v", got[0])
	}
	if got[1].ToolName != "mcp__srv__b" || got[1].Text != "it broke" || !got[1].IsError {
		t.Errorf("result 1 = %+v", got[1])
	}
	rep := Summarize(r, got)
	want := "Got 2 tool result(s).\n- mcp__srv__a (ok): 2 text part(s), 1 image(s), 12 bytes of text, starting \"first\\nsecond\"\n- mcp__srv__b (error): 1 text part(s), 0 image(s), 8 bytes of text, starting \"it broke\""
	if rep.Blocks[0].Text != want {
		t.Errorf("Summarize:\n got %q\nwant %q", rep.Blocks[0].Text, want)
	}
}

func TestResponders(t *testing.T) {
	parse := func(body string) *Request {
		r := &Request{Body: []byte(body)}
		r.parseBody()
		if r.ParseErr != nil {
			t.Fatal(r.ParseErr)
		}
		return r
	}
	history := parse(historyBody)
	fresh := parse(`{"tools":[{"name":"x"}],"messages":[{"role":"user","content":"DO-IT"}]}`)
	noTools := parse(`{"messages":[{"role":"user","content":"DO-IT: generate a title"}]}`)

	step0, step1 := CallTool("mcp__srv__a", nil), Say("after a")
	r := First(OnText("DO-IT", step0, step1), OnToolResults(Summarize))
	if r(fresh) != step0 || r(history) != step1 {
		t.Error("OnText does not answer the steps in order")
	}
	if r(noTools) != nil {
		t.Error("OnText answered a side request without tools")
	}
	if got := First(OnText("DO-IT", step0), OnToolResults(Summarize))(history); got == nil || !strings.HasPrefix(got.Blocks[0].Text, "Got 2") {
		t.Errorf("after the steps, OnToolResults should answer; got %+v", got)
	}
	if OnText("OTHER", step0)(fresh) != nil {
		t.Error("OnText matched a prompt without its keyword")
	}

	a, b := Say("a"), Say("b")
	seq := Sequence(a, b)
	if seq(noTools) != nil || seq(fresh) != a || seq(noTools) != nil || seq(history) != b || seq(fresh) != nil {
		t.Error("Sequence must answer tool-offering requests in order, then fall through")
	}
	if Match(func(r *Request) bool { return r.Model == "claude-opus-5-5" }, a)(history) != a {
		t.Error("Match")
	}
}

func TestFallbackAndRecord(t *testing.T) {
	s := NewServer(nil, &Options{MaxRequests: 3})
	defer s.Close()
	for i := range 5 {
		evs := readSSE(t, post(t, s.URL()+"/v1/messages", messagesBody(true, fmt.Sprint("n", i))).Body)
		var text strings.Builder
		for _, e := range evs {
			if e.Name == "content_block_delta" {
				text.WriteString(e.Data["delta"].(map[string]any)["text"].(string))
			}
		}
		if text.String() != "OK." {
			t.Fatalf("fallback text %q", text.String())
		}
	}
	reqs := s.Requests()
	if len(reqs) != 3 || s.Dropped() != 2 || reqs[0].Seq != 3 || reqs[2].LastUserText() != "n4" {
		t.Fatalf("record: %d kept, %d dropped, first seq %d", len(reqs), s.Dropped(), reqs[0].Seq)
	}
	if reqs[2].Header.Get("Content-Type") != "application/json" || reqs[2].System != "be brief" || reqs[2].Model != "claude-test" {
		t.Errorf("recorded request %+v", reqs[2])
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	go func() {
		resp, err := http.Post(s.URL()+"/v1/messages", "application/json",
			strings.NewReader(`{"stream":true,"messages":[{"role":"user","content":"later"}]}`))
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	r, err := s.WaitFor(ctx, func(r *Request) bool { return r.LastUserText() == "later" })
	if err != nil || r.Seq != 6 {
		t.Fatalf("WaitFor: %v %v", r, err)
	}
	short, cancel2 := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel2()
	if _, err := s.WaitFor(short, func(*Request) bool { return false }); err == nil {
		t.Error("WaitFor without a match returned no error")
	}
}

func TestHeadersRedacted(t *testing.T) {
	s := Start(t, nil)
	req, _ := http.NewRequest("POST", s.URL()+"/v1/messages", strings.NewReader(`{"messages":[]}`))
	req.Header.Set("X-Api-Key", "sk-secret")
	req.Header.Set("Authorization", "Bearer sk-secret")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for _, r := range s.Requests() {
		for k, v := range r.Header {
			if strings.Contains(strings.Join(v, ","), "sk-secret") {
				t.Errorf("header %s kept the secret", k)
			}
		}
	}
}

func TestWaitAndCancel(t *testing.T) {
	gate := make(chan struct{})
	s := Start(t, func(*Request) *Reply { return &Reply{Blocks: []Block{Text("after the gate")}, Wait: gate} })
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", s.URL()+"/v1/messages", strings.NewReader(`{"stream":true,"messages":[{"role":"user","content":"x"}]}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(resp.Body)
	line, err := br.ReadString('\n')
	if err != nil || line != "event: message_start\n" {
		t.Fatalf("first line %q %v", line, err)
	}
	// The stream is held at the gate; the client goes away; Close (in
	// Cleanup) must not hang on the held handler.
	cancel()
	resp.Body.Close()

	// A second request with a closed gate streams through.
	close(gate)
	evs := readSSE(t, post(t, s.URL()+"/v1/messages", messagesBody(true, "y")).Body)
	if names(evs)[len(evs)-1] != "message_stop" {
		t.Errorf("events %v", names(evs))
	}
}

func TestChunkDelay(t *testing.T) {
	const delay = 5 * time.Millisecond
	s := Start(t, func(*Request) *Reply {
		return &Reply{Blocks: []Block{Text("one two three four")}, ChunkDelay: delay}
	})
	start := time.Now()
	evs := readSSE(t, post(t, s.URL()+"/v1/messages", messagesBody(true, "x")).Body)
	// The delay is slept between events, so it bounds the time from below.
	if min := time.Duration(len(evs)-1) * delay; time.Since(start) < min {
		t.Errorf("%d events in %v, want at least %v", len(evs), time.Since(start), min)
	}
}

func TestChunk(t *testing.T) {
	for _, s := range []string{"", "a", "ab", "abc", "hello world", "ünï", strings.Repeat("word ", 50), "👩‍👩‍👧‍👦 family", strings.Repeat("x", 1000)} {
		parts := chunk(s, 16)
		if strings.Join(parts, "") != s {
			t.Errorf("chunk(%q) = %q does not join back", s, parts)
		}
		for _, p := range parts {
			if !utf8.ValidString(p) || p == "" || utf8.RuneCountInString(p) > 16 {
				t.Errorf("chunk(%q): bad piece %q", s, p)
			}
		}
		if n := utf8.RuneCountInString(s); n >= 3 && len(parts) < 3 {
			t.Errorf("chunk(%q) = %d pieces, want at least 3", s, len(parts))
		}
	}
}

func TestEnv(t *testing.T) {
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "leak")
	t.Setenv("CLAUDE_CONFIG_DIR", "/leak")
	s := Start(t, nil)
	env := strings.Join(s.Env("/h"), "\n") + "\n"
	for _, want := range []string{"HOME=/h\n", "ANTHROPIC_BASE_URL=" + s.URL() + "\n", "ANTHROPIC_API_KEY=sk-test\n",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1\n", "CLAUDE_CODE_MAX_RETRIES=0\n", "CLAUDE_CODE_TMPDIR=/h/tmp\n"} {
		if !strings.Contains(env, want) {
			t.Errorf("Env lacks %q", want)
		}
	}
	if strings.Contains(env, "leak") {
		t.Error("Env passes on the caller's Anthropic/Claude settings")
	}
}
