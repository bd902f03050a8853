package proxy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ccproxy/ccproxy/internal/testkit"
	"github.com/ccproxy/ccproxy/internal/testkit/fakeapi"
	"github.com/ccproxy/ccproxy/protocol"
)

// rewindE2E is a proxy running the real CLI (no MCP servers) in a project
// with b.txt, against a fake API that has claude Write a.txt (WRITE) and
// Edit a.txt and b.txt (EDIT).
type rewindE2E struct {
	*testServer
	api        *fakeapi.Server
	proj       string
	aPath      string
	bPath      string
	createData map[string]any
}

func startRewindE2E(t *testing.T) *rewindE2E {
	t.Helper()
	claude := testkit.Claude(t)
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	proj, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e := &rewindE2E{proj: proj, aPath: filepath.Join(proj, "a.txt"), bPath: filepath.Join(proj, "b.txt")}
	writeFile(t, e.bPath, "bee original\n")
	e.api = fakeapi.NewServer(fakeapi.First(
		fakeapi.OnText("WRITE", fakeapi.CallTool("Write", map[string]any{"file_path": e.aPath, "content": "version one\n"}), fakeapi.Say("wrote")),
		fakeapi.OnText("EDIT", fakeapi.CallTools(
			fakeapi.ToolUse("Read", map[string]any{"file_path": e.bPath})), fakeapi.CallTools(
			fakeapi.ToolUse("Edit", map[string]any{"file_path": e.aPath, "old_string": "one", "new_string": "two"}),
			fakeapi.ToolUse("Edit", map[string]any{"file_path": e.bPath, "old_string": "original", "new_string": "changed"})), fakeapi.Say("edited")),
		fakeapi.OnToolResults(fakeapi.Summarize),
	), nil)
	t.Cleanup(e.api.Close)
	opts := Options{Project: proj}
	opts.ClaudePath, opts.ClaudeEnv = claude, e.api.Env(home)
	e.testServer = startServer(t, opts)
	e.createData = map[string]any{"cwd": proj, "permissionMode": protocol.PermissionModeAcceptEdits}
	return e
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// fileText is the file's text, or "<none>" when it does not exist.
func fileText(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return "<none>"
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// promptUUID is the uuid of the user message a turn's events echo (the
// prompt, not a tool result).
func promptUUID(t *testing.T, evs []protocol.SessionEvent) string {
	t.Helper()
	for _, ev := range evs {
		var u struct {
			Type    string `json:"type"`
			UUID    string `json:"uuid"`
			Message struct {
				Content json.RawMessage `json:"content"`
			} `json:"message"`
		}
		mustUnmarshal(t, ev.Event, &u)
		if u.Type == "user" && strings.HasPrefix(string(u.Message.Content), `"`) && u.UUID != "" {
			return u.UUID
		}
	}
	t.Fatal("no user message echoed in the turn")
	return ""
}

// assistantUUID is the uuid of the turn's first assistant event.
func assistantUUID(t *testing.T, evs []protocol.SessionEvent) string {
	t.Helper()
	for _, ev := range evs {
		if eventType(ev) == "assistant" {
			return evField(t, ev.Event, "uuid")
		}
	}
	t.Fatal("no assistant event in the turn")
	return ""
}

// apiTexts are the user and assistant texts of the API request that
// carried prompt.
func apiTexts(t *testing.T, api *fakeapi.Server, prompt string) []string {
	t.Helper()
	var req *fakeapi.Request
	for _, r := range api.MessageRequests() {
		if r.HasTools() && strings.Contains(r.Prompt(), prompt) {
			req = r
		}
	}
	if req == nil {
		t.Fatalf("no API request with the prompt %q", prompt)
	}
	var out []string
	for _, m := range req.Messages {
		for _, b := range m.Content {
			if b.Type == "text" && m.Role != "system" && !strings.HasPrefix(b.Text, "<system-reminder>") {
				out = append(out, m.Role+": "+b.Text)
			}
		}
	}
	return out
}

func containsText(texts []string, s string) bool {
	return slices.ContainsFunc(texts, func(x string) bool { return strings.Contains(x, s) })
}

// The real CLI: three turns (a Write, two Edits, nothing); session/state
// then carries the usage the result events reported; a dry run lists the
// files changed since the second message and changes nothing; a rewind to
// it without files leaves the files, and the next turn's API request lacks
// the rewound turns; a rewind with files to the first message restores the
// files (a.txt, which claude created, is gone) and the next request has
// no earlier turn. Bad targets are refused.
func TestE2ERewind(t *testing.T) {
	t.Parallel()
	e := startRewindE2E(t)
	c := e.dial(t)
	s := c.create(e.createData)
	ev1 := c.turn(s, "WRITE please")
	u1 := promptUUID(t, ev1)
	ev2 := c.turn(s, "EDIT please")
	u2 := promptUUID(t, ev2)
	ev3 := c.turn(s, "THIRD say hi")
	if got := fileText(t, e.aPath) + fileText(t, e.bPath); got != "version two\nbee changed\n" {
		t.Fatalf("files after the turns: %q", got)
	}

	// Usage: the sum of the results' usage, the last turn's, the context.
	var want protocol.TokenUsage
	var lastCost float64
	for _, evs := range [][]protocol.SessionEvent{ev1, ev2, ev3} {
		r := resultOf(t, evs)
		u := r["usage"].(map[string]any)
		want.InputTokens += int64(u["input_tokens"].(float64))
		want.OutputTokens += int64(u["output_tokens"].(float64))
		lastCost = r["total_cost_usd"].(float64)
	}
	from := 0
	var st protocol.SessionState
	c.waitPush(from, protocol.TypeSessionState, &st, func(raw json.RawMessage) bool {
		var x protocol.SessionState
		return json.Unmarshal(raw, &x) == nil && x.Usage != nil && x.Usage.Turns == 3 && x.Usage.ContextTokens > 0
	})
	u := st.Usage
	if u.Total.InputTokens != want.InputTokens || u.Total.OutputTokens != want.OutputTokens || want.InputTokens == 0 {
		t.Errorf("usage total %+v, want the results' input %d output %d", u.Total, want.InputTokens, want.OutputTokens)
	}
	if u.LastTurn == nil || u.LastTurn.InputTokens != int64(resultOf(t, ev3)["usage"].(map[string]any)["input_tokens"].(float64)) {
		t.Errorf("usage lastTurn %+v", u.LastTurn)
	}
	if d := u.Total.CostUSD - lastCost; d > 1e-9 || d < -1e-9 || u.ContextWindow <= 0 || u.ContextTokens >= u.ContextWindow {
		t.Errorf("usage %+v: cost want %v (claude's total), a context window", u, lastCost)
	}
	var sub protocol.SessionSubscribeResult
	mustUnmarshal(t, e.dial(t).do(protocol.TypeSessionSubscribe, map[string]any{"session": s}), &sub)
	if sub.Usage == nil || sub.Usage.Turns != 3 {
		t.Errorf("session/subscribe reply usage %+v", sub.Usage)
	}

	// Refused: an assistant message, an unknown uuid.
	if err := c.doErr(protocol.TypeSessionRewind, map[string]any{"session": s, "to": assistantUUID(t, ev2)}); err == nil || err.Code != protocol.CodeBadRequest || !strings.Contains(err.Message, "to") {
		t.Errorf("rewind to an assistant message: %v", err)
	}
	if err := c.doErr(protocol.TypeSessionRewind, map[string]any{"session": s, "to": "00000000-0000-4000-8000-000000000000"}); err == nil || err.Code != protocol.CodeNotFound {
		t.Errorf("rewind to an unknown message: %v", err)
	}

	// A dry run lists the files and changes nothing.
	var dry protocol.SessionRewindResult
	mustUnmarshal(t, c.do(protocol.TypeSessionRewind, map[string]any{"session": s, "to": u2, "files": true, "dryRun": true}), &dry)
	slices.Sort(dry.Files)
	if !slices.Equal(dry.Files, []string{e.aPath, e.bPath}) || dry.Rewound || dry.FilesError != "" {
		t.Errorf("dry run %+v, want a.txt and b.txt", dry)
	}
	if got := fileText(t, e.aPath) + fileText(t, e.bPath); got != "version two\nbee changed\n" {
		t.Fatalf("files after the dry run: %q", got)
	}

	// Rewind to u2 without files.
	from = c.count()
	var res protocol.SessionRewindResult
	mustUnmarshal(t, c.do(protocol.TypeSessionRewind, map[string]any{"session": s, "to": u2}), &res)
	if !res.Rewound || len(res.Files) != 0 || res.ClaudeSessionID == "" {
		t.Errorf("rewind %+v", res)
	}
	c.waitEvent(from, s, "the rewound event", func(ev protocol.SessionEvent) bool {
		return eventType(ev) == "ccproxy/rewound" && evField(t, ev.Event, "to") == u2
	})
	c.waitState(from, protocol.StateIdle)
	if got := fileText(t, e.aPath) + fileText(t, e.bPath); got != "version two\nbee changed\n" {
		t.Errorf("files after a rewind without files: %q", got)
	}
	c.turn(s, "FOURTH say bye")
	texts := apiTexts(t, e.api, "FOURTH")
	if !containsText(texts, "WRITE please") || containsText(texts, "EDIT please") || containsText(texts, "THIRD") {
		t.Errorf("the API request after the rewind: %q, want WRITE's turn only", texts)
	}
	// The stored conversation, as history/read gives it, is the one claude
	// continues: the turns the rewind left behind in the file (which the
	// CLI only appends to: docs/CLI-NOTES.md) are not shown.
	if got := historyPrompts(t, c, res.ClaudeSessionID); !slices.Equal(got, []string{"WRITE please", "FOURTH say bye"}) {
		t.Errorf("history/read after the rewind: prompts %q, want WRITE's and FOURTH's (EDIT's and THIRD's rewound away)", got)
	}

	// Rewind with files to the first message: files as they were before
	// it, no turn left. (The CLI writes records before the first user
	// message, so it has a parent: the conversation resumes there.)
	from = c.count()
	mustUnmarshal(t, c.do(protocol.TypeSessionRewind, map[string]any{"session": s, "to": u1, "files": true}), &res)
	slices.Sort(res.Files)
	if !res.Rewound || !slices.Equal(res.Files, []string{e.aPath, e.bPath}) {
		t.Errorf("rewind with files %+v", res)
	}
	c.waitState(from, protocol.StateIdle)
	if got := fileText(t, e.aPath) + "|" + fileText(t, e.bPath); got != "<none>|bee original\n" {
		t.Errorf("files after a rewind with files: %q, want a.txt gone and b.txt original", got)
	}
	c.turn(s, "FIFTH say hello")
	texts = apiTexts(t, e.api, "FIFTH")
	if containsText(texts, "WRITE please") || containsText(texts, "FOURTH") {
		t.Errorf("the API request after the rewind to the first message: %q", texts)
	}
}

// historyPrompts returns the text of the user prompts history/read gives
// for Claude session id.
func historyPrompts(t *testing.T, c *wsClient, id string) []string {
	t.Helper()
	evs, _ := readHistory(t, c, map[string]any{"id": id})
	var prompts []string
	for _, ev := range evs {
		var m struct {
			Type    string `json:"type"`
			Message struct {
				Content json.RawMessage `json:"content"`
			} `json:"message"`
		}
		mustUnmarshal(t, ev.Event, &m)
		var text string
		if m.Type == "user" && json.Unmarshal(m.Message.Content, &text) == nil {
			prompts = append(prompts, text)
		}
	}
	return prompts
}
