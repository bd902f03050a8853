package acp_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/tidwall/gjson"

	"github.com/ccproxy/ccproxy/proxy"
)

// msgSignal is a log handler that closes ch at the first record whose
// message is msg.
type msgSignal struct {
	msg  string
	once sync.Once
	ch   chan struct{}
}

func (h *msgSignal) Enabled(context.Context, slog.Level) bool { return true }
func (h *msgSignal) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *msgSignal) WithGroup(string) slog.Handler            { return h }

func (h *msgSignal) Handle(_ context.Context, r slog.Record) error {
	if r.Message == h.msg {
		h.once.Do(func() { close(h.ch) })
	}
	return nil
}

// session/cancel whose interrupt claude does not take (the fake ignores
// the first): the prompt answers cancelled all the same, as ACP asks. The
// turn runs on, and until it ends the session refuses prompts, saying why
// (the turn's result must not be taken for the next prompt's). A second
// session/cancel interrupts it; then the next prompt runs and ends with
// its own result.
func TestAgentCancelWhenTheInterruptFails(t *testing.T) {
	ended := &msgSignal{msg: "the turn whose interrupt failed has ended", ch: make(chan struct{})}
	cl, conn, ns, stop := withFake(t, proxy.Options{CLIOptions: proxy.CLIOptions{ClaudeEnv: append(os.Environ(), "FAKE_IGNORE_CONTROL=interrupt:1"), ControlTimeout: 2 * time.Second}}, slog.New(ended))
	defer stop()
	bg := context.Background()
	for _, m := range ns.Modes.AvailableModes {
		if m.Id == "bypassPermissions" { // claude takes it only when launched in it
			t.Errorf("session/new offers the mode %s, which cannot be set", m.Id)
		}
	}
	prompt := func(text string) (sdk.PromptResponse, error) {
		return conn.Prompt(bg, sdk.PromptRequest{SessionId: ns.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock(text)}})
	}
	working := make(chan struct{})
	var once sync.Once
	cl.mu.Lock()
	cl.onSend = func(msg []byte) {
		if strings.Contains(string(msg), "working on it") {
			once.Do(func() { close(working) })
		}
	}
	cl.mu.Unlock()
	first := promptAsync(conn, ns.SessionId, "hang")
	<-working // the turn runs
	if err := conn.Cancel(bg, sdk.CancelNotification{SessionId: ns.SessionId}); err != nil {
		t.Fatal(err)
	}
	if a := <-first; a.err != nil || a.r.StopReason != sdk.StopReasonCancelled {
		t.Fatalf("the cancelled prompt whose interrupt failed answered %+v, %v; want cancelled", a.r, a.err)
	}
	if _, err := prompt("too soon"); err == nil || !strings.Contains(err.Error(), "has not ended") {
		t.Errorf("a prompt while the cancelled turn runs on: %v, want refused as the turn has not ended", err)
	}
	if err := conn.Cancel(bg, sdk.CancelNotification{SessionId: ns.SessionId}); err != nil {
		t.Fatal(err)
	}
	<-ended.ch // the second interrupt was taken, and the turn's result came
	cl.mu.Lock()
	cl.updates = nil
	cl.mu.Unlock()
	if r, err := prompt("hello there"); err != nil || r.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("the prompt after the turn ended answered %+v, %v; want end_turn", r, err)
	}
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if text := cl.agentText(); !strings.Contains(text, "echo: hello there") {
		t.Errorf("the prompt after the turn ended: its text %q, want the fake's echo of it", text)
	}
}

// A session/cancel the editor writes right after its session/prompt
// cancels that prompt: the SDK runs the prompt in a goroutine of its own
// but the cancel in order, so the agent's guard holds the cancel until the
// prompt has reached the agent. Ten times over, each turn one that only
// an interrupt ends (the fake's "hang"): a lost cancel would leave it
// running.
func TestAgentCancelRightAfterPrompt(t *testing.T) {
	cl, _, ns, stop := withFake(t, proxy.Options{}, slog.New(slog.DiscardHandler))
	defer stop()
	answers := make(chan string, 1)
	var want atomic.Int64
	cl.mu.Lock()
	cl.onSend = func(msg []byte) {
		if gjson.GetBytes(msg, "id").Int() == want.Load() && !gjson.GetBytes(msg, "method").Exists() {
			answers <- gjson.GetBytes(msg, "result.stopReason").Str + gjson.GetBytes(msg, "error.message").Str
		}
	}
	cl.mu.Unlock()
	for i := range 10 {
		id := int64(9000 + i)
		want.Store(id)
		lines := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"hang"}]}}`+"\n"+
			`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":%q}}`+"\n", id, ns.SessionId, ns.SessionId)
		if _, err := cl.raw.Write([]byte(lines)); err != nil { // one write: prompt, then cancel
			t.Fatal(err)
		}
		if got := <-answers; got != string(sdk.StopReasonCancelled) {
			t.Fatalf("prompt %d, cancelled at once: answered %q, want cancelled", i+1, got)
		}
	}
}

// AskUserQuestion with two questions asks the editor once per question, in
// order (an ACP permission request has one list of options), and claude
// gets both answers.
func TestAgentAsksEveryQuestion(t *testing.T) {
	cl, conn, ns, stop := withFake(t, proxy.Options{}, slog.New(slog.DiscardHandler))
	defer stop()
	bg := context.Background()
	cl.mu.Lock()
	cl.answer = "answer-1" // Blue, then M
	cl.mu.Unlock()
	if r, err := conn.Prompt(bg, sdk.PromptRequest{SessionId: ns.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("questions")}}); err != nil || r.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt: %+v %v", r, err)
	}
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if want := []string{"Question 1 of 2: Which colour?", "Question 2 of 2: Which size?"}; !slices.Equal(cl.titles, want) {
		t.Errorf("the editor was asked %q, want %q", cl.titles, want)
	}
	if s := cl.agentText(); !strings.Contains(s, `"Which colour?":"Blue"`) || !strings.Contains(s, `"Which size?":"M"`) {
		t.Errorf("claude got %s, want both answers", s)
	}
}

// After a prompt replaced a running turn, session/cancel still cancels the
// new prompt (the SDK forgets the newer prompt's context when the older
// returns: the agent counts prompts itself), and session/close while a
// replacing prompt waits or runs answers every prompt cancelled.
func TestAgentReplaceThenCancelOrClose(t *testing.T) {
	t.Parallel()
	for _, end := range []string{"cancel", "close"} {
		t.Run(end, func(t *testing.T) {
			cl, conn, ns, stop := withFake(t, proxy.Options{}, slog.New(slog.DiscardHandler))
			defer stop()
			bg := context.Background()
			working := make(chan struct{}, 1)
			cl.mu.Lock()
			cl.onSend = func(msg []byte) {
				if strings.Contains(string(msg), "working on it") {
					select { // never blocks the agent's writes
					case working <- struct{}{}:
					default:
					}
				}
			}
			cl.mu.Unlock()
			first := promptAsync(conn, ns.SessionId, "hang")
			<-working                                         // the first turn runs
			second := promptAsync(conn, ns.SessionId, "hang") // replaces it
			if a := <-first; a.err != nil || a.r.StopReason != sdk.StopReasonCancelled {
				t.Fatalf("the replaced prompt: %+v %v, want cancelled", a.r, a.err)
			}
			// The replacing prompt now waits for its turn, sends it or runs
			// it: in each case it must answer cancelled.
			if end == "cancel" {
				if err := conn.Cancel(bg, sdk.CancelNotification{SessionId: ns.SessionId}); err != nil {
					t.Fatal(err)
				}
			} else if _, err := conn.CloseSession(bg, sdk.CloseSessionRequest{SessionId: ns.SessionId}); err != nil {
				t.Fatal(err)
			}
			if a := <-second; a.err != nil || a.r.StopReason != sdk.StopReasonCancelled {
				t.Errorf("the replacing prompt after session/%s: %+v %v, want cancelled", end, a.r, a.err)
			}
		})
	}
}

// withFake is an in-process agent whose proxy runs the fake claude (opts
// adds to ClaudePath), initialized, with a session open.
func withFake(t *testing.T, opts proxy.Options, log *slog.Logger) (*goClient, *sdk.ClientSideConnection, sdk.NewSessionResponse, func()) {
	t.Helper()
	opts.ClaudePath = fakeClaudePath
	cl, conn, _, _, stop := inProcessWith(t, nil, opts, log, nil)
	initialize(t, conn)
	ns, err := conn.NewSession(context.Background(), sdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []sdk.McpServer{}})
	if err != nil {
		stop()
		t.Fatal(err)
	}
	return cl, conn, ns, stop
}

// agentText is the text of the agent_message_chunk updates cl has seen
// (cl.mu held).
func (c *goClient) agentText() string {
	var text strings.Builder
	for _, u := range c.updates {
		if u.AgentMessageChunk != nil && u.AgentMessageChunk.Content.Text != nil {
			text.WriteString(u.AgentMessageChunk.Content.Text.Text)
		}
	}
	return text.String()
}

// promptAnswer is what a session/prompt answered.
type promptAnswer struct {
	r   sdk.PromptResponse
	err error
}

// promptAsync sends a text prompt and delivers its answer on the channel.
func promptAsync(conn *sdk.ClientSideConnection, id sdk.SessionId, text string) <-chan promptAnswer {
	ch := make(chan promptAnswer, 1)
	go func() {
		r, err := conn.Prompt(context.Background(), sdk.PromptRequest{SessionId: id, Prompt: []sdk.ContentBlock{sdk.TextBlock(text)}})
		ch <- promptAnswer{r, err}
	}()
	return ch
}

// A session/close that lands after a prompt took its turn and just before
// it sends it (held at the "send" hook): the proxy then knows no such
// session, and the prompt answers cancelled (ACP: closing a session
// cancels its work), not an internal error. Before the fix the prompt
// answered -32603 unknown_session (seen in CI as a flake of
// TestAgentReplaceThenCancelOrClose/close).
func TestAgentCloseBeforeSend(t *testing.T) {
	setup, began, release := holdAt("send")
	_, conn, _, _, stop := fakeAgent(t, proxy.Options{}, slog.New(slog.DiscardHandler), setup)
	defer stop()
	free := sync.OnceFunc(func() { close(release) })
	defer free()
	id := newSession(t, conn)
	answer := promptAsync(conn, id, "hello")
	<-began // the prompt holds its turn and is about to send it
	if _, err := conn.CloseSession(context.Background(), sdk.CloseSessionRequest{SessionId: id}); err != nil {
		t.Fatal(err)
	}
	free()
	if a := <-answer; a.err != nil || a.r.StopReason != sdk.StopReasonCancelled {
		t.Errorf("the prompt whose session closed before its send: %+v %v, want cancelled", a.r, a.err)
	}
}
