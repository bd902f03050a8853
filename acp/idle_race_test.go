package acp_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/ccproxy/ccproxy/acp"
	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/proxy"
)

// holdAt returns an agent setup whose suspend stops at hook event at until
// release is closed; began is closed when it got there (the first time).
func holdAt(at string) (setup func(*acp.Agent), began, release chan struct{}) {
	began, release = make(chan struct{}), make(chan struct{})
	var once sync.Once
	return func(a *acp.Agent) {
		a.IdleTimeout = 0
		a.SetHook(func(ev string, _ sdk.SessionId) {
			if ev == at {
				once.Do(func() { close(began); <-release })
			}
		})
	}, began, release
}

// A turn another client starts (here session/send on the proxy, as the
// web UI does) while a suspend is under way: before the suspend's last
// check it ends the suspend, the permission it asks staying with the
// editor; after the check the close ends that turn and the editor's
// permission request is withdrawn, and the session, resumed, can be
// suspended again (no stale ask keeps it busy).
func TestAgentIdleSuspendMeetsForeignTurn(t *testing.T) {
	for _, at := range []string{"suspend", "close"} {
		t.Run(at, func(t *testing.T) {
			setup, began, release := holdAt(at)
			cl, conn, b, agent, stop := fakeAgent(t, proxy.Options{}, slog.New(slog.DiscardHandler), setup)
			defer stop()
			free := sync.OnceFunc(func() { close(release) })
			defer free()
			id := newSession(t, conn)
			promptOK(t, conn, id, "hello")
			cl.mu.Lock()
			cl.answer = "" // the editor leaves the permission open until it is withdrawn
			cl.mu.Unlock()
			done := make(chan bool, 1)
			go func() { done <- agent.SuspendIdle(id) }()
			<-began
			if err := b.Request(context.Background(), protocol.TypeSessionSend, &protocol.SessionSend{Session: string(id), Text: "perm"}, nil); err != nil {
				t.Fatal(err)
			}
			<-cl.asked // the foreign turn's permission reached the editor
			free()
			suspended := <-done // after the close: the proxy's grace for a claude in a turn (5 s with the fake)
			if at == "suspend" {
				if suspended || agent.Suspended(id) {
					t.Fatal("suspended while a turn of another client ran and its permission was asked")
				}
				return
			}
			if !suspended {
				t.Fatal("the suspend past its last check did not happen")
			}
			<-cl.withdrawn                 // hangs (the test times out) if the ask of the closed session stays open
			promptOK(t, conn, id, "again") // resumes it
			if !agent.SuspendIdle(id) {
				t.Error("the resumed, idle session cannot be suspended: a stale ask keeps it busy")
			}
		})
	}
}

// Agent.Close while a prompt resumes a suspended session and the resume
// waits for room (the proxy's limit: another session being suspended):
// no session is left at the proxy.
func TestAgentIdleCloseDuringResume(t *testing.T) {
	began, release := make(chan struct{}), make(chan struct{})
	var armed, once sync.Once
	arm := make(chan struct{})
	_, conn, b, agent, stop := fakeAgent(t, proxy.Options{SessionLimits: proxy.SessionLimits{MaxSessions: 1}}, slog.New(slog.DiscardHandler),
		func(a *acp.Agent) {
			a.IdleTimeout = 0
			a.SetHook(func(ev string, _ sdk.SessionId) {
				select {
				case <-arm:
				default:
					return
				}
				if ev == "close" {
					once.Do(func() { close(began); <-release })
				}
			})
		})
	defer stop()
	first := newSession(t, conn)
	promptOK(t, conn, first, "one")
	if !agent.SuspendIdle(first) {
		t.Fatal("the first session was not suspended")
	}
	second := newSession(t, conn)
	promptOK(t, conn, second, "two")
	armed.Do(func() { close(arm) })
	p := promptAsync(conn, first, "three") // resumes first: the limit; the second is suspended to make room (held)
	<-began
	closed := make(chan struct{})
	go func() { agent.Close(); close(closed) }()
	<-agent.Closing()
	close(release)
	<-closed
	<-p
	if ids := proxySessions(t, b); len(ids) != 0 {
		t.Errorf("after Agent.Close the proxy has sessions %v, want none", ids)
	}
}

// The model another client of the session chooses (the web UI's
// session/setModel) is the one a resume after a suspend starts with, not
// the one the editor chose before.
func TestAgentIdleResumeKeepsOthersModel(t *testing.T) {
	argsFile := filepath.Join(t.TempDir(), "args.json")
	_, conn, b, agent, stop := fakeAgent(t, proxy.Options{CLIOptions: proxy.CLIOptions{ClaudeEnv: append(os.Environ(), "FAKE_ARGS_FILE="+argsFile)}}, slog.New(slog.DiscardHandler),
		func(a *acp.Agent) { a.IdleTimeout = 0 })
	defer stop()
	bg := context.Background()
	id := newSession(t, conn)
	promptOK(t, conn, id, "hello")
	if _, err := conn.SetSessionConfigOption(bg, sdk.SetSessionConfigOptionRequest{ValueId: &sdk.SetSessionConfigOptionValueId{SessionId: id, ConfigId: acp.ConfigModel, Value: "haiku"}}); err != nil {
		t.Fatal(err)
	}
	var res protocol.SessionSetModelResult
	if err := b.Request(bg, protocol.TypeSessionSetModel, &protocol.SessionSetModel{Session: string(id), Model: "opus"}, &res); err != nil {
		t.Fatal(err)
	}
	promptOK(t, conn, id, "again")
	if !agent.SuspendIdle(id) {
		t.Fatal("not suspended")
	}
	promptOK(t, conn, id, "after the suspend")
	args := lastArgs(t, argsFile)
	if i := slices.Index(args, "--model"); i < 0 || i+1 >= len(args) || args[i+1] != "opus" {
		t.Errorf("the resumed claude's args %q: want --model opus, the model chosen last", args)
	}
}
