package acp_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/tidwall/gjson"

	"github.com/ccproxy/ccproxy/acp"
	"github.com/ccproxy/ccproxy/internal/testkit"
	"github.com/ccproxy/ccproxy/internal/testkit/fakeapi"
	"github.com/ccproxy/ccproxy/proxy"
)

// wire records, in the order the agent writes them, what the editor is
// told: "answer <sessionId>" (session/new's answer), "<sessionId> <kind>"
// (a session/update), "stop <reason>" (a prompt's answer).
type wire struct {
	mu   sync.Mutex
	cond *sync.Cond
	seen []string
	cmds map[string][]string // the last available_commands_update's names, by session
}

func watchWire(cl *goClient) *wire {
	w := &wire{cmds: map[string][]string{}}
	w.cond = sync.NewCond(&w.mu)
	cl.mu.Lock()
	cl.onSend = w.note
	cl.mu.Unlock()
	return w
}

func (w *wire) note(msg []byte) {
	m := gjson.ParseBytes(msg)
	var what string
	switch {
	case m.Get("result.sessionId").Exists():
		what = "answer " + m.Get("result.sessionId").Str
	case m.Get("result.stopReason").Exists():
		what = "stop " + m.Get("result.stopReason").Str
	case m.Get("method").Str == "session/update":
		kind := m.Get("params.update.sessionUpdate").Str
		id := m.Get("params.sessionId").Str
		what = id + " " + kind
		if kind == "config_option_update" && m.Get(`params.update.configOptions.#(id=="model")`).Exists() {
			what += " model"
		}
		if kind == "available_commands_update" {
			var names []string
			for _, c := range m.Get("params.update.availableCommands").Array() {
				names = append(names, c.Get("name").Str)
			}
			w.mu.Lock()
			w.cmds[id] = names
			w.mu.Unlock()
		}
	default:
		return
	}
	w.mu.Lock()
	w.seen = append(w.seen, what)
	w.cond.Broadcast()
	w.mu.Unlock()
}

// index is where what was seen first (-1: not yet).
func (w *wire) index(what string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Index(w.seen, what)
}

// wait waits until what has been seen (bounded: a failure after 60 s).
func (w *wire) wait(t *testing.T, what string) int {
	t.Helper()
	stop := time.AfterFunc(60*time.Second, func() { w.mu.Lock(); w.cond.Broadcast(); w.mu.Unlock() })
	defer stop.Stop()
	deadline := time.Now().Add(60 * time.Second)
	w.mu.Lock()
	defer w.mu.Unlock()
	for {
		if i := slices.Index(w.seen, what); i >= 0 {
			return i
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %q: seen %q", what, w.seen)
		}
		w.cond.Wait()
	}
}

// `ccproxy acp` with the real CLI (an in-process proxy and agent): claude
// starts at session/new, which answers at once; its slash commands (the
// project's own among them) and the model option come right after the
// answer, before any prompt. A prompt sent at once and cancelled while
// claude is still starting answers cancelled before claude is ready (its
// commands come later), claude never asks the API for it, and the
// session then takes the next prompt.
func TestAgentRealCLIReadyAtNewSession(t *testing.T) {
	t.Parallel()
	claude := testkit.Claude(t)
	api := fakeapi.Start(t, fakeapi.First(
		fakeapi.OnText("HELLO", &fakeapi.Reply{Blocks: []fakeapi.Block{fakeapi.Text("Hello from the fake API.")}}),
	))
	home, project := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(home, "tmp"), 0o755)
	os.MkdirAll(filepath.Join(project, ".claude", "commands"), 0o755)
	if err := os.WriteFile(filepath.Join(project, ".claude", "commands", "mycmd.md"), []byte("---\ndescription: my command\nargument-hint: [what]\n---\nDo $ARGUMENTS\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	marker := "CCPROXY_TEST_MARKER=acp-start-" + strings.ReplaceAll(time.Now().Format("150405.000000000"), ".", "")
	opts := proxy.Options{Project: project, CLIOptions: proxy.CLIOptions{ClaudePath: claude, ClaudeEnv: append(api.Env(home), marker)}}
	sends := make(chan sdk.SessionId, 8) // a prompt of the session is about to send its turn
	cl, conn, _, _, stop := inProcessWith(t, nil, opts, slog.New(slog.DiscardHandler), func(a *acp.Agent) {
		a.SetHook(func(ev string, id sdk.SessionId) {
			if ev == "send" {
				sends <- id
			}
		})
	})
	defer func() {
		stop()
		if left := testkit.WaitGone(marker, 5*time.Second); len(left) > 0 {
			t.Errorf("processes left running: %v", left)
		}
	}()
	w := watchWire(cl)
	initialize(t, conn)
	bg := context.Background()

	// Before any prompt.
	a, err := conn.NewSession(bg, sdk.NewSessionRequest{Cwd: project, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	id := string(a.SessionId)
	answered := w.wait(t, "answer "+id)
	cmds := w.wait(t, id+" available_commands_update")
	hasModel := slices.ContainsFunc(a.ConfigOptions, func(o sdk.SessionConfigOption) bool { return o.Select != nil && o.Select.Id == "model" })
	if !hasModel {
		w.wait(t, id+" config_option_update model")
	}
	if first := slices.IndexFunc(w.seen, func(s string) bool { return strings.HasPrefix(s, id+" ") }); first < answered {
		t.Errorf("an update of the session came before session/new's answer: %q", w.seen)
	}
	w.mu.Lock()
	names := w.cmds[id]
	w.mu.Unlock()
	if !slices.Contains(names, "mycmd") || !slices.Contains(names, "compact") {
		t.Errorf("available_commands_update (#%d) before the first prompt: %q, want mycmd and compact among them", cmds, names)
	}
	if r, err := conn.Prompt(bg, sdk.PromptRequest{SessionId: a.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("Say HELLO")}}); err != nil || r.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("the first prompt: %+v %v", r, err)
	}

	// A prompt cancelled while claude starts.
	b, err := conn.NewSession(bg, sdk.NewSessionRequest{Cwd: project, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	bid := string(b.SessionId)
	answer := promptAsync(conn, b.SessionId, "Say HELLO early")
	for id := range sends { // the prompt took its turn: a cancel now is for it
		if id == b.SessionId {
			break
		}
	}
	if err := conn.Cancel(bg, sdk.CancelNotification{SessionId: b.SessionId}); err != nil {
		t.Fatal(err)
	}
	if got := <-answer; got.err != nil || got.r.StopReason != sdk.StopReasonCancelled {
		t.Fatalf("the prompt cancelled while claude starts: %+v %v, want cancelled", got.r, got.err)
	}
	cancelledAt := w.wait(t, "stop cancelled")
	readyAt := w.wait(t, bid+" available_commands_update")
	if cancelledAt > readyAt {
		t.Errorf("the cancelled prompt answered only after claude was ready (its commands came first): %q", w.seen)
	}
	r, err := conn.Prompt(bg, sdk.PromptRequest{SessionId: b.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("Say HELLO again")}})
	if err != nil || r.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("the prompt after the cancel: %+v %v", r, err)
	}
	for _, req := range api.MessageRequests() {
		b, _ := json.Marshal(req.Messages)
		if strings.Contains(string(b), "HELLO early") {
			t.Errorf("claude asked the API for the cancelled prompt")
		}
	}
}
