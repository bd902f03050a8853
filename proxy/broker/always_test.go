package broker

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ccproxy/ccproxy/internal/testkit"
	"github.com/ccproxy/ccproxy/mcpconfig"
	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/proxy/broker/brokertest"
)

const waitTimeout = 10 * time.Second

// fakeSession is a session: its pushes are kept (under the broker's lock,
// as Push is called).
type fakeSession struct {
	mu     *sync.Mutex
	frames [][]byte
	exited bool
}

func (f *fakeSession) Push(frame []byte)                    { f.frames = append(f.frames, frame) }
func (f *fakeSession) Exited() bool                         { return f.exited }
func (f *fakeSession) Allows(string, *protocol.MCPRef) bool { return false }

// fakeProc is claude: the broker's answers go to lines.
type fakeProc struct{ lines chan []byte }

func (p *fakeProc) Answer(line []byte) error { p.lines <- line; return nil }

// answer is the next answer claude got: its response object, keys sorted.
func (p *fakeProc) answer(t *testing.T) string {
	t.Helper()
	select {
	case line := <-p.lines:
		var v struct {
			Response struct {
				Response any `json:"response"`
			} `json:"response"`
		}
		if err := json.Unmarshal(line, &v); err != nil {
			t.Fatalf("claude's answer %s: %v", line, err)
		}
		b, _ := json.Marshal(v.Response.Response)
		return string(b)
	case <-time.After(waitTimeout):
		t.Fatal("claude got no answer")
		return ""
	}
}

// fileRules writes rules with mcpconfig, as mcphub.ConfigSource does.
type fileRules struct{ opts mcpconfig.Options }

func (r fileRules) AllowRules(dir string, rules []string) error {
	opts := r.opts
	opts.ProjectDir = dir
	_, err := mcpconfig.AllowRules(opts, rules...)
	return err
}

// alwaysEnv is a broker writing rules to files (through a gate when gate is set), its
// session, claude, the session's settings.local.json and the log.
type alwaysEnv struct {
	mu    sync.Mutex
	sess  *fakeSession
	proc  *fakeProc
	gate  *brokertest.Gate // nil without
	b     *Broker
	local string
	log   *testkit.SyncBuffer
}

func newAlwaysEnv(t *testing.T, gate bool, timeout time.Duration) *alwaysEnv {
	root := t.TempDir()
	project := filepath.Join(root, "project")
	if err := os.MkdirAll(filepath.Join(root, "home", ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	e := &alwaysEnv{proc: &fakeProc{lines: make(chan []byte, 16)}, local: filepath.Join(project, ".claude", "settings.local.json"), log: &testkit.SyncBuffer{}}
	e.sess = &fakeSession{mu: &e.mu}
	var rules RuleRecorder = fileRules{opts: mcpconfig.Options{HomeDir: filepath.Join(root, "home"), ManagedPath: filepath.Join(root, "no-managed.json")}}
	if gate {
		e.gate = brokertest.NewGate(rules.AllowRules)
		t.Cleanup(e.gate.Open)
		rules = e.gate
	}
	e.b = New(&e.mu, e.sess, Config{Session: "s-1", Log: slog.New(slog.NewTextHandler(e.log, nil)), Timeout: timeout, MaxPending: 16, Rules: rules, Cwd: project})
	t.Cleanup(e.b.Wait)
	t.Cleanup(func() { e.mu.Lock(); e.b.CancelAll(); e.mu.Unlock() })
	return e
}

// ask has claude ask for tool (input {"command":"ls"}) with suggestions
// (JSON, "" for none) as request id.
func (e *alwaysEnv) ask(t *testing.T, id, tool, suggestions string) {
	t.Helper()
	if suggestions == "" {
		suggestions = "[]"
	}
	line := fmt.Sprintf(`{"type":"control_request","request_id":%q,"request":{"subtype":"can_use_tool","tool_name":%q,"input":{"command":"ls"},"tool_use_id":"toolu_1","permission_suggestions":%s}}`, id, tool, suggestions)
	e.b.Request(e.proc, id, []byte(line))
	if f := e.lastPush(); !strings.Contains(f, protocol.TypePermissionRequest) || !strings.Contains(f, id) {
		t.Fatalf("no permission/request pushed for %s: %s", id, f)
	}
}

// respond answers request id in a goroutine; the result comes on the channel.
func (e *alwaysEnv) respond(id, behavior string, always bool) <-chan error {
	ch := make(chan error, 1)
	go func() {
		ch <- e.b.Respond(context.Background(), &protocol.PermissionRespond{Session: "s-1", RequestID: id, Behavior: behavior, Always: always})
	}()
	return ch
}

func waitErr(t *testing.T, ch <-chan error) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(waitTimeout):
		t.Fatal("permission/respond did not return")
		return nil
	}
}

func (e *alwaysEnv) lastPush() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.sess.frames) == 0 {
		return ""
	}
	return string(e.sess.frames[len(e.sess.frames)-1])
}

// resolved are the permission/resolved pushes of request id.
func (e *alwaysEnv) resolved(t *testing.T, id string) []protocol.PermissionResolved {
	t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []protocol.PermissionResolved
	for _, f := range e.sess.frames {
		var fr struct {
			Type string                      `json:"type"`
			Data protocol.PermissionResolved `json:"data"`
		}
		if json.Unmarshal(f, &fr) == nil && fr.Type == protocol.TypePermissionResolved && fr.Data.RequestID == id {
			out = append(out, fr.Data)
		}
	}
	return out
}

// allowed returns permissions.allow of the session's settings.local.json.
func (e *alwaysEnv) allowed(t *testing.T) []string { return brokertest.Allowed(t, e.local) }

// fireTimeout does at once what the request's timer would do when it
// fires: the timer is stopped (its WaitGroup count given back) and its
// function run.
func fireTimeout(b *Broker, id string) {
	b.mu.Lock()
	if perm := b.find(id); perm != nil && perm.timer != nil && perm.timer.Stop() {
		b.wg.Done()
	}
	b.mu.Unlock()
	b.timedOut(id)
}

const bashAllowSession = `{"behavior":"allow","destination":"session","rules":[{"toolName":"Bash"}],"type":"addRules"}`

// While an "always" answer records its rule, the request is claimed: a
// deny from another client gets already_resolved, the timeout does not
// fire, and claude gets the allow. A deny that came first wins and the
// "always" that follows records nothing.
func TestPermissionAlwaysClaimsRequest(t *testing.T) {
	e := newAlwaysEnv(t, true, time.Hour)
	e.ask(t, "r-1", "Bash", "")
	res := e.respond("r-1", protocol.BehaviorAllow, true)
	e.gate.WaitEntered(t, waitTimeout)
	// The rule is being written: a deny loses, the timeout (what its timer
	// runs) waits.
	if err := waitErr(t, e.respond("r-1", protocol.BehaviorDeny, false)); protocol.CodeOf(err) != protocol.CodeAlreadyResolved {
		t.Errorf("deny during the write: %v, want already_resolved", err)
	}
	fireTimeout(e.b, "r-1")
	e.gate.Open()
	if err := waitErr(t, res); err != nil {
		t.Fatalf("always answer: %v", err)
	}
	if got := e.proc.answer(t); got != `{"behavior":"allow","updatedInput":{"command":"ls"},"updatedPermissions":[`+bashAllowSession+`]}` {
		t.Errorf("claude got %s", got)
	}
	if rs := e.resolved(t, "r-1"); len(rs) != 1 || rs[0].Behavior != protocol.BehaviorAllow || rs[0].Reason != protocol.ResolvedAnswered {
		t.Errorf("resolved %+v", rs)
	}
	if got := e.allowed(t); !slices.Equal(got, []string{"Bash"}) {
		t.Errorf("rules %v", got)
	}

	// A deny that comes first wins; the "always" after it writes nothing.
	e.ask(t, "r-2", "Write", "")
	if err := waitErr(t, e.respond("r-2", protocol.BehaviorDeny, false)); err != nil {
		t.Fatal(err)
	}
	if got := e.proc.answer(t); !strings.Contains(got, `"behavior":"deny"`) {
		t.Errorf("claude got %s", got)
	}
	if err := waitErr(t, e.respond("r-2", protocol.BehaviorAllow, true)); protocol.CodeOf(err) != protocol.CodeAlreadyResolved {
		t.Errorf("always after a deny: %v", err)
	}
	select {
	case <-e.gate.Entered():
		t.Error("the always after a deny wrote its rule")
	default:
	}
	if got := e.allowed(t); !slices.Equal(got, []string{"Bash"}) {
		t.Errorf("rules %v after the denied Write", got)
	}
}

// A write that fails releases the claim; if the timeout ran during it, the
// request is denied then (not left pending with no timer).
func TestPermissionAlwaysFailedWriteThenTimeout(t *testing.T) {
	e := newAlwaysEnv(t, true, time.Hour)
	bad := "{\"permissions\": {}, \"permissions\": {}}\n"
	os.MkdirAll(filepath.Dir(e.local), 0o755)
	os.WriteFile(e.local, []byte(bad), 0o644)
	e.ask(t, "r-1", "Bash", "")
	res := e.respond("r-1", protocol.BehaviorAllow, true)
	e.gate.WaitEntered(t, waitTimeout)
	fireTimeout(e.b, "r-1")
	e.gate.Open()
	if err := waitErr(t, res); protocol.CodeOf(err) != protocol.CodeBadRequest {
		t.Errorf("always with a bad file: %v", err)
	}
	if rs := e.resolved(t, "r-1"); len(rs) != 1 || rs[0].Behavior != protocol.BehaviorDeny || rs[0].Reason != protocol.ResolvedTimeout {
		t.Errorf("resolved %+v", rs)
	}
	if got := e.proc.answer(t); !strings.Contains(got, "denied by ccproxy") {
		t.Errorf("claude got %s", got)
	}
	e.mu.Lock()
	n := e.b.Pending()
	e.mu.Unlock()
	if n != 0 {
		t.Errorf("%d requests still pending", n)
	}
	if data, _ := os.ReadFile(e.local); string(data) != bad {
		t.Errorf("the bad file was changed: %s", data)
	}
}

// A rule's content (here a Bash command prefix with a token) never reaches
// a log line, whether the write succeeds or fails; the tool's name does.
func TestPermissionAlwaysLogsNoRuleContent(t *testing.T) {
	const secret = "sk-ant-api03-SECRETTOKEN"
	e := newAlwaysEnv(t, false, 0)
	suggestions := `[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"curl -H 'Authorization: Bearer ` + secret + `':*"}],"behavior":"allow","destination":"localSettings"}]`
	e.ask(t, "r-1", "Bash", suggestions)
	if err := waitErr(t, e.respond("r-1", protocol.BehaviorAllow, true)); err != nil {
		t.Fatal(err)
	}
	if got := e.allowed(t); len(got) != 1 || !strings.Contains(got[0], secret) {
		t.Errorf("rules %v", got)
	}
	// A file that cannot be written: the error is logged, still without it.
	bad := "{\"permissions\": {}, \"permissions\": {}}\n"
	os.WriteFile(e.local, []byte(bad), 0o644)
	e.ask(t, "r-2", "Bash", suggestions)
	if err := waitErr(t, e.respond("r-2", protocol.BehaviorAllow, true)); protocol.CodeOf(err) != protocol.CodeBadRequest {
		t.Errorf("bad file: %v", err)
	}
	logs := e.log.String()
	if strings.Contains(logs, "SECRETTOKEN") {
		t.Errorf("a rule's content was logged:\n%s", logs)
	}
	if !strings.Contains(logs, "permission rules recorded") || !strings.Contains(logs, "recording an allow rule failed") {
		t.Errorf("the log lacks the rule lines:\n%s", logs)
	}
}
