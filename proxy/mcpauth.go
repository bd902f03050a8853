package proxy

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ccproxy/ccproxy/internal/childproc"
	"github.com/ccproxy/ccproxy/mcpconfig"
	"github.com/ccproxy/ccproxy/protocol"
)

// OAuth sign-in of MCP servers through the CLI's own `claude mcp login` /
// `claude mcp logout` (mcp/login, mcp/logout; capability mcp.auth). The
// CLI keeps the tokens in ~/.claude/.credentials.json, where every claude
// process finds them, and a live session picks them up on mcp_reconnect.
//
//	mcp/login ─► `claude mcp login --no-browser -- NAME` (stdin: a pseudo-terminal, which the CLI
//	             insists on; stdout, stderr: pipes, bounded) ─► "  https://…/authorize?…" line
//	          ─► reply {name, url} + push {state: url}
//	          … the user's browser approves; the authorization server redirects to the CLI's
//	            loopback callback; the CLI stores the tokens and exits 0
//	          ─► mcp_reconnect in every live session ─► push {state: done} (mcp/status follows)
//	             or push {state: failed, error} (exit ≠ 0, LoginTimeout, cancelled)
//	mcp/login {name, redirect} (browser on another machine) ─► GET redirect, which must be the
//	             login's loopback redirect_uri, = the CLI's callback ─► reply {name}
//	mcp/logout ─► cancel a running login of NAME ─► `claude mcp logout -- NAME` ─► mcp_reconnect
//	             in every live session (→ needs-auth) ─► reply
//
// A login runs in a goroutine of its connection (client.async), which owns
// the CLI process and one goroutine reading its stdout to the end; it
// reaps the CLI after that, and stops it before (SIGKILL to its group)
// when its connection ends, the proxy shuts down, MCPLoginTimeout passes, or mcp/logout or a new mcp/login of the same server
// cancels it. mcpLogins.mu guards the map of running logins (one per
// server name, at most maxMCPLogins).

const (
	// maxMCPLogins bounds the logins running at once.
	maxMCPLogins = 8
	// loginOutputBytes bounds what is kept of the CLI's stdout and stderr.
	loginOutputBytes = 16 << 10
	// logoutTimeout bounds `claude mcp logout`.
	logoutTimeout = 30 * time.Second
)

// mcpLogins are the logins running.
type mcpLogins struct {
	mu      sync.Mutex // guards running and closed
	running map[string]*mcpLogin
	closed  bool // stopAll was called: no new login starts
}

// mcpLogin is one running `claude mcp login`.
type mcpLogin struct {
	cancel     chan struct{} // closed (once, under mcpLogins.mu) to stop it
	cancelWhy  string        // set before cancel is closed
	done       chan struct{} // closed when the CLI has been reaped
	cancelOnce sync.Once
	redirect   string // the URL's redirect_uri once known (guarded by mcpLogins.mu)
}

func (l *mcpLogin) stop(why string) {
	l.cancelOnce.Do(func() {
		l.cancelWhy = why
		close(l.cancel)
	})
}

// stopAndWait stops l (if any) and waits until its CLI is reaped; false
// when ctx ends first.
func (l *mcpLogin) stopAndWait(ctx context.Context, why string) bool {
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

// stopAll stops every running login and refuses new ones (shutdown); each
// pushes failed, cancelled, to its connection, which wait lets reach the
// connection before it closes.
func (m *mcpLogins) stopAll(why string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	for name, l := range m.running {
		l.stop(fmt.Sprintf("%s of %q: %s", protocol.TypeMCPLogin, name, why))
	}
}

// wait returns once every login has ended (its CLI reaped, its last
// reply or push queued). Call it after stopAll, before the connections
// close.
func (m *mcpLogins) wait() {
	m.mu.Lock()
	dones := make([]chan struct{}, 0, len(m.running))
	for _, l := range m.running {
		dones = append(dones, l.done)
	}
	m.mu.Unlock()
	for _, d := range dones {
		<-d
	}
}

// authTarget checks that name can sign in with OAuth: configured, of type
// http or sse, in Claude Code's own configuration.
func (s *Server) authTarget(typ, name string) error {
	srv, err := s.configuredServer(typ, name)
	switch {
	case err != nil:
		return err
	case srv.Type != "http" && srv.Type != "sse":
		return protocol.Errorf(protocol.CodeBadRequest, "%s: %.80q is a %s server: OAuth sign-in is only for http and sse servers", typ, name, srv.Type)
	case srv.Scope == string(mcpconfig.ScopeExtra):
		return protocol.Errorf(protocol.CodeBadRequest, "%s: %.80q is defined only in a file given to ccproxy (--mcp-config), which `claude mcp login` does not read: add it to Claude Code's configuration (mcp/add)", typ, name)
	}
	return nil
}

// loginCommand builds `claude [prefix] mcp login --no-browser -- NAME` or
// `claude [prefix] mcp logout -- NAME` as sessions run claude: same
// binary, environment (without the proxy's token) and directory (the
// project). The name comes after "--", so that no configured name reads
// as an option (2.1.329 and 2.1.332 take a name after "--";
// docs/CLI-NOTES.md); authTarget has refused one starting with "-"
// already.
func (s *Server) loginCommand(typ string, args ...string) (*exec.Cmd, error) {
	claude, err := s.findClaude()
	if err != nil {
		return nil, protocol.Errorf(protocol.CodeClaudeUnavailable, "%s: %s", typ, strings.TrimPrefix(err.Error(), ErrClaudeUnavailable.Error()+": "))
	}
	argv := append(slices.Clone(s.opts.ClaudePrefixArgs), args...)
	cmd := exec.Command(claude.Path, argv...)
	cmd.Dir = s.opts.Project
	cmd.Env = s.claudeEnv()
	return cmd, nil
}

// reqMCPLogin serves mcp/login.
func (s *Server) reqMCPLogin(c *client, id json.RawMessage, d *protocol.MCPLogin) {
	typ, name := protocol.TypeMCPLogin, d.Name
	if d.Redirect != "" {
		s.reqMCPLoginRedirect(c, id, name, d.Redirect)
		return
	}
	if err := s.authTarget(typ, name); err != nil {
		c.replyErr(id, err)
		return
	}
	cmd, err := s.loginCommand(typ, "mcp", "login", "--no-browser", "--", name)
	if err != nil {
		c.replyErr(id, err)
		return
	}
	l := &mcpLogin{cancel: make(chan struct{}), done: make(chan struct{})}
	s.auth.mu.Lock()
	if s.auth.closed {
		s.auth.mu.Unlock()
		c.replyErr(id, protocol.Errorf(protocol.CodeShuttingDown, "%s: ccproxy is shutting down", typ))
		return
	}
	prev := s.auth.running[name]
	if prev == nil && len(s.auth.running) >= maxMCPLogins {
		s.auth.mu.Unlock()
		c.replyErr(id, protocol.Errorf(protocol.CodeLimitExceeded, "%s: %d logins are running already (at most %d at once)", typ, len(s.auth.running), maxMCPLogins))
		return
	}
	s.auth.running[name] = l
	s.auth.mu.Unlock()
	c.async(func() {
		defer func() {
			s.auth.mu.Lock()
			if s.auth.running[name] == l {
				delete(s.auth.running, name)
			}
			s.auth.mu.Unlock()
			close(l.done)
		}()
		// The CLI would find the callback port taken.
		if !prev.stopAndWait(c.ctx, fmt.Sprintf("%s of %q was cancelled by a new mcp/login of it", typ, name)) {
			c.replyErr(id, protocol.Errorf(protocol.CodeShuttingDown, "%s: the connection is closing", typ))
			return
		}
		s.runLogin(c, id, name, cmd, l)
	})
}

// runLogin runs the CLI of one login to its end (see the file comment).
func (s *Server) runLogin(c *client, id json.RawMessage, name string, cmd *exec.Cmd, l *mcpLogin) {
	typ := protocol.TypeMCPLogin
	log := c.log.With("server", name)
	fail := func(err *protocol.Error) { c.replyErr(id, err) } // before the reply
	master, tty, err := childproc.OpenTerminal()
	if err != nil {
		log.Error("mcp/login: no terminal for the CLI", "err", err)
		fail(protocol.Errorf(protocol.CodeInternal, "%s: ccproxy could not give `claude mcp login` the terminal it needs; see the proxy's log", typ))
		return
	}
	defer master.Close()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tty.Close()
		fail(protocol.Errorf(protocol.CodeInternal, "%s failed; see the proxy's log", typ))
		log.Error("mcp/login: stdout pipe", "err", err)
		return
	}
	stderr := childproc.NewTail(loginOutputBytes)
	cmd.Stdin, cmd.Stderr = tty, stderr
	if err := childproc.Start(cmd); err != nil {
		tty.Close()
		log.Error("mcp/login: starting claude", "err", err)
		fail(protocol.Errorf(protocol.CodeClaudeUnavailable, "%s: starting claude failed; see the proxy's log", typ))
		return
	}
	tty.Close() // the CLI has its copy
	pid := cmd.Process.Pid
	log.Info("claude mcp login started", "pid", pid)

	// The reader ends at stdout's EOF, when the CLI and whatever it
	// started are gone; only then does runLogin reap the CLI (Wait), so
	// every signal to its group goes to an unreaped group leader: its
	// pid cannot have been reused.
	urls := make(chan string, 1)
	outDone := make(chan struct{})
	var out loginOutput
	go func() { // owned by runLogin: it waits for outDone before returning
		defer close(outDone)
		out.read(stdout, urls)
	}()

	timer := time.NewTimer(s.opts.MCPLoginTimeout)
	defer timer.Stop()
	replied := false
	var stopped *protocol.Error // why ccproxy stopped the CLI
	kill := func(why *protocol.Error) {
		if stopped == nil {
			stopped = why
			childproc.SignalGroup(pid, syscall.SIGKILL)
		}
	}
	gone := c.ctx.Done()
	sendURL := func(u string) {
		s.auth.mu.Lock()
		l.redirect = loginRedirectURI(u)
		s.auth.mu.Unlock()
		replied = true
		c.reply(id, protocol.MCPLoginResult{Name: name, URL: u})
		s.pushLogin(c, protocol.MCPLoginEvent{Name: name, State: protocol.LoginURL, URL: u})
		log.Info("mcp/login: authorization URL sent to the client") // the URL itself is not logged
	}
	for {
		select {
		case u := <-urls:
			sendURL(u)
			continue
		case <-timer.C:
			kill(protocol.Errorf(protocol.CodeTimeout, "%s of %q: not completed within %s", typ, name, s.opts.MCPLoginTimeout))
			continue
		case <-l.cancel:
			kill(protocol.Errorf(protocol.CodeCancelled, "%s", l.cancelWhy))
			continue
		case <-gone:
			gone = nil
			kill(protocol.Errorf(protocol.CodeCancelled, "%s of %q: the connection closed", typ, name))
			continue
		case <-outDone:
			err = cmd.Wait()
			select { // sent before outDone: never lose it to select's choice
			case u := <-urls:
				sendURL(u)
			default:
			}
		}
		break
	}
	errText, _ := stderr.Text()
	msg := s.scrubCLIText(out.lastLine())
	cliMsg := s.scrubCLIText(lastLines(errText, 3))
	var result *protocol.Error
	switch {
	case stopped != nil:
		result = stopped
	case err != nil:
		if cliMsg == "" {
			cliMsg = s.scrubCLIText(out.lastLine())
		}
		if cliMsg == "" {
			cliMsg = fmt.Sprintf("claude mcp login ended (%v) without saying why", err)
		}
		result = protocol.Errorf(protocol.CodeCLIError, "%s: %s", typ, truncate(cliMsg, 1000))
	}
	if result != nil {
		log.Info("claude mcp login failed", "code", result.Code, "exit", exitText(err))
		if !replied {
			fail(result)
			return
		}
		s.pushLogin(c, protocol.MCPLoginEvent{Name: name, State: protocol.LoginFailed, Error: result})
		return
	}
	log.Info("claude mcp login succeeded")
	// Even if the connection just closed: the sign-in happened.
	s.mcpLiveEach(context.WithoutCancel(c.ctx), typ, name, s.liveSessions(), reconnectMCP(name))
	if !replied {
		c.reply(id, protocol.MCPLoginResult{Name: name})
	}
	s.pushLogin(c, protocol.MCPLoginEvent{Name: name, State: protocol.LoginDone, Message: truncate(msg, 1000)})
}

func exitText(err error) string {
	if err == nil {
		return "0"
	}
	return err.Error()
}

func (s *Server) pushLogin(c *client, ev protocol.MCPLoginEvent) {
	b, err := encodePush(protocol.TypeMCPLoginEvent, ev)
	if err != nil {
		c.log.Error("mcp/login push cannot be encoded", "err", err)
		return
	}
	c.enqueue(outFrame{data: b})
}

// callbackTimeout bounds the delivery of a redirect to the CLI's callback.
const callbackTimeout = 30 * time.Second

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

// reqMCPLoginRedirect serves mcp/login {name, redirect}: it delivers the
// address the browser was sent back to to the running login's callback,
// which must be exactly its redirect_uri (on loopback) plus a query. The
// address holds the authorization code: it is never logged or echoed.
func (s *Server) reqMCPLoginRedirect(c *client, id json.RawMessage, name, redirect string) {
	typ := protocol.TypeMCPLogin
	s.auth.mu.Lock()
	var want string
	if l := s.auth.running[name]; l != nil {
		want = l.redirect
	}
	s.auth.mu.Unlock()
	w, err := url.Parse(want)
	if want == "" || err != nil || w.Scheme != "http" || !loopbackHost(w.Hostname()) {
		c.replyErr(id, protocol.Errorf(protocol.CodeNotFound, "%s: no login of %.80q is waiting for the browser's redirect (start one with mcp/login {name})", typ, name))
		return
	}
	got, err := url.Parse(redirect)
	if err != nil || got.Scheme != w.Scheme || got.Host != w.Host || got.Path != w.Path || got.User != nil || got.RawQuery == "" || got.Fragment != "" {
		c.replyErr(id, protocol.Errorf(protocol.CodeBadRequest, "%s: redirect: not the address this login's browser is sent back to (%s://%s%s?code=…&state=…)", typ, w.Scheme, w.Host, w.Path))
		return
	}
	c.async(func() {
		ctx, cancel := context.WithTimeout(c.ctx, callbackTimeout)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, got.String(), nil)
		if err != nil {
			c.replyErr(id, protocol.Errorf(protocol.CodeBadRequest, "%s: redirect: not a usable address", typ))
			return
		}
		resp, err := loopbackClient.Do(req)
		if err != nil { // its text holds the URL (and so the code): not shown
			if ctx.Err() != nil {
				c.replyErr(id, protocol.Errorf(protocol.CodeTimeout, "%s: the CLI's callback at %s did not answer within %s", typ, w.Host, callbackTimeout))
				return
			}
			c.replyErr(id, protocol.Errorf(protocol.CodeCLIError, "%s: could not reach the CLI's callback at %s (has the login ended?)", typ, w.Host))
			return
		}
		io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			c.replyErr(id, protocol.Errorf(protocol.CodeCLIError, "%s: the CLI's callback answered %s", typ, resp.Status))
			return
		}
		c.log.Info("mcp/login: redirect delivered to the CLI's callback", "server", name)
		c.reply(id, protocol.MCPLoginResult{Name: name})
	})
}

// reqMCPLogout serves mcp/logout.
func (s *Server) reqMCPLogout(c *client, id json.RawMessage, name string) {
	typ := protocol.TypeMCPLogout
	if err := s.authTarget(typ, name); err != nil {
		c.replyErr(id, err)
		return
	}
	cmd, err := s.loginCommand(typ, "mcp", "logout", "--", name)
	if err != nil {
		c.replyErr(id, err)
		return
	}
	s.auth.mu.Lock()
	running := s.auth.running[name]
	s.auth.mu.Unlock()
	c.async(func() {
		if !running.stopAndWait(c.ctx, fmt.Sprintf("%s of %q was cancelled by mcp/logout", protocol.TypeMCPLogin, name)) {
			c.replyErr(id, protocol.Errorf(protocol.CodeShuttingDown, "%s: the connection is closing", typ))
			return
		}
		ctx, cancel := context.WithTimeout(c.ctx, logoutTimeout)
		defer cancel()
		out, errOut := childproc.NewHead(loginOutputBytes), childproc.NewTail(loginOutputBytes)
		cmd.Stdout, cmd.Stderr = out, errOut // stdin: the null device
		if err := childproc.Start(cmd); err != nil {
			c.log.Error("mcp/logout: starting claude", "err", err)
			c.replyErr(id, protocol.Errorf(protocol.CodeClaudeUnavailable, "%s: starting claude failed; see the proxy's log", typ))
			return
		}
		// Process.Kill, safe against pid reuse, kills the guard; the
		// command dies by its parent-death signal.
		stop := context.AfterFunc(ctx, func() { cmd.Process.Kill() })
		err := cmd.Wait()
		stopped := !stop()
		errText, _ := errOut.Text()
		switch {
		case stopped:
			c.replyErr(id, protocol.Errorf(protocol.CodeTimeout, "%s of %q: claude mcp logout did not finish within %s", typ, name, logoutTimeout))
			return
		case err != nil:
			msg := s.scrubCLIText(lastLines(errText, 3))
			if msg == "" {
				msg = fmt.Sprintf("claude mcp logout failed (%v)", err)
			}
			c.log.Info("claude mcp logout failed", "server", name, "exit", err.Error())
			c.replyErr(id, protocol.Errorf(protocol.CodeCLIError, "%s: %s", typ, truncate(msg, 1000)))
			return
		}
		c.log.Info("claude mcp logout done", "server", name)
		sessions := s.mcpLiveEach(c.ctx, typ, name, s.liveSessions(), reconnectMCP(name))
		c.reply(id, protocol.MCPLogoutResult{Name: name, Message: truncate(s.scrubCLIText(lastLines(out.String(), 1)), 1000), Sessions: sessions})
	})
}

// loginOutput reads the stdout of `claude mcp login`: it finds the
// authorization URL and keeps the last line. Lines are cut at
// loginOutputBytes.
type loginOutput struct {
	last string
}

// urlLine matches the line the CLI prints the URL on ("  https://…"),
// once terminal escapes are removed.
var (
	urlLine     = regexp.MustCompile(`^\s*(https?://\S+)\s*$`)
	ansiEscapes = regexp.MustCompile(`\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b\[[0-9;?]*[ -/]*[@-~]`)
)

func (o *loginOutput) read(r io.Reader, urls chan<- string) {
	br := bufio.NewReaderSize(r, loginOutputBytes)
	sent := false
	for {
		line, err := br.ReadSlice('\n')
		// A copy (line is br's buffer); of an overlong line, its start: the
		// rest is skipped.
		text := strings.TrimSpace(ansiEscapes.ReplaceAllString(string(line), ""))
		for errors.Is(err, bufio.ErrBufferFull) {
			_, err = br.ReadSlice('\n')
		}
		if text != "" {
			o.last = text
		}
		if m := urlLine.FindStringSubmatch(text); m != nil && !sent {
			if u, perr := url.Parse(m[1]); perr == nil && u.Host != "" {
				sent = true
				urls <- m[1] // buffered 1; sent once
			}
		}
		if err != nil {
			io.Copy(io.Discard, r)
			return
		}
	}
}

// lastLine is the last non-empty line read (the CLI's final message).
// Read it after read returned.
func (o *loginOutput) lastLine() string { return o.last }

// lastLines returns the last n non-empty lines of text, joined by "; ".
func lastLines(text string, n int) string {
	var lines []string
	for l := range strings.SplitSeq(text, "\n") {
		if l = strings.TrimSpace(ansiEscapes.ReplaceAllString(l, "")); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "; ")
}

var urlInText = regexp.MustCompile(`https?://\S+`)

// scrubCLIText prepares a message of the CLI for a client: the secrets of
// the configuration in force masked (mcpHub.scrub), and in every URL the
// user info, query values and fragment (codes, states, tokens).
func (s *Server) scrubCLIText(text string) string {
	text = urlInText.ReplaceAllStringFunc(text, mcpconfig.RedactURL)
	return s.mcp.Scrub(text)
}
