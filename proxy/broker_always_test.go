package proxy

import (
	"encoding/json"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ccproxy/ccproxy/internal/testkit/fakeclaude"
	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/proxy/broker/brokertest"
	"github.com/ccproxy/ccproxy/proxy/mcphub"
)

// gatedSource is an mcphub.ConfigSource whose rule writes pass a gate: the
// write of an "always" answer is surely in progress while the gate holds it.
type gatedSource struct {
	*mcphub.ConfigSource
	*brokertest.Gate
}

// AllowRules is the gate's (both embedded types have one).
func (g gatedSource) AllowRules(dir string, rules []string) error {
	return g.Gate.AllowRules(dir, rules)
}

// alwaysEnv is a server with an mcphub.ConfigSource (gated when gate is set),
// a session and its settings.local.json.
type alwaysEnv struct {
	ts      *testServer
	sess    *Session
	s       string
	local   string
	gate    *brokertest.Gate
	mcpLogs *syncBuffer
}

func newAlwaysEnv(t *testing.T, gate bool, opts Options) *alwaysEnv {
	env := newMCPEnv(t)
	e := &alwaysEnv{local: filepath.Join(env.Project, ".claude", "settings.local.json"), mcpLogs: &syncBuffer{}}
	env.Opts.Logger = slog.New(slog.NewTextHandler(e.mcpLogs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	src, err := mcphub.NewConfigSource(env.Opts, env.FilesDir, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	opts.MCP, opts.Project = src, env.Project
	if gate {
		e.gate = brokertest.NewGate(src.AllowRules)
		opts.MCP = gatedSource{src, e.gate}
	}
	e.ts = startServer(t, opts)
	if gate {
		t.Cleanup(e.gate.Open) // before the server's shutdown, should a test fail with the write held
	}
	return e
}

func (e *alwaysEnv) create(t *testing.T, c *wsClient) {
	e.s = c.create(nil)
	sess, err := e.ts.srv.session(e.s)
	if err != nil {
		t.Fatal(err)
	}
	e.sess = sess
}

// ask has claude ask for Bash in a turn sent by c, and returns the
// request and where c's frames stood before.
func (e *alwaysEnv) ask(t *testing.T, c *wsClient) (req protocol.PermissionRequest, from int) {
	t.Helper()
	from = c.count()
	c.do(protocol.TypeSessionSend, map[string]any{"session": e.s, "text": "perm Bash"})
	c.waitPush(from, protocol.TypePermissionRequest, &req, nil)
	return req, from
}

// answerAlways sends c's "allow, always" answer to req and waits until the
// gate holds its rule's write; it returns the answer's request id.
func (e *alwaysEnv) answerAlways(t *testing.T, c *wsClient, req protocol.PermissionRequest) json.RawMessage {
	t.Helper()
	id := c.send(protocol.TypePermissionRespond, map[string]any{"session": e.s, "requestId": req.RequestID, "behavior": "allow", "always": true})
	e.gate.WaitEntered(t, waitTimeout)
	return id
}

// allowed returns permissions.allow of the session's settings.local.json.
func (e *alwaysEnv) allowed(t *testing.T) []string { return brokertest.Allowed(t, e.local) }

// An "always" answer the broker refuses (answers on a tool use) records no
// rule: the answer is checked before anything is written.
func TestPermissionAlwaysInvalidWritesNoRule(t *testing.T) {
	e := newAlwaysEnv(t, false, Options{})
	c := e.ts.dial(t)
	e.create(t, c)
	req, from := e.ask(t, c)
	er := c.doErr(protocol.TypePermissionRespond, map[string]any{"session": e.s, "requestId": req.RequestID,
		"behavior": "allow", "always": true, "answers": map[string]string{"q": "a"}})
	if er.Code != protocol.CodeBadRequest || !strings.Contains(er.Message, "only for a question") {
		t.Errorf("invalid always answer: %+v", er)
	}
	if got := e.allowed(t); len(got) != 0 {
		t.Errorf("a refused answer recorded rules %v", got)
	}
	// Still pending: a plain deny ends it, still without a rule.
	c.do(protocol.TypePermissionRespond, map[string]any{"session": e.s, "requestId": req.RequestID, "behavior": "deny"})
	if got := answerText(t, c, from, e.s); !strings.Contains(got, `"behavior":"deny"`) {
		t.Errorf("claude got %s", got)
	}
	if got := e.allowed(t); len(got) != 0 {
		t.Errorf("rules %v after a deny", got)
	}
}

// While the session restarts, session/setPermissionMode answers as claude
// would: bypassPermissions (the session not in it) is a cli_error and the
// new process is not launched in it; another mode is what it starts in.
func TestSetPermissionModeDuringRestart(t *testing.T) {
	argsFile := filepath.Join(t.TempDir(), "args.json")
	ts := startServer(t, Options{CLIOptions: CLIOptions{CloseGrace: waitTimeout}}, "FAKE_EXIT_ON_USR1=1", "FAKE_ARGS_FILE="+argsFile)
	c := ts.dial(t)
	s := c.create(nil)
	pid := fakePID(t, c, s)
	sess, _ := restartSession(t, ts, c, s)
	er := c.doErr(protocol.TypeSessionSetMode, map[string]any{"session": s, "mode": "bypassPermissions"})
	if er.Code != protocol.CodeCLIError || !strings.Contains(er.Message, "bypassPermissions") {
		t.Errorf("bypassPermissions during the restart: %+v", er)
	}
	sess.mu.Lock()
	m := sess.broker.Mode()
	sess.mu.Unlock()
	if m == protocol.PermissionModeBypass {
		t.Errorf("mode %q kept after the refusal", m)
	}
	var res protocol.SessionSetPermissionModeResult
	mustUnmarshal(t, c.do(protocol.TypeSessionSetMode, map[string]any{"session": s, "mode": "plan"}), &res)
	if res.Mode != "plan" {
		t.Errorf("plan during the restart: %+v", res)
	}
	if err := killPID(pid, fakeclaude.ExitSignal); err != nil {
		t.Fatal(err)
	}
	newPID := fakePID(t, c, s) // a turn of the new process: its arguments are written
	args := fakeArgs(t, argsFile)
	if argValue(args, "--permission-mode") != "plan" {
		t.Errorf("the new claude's arguments %v, want --permission-mode plan", args)
	}
	if slices.Contains(args, protocol.PermissionModeBypass) {
		t.Errorf("the new claude was launched with bypassPermissions: %v", args)
	}
	killPID(newPID, fakeclaude.ExitSignal)
}

// Claude's exit during the write is not held up: the request is cancelled
// at once, and the answering client is told, with the rule it chose kept.
func TestPermissionAlwaysExitDuringWrite(t *testing.T) {
	t.Parallel()
	e := newAlwaysEnv(t, true, Options{})
	a, b := e.ts.dial(t), e.ts.dial(t)
	e.create(t, a)
	b.do(protocol.TypeSessionSubscribe, map[string]any{"session": e.s})
	req, _ := e.ask(t, a)
	id := e.answerAlways(t, a, req)
	bFrom := b.count()
	closeSession(t, b, e.s)
	var res protocol.PermissionResolved
	b.waitPush(bFrom, protocol.TypePermissionResolved, &res, nil)
	if res.Behavior != protocol.BehaviorCancelled || res.Reason != protocol.ResolvedSessionExited {
		t.Errorf("resolved %+v", res)
	}
	e.gate.Open()
	rep := a.reply(id)
	if rep.OK == nil || *rep.OK || rep.Error == nil || rep.Error.Code != protocol.CodeSessionExited || !strings.Contains(rep.Error.Message, "rule was recorded") {
		t.Errorf("always answer after the exit: %s", rep.raw)
	}
	if got := e.allowed(t); !slices.Equal(got, []string{"Bash"}) {
		t.Errorf("rules %v", got)
	}
}
