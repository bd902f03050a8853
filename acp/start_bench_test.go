package acp_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/ccproxy/ccproxy/acp"
	"github.com/ccproxy/ccproxy/internal/testkit"
	"github.com/ccproxy/ccproxy/internal/testkit/fakeapi"
	"github.com/ccproxy/ccproxy/proxy"
)

// BenchmarkCancelDuringStart measures, with the real CLI and an
// in-process proxy and agent, a session/cancel sent while claude is still
// starting: from the cancel to the prompt's answer (cancel-ms; issue 21
// asks for under 200 ms), and from session/new's answer to the
// session's available_commands_update (commands-ms: claude's answer to
// initialize). Each iteration opens a session, prompts it at once, cancels
// as soon as the prompt sends its turn, and closes it. Run it with
// -benchtime=1x -count=N and take the median of the N figures (it reports
// each iteration's too, with -v).
func BenchmarkCancelDuringStart(b *testing.B) {
	claude := testkit.Claude(b)
	api := fakeapi.Start(b, nil)
	home, project := b.TempDir(), b.TempDir()
	os.MkdirAll(filepath.Join(home, "tmp"), 0o755)
	opts := proxy.Options{Project: project, CLIOptions: proxy.CLIOptions{ClaudePath: claude, ClaudeEnv: api.Env(home)}}
	sends := make(chan sdk.SessionId, 8)
	cl, conn, _, _, stop := inProcessWith(b, nil, opts, slog.New(slog.DiscardHandler), func(a *acp.Agent) {
		a.SetHook(func(ev string, id sdk.SessionId) {
			if ev == "send" {
				sends <- id
			}
		})
	})
	defer stop()
	bg := context.Background()
	if _, err := conn.Initialize(bg, sdk.InitializeRequest{ProtocolVersion: 1}); err != nil {
		b.Fatal(err)
	}
	var mu sync.Mutex
	cond := sync.NewCond(&mu)
	commandsAt := map[string]time.Time{}
	cl.mu.Lock()
	cl.onSend = func(msg []byte) {
		if id, ok := commandsUpdateOf(msg); ok {
			mu.Lock()
			if _, seen := commandsAt[id]; !seen {
				commandsAt[id] = time.Now()
			}
			cond.Broadcast()
			mu.Unlock()
		}
	}
	cl.mu.Unlock()
	var cancels, commands []float64
	for b.Loop() {
		ns, err := conn.NewSession(bg, sdk.NewSessionRequest{Cwd: project, McpServers: []sdk.McpServer{}})
		if err != nil {
			b.Fatal(err)
		}
		answered := time.Now()
		answer := promptAsync(conn, ns.SessionId, "hello")
		for id := range sends {
			if id == ns.SessionId {
				break
			}
		}
		t0 := time.Now()
		if err := conn.Cancel(bg, sdk.CancelNotification{SessionId: ns.SessionId}); err != nil {
			b.Fatal(err)
		}
		got := <-answer
		cancels = append(cancels, float64(time.Since(t0).Microseconds())/1000)
		if got.err != nil || got.r.StopReason != sdk.StopReasonCancelled {
			b.Fatalf("the cancelled prompt: %+v %v", got.r, got.err)
		}
		// claude's answer to initialize brings the commands; on a machine so
		// loaded that it comes after the proxy's ControlTimeout (15 s) it is
		// not taken, and none come: counted, not waited for.
		bound := time.AfterFunc(time.Minute, func() { mu.Lock(); cond.Broadcast(); mu.Unlock() })
		deadline := time.Now().Add(time.Minute)
		mu.Lock()
		for commandsAt[string(ns.SessionId)].IsZero() && time.Now().Before(deadline) {
			cond.Wait()
		}
		if at := commandsAt[string(ns.SessionId)]; !at.IsZero() {
			commands = append(commands, float64(at.Sub(answered).Microseconds())/1000)
		} else {
			b.Logf("no available_commands_update for %s in a minute", ns.SessionId)
		}
		mu.Unlock()
		bound.Stop()
		b.Logf("iteration: cancel-ms %.3f", cancels[len(cancels)-1])
		if _, err := conn.CloseSession(bg, sdk.CloseSessionRequest{SessionId: ns.SessionId}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(median(cancels), "cancel-ms")
	b.ReportMetric(median(commands), "commands-ms")
	b.Logf("cancel-ms %v; commands-ms %v", cancels, commands)
}

// commandsUpdateOf reports the session of an available_commands_update.
func commandsUpdateOf(msg []byte) (string, bool) {
	var m struct {
		Method string `json:"method"`
		Params struct {
			SessionID string `json:"sessionId"`
			Update    struct {
				Kind string `json:"sessionUpdate"`
			} `json:"update"`
		} `json:"params"`
	}
	if json.Unmarshal(msg, &m) != nil || m.Method != "session/update" || m.Params.Update.Kind != "available_commands_update" {
		return "", false
	}
	return m.Params.SessionID, true
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	sort.Float64s(s)
	return s[len(s)/2]
}
