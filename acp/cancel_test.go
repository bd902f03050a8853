package acp_test

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

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
	cl, conn, _, _, stop := inProcessWith(t, nil, proxy.Options{ClaudePath: fakeClaudePath,
		ClaudeEnv: append(os.Environ(), "FAKE_IGNORE_CONTROL=interrupt:1"), ControlTimeout: 2 * time.Second}, slog.New(ended))
	defer stop()
	bg := context.Background()
	initialize(t, conn)
	ns, err := conn.NewSession(bg, sdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
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
	type answer struct {
		r   sdk.PromptResponse
		err error
	}
	first := make(chan answer, 1)
	go func() {
		r, err := prompt("hang")
		first <- answer{r, err}
	}()
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
	var text strings.Builder
	for _, u := range cl.updates {
		if u.AgentMessageChunk != nil && u.AgentMessageChunk.Content.Text != nil {
			text.WriteString(u.AgentMessageChunk.Content.Text.Text)
		}
	}
	if !strings.Contains(text.String(), "echo: hello there") {
		t.Errorf("the prompt after the turn ended: its text %q, want the fake's echo of it", text.String())
	}
}
