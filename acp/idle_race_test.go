package acp_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/ccproxy/ccproxy/acp"
	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/protocol/client"
	"github.com/ccproxy/ccproxy/proxy"
)

// holdAt returns an agent setup whose hook stops at event at until
// release is closed; began is closed when it got there (the first time).
func holdAt(at string) (setup func(*acp.Agent), began, release chan struct{}) {
	began, release = make(chan struct{}), make(chan struct{})
	var once sync.Once
	return func(a *acp.Agent) {
		a.SetHook(func(ev string, _ sdk.SessionId) {
			if ev == at {
				once.Do(func() { close(began); <-release })
			}
		})
	}, began, release
}

// A turn another client starts (here session/send on the proxy, as the
// web UI does) keeps the session from being suspended while it runs and
// its permission is asked (the ask stays with the editor until it is
// answered elsewhere: then withdrawn); a permission claude asks as it is
// being stopped by a suspend (the fake asks at stdin EOF) reaches the
// editor and leaves nothing pending, so the session, resumed, can be
// suspended again (no stale ask keeps it busy).
func TestAgentIdleSuspendMeetsForeignTurn(t *testing.T) {
	t.Parallel()
	opts, clock := idleProxy(proxy.Options{CLIOptions: proxy.CLIOptions{ClaudeEnv: append(os.Environ(), "FAKE_ASK_ON_EOF=1")}})
	cl, conn, b, _, stop := fakeAgent(t, opts, slog.New(slog.DiscardHandler), nil)
	defer stop()
	bg := context.Background()
	id := newSession(t, conn)
	promptOK(t, conn, id, "hello")
	cl.mu.Lock()
	cl.answer = "" // the editor leaves the permission open until it is withdrawn
	cl.mu.Unlock()
	if err := b.Request(bg, protocol.TypeSessionSend, &protocol.SessionSend{Session: string(id), Text: "perm"}, nil); err != nil {
		t.Fatal(err)
	}
	<-cl.asked // the foreign turn's permission reached the editor
	clock.FireArmed()
	if st := proxyState(t, b, id); st == protocol.StateSuspended {
		t.Fatal("suspended while a turn of another client ran and its permission was asked")
	}
	opened := make(chan struct{})
	close(opened)
	cl.mu.Lock()
	cl.answer, cl.hold = "allow", opened // the ask at stdin EOF below: signalled on cl.asked, then allowed
	cl.mu.Unlock()
	var perms []protocol.PermissionRequest
	var sub protocol.SessionSubscribeResult
	probe, err := client.Dial(bg, cl.proxy, cl.token)
	if err != nil {
		t.Fatal(err)
	}
	defer probe.Close()
	got := make(chan protocol.PermissionRequest, 4)
	probe.Handle(string(id), func(f protocol.Frame) {
		var r protocol.PermissionRequest
		if f.Type == protocol.TypePermissionRequest && json.Unmarshal(f.Data, &r) == nil {
			got <- r
		}
	})
	if err := probe.Request(bg, protocol.TypeSessionSubscribe, &protocol.SessionSubscribe{Session: string(id)}, &sub); err != nil {
		t.Fatal(err)
	}
	perms = append(perms, <-got)
	if err := probe.Request(bg, protocol.TypePermissionRespond, &protocol.PermissionRespond{Session: string(id), RequestID: perms[0].RequestID, Behavior: protocol.BehaviorAllow}, nil); err != nil {
		t.Fatal(err)
	}
	<-cl.withdrawn // answered elsewhere: the editor's ask is withdrawn
	suspendIdle(t, clock, b, id)
	<-cl.asked                     // claude, being stopped, asked at stdin EOF
	promptOK(t, conn, id, "again") // resumes it
	suspendIdle(t, clock, b, id)   // nothing pending keeps it busy
}

// Agent.Close while a prompt resumes a suspended session: no session is
// left at the proxy.
func TestAgentIdleCloseDuringResume(t *testing.T) {
	opts, clock := idleProxy(proxy.Options{})
	_, conn, b, agent, stop := fakeAgent(t, opts, slog.New(slog.DiscardHandler), nil)
	defer stop()
	first := newSession(t, conn)
	promptOK(t, conn, first, "one")
	suspendIdle(t, clock, b, first)
	p := promptAsync(conn, first, "two") // resumes first
	agent.Close()
	<-p
	if ids := proxySessions(t, b); len(ids) != 0 {
		t.Errorf("after Agent.Close the proxy has sessions %v, want none", ids)
	}
}

// The model another client of the session chooses (the web UI's
// session/setModel) is the one a resume after a suspend starts with, not
// the one the editor chose before.
func TestAgentIdleResumeKeepsOthersModel(t *testing.T) {
	t.Parallel()
	argsFile := filepath.Join(t.TempDir(), "args.json")
	opts, clock := idleProxy(proxy.Options{CLIOptions: proxy.CLIOptions{ClaudeEnv: append(os.Environ(), "FAKE_ARGS_FILE="+argsFile)}})
	_, conn, b, _, stop := fakeAgent(t, opts, slog.New(slog.DiscardHandler), nil)
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
	suspendIdle(t, clock, b, id)
	promptOK(t, conn, id, "after the suspend")
	args := lastArgs(t, argsFile)
	if i := slices.Index(args, "--model"); i < 0 || i+1 >= len(args) || args[i+1] != "opus" {
		t.Errorf("the resumed claude's args %q: want --model opus, the model chosen last", args)
	}
}
