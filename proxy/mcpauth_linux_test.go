package proxy

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ccproxy/ccproxy/internal/childproc"
	"github.com/ccproxy/ccproxy/protocol"
)

// startAuthServer starts a proxy on the fake claude whose configuration has
// an http server "oa" (project scope) and a stdio server "local" (unless
// opts.MCP is given), with env for the fake's `mcp login`.
func startAuthServer(t *testing.T, opts Options, env ...string) (*testServer, *wsClient) {
	t.Helper()
	if !childproc.TerminalSupported {
		t.Skip("no pseudo-terminals on this platform")
	}
	if opts.MCP == nil {
		src := newTestSource(t, map[string]string{"oa": `{"type":"http","url":"http://127.0.0.1:1/mcp"}`, "local": `{"command":"x","args":[]}`})
		src.set(src.servers, map[string]string{"oa": protocol.ApprovalApproved})
		opts.MCP = src
	}
	ts := startServer(t, opts, env...)
	c := ts.dial(t)
	if caps := helloCaps(t, c); !slices.Contains(caps, protocol.CapMCPAuth) {
		t.Fatalf("capabilities %v lack %s", caps, protocol.CapMCPAuth)
	}
	return ts, c
}

// fifo makes a FIFO the fake's login waits on; release lets it go on (in
// a goroutine: opening a FIFO waits for its reader, which a fake that
// failed never opens; the cleanup frees such a writer).
func fifo(t *testing.T) (path string, release func()) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "gate")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var started bool
	t.Cleanup(func() {
		if !started {
			return
		}
		if r, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			<-done
			r.Close()
		}
	})
	return path, func() {
		started = true
		go func() { // joined by the cleanup
			defer close(done)
			os.WriteFile(path, []byte("go"), 0o600)
		}()
	}
}

func loginPush(t *testing.T, c *wsClient, from int, state string) protocol.MCPLoginEvent {
	t.Helper()
	var ev protocol.MCPLoginEvent
	c.waitPush(from, protocol.TypeMCPLoginEvent, &ev, func(raw json.RawMessage) bool {
		return strings.Contains(string(raw), `"state":"`+state+`"`)
	})
	return ev
}

// TestMCPLoginFlow: mcp/login runs `claude mcp login NAME --no-browser`
// with a terminal on stdin (the fake, like the CLI, refuses otherwise) in
// the project with claude's environment, replies with the URL it printed
// (terminal escapes removed) and pushes url, then done with the CLI's
// message; mcp/logout replies with the CLI's message.
func TestMCPLoginFlow(t *testing.T) {
	gate, release := fifo(t)
	argsFile := filepath.Join(t.TempDir(), "args")
	_, c := startAuthServer(t, Options{}, "FAKE_LOGIN_GATE="+gate, "FAKE_ARGS_FILE="+argsFile)
	from := c.count()
	var r protocol.MCPLoginResult
	mustUnmarshal(t, c.do(protocol.TypeMCPLogin, map[string]any{"name": "oa"}), &r)
	const want = "http://127.0.0.1:1/authorize?client_id=c1&redirect_uri=http%3A%2F%2Flocalhost%3A1%2Fcallback&state=st1"
	if r.Name != "oa" || r.URL != want {
		t.Fatalf("reply %+v, want url %s", r, want)
	}
	if ev := loginPush(t, c, from, protocol.LoginURL); ev.URL != want {
		t.Errorf("url push %+v", ev)
	}
	// mcp/login {name, redirect}: only the login's redirect_uri, delivered
	// to the CLI's callback (none listens on port 1 here).
	for _, tc := range []struct {
		name, redirect string
		code           protocol.Code
	}{
		{"oa", "http://localhost:2/callback?code=CODE-X&state=st1", protocol.CodeBadRequest},
		{"oa", "http://localhost:1/other?code=CODE-X", protocol.CodeBadRequest},
		{"oa", "http://localhost:1/callback", protocol.CodeBadRequest},
		{"local", "http://localhost:1/callback?code=CODE-X", protocol.CodeNotFound},
		{"oa", "http://localhost:1/callback?code=CODE-X&state=st1", protocol.CodeCLIError},
	} {
		perr := c.doErr(protocol.TypeMCPLogin, map[string]any{"name": tc.name, "redirect": tc.redirect})
		if perr.Code != tc.code || strings.Contains(perr.Message, "CODE-X") {
			t.Errorf("redirect %s to %s: %v, want %s without the code", tc.redirect, tc.name, perr, tc.code)
		}
	}
	b, _ := os.ReadFile(argsFile)
	if string(b) != `["mcp","login","--no-browser","--","oa"]` {
		t.Errorf("claude ran with %s", b)
	}
	release()
	if ev := loginPush(t, c, from, protocol.LoginDone); ev.Message != `Authenticated with "oa". Its tools are now available in Claude Code.` {
		t.Errorf("done push %+v", ev)
	}

	var out protocol.MCPLogoutResult
	mustUnmarshal(t, c.do(protocol.TypeMCPLogout, map[string]any{"name": "oa"}), &out)
	if !strings.HasPrefix(out.Message, `Signed out of "oa".`) || out.Sessions == nil {
		t.Errorf("logout reply %+v", out)
	}
	if perr := c.doErr(protocol.TypeMCPLogin, map[string]any{"name": "local"}); perr.Code != protocol.CodeBadRequest || !strings.Contains(perr.Message, "stdio") {
		t.Errorf("login of a stdio server: %v", perr)
	}
	if perr := c.doErr(protocol.TypeMCPLogin, map[string]any{"name": "zz"}); perr.Code != protocol.CodeMCPServerNotFound {
		t.Errorf("login of an unknown server: %v", perr)
	}
}

// TestMCPLoginFailures: a CLI failing after the URL gives a failed push
// with cli_error and its message, URL query values masked (no code in any
// frame or the log); failing before a URL gives an error reply and no
// push; a failing logout gives cli_error.
func TestMCPLoginFailures(t *testing.T) {
	gate, release := fifo(t)
	ts, c := startAuthServer(t, Options{}, "FAKE_LOGIN_GATE="+gate, "FAKE_LOGIN=fail", "FAKE_LOGOUT=fail")
	from := c.count()
	c.do(protocol.TypeMCPLogin, map[string]any{"name": "oa"})
	release()
	ev := loginPush(t, c, from, protocol.LoginFailed)
	if ev.Error == nil || ev.Error.Code != protocol.CodeCLIError || !strings.Contains(ev.Error.Message, "OAuth error: invalid_grant") {
		t.Errorf("failed push %+v", ev)
	}
	if perr := c.doErr(protocol.TypeMCPLogout, map[string]any{"name": "oa"}); perr.Code != protocol.CodeCLIError || !strings.Contains(perr.Message, "store is locked") {
		t.Errorf("failing logout: %v", perr)
	}
	for _, f := range c.snapshot() {
		if strings.Contains(string(f.raw), "CODE-SECRET") {
			t.Errorf("a frame holds the code: %s", f.raw)
		}
	}
	if strings.Contains(ts.logBuf.String(), "CODE-SECRET") {
		t.Errorf("the log holds the code")
	}

	ts2, c2 := startAuthServer(t, Options{}, "FAKE_LOGIN=early")
	from = c2.count()
	if perr := c2.doErr(protocol.TypeMCPLogin, map[string]any{"name": "oa"}); perr.Code != protocol.CodeCLIError || !strings.Contains(perr.Message, `No MCP server named "oa"`) {
		t.Errorf("login failing before its URL: %v", perr)
	}
	c2.do(protocol.TypeSessionList, map[string]any{}) // any push of the login came before this reply
	for _, f := range c2.snapshot()[from:] {
		if f.Type == protocol.TypeMCPLoginEvent {
			t.Errorf("a push after an error reply: %s", f.raw)
		}
	}
	_ = ts2
}

// gone reports whether the process whose pid is in file has ended (no
// such process, or a zombie left for init to reap: the guard that was its
// parent was killed).
func gone(t *testing.T, file string) bool {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(string(b))
	return pidGone(pid)
}

func pidGone(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
	}
	_, after, ok := strings.Cut(string(stat), ") ")
	return ok && (strings.HasPrefix(after, "Z") || strings.HasPrefix(after, "X"))
}

// TestMCPLoginStops: a login that never completes is stopped (its CLI
// killed and reaped) by a new mcp/login of the server (failed, cancelled),
// by mcp/logout (cancelled), when its connection closes, and after
// MCPLoginTimeout (timeout).
func TestMCPLoginStops(t *testing.T) {
	dir := t.TempDir()
	pidfile := filepath.Join(dir, "pid")
	ts, c := startAuthServer(t, Options{}, "FAKE_LOGIN=hang", "FAKE_LOGIN_PIDFILE="+pidfile)

	from := c.count()
	c.do(protocol.TypeMCPLogin, map[string]any{"name": "oa"})
	b1, _ := os.ReadFile(pidfile)
	c.do(protocol.TypeMCPLogin, map[string]any{"name": "oa"}) // replies once the first CLI is reaped
	ev := loginPush(t, c, from, protocol.LoginFailed)
	if ev.Error == nil || ev.Error.Code != protocol.CodeCancelled || !strings.Contains(ev.Error.Message, "new mcp/login") {
		t.Errorf("replaced login: %+v", ev)
	}
	if pid, _ := strconv.Atoi(string(b1)); !pidGone(pid) {
		t.Errorf("the replaced login's CLI (pid %d) still runs", pid)
	}

	from = c.count()
	c.do(protocol.TypeMCPLogout, map[string]any{"name": "oa"})
	if ev := loginPush(t, c, from, protocol.LoginFailed); ev.Error == nil || ev.Error.Code != protocol.CodeCancelled || !strings.Contains(ev.Error.Message, "mcp/logout") {
		t.Errorf("login cancelled by logout: %+v", ev)
	}
	if !gone(t, pidfile) {
		t.Errorf("the CLI of a login cancelled by mcp/logout still runs")
	}

	// The connection closes: the CLI is stopped. Another connection's
	// login of the same server waits for it to be reaped before starting.
	c.do(protocol.TypeMCPLogin, map[string]any{"name": "oa"})
	b2, _ := os.ReadFile(pidfile)
	c.conn.Close()
	c3 := ts.dial(t)
	c3.do(protocol.TypeMCPLogin, map[string]any{"name": "oa"})
	if pid, _ := strconv.Atoi(string(b2)); !pidGone(pid) {
		t.Errorf("the CLI of a closed connection's login (pid %d) still runs", pid)
	}

	_, c4 := startAuthServer(t, Options{MCPOptions: MCPOptions{MCPLoginTimeout: time.Millisecond}}, "FAKE_LOGIN=hang")
	f := c4.reply(c4.send(protocol.TypeMCPLogin, map[string]any{"name": "oa"}))
	var perr *protocol.Error
	if f.OK != nil && *f.OK { // the URL came first: the timeout is pushed
		perr = loginPush(t, c4, 0, protocol.LoginFailed).Error
	} else {
		perr = f.Error
	}
	if perr == nil || perr.Code != protocol.CodeTimeout {
		t.Errorf("login past MCPLoginTimeout: %v", perr)
	}
}

// TestMCPLoginShutdown: when the proxy shuts down, a running login's CLI
// is killed and reaped before Serve returns, and its connection is told
// (failed, cancelled, "shutting down") before it closes.
func TestMCPLoginShutdown(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pid")
	ts, c := startAuthServer(t, Options{}, "FAKE_LOGIN=hang", "FAKE_LOGIN_PIDFILE="+pidfile)
	from := c.count()
	c.do(protocol.TypeMCPLogin, map[string]any{"name": "oa"})
	if err := ts.stop(); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if !gone(t, pidfile) {
		t.Errorf("the CLI of a login still runs after Serve returned")
	}
	ev := loginPush(t, c, from, protocol.LoginFailed)
	if ev.Error == nil || ev.Error.Code != protocol.CodeCancelled || !strings.Contains(ev.Error.Message, "shutting down") {
		t.Errorf("login at shutdown: %+v", ev)
	}
}
