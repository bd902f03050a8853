package fakeapi_test

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccproxy/ccproxy/internal/testkit"
	"github.com/ccproxy/ccproxy/internal/testkit/fakeapi"
)

// runClaude runs `claude -p` with prompt on stdin against s, in its own
// process group (killed at the end), and returns its stdout events and exit
// code.
func runClaude(t *testing.T, s *fakeapi.Server, prompt string, extra ...string) ([]map[string]any, int) {
	t.Helper()
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	stdout, _, err := testkit.ClaudePrint(t, t.TempDir(), s.Env(home), prompt, extra...)
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("running claude: %v", err)
	}
	var events []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("stdout line is not JSON: %v: %.200q", err, line)
		}
		events = append(events, ev)
	}
	return events, code
}

func lastResult(t *testing.T, events []map[string]any) map[string]any {
	t.Helper()
	for i := len(events) - 1; i >= 0; i-- {
		if events[i]["type"] == "result" {
			return events[i]
		}
	}
	t.Fatalf("no result event in %d events", len(events))
	return nil
}

// The real CLI, one turn: the result text is the scripted text, the partial
// messages rebuild it from several deltas, and the fake saw the request.
func TestRealCLIOneTurn(t *testing.T) {
	const answer = "Scripted answer from the fake API, streamed in several pieces."
	s := fakeapi.Start(t, fakeapi.First(
		fakeapi.OnText("PING-42", &fakeapi.Reply{Blocks: []fakeapi.Block{
			fakeapi.Thinking("the user pinged; answer with the script"), fakeapi.Text(answer)}}),
	))
	events, code := runClaude(t, s, "please answer PING-42", "--include-partial-messages")
	if code != 0 {
		t.Fatalf("exit code %d", code)
	}
	res := lastResult(t, events)
	if res["result"] != answer || res["is_error"] != false || res["subtype"] != "success" {
		t.Errorf("result = %v / %v / %v, want %q", res["subtype"], res["is_error"], res["result"], answer)
	}
	var deltas []string
	thinking := false
	for _, ev := range events {
		if ev["type"] != "stream_event" {
			continue
		}
		e := ev["event"].(map[string]any)
		if e["type"] == "content_block_delta" {
			d := e["delta"].(map[string]any)
			switch d["type"] {
			case "text_delta":
				deltas = append(deltas, d["text"].(string))
			case "thinking_delta":
				thinking = true
			}
		}
	}
	if strings.Join(deltas, "") != answer || len(deltas) < 3 {
		t.Errorf("text deltas %q do not rebuild the answer in several pieces", deltas)
	}
	if !thinking {
		t.Error("no thinking_delta reached the CLI's stream")
	}

	reqs := s.MessageRequests()
	if len(reqs) == 0 {
		t.Fatal("the fake API saw no Messages request")
	}
	first := reqs[0]
	if !strings.Contains(first.Prompt(), "please answer PING-42") || !first.Stream || first.Model == "" {
		t.Errorf("first request: prompt %q stream %v model %q", first.Prompt(), first.Stream, first.Model)
	}
	if first.RawQuery != "beta=true" || first.Header.Get("Anthropic-Version") == "" || first.Header.Get("X-Api-Key") != "REDACTED" {
		t.Errorf("first request: query %q headers %v", first.RawQuery, first.Header)
	}
	for _, r := range s.Requests() {
		if r.Kind == fakeapi.KindOther {
			t.Errorf("the CLI asked for %s %s, which the fake does not serve", r.Method, r.Path)
		}
	}
}

// An API error reaches the CLI as an error result, without retries.
func TestRealCLIAPIError(t *testing.T) {
	s := fakeapi.Start(t, func(*fakeapi.Request) *fakeapi.Reply { return fakeapi.Fail(529, "fake overload") })
	events, code := runClaude(t, s, "hello")
	res := lastResult(t, events)
	if res["is_error"] != true || !strings.Contains(res["result"].(string), "fake overload") {
		t.Errorf("result = %v", res)
	}
	if code == 0 {
		t.Error("exit code 0 after an API error")
	}
	if n := len(s.MessageRequests()); n != 1 {
		t.Errorf("%d Messages requests, want 1 (CLAUDE_CODE_MAX_RETRIES=0)", n)
	}
}
