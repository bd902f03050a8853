//go:build unix

package acp_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/ccproxy/ccproxy/acp"
	"github.com/ccproxy/ccproxy/proxy"
)

// A session/cancel racing claude becoming ready (the fake claude answers
// initialize when the test opens its gate, at the same moment): the
// prompt, sent while claude starts, answers cancelled, its "hang" turn
// never runs on (withdrawn before claude got it, or interrupted after),
// and the session takes the next prompt. Run with -race -count=30.
func TestAgentCancelRacesClaudeReady(t *testing.T) {
	gate := filepath.Join(t.TempDir(), "init-gate")
	if err := syscall.Mkfifo(gate, 0o600); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	open := func(flag int) {
		once.Do(func() {
			if f, err := os.OpenFile(gate, flag, 0); err == nil {
				f.Write([]byte{1})
				f.Close()
			}
		})
	}
	sends := make(chan sdk.SessionId, 4)
	opts := proxy.Options{CLIOptions: proxy.CLIOptions{ClaudePath: fakeClaudePath, ClaudeEnv: append(os.Environ(), "FAKE_REPLAY=1", "FAKE_INIT_GATE="+gate)}}
	cl, conn, _, _, stop := inProcessWith(t, nil, opts, slog.New(slog.DiscardHandler), func(a *acp.Agent) {
		a.SetHook(func(ev string, id sdk.SessionId) {
			if ev == "send" {
				sends <- id
			}
		})
	})
	defer stop()
	defer open(os.O_WRONLY | syscall.O_NONBLOCK) // a fake still waiting goes (before stop)
	initialize(t, conn)
	bg := context.Background()
	ns, err := conn.NewSession(bg, sdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	answer := promptAsync(conn, ns.SessionId, "hang")
	<-sends // the prompt holds its turn and sends it: claude is still starting
	opened := make(chan struct{})
	go func() { defer close(opened); open(os.O_WRONLY) }()
	if err := conn.Cancel(bg, sdk.CancelNotification{SessionId: ns.SessionId}); err != nil {
		t.Fatal(err)
	}
	if got := <-answer; got.err != nil || got.r.StopReason != sdk.StopReasonCancelled {
		t.Fatalf("the prompt cancelled as claude became ready: %+v %v, want cancelled", got.r, got.err)
	}
	<-opened
	r, err := conn.Prompt(bg, sdk.PromptRequest{SessionId: ns.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("next prompt")}})
	if err != nil || r.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("the next prompt: %+v %v", r, err)
	}
	cl.mu.Lock()
	text := cl.agentText()
	cl.mu.Unlock()
	if !strings.Contains(text, "echo: next prompt") || strings.Contains(text, "gave up waiting") {
		t.Errorf("agent text %q: want the next prompt's echo, and the hang turn interrupted or never run", text)
	}
}
