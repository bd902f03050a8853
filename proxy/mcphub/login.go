package mcphub

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/ccproxy/ccproxy/internal/childproc"
	"github.com/ccproxy/ccproxy/internal/textutil"
	"github.com/ccproxy/ccproxy/protocol"
)

// OAuth sign-in of MCP servers through the CLI's own `claude mcp login` /
// `claude mcp logout` (mcp/login, mcp/logout; capability mcp.auth): see
// doc.go for the flow.

const (
	// maxLogins bounds the logins running at once.
	maxLogins = 8
	// loginOutputBytes bounds what is kept of the CLI's stdout and stderr.
	loginOutputBytes = 16 << 10
	// logoutTimeout bounds `claude mcp logout`.
	logoutTimeout = 30 * time.Second
	// callbackTimeout bounds the delivery of a redirect to the CLI's callback.
	callbackTimeout = 30 * time.Second
)

// LoginConfig is what Logins needs of the proxy.
type LoginConfig struct {
	// Command builds `claude [prefix] ARGS…` as sessions run claude (same
	// binary, environment and directory), or the error of request typ
	// (claude_unavailable).
	Command func(typ string, args ...string) (*exec.Cmd, error)
	Manage  *Manage             // AuthTarget
	Live    *Live               // mcp_reconnect everywhere after a login or logout
	Scrub   func(string) string // Hub.Scrub: the secrets of the configuration in force
	Timeout time.Duration       // of a login (Options.MCPLoginTimeout)
}

// Logins are the logins running (one per server name, at most maxLogins)
// and the requests mcp/login and mcp/logout. A login runs in a goroutine
// its caller owns (the connection's), which owns the CLI process and one
// goroutine reading its stdout to the end; mu guards running and closed.
// Close stops every login and waits for their ends.
type Logins struct {
	cfg LoginConfig

	mu      sync.Mutex
	running map[string]*login
	closed  bool // Close was called: no new login starts
}

// NewLogins returns the logins component; nothing runs until a login.
func NewLogins(cfg LoginConfig) *Logins {
	return &Logins{cfg: cfg, running: map[string]*login{}}
}

// login is one running `claude mcp login`.
type login struct {
	cancel     chan struct{} // closed (once) to stop it
	cancelWhy  string        // set before cancel is closed
	done       chan struct{} // closed when the CLI has been reaped and the last reply or push queued
	cancelOnce sync.Once
	redirect   string // the URL's redirect_uri once known (guarded by Logins.mu)
}

func (l *login) stop(why string) {
	l.cancelOnce.Do(func() {
		l.cancelWhy = why
		close(l.cancel)
	})
}

// stopAndWait stops l (if any) and waits until its CLI is reaped; false
// when ctx ends first.
func (l *login) stopAndWait(ctx context.Context, why string) bool {
	if l == nil {
		return true
	}
	l.stop(why)
	select {
	case <-l.done:
		return true
	case <-ctx.Done():
		return false
	}
}

// LoginConn is the connection a login answers: one reply (Reply or
// Fail), and mcp/login_event pushes. Its methods queue without blocking.
type LoginConn interface {
	Reply(res protocol.MCPLoginResult)
	Fail(err error)
	Push(ev protocol.MCPLoginEvent)
}

// Close stops every running login (each pushes failed, cancelled, to its
// connection) and refuses new ones, then waits until every login has
// ended (its CLI reaped, its last reply or push queued) or ctx ends. It
// may be called more than once.
func (m *Logins) Close(ctx context.Context) error {
	m.mu.Lock()
	m.closed = true
	dones := make([]chan struct{}, 0, len(m.running))
	for name, l := range m.running {
		l.stop(fmt.Sprintf("%s of %q: ccproxy is shutting down", protocol.TypeMCPLogin, name))
		dones = append(dones, l.done)
	}
	m.mu.Unlock()
	for _, d := range dones {
		select {
		case <-d:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// Login checks mcp/login {name} and registers the login; an error is
// the reply. Then run must be called, in a goroutine the caller owns
// (ctx ends with the connection): it stops a login of the same server
// still running (the CLI would find the callback port taken) and runs the
// CLI to its end, answering conn.
func (m *Logins) Login(name string) (run func(ctx context.Context, log *slog.Logger, conn LoginConn), err error) {
	typ := protocol.TypeMCPLogin
	if err := m.cfg.Manage.AuthTarget(typ, name); err != nil {
		return nil, err
	}
	cmd, err := m.cfg.Command(typ, "mcp", "login", "--no-browser", "--", name)
	if err != nil {
		return nil, err
	}
	l := &login{cancel: make(chan struct{}), done: make(chan struct{})}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, protocol.Errorf(protocol.CodeShuttingDown, "%s: ccproxy is shutting down", typ)
	}
	prev := m.running[name]
	if prev == nil && len(m.running) >= maxLogins {
		n := len(m.running)
		m.mu.Unlock()
		return nil, protocol.Errorf(protocol.CodeLimitExceeded, "%s: %d logins are running already (at most %d at once)", typ, n, maxLogins)
	}
	m.running[name] = l
	m.mu.Unlock()
	return func(ctx context.Context, log *slog.Logger, conn LoginConn) {
		defer m.ended(name, l)
		if !prev.stopAndWait(ctx, fmt.Sprintf("%s of %q was cancelled by a new mcp/login of it", typ, name)) {
			conn.Fail(protocol.Errorf(protocol.CodeShuttingDown, "%s: the connection is closing", typ))
			return
		}
		r := &loginRun{m: m, l: l, name: name, cmd: cmd, conn: conn, log: log.With("server", name)}
		r.run(ctx)
	}, nil
}

// ended forgets l and says it has ended.
func (m *Logins) ended(name string, l *login) {
	m.mu.Lock()
	if m.running[name] == l {
		delete(m.running, name)
	}
	m.mu.Unlock()
	close(l.done)
}

// loginRun is one run of `claude mcp login`: start, wait, finish.
type loginRun struct {
	m    *Logins
	l    *login
	name string
	cmd  *exec.Cmd
	conn LoginConn
	log  *slog.Logger

	stderr  *childproc.Tail
	out     loginOutput
	urls    chan string   // the authorization URL, sent once by the reader
	outDone chan struct{} // closed when the reader has read stdout to its end

	replied bool            // the reply went out (with the URL)
	stopped *protocol.Error // why ccproxy stopped the CLI
}

func (r *loginRun) run(ctx context.Context) {
	master, perr := r.start()
	if perr != nil {
		r.conn.Fail(perr) // before the reply
		return
	}
	defer master.Close()
	err := r.wait(ctx)
	r.finish(ctx, err)
}

// start gives the CLI a pseudo-terminal as stdin (which it insists on)
// and bounded pipes as stdout and stderr, starts it, and starts the
// reader of its stdout. It returns the terminal's master, to be closed
// once the CLI has ended.
func (r *loginRun) start() (io.Closer, *protocol.Error) {
	typ := protocol.TypeMCPLogin
	master, tty, err := childproc.OpenTerminal()
	if err != nil {
		r.log.Error("mcp/login: no terminal for the CLI", "err", err)
		return nil, protocol.Errorf(protocol.CodeInternal, "%s: ccproxy could not give `claude mcp login` the terminal it needs; see the proxy's log", typ)
	}
	stdout, err := r.cmd.StdoutPipe()
	if err != nil {
		tty.Close()
		master.Close()
		r.log.Error("mcp/login: stdout pipe", "err", err)
		return nil, protocol.Errorf(protocol.CodeInternal, "%s failed; see the proxy's log", typ)
	}
	r.stderr = childproc.NewTail(loginOutputBytes)
	r.cmd.Stdin, r.cmd.Stderr = tty, r.stderr
	if err := childproc.Start(r.cmd); err != nil {
		tty.Close()
		master.Close()
		r.log.Error("mcp/login: starting claude", "err", err)
		return nil, protocol.Errorf(protocol.CodeClaudeUnavailable, "%s: starting claude failed; see the proxy's log", typ)
	}
	tty.Close() // the CLI has its copy
	r.log.Info("claude mcp login started", "pid", r.cmd.Process.Pid)

	// The reader ends at stdout's EOF, when the CLI and whatever it
	// started are gone; only then does wait reap the CLI (Wait), so
	// every signal to its group goes to an unreaped group leader: its
	// pid cannot have been reused.
	r.urls = make(chan string, 1)
	r.outDone = make(chan struct{})
	go func() { // owned by the run: wait returns only after outDone
		defer close(r.outDone)
		r.out.read(stdout, r.urls)
	}()
	return master, nil
}

// wait runs until the CLI has ended and returns its exit: the URL goes to
// the client when the CLI prints it; the CLI is killed (once) when the
// login times out, is cancelled, or its connection ends.
func (r *loginRun) wait(ctx context.Context) error {
	typ := protocol.TypeMCPLogin
	timer := time.NewTimer(r.m.cfg.Timeout)
	defer timer.Stop()
	gone, cancel := ctx.Done(), r.l.cancel
	for {
		select {
		case u := <-r.urls:
			r.sendURL(u)
		case <-timer.C:
			r.kill(protocol.Errorf(protocol.CodeTimeout, "%s of %q: not completed within %s", typ, r.name, r.m.cfg.Timeout))
		case <-cancel:
			cancel = nil
			r.kill(protocol.Errorf(protocol.CodeCancelled, "%s", r.l.cancelWhy))
		case <-gone:
			gone = nil
			r.kill(protocol.Errorf(protocol.CodeCancelled, "%s of %q: the connection closed", typ, r.name))
		case <-r.outDone:
			err := r.cmd.Wait()
			select { // sent before outDone: never lose it to select's choice
			case u := <-r.urls:
				r.sendURL(u)
			default:
			}
			return err
		}
	}
}

// kill stops the CLI (its process group), the first time with why.
func (r *loginRun) kill(why *protocol.Error) {
	if r.stopped == nil {
		r.stopped = why
		childproc.SignalGroup(r.cmd.Process.Pid, syscall.SIGKILL)
	}
}

// sendURL replies with the authorization URL and pushes it.
func (r *loginRun) sendURL(u string) {
	r.m.mu.Lock()
	r.l.redirect = loginRedirectURI(u)
	r.m.mu.Unlock()
	r.replied = true
	r.conn.Reply(protocol.MCPLoginResult{Name: r.name, URL: u})
	r.conn.Push(protocol.MCPLoginEvent{Name: r.name, State: protocol.LoginURL, URL: u})
	r.log.Info("mcp/login: authorization URL sent to the client") // the URL itself is not logged
}

// finish answers how the login ended: failed (the reply, or a push after
// the URL), or, after mcp_reconnect in every live session, done.
func (r *loginRun) finish(ctx context.Context, err error) {
	if result := r.failure(err); result != nil {
		r.log.Info("claude mcp login failed", "code", result.Code, "exit", exitText(err))
		if !r.replied {
			r.conn.Fail(result)
			return
		}
		r.conn.Push(protocol.MCPLoginEvent{Name: r.name, State: protocol.LoginFailed, Error: result})
		return
	}
	r.log.Info("claude mcp login succeeded")
	msg := r.m.scrubCLIText(r.out.lastLine())
	// Even if the connection just closed: the sign-in happened.
	r.m.cfg.Live.Reconnect(context.WithoutCancel(ctx), protocol.TypeMCPLogin, r.name)
	if !r.replied {
		r.conn.Reply(protocol.MCPLoginResult{Name: r.name})
	}
	r.conn.Push(protocol.MCPLoginEvent{Name: r.name, State: protocol.LoginDone, Message: textutil.Truncate(msg, 1000)})
}

// failure is the error of a login that ended with err: why ccproxy
// stopped it, or the CLI's own words (scrubbed), or nil for success.
func (r *loginRun) failure(err error) *protocol.Error {
	switch {
	case r.stopped != nil:
		return r.stopped
	case err == nil:
		return nil
	}
	errText, _ := r.stderr.Text()
	cliMsg := r.m.scrubCLIText(lastLines(errText, 3))
	if cliMsg == "" {
		cliMsg = r.m.scrubCLIText(r.out.lastLine())
	}
	if cliMsg == "" {
		cliMsg = fmt.Sprintf("claude mcp login ended (%v) without saying why", err)
	}
	return protocol.Errorf(protocol.CodeCLIError, "%s: %s", protocol.TypeMCPLogin, textutil.Truncate(cliMsg, 1000))
}

func exitText(err error) string {
	if err == nil {
		return "0"
	}
	return err.Error()
}

// loopbackClient delivers redirects to the CLI's loopback callback: no
// proxy, no redirects followed, no connection kept.
var loopbackClient = &http.Client{
	Transport:     &http.Transport{Proxy: nil, DisableKeepAlives: true},
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// loginRedirectURI returns the redirect_uri of the authorization URL the
// CLI printed, the only address mcp/login {redirect} may reach: it must be
// the URL's one redirect_uri (an authorization endpoint that came with a
// redirect_uri of its own makes two, and the first may not be the CLI's),
// http on a loopback host with a port, without user info, query or
// fragment. Anything else gives "": no redirect is delivered.
func loginRedirectURI(authURL string) string {
	au, err := url.Parse(authURL)
	if err != nil {
		return ""
	}
	q, err := url.ParseQuery(au.RawQuery)
	if err != nil || len(q["redirect_uri"]) != 1 {
		return ""
	}
	r := q["redirect_uri"][0]
	ru, err := url.Parse(r)
	if err != nil || ru.Scheme != "http" || !loopbackHost(ru.Hostname()) || ru.Port() == "" ||
		ru.User != nil || ru.RawQuery != "" || ru.ForceQuery || ru.Fragment != "" || ru.Opaque != "" {
		return ""
	}
	return r
}

func loopbackHost(h string) bool {
	ip := net.ParseIP(h)
	return h == "localhost" || (ip != nil && ip.IsLoopback())
}

// Redirect checks mcp/login {name, redirect}: the address the browser was
// sent back to must be exactly the running login's redirect_uri (on
// loopback) plus a query. Its slow part delivers it to the CLI's
// callback. The address holds the authorization code: it is never logged
// or echoed.
func (m *Logins) Redirect(name, redirect string) (func(ctx context.Context, log *slog.Logger) (protocol.Data, error), error) {
	typ := protocol.TypeMCPLogin
	m.mu.Lock()
	var want string
	if l := m.running[name]; l != nil {
		want = l.redirect
	}
	m.mu.Unlock()
	w, err := url.Parse(want)
	if want == "" || err != nil || w.Scheme != "http" || !loopbackHost(w.Hostname()) {
		return nil, protocol.Errorf(protocol.CodeNotFound, "%s: no login of %.80q is waiting for the browser's redirect (start one with mcp/login {name})", typ, name)
	}
	got, err := url.Parse(redirect)
	if err != nil || got.Scheme != w.Scheme || got.Host != w.Host || got.Path != w.Path || got.User != nil || got.RawQuery == "" || got.Fragment != "" {
		return nil, protocol.Errorf(protocol.CodeBadRequest, "%s: redirect: not the address this login's browser is sent back to (%s://%s%s?code=…&state=…)", typ, w.Scheme, w.Host, w.Path)
	}
	return func(ctx context.Context, log *slog.Logger) (protocol.Data, error) {
		ctx, cancel := context.WithTimeout(ctx, callbackTimeout)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, got.String(), nil)
		if err != nil {
			return nil, protocol.Errorf(protocol.CodeBadRequest, "%s: redirect: not a usable address", typ)
		}
		resp, err := loopbackClient.Do(req)
		if err != nil { // its text holds the URL (and so the code): not shown
			if ctx.Err() != nil {
				return nil, protocol.Errorf(protocol.CodeTimeout, "%s: the CLI's callback at %s did not answer within %s", typ, w.Host, callbackTimeout)
			}
			return nil, protocol.Errorf(protocol.CodeCLIError, "%s: could not reach the CLI's callback at %s (has the login ended?)", typ, w.Host)
		}
		io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return nil, protocol.Errorf(protocol.CodeCLIError, "%s: the CLI's callback answered %s", typ, resp.Status)
		}
		log.Info("mcp/login: redirect delivered to the CLI's callback", "server", name)
		return protocol.MCPLoginResult{Name: name}, nil
	}, nil
}

// Logout checks mcp/logout of name; its slow part cancels a running login
// of name, runs `claude mcp logout -- NAME`, then mcp_reconnect in every
// live session (→ needs-auth).
func (m *Logins) Logout(name string) (func(ctx context.Context, log *slog.Logger) (protocol.Data, error), error) {
	typ := protocol.TypeMCPLogout
	if err := m.cfg.Manage.AuthTarget(typ, name); err != nil {
		return nil, err
	}
	cmd, err := m.cfg.Command(typ, "mcp", "logout", "--", name)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	running := m.running[name]
	m.mu.Unlock()
	return func(connCtx context.Context, log *slog.Logger) (protocol.Data, error) {
		if !running.stopAndWait(connCtx, fmt.Sprintf("%s of %q was cancelled by mcp/logout", protocol.TypeMCPLogin, name)) {
			return nil, protocol.Errorf(protocol.CodeShuttingDown, "%s: the connection is closing", typ)
		}
		ctx, cancel := context.WithTimeout(connCtx, logoutTimeout)
		defer cancel()
		out, errOut := childproc.NewHead(loginOutputBytes), childproc.NewTail(loginOutputBytes)
		cmd.Stdout, cmd.Stderr = out, errOut // stdin: the null device
		if err := childproc.Start(cmd); err != nil {
			log.Error("mcp/logout: starting claude", "err", err)
			return nil, protocol.Errorf(protocol.CodeClaudeUnavailable, "%s: starting claude failed; see the proxy's log", typ)
		}
		// Process.Kill, safe against pid reuse, kills the guard; the
		// command dies by its parent-death signal.
		stop := context.AfterFunc(ctx, func() { cmd.Process.Kill() })
		err := cmd.Wait()
		stopped := !stop()
		errText, _ := errOut.Text()
		switch {
		case stopped:
			return nil, protocol.Errorf(protocol.CodeTimeout, "%s of %q: claude mcp logout did not finish within %s", typ, name, logoutTimeout)
		case err != nil:
			msg := m.scrubCLIText(lastLines(errText, 3))
			if msg == "" {
				msg = fmt.Sprintf("claude mcp logout failed (%v)", err)
			}
			log.Info("claude mcp logout failed", "server", name, "exit", err.Error())
			return nil, protocol.Errorf(protocol.CodeCLIError, "%s: %s", typ, textutil.Truncate(msg, 1000))
		}
		log.Info("claude mcp logout done", "server", name)
		sessions := m.cfg.Live.Reconnect(connCtx, typ, name)
		return protocol.MCPLogoutResult{Name: name, Message: textutil.Truncate(m.scrubCLIText(lastLines(out.String(), 1)), 1000), Sessions: sessions}, nil
	}, nil
}
