package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/spf13/pflag"

	"github.com/ccproxy/ccproxy/internal/testkit"
	"github.com/ccproxy/ccproxy/internal/testkit/fakeapi"
	"github.com/ccproxy/ccproxy/internal/testkit/mcptest"
	"github.com/ccproxy/ccproxy/protocol"
)

const serveToken = "serve-test-token-0123456789"

func TestServeUsage(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, nil, 0o600)
	notTranscript := filepath.Join(dir, "not-a-transcript.jsonl")
	os.WriteFile(notTranscript, []byte("not json\n"), 0o600)
	t.Setenv("CCPROXY_TOKEN", "")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--addr", "0.0.0.0:8080"}, "listens on loopback only"},
		{[]string{"--addr", "192.168.1.10:0"}, "listens on loopback only"},
		{[]string{"--addr", "nonsense"}, "want HOST:PORT"},
		{[]string{"--token", "short"}, "serve: --token: at least 16 characters are needed, got 5"}, // once "--token: token: at least"
		{[]string{"--token", "has spaces in it, which is bad"}, "is not one of A-Z a-z 0-9 . _ ~ -"},
		{[]string{"--token", serveToken, "--token-file", empty}, "not both"},
		{[]string{"--token-file", empty}, "is empty"},
		{[]string{"--token-file", filepath.Join(dir, "missing")}, "--token-file"},
		{[]string{"--allow-origin", "not an origin"}, "allowed origin"},
		{[]string{"--allow-origin", "http://x.example:99999"}, `allowed origin "http://x.example:99999": not an origin: port "99999" is not a port number (1 to 65535)`},
		{[]string{"--demo", "--replay", "x.jsonl"}, "not both"},
		{[]string{"--public-url", "chat.example.com"}, `--public-url: public URL "chat.example.com": want https://host[:port][/prefix]`},
		{[]string{"--public-url", "https://chat.example.com/?q"}, "no user, query or fragment"},
		{[]string{"--trusted-header", "Remote-User", "--trusted-proxy", "127.0.0.1"}, "--trusted-header is for a reverse proxy in front: give its URL with --public-url"},
		{[]string{"--public-url", "https://chat.example.com", "--trusted-header", "Remote-User"}, "--trusted-header needs --trusted-proxy ADDR"},
		{[]string{"--public-url", "https://chat.example.com", "--trusted-proxy", "127.0.0.1"}, "--trusted-proxy needs --trusted-header NAME"},
		{[]string{"--public-url", "https://chat.example.com", "--trusted-header", "Remote-User", "--trusted-proxy", "10.0.0.0/8"}, "only loopback addresses"},
		{[]string{"--demo", "--claude", "/bin/claude"}, "drop --claude"},
		{[]string{"--demo", "--mcp-config", empty}, "drop --mcp-config"},
		{[]string{"--replay", notTranscript, "--trust-project-mcp"}, "drop --trust-project-mcp"},
		{[]string{"--replay", filepath.Join(dir, "missing.jsonl")}, "--replay " + filepath.Join(dir, "missing.jsonl") + ": replay: open"},
		{[]string{"--replay", notTranscript}, "--replay " + notTranscript + ": replay: " + notTranscript + ":1: not a JSON object"},
		{[]string{"--demo", "--demo-speed", "-1"}, "--demo-speed: speed -1: want a finite number"},
		{[]string{"--demo", "--demo-speed", "NaN"}, "--demo-speed: speed NaN: want a finite number"},
		{[]string{"--demo", "--demo-speed", "+Inf"}, "--demo-speed: speed +Inf: want a finite number"},
		{[]string{"--permission-timeout", "-1s"}, "must not be negative"},
		{[]string{"--idle-timeout", "500ms"}, "--idle-timeout 500ms is too short: at least 1s (0: never)"},
		{[]string{"--idle-timeout", "-1m"}, "--idle-timeout -1m0s is negative"},
		{[]string{"--send-queue", "0"}, "must be positive"},
		{[]string{"--warm", "-1"}, "--warm -1 is negative"},
		{[]string{"--log-level", "loud"}, "--log-level"},
		{[]string{"--nope"}, "unknown flag: --nope"},
		{[]string{"extra"}, "unexpected argument"},
	} {
		out, errOut, code := runCmd(t, "", append([]string{"serve"}, tc.args...)...)
		if code != 2 || !strings.Contains(errOut, tc.want) || out != "" {
			t.Errorf("serve %q: exit %d, stderr %q, stdout %q; want exit 2 and %q", tc.args, code, errOut, out, tc.want)
		}
		if strings.Contains(errOut, "has spaces in it") {
			t.Errorf("serve %q: the error shows the token", tc.args)
		}
	}
}

// --token works, with a warning that it is visible to every user of the
// machine; the warning does not show it.
func TestServeTokenFlagWarning(t *testing.T) {
	t.Setenv("CCPROXY_TOKEN", "")
	_, errOut, code := runCmd(t, "", "serve", "--token", serveToken, "--addr", "0.0.0.0:8080")
	if code != 2 || !strings.Contains(errOut, "warning: --token puts the token on the command line") || !strings.Contains(errOut, "use --token-file or $CCPROXY_TOKEN") {
		t.Errorf("exit %d, stderr %q; want the warning (and the --addr usage error)", code, errOut)
	}
	if strings.Contains(errOut, serveToken) {
		t.Error("the warning shows the token")
	}
	if _, errOut, _ = runCmd(t, "", "serve", "--token-file", filepath.Join(t.TempDir(), "missing"), "--addr", "0.0.0.0:8080"); strings.Contains(errOut, "warning") {
		t.Errorf("a warning without --token: %q", errOut)
	}
}

// firstLine is the address line serve prints.
type firstLine struct {
	URL   string `json:"url"`
	Port  int    `json:"port"`
	PID   int    `json:"pid"`
	Token string `json:"token"`
	Demo  bool   `json:"demo"`
}

func readFirstLine(t *testing.T, r *bufio.Reader) firstLine {
	t.Helper()
	line, err := r.ReadString('\n')
	if err != nil {
		t.Fatalf("reading the first line: %v", err)
	}
	var fl firstLine
	if err := json.Unmarshal([]byte(line), &fl); err != nil || fl.Port == 0 || fl.URL != fmt.Sprintf("http://127.0.0.1:%d", fl.Port) {
		t.Fatalf("first line %q: %+v %v", line, fl, err)
	}
	return fl
}

// client is a minimal websocket client of the proxy.
type client struct {
	t    *testing.T
	conn *websocket.Conn
	n    int
	seen []map[string]any
}

func dialProxy(t *testing.T, url string, h http.Header, protos ...string) *client {
	t.Helper()
	d := websocket.Dialer{Subprotocols: protos}
	conn, resp, err := d.Dial("ws"+strings.TrimPrefix(url, "http")+"/v1/ws", h)
	if err != nil {
		status := ""
		if resp != nil {
			status = resp.Status
		}
		t.Fatalf("dial: %v %s", err, status)
	}
	t.Cleanup(func() { conn.Close() })
	conn.SetReadDeadline(time.Now().Add(60 * time.Second))
	return &client{t: t, conn: conn}
}

// next reads frames until pred holds.
func (c *client) next(what string, pred func(f map[string]any) bool) map[string]any {
	c.t.Helper()
	for {
		var f map[string]any
		if err := c.conn.ReadJSON(&f); err != nil {
			c.t.Fatalf("waiting for %s: %v", what, err)
		}
		c.seen = append(c.seen, f)
		if pred(f) {
			return f
		}
	}
}

func (c *client) do(typ string, data map[string]any) map[string]any {
	c.t.Helper()
	c.n++
	id := float64(c.n)
	if err := c.conn.WriteJSON(map[string]any{"type": typ, "id": id, "data": data}); err != nil {
		c.t.Fatal(err)
	}
	rep := c.next("reply to "+typ, func(f map[string]any) bool { return f["type"] == "reply" && f["id"] == id })
	if rep["ok"] != true {
		c.t.Fatalf("%s: %v", typ, rep)
	}
	d, _ := rep["data"].(map[string]any)
	return d
}

func isResultOf(session string) func(f map[string]any) bool {
	return func(f map[string]any) bool {
		if f["type"] != protocol.TypeSessionEvent {
			return false
		}
		d := f["data"].(map[string]any)
		ev := d["event"].(map[string]any)
		return d["session"] == session && ev["type"] == "result"
	}
}

// The real run() on port 0 (as benbjohnson/wtf's main_test does), with the
// real CLI against the fake API and an MCP server from the project's
// .mcp.json: a turn calls the MCP tool; cancelling the context (what
// SIGINT/SIGTERM do in main) closes the session and leaves nothing running.
func TestServeRun(t *testing.T) {
	claude := testkit.Claude(t)
	testmcp := mcptest.Command(t)
	api := fakeapi.Start(t, fakeapi.First(
		fakeapi.OnText("TOOL", fakeapi.CallTool("mcp__testmcp__text", nil)),
		fakeapi.OnToolResults(fakeapi.Summarize),
	))
	home, project := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(home, "tmp"), 0o755)
	mcpJSON, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"testmcp": map[string]any{"command": testmcp}}})
	os.WriteFile(filepath.Join(project, ".mcp.json"), mcpJSON, 0o644)
	for _, kv := range api.Env(home) {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	marker := fmt.Sprintf("serve-run-%d", time.Now().UnixNano())
	t.Setenv("CCPROXY_TEST_MARKER", marker)
	t.Setenv("CCPROXY_TOKEN", serveToken)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	var stderr testkit.SyncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--project", project, "--claude", claude, "--trust-project-mcp", "--allow-mcp-tools", "--log-level", "debug"}, strings.NewReader(""), pw, &stderr)
		pw.Close()
	}()
	fl := readFirstLine(t, bufio.NewReader(pr))
	go io.Copy(io.Discard, pr)
	if fl.Token != "" || fl.PID != os.Getpid() {
		t.Errorf("first line %+v: a given token must not be printed; pid must be ours", fl)
	}

	c := dialProxy(t, fl.URL, http.Header{"Authorization": {"Bearer " + serveToken}})
	hello := c.next("hello", func(f map[string]any) bool { return f["type"] == "hello" })
	if fmt.Sprint(hello["data"].(map[string]any)["claude"]) != "map[name:claude-code version:"+testkit.ClaudeVersion+"]" {
		t.Errorf("hello %v", hello)
	}
	s := c.do("session/create", map[string]any{})["session"].(string)
	c.do("session/subscribe", map[string]any{"session": s})
	c.do("session/send", map[string]any{"session": s, "text": "call the TOOL"})
	res := c.next("result", isResultOf(s))
	ev := res["data"].(map[string]any)["event"].(map[string]any)
	if !strings.Contains(fmt.Sprint(ev["result"]), mcptest.OneText) {
		t.Errorf("result %v, want the MCP tool's text", ev["result"])
	}
	if running := testkit.MarkedProcesses("CCPROXY_TEST_MARKER=" + marker); len(running) < 2 {
		t.Errorf("claude and its MCP server should be running: %v", running)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("run: %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("run did not return after its context was cancelled")
	}
	c.next("session/exited", func(f map[string]any) bool {
		return f["type"] == "session/exited" && f["data"].(map[string]any)["reason"] == "shutdown"
	})
	testkit.CheckNothingLeft(t, marker)
	if strings.Contains(stderr.String(), serveToken) {
		t.Error("the token appears in the log")
	}
	if t.Failed() {
		t.Logf("log:\n%s", stderr.String())
	}
}

// The built binary in demo mode (no CLI, no API key): it makes up a token
// and prints it on the first line, a browser-style client authenticates
// with the subprotocol, a demo turn plays, and SIGTERM ends everything.
func TestServeDemoBinarySIGTERM(t *testing.T) {
	bin := testkit.CCProxyBinary(t)
	marker := fmt.Sprintf("serve-demo-%d", time.Now().UnixNano())
	cmd := exec.Command(bin, "serve", "--demo", "--addr", "127.0.0.1:0", "--project", t.TempDir())
	testkit.DieWithTest(cmd)
	cmd.Env = append(testkit.WithoutEnv(os.Environ(), "CCPROXY_TOKEN"), "CCPROXY_TEST_MARKER="+marker)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr testkit.SyncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	fl := readFirstLine(t, bufio.NewReader(stdout))
	if len(fl.Token) < 32 || fl.PID != cmd.Process.Pid {
		t.Fatalf("first line %+v: want a generated token and the process's pid", fl)
	}

	// Without the token: 401. With it, as a browser does it.
	resp, err := http.Get(fl.URL + "/v1/mcp/status")
	if err != nil || resp.StatusCode != 401 {
		t.Errorf("no token: %v %v", resp, err)
	}
	c := dialProxy(t, fl.URL, nil, protocol.Subprotocol, protocol.TokenSubprotocolPrefix+fl.Token)
	if c.conn.Subprotocol() != protocol.Subprotocol {
		t.Errorf("subprotocol %q", c.conn.Subprotocol())
	}
	s := c.do("session/create", map[string]any{})["session"].(string)
	c.do("session/subscribe", map[string]any{"session": s})
	c.do("session/send", map[string]any{"session": s, "text": "hello demo"})
	c.next("result", isResultOf(s))

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	c.next("session/exited", func(f map[string]any) bool { return f["type"] == "session/exited" })
	for {
		var f map[string]any
		err := c.conn.ReadJSON(&f)
		var ce *websocket.CloseError
		if errors.As(err, &ce) {
			if ce.Code != websocket.CloseGoingAway {
				t.Errorf("close code %d, want 1001", ce.Code)
			}
			break
		}
		if err != nil {
			t.Fatalf("want a close frame, got %v", err)
		}
	}
	waitErr := make(chan error, 1)
	go func() { waitErr <- cmd.Wait() }()
	select {
	case err := <-waitErr:
		if err != nil {
			t.Errorf("ccproxy exited with %v; stderr:\n%s", err, stderr.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatal("ccproxy did not exit after SIGTERM")
	}
	testkit.CheckNothingLeft(t, marker)
	if strings.Contains(stderr.String(), fl.Token) {
		t.Error("the token appears in the log")
	}
}

// --replay with a relative path: each session's replay-claude runs in the
// session's directory, yet finds the transcript.
func TestServeReplayRelative(t *testing.T) {
	bin := testkit.CCProxyBinary(t)
	work, project := t.TempDir(), t.TempDir()
	transcript, err := os.ReadFile("../../testdata/transcripts/streamjson_multiturn.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "t.jsonl"), transcript, 0o600); err != nil {
		t.Fatal(err)
	}
	marker := fmt.Sprintf("serve-replay-%d", time.Now().UnixNano())
	cmd := exec.Command(bin, "serve", "--replay", "t.jsonl", "--demo-speed", "0", "--addr", "127.0.0.1:0", "--project", project)
	testkit.DieWithTest(cmd)
	cmd.Dir = work
	cmd.Env = append(testkit.WithoutEnv(os.Environ(), "CCPROXY_TOKEN"), "CCPROXY_TOKEN="+serveToken, "CCPROXY_TEST_MARKER="+marker)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr testkit.SyncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	fl := readFirstLine(t, bufio.NewReader(stdout))
	c := dialProxy(t, fl.URL, http.Header{"Authorization": {"Bearer " + serveToken}})
	s := c.do("session/create", map[string]any{})["session"].(string)
	c.do("session/subscribe", map[string]any{"session": s})
	c.do("session/send", map[string]any{"session": s, "text": "go"})
	end := func(f map[string]any) bool { return isResultOf(s)(f) || f["type"] == "session/exited" }
	var f map[string]any
	for _, seen := range c.seen { // at speed 0 the turn may end before the reply
		if end(seen) {
			f = seen
			break
		}
	}
	if f == nil {
		f = c.next("result or exit", end)
	}
	if f["type"] == "session/exited" {
		t.Errorf("the session exited: %v\nlog:\n%s", f["data"], stderr.String())
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitErr := make(chan error, 1)
	go func() { waitErr <- cmd.Wait() }()
	select {
	case err := <-waitErr:
		if err != nil {
			t.Errorf("ccproxy exited with %v; stderr:\n%s", err, stderr.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatal("ccproxy did not exit after SIGTERM")
	}
	testkit.CheckNothingLeft(t, marker)
}

// Without a CLI anywhere (no --claude, no $CCPROXY_CLAUDE, no claude on
// PATH) serve plays the built-in demo and says so; a CLI that is named but
// missing is an error, never a demo.
func TestServeFallsBackToDemo(t *testing.T) {
	bin := testkit.CCProxyBinary(t)
	emptyPath := t.TempDir()
	env := append(testkit.WithoutEnv(testkit.WithoutEnv(testkit.WithoutEnv(os.Environ(), "CCPROXY_TOKEN"), "CCPROXY_CLAUDE"), "PATH"), "PATH="+emptyPath)
	callLog := t.TempDir()
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--project", t.TempDir(), "--call-log-dir", callLog)
	testkit.DieWithTest(cmd)
	cmd.Env = env
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr testkit.SyncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	fl := readFirstLine(t, bufio.NewReader(stdout))
	if !fl.Demo {
		t.Fatalf("first line %+v: want demo: true", fl)
	}
	if !strings.Contains(stderr.String(), "serving the built-in demo instead") {
		t.Errorf("the log does not say why it is a demo:\n%s", stderr.String())
	}
	c := dialProxy(t, fl.URL, nil, protocol.Subprotocol, protocol.TokenSubprotocolPrefix+fl.Token)
	// The demo never presents itself as a Claude Code CLI: not in hello,
	// not in /v1/health or `ccproxy status`, not in the log.
	hello := c.next("hello", func(f map[string]any) bool { return f["type"] == "hello" })
	if got := fmt.Sprint(hello["data"].(map[string]any)["claude"]); got != "map[name:ccproxy-replay version:"+testkit.ClaudeVersion+"]" {
		t.Errorf("hello's claude %s, want ccproxy-replay with the recording CLI's version", got)
	}
	req, _ := http.NewRequest("GET", fl.URL+"/v1/health", nil)
	req.Header.Set("Authorization", "Bearer "+fl.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var health struct {
		Claude map[string]any `json:"claude"`
	}
	json.NewDecoder(resp.Body).Decode(&health)
	resp.Body.Close()
	if health.Claude["name"] != "ccproxy-replay" || health.Claude["replay"] != "the built-in demo" || health.Claude["version"] != testkit.ClaudeVersion {
		t.Errorf("/v1/health's claude %v, want the replay named", health.Claude)
	}
	out, errOut, code := runCmd(t, "", "status", "--url", fl.URL, "--token", fl.Token)
	if code != 0 || !strings.Contains(out, "claude code: none: replaying the built-in demo (recorded with Claude Code "+testkit.ClaudeVersion+")\n") {
		t.Errorf("status (exit %d, %s):\n%s", code, errOut, out)
	}
	s := c.do("session/create", map[string]any{})["session"].(string)
	c.do("session/subscribe", map[string]any{"session": s})
	c.do("session/send", map[string]any{"session": s, "text": "hello demo"})
	c.next("result", isResultOf(s))
	// The demo's second turn calls MCP tools: like --demo, the fallback
	// keeps no call log (the calls would go into the project's real one).
	c.do("session/send", map[string]any{"session": s, "text": "call the tools"})
	c.next("result", isResultOf(s))
	if logged, _ := os.ReadDir(callLog); len(logged) != 0 {
		t.Errorf("the demo logged MCP calls in %s: %v", callLog, logged)
	}
	// The whole log, once ccproxy exited (stderr is copied from a pipe).
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()
	if log := stderr.String(); strings.Contains(log, "using Claude Code CLI") || !strings.Contains(log, `msg="replaying a recorded session instead of running a Claude Code CLI" replay="the built-in demo" recorded_with="Claude Code `+testkit.ClaudeVersion+`"`) {
		t.Errorf("the log presents the demo as a CLI:\n%s", log)
	}

	// Named but missing: an error, as before. So is a missing one with
	// flags --demo refuses (a live MCP setup asked for).
	mcpFile := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(mcpFile, []byte(`{"mcpServers":{}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		what  string
		args  []string
		extra []string
	}{
		{"with $CCPROXY_CLAUDE naming a missing file", nil, []string{"CCPROXY_CLAUDE=" + filepath.Join(emptyPath, "claude")}},
		{"with --mcp-config", []string{"--mcp-config", mcpFile}, nil},
		{"with --trust-project-mcp", []string{"--trust-project-mcp"}, nil},
	} {
		bad := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0", "--project", t.TempDir()}, c.args...)...)
		testkit.DieWithTest(bad)
		bad.Env = append(slices.Clone(env), c.extra...)
		out, _ := bad.StdoutPipe()
		var badErr testkit.SyncBuffer
		bad.Stderr = &badErr
		if err := bad.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { bad.Process.Kill(); bad.Wait() })
		if bl := readFirstLine(t, bufio.NewReader(out)); bl.Demo {
			t.Errorf("%s: the first line says demo: true, want no demo", c.what)
		}
	}
}

// TestReadmeServeFlags: the README's `ccproxy serve` table lists every flag
// of `ccproxy serve --help`, and the README never says serve lacks one it has.
func TestReadmeServeFlags(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	_, section, ok := strings.Cut(readme, "\n## `ccproxy serve`\n")
	if !ok {
		t.Fatal("README has no section ## `ccproxy serve`")
	}
	if i := strings.Index(section, "\n## "); i >= 0 {
		section = section[:i]
	}
	var rows []string
	for line := range strings.SplitSeq(section, "\n") {
		if strings.HasPrefix(line, "| `--") {
			cells := strings.SplitN(line, "|", 3)
			rows = append(rows, cells[1])
		}
	}
	fs := newServeCmd().Flags() // addServeFlags' and serve's own (--warm)
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		name := "`--" + f.Name
		if !slices.ContainsFunc(rows, func(r string) bool {
			return strings.Contains(r, name+"`") || strings.Contains(r, name+" ")
		}) {
			t.Errorf("the README's serve table has no row for --%s", f.Name)
		}
		if strings.Contains(readme, "no `--"+f.Name+"`") {
			t.Errorf("the README says serve has no --%s", f.Name)
		}
	})
}
