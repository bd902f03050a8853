package proxy

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/ccproxy/ccproxy/internal/testkit/mcptest"
	"github.com/ccproxy/ccproxy/internal/testkit/oauthmcp"
	"github.com/ccproxy/ccproxy/protocol"
)

// openAuthURL plays the user's browser: GET the authorization URL and
// follow the redirects (the test authorization server approves at once) to
// the CLI's loopback callback.
func openAuthURL(t *testing.T, u string) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatalf("opening the authorization URL: %v", err)
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(resp.Request.URL.Path, "callback") {
		t.Fatalf("authorization URL ended at %s with %s: %.300s", resp.Request.URL.Redacted(), resp.Status, body)
	}
}

// TestE2EMCPLoginLogout: with the real CLI and an OAuth-protected MCP
// server on loopback (oauthmcp), a live session shows the server
// needs-auth; mcp/login replies with the CLI's authorization URL; opening
// it completes the sign-in (push done), the live session is reconnected
// (connected) and a tool of the server works in a turn; mcp/logout signs
// out (needs-auth again); a login in progress is cancelled by mcp/logout;
// bad targets get clear errors; no code or token reaches a frame or the log.
func TestE2EMCPLoginLogout(t *testing.T) {
	t.Parallel()
	oa := oauthmcp.Serve(t, mcptest.NewServer(), oauthmcp.Options{})
	e := startE2E(t, Options{})
	c := e.dial(t)
	if caps := helloCaps(t, c); !slices.Contains(caps, protocol.CapMCPAuth) {
		t.Fatalf("capabilities %v lack %s", caps, protocol.CapMCPAuth)
	}
	c.do(protocol.TypeMCPSubscribe, map[string]any{})
	// In Claude Code's own configuration (local scope), where `claude mcp login` looks.
	c.do(protocol.TypeMCPAdd, map[string]any{"name": "oa", "scope": "local", "definition": map[string]any{"type": "http", "url": oa.URL}})
	from := c.count()
	s := c.create(nil)
	status := func(from int, want string) int {
		t.Helper()
		_, i := waitStatus(c, from, "oa "+want, func(st protocol.MCPStatus) bool {
			x := statusOf(st, "oa")
			return x != nil && x.Status == want && x.Origin == protocol.OriginSession
		})
		return i
	}
	status(from, protocol.MCPNeedsAuth)

	// Bad targets.
	for _, tc := range []struct {
		typ, name string
		code      protocol.Code
		says      string
	}{
		{protocol.TypeMCPLogin, "nope", protocol.CodeMCPServerNotFound, `"nope"`},
		{protocol.TypeMCPLogin, "testmcp", protocol.CodeBadRequest, "stdio server"},
		{protocol.TypeMCPLogout, "testmcp", protocol.CodeBadRequest, "stdio server"},
		{protocol.TypeMCPLogout, "nope", protocol.CodeMCPServerNotFound, `"nope"`},
	} {
		if perr := c.doErr(tc.typ, map[string]any{"name": tc.name}); perr.Code != tc.code || !strings.Contains(perr.Message, tc.says) {
			t.Errorf("%s %s: %v, want %s saying %q", tc.typ, tc.name, perr, tc.code, tc.says)
		}
	}

	// Sign in.
	from = c.count()
	var lr protocol.MCPLoginResult
	mustUnmarshal(t, c.do(protocol.TypeMCPLogin, map[string]any{"name": "oa"}), &lr)
	au, err := url.Parse(lr.URL)
	if err != nil || lr.Name != "oa" || !strings.HasPrefix(lr.URL, oa.Base+"/authorize?") || au.Query().Get("code_challenge_method") != "S256" {
		t.Fatalf("mcp/login reply %+v", lr)
	}
	var ev protocol.MCPLoginEvent
	c.waitPush(from, protocol.TypeMCPLoginEvent, &ev, nil)
	if ev.State != protocol.LoginURL || ev.URL != lr.URL {
		t.Fatalf("first mcp/login push %+v", ev)
	}
	openAuthURL(t, lr.URL)
	c.waitPush(from, protocol.TypeMCPLoginEvent, &ev, func(raw json.RawMessage) bool { return !strings.Contains(string(raw), `"state":"url"`) })
	if ev.State != protocol.LoginDone || !strings.Contains(ev.Message, "Authenticated") {
		t.Fatalf("mcp/login ended with %+v", ev)
	}
	status(from, protocol.MCPConnected)
	trs := toolResults(t, c.turn(s, "OAUTH"))
	if len(trs) != 1 || trs[0].IsError || !strings.Contains(string(trs[0].Content), "through oauth") {
		t.Fatalf("tool of the signed-in server: %+v", trs)
	}
	if n := oa.Counts(); n.Tokens != 1 || n.Authorized == 0 {
		t.Errorf("oauth server counts %+v", n)
	}

	// Sign out: the live session needs authentication again.
	from = c.count()
	var out protocol.MCPLogoutResult
	mustUnmarshal(t, c.do(protocol.TypeMCPLogout, map[string]any{"name": "oa"}), &out)
	if out.Name != "oa" || !strings.Contains(out.Message, "Signed out") || len(out.Sessions) != 1 || out.Sessions[0].Session != s {
		t.Errorf("mcp/logout reply %+v", out)
	}
	status(from, protocol.MCPNeedsAuth)

	// The browser on another machine: its redirect to the CLI's loopback
	// callback fails there; the user hands the address to mcp/login
	// {name, redirect}, and the proxy delivers it.
	from = c.count()
	mustUnmarshal(t, c.do(protocol.TypeMCPLogin, map[string]any{"name": "oa"}), &lr)
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(lr.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	back := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusFound || !strings.Contains(back, "/callback?code=") {
		t.Fatalf("authorize answered %s to %q", resp.Status, back)
	}
	var rr protocol.MCPLoginResult
	mustUnmarshal(t, c.do(protocol.TypeMCPLogin, map[string]any{"name": "oa", "redirect": back}), &rr)
	if rr.Name != "oa" || rr.URL != "" {
		t.Errorf("reply to the redirect %+v", rr)
	}
	ev = loginPush(t, c, from, protocol.LoginDone)
	if !strings.Contains(ev.Message, "Authenticated") {
		t.Errorf("login completed by redirect: %+v", ev)
	}
	status(from, protocol.MCPConnected)

	// A login in progress is cancelled by mcp/logout.
	from = c.count()
	mustUnmarshal(t, c.do(protocol.TypeMCPLogin, map[string]any{"name": "oa"}), &lr)
	c.do(protocol.TypeMCPLogout, map[string]any{"name": "oa"})
	c.waitPush(from, protocol.TypeMCPLoginEvent, &ev, func(raw json.RawMessage) bool { return strings.Contains(string(raw), `"failed"`) })
	if ev.Error == nil || ev.Error.Code != protocol.CodeCancelled || !strings.Contains(ev.Error.Message, "mcp/logout") {
		t.Errorf("login cancelled by logout: %+v", ev)
	}

	// Nothing secret leaked: no authorization code, access or refresh token
	// in any frame or in the log.
	secrets := oa.Secrets()
	if len(secrets) < 3 {
		t.Fatalf("the OAuth server issued %d secrets, want a code, an access and a refresh token", len(secrets))
	}
	logText := e.logBuf.String()
	for _, f := range c.snapshot() {
		for _, sec := range secrets {
			if strings.Contains(string(f.raw), sec) {
				t.Errorf("a frame holds an OAuth secret issued by the server: %.200s", f.raw)
			}
		}
	}
	for _, sec := range secrets {
		if strings.Contains(logText, sec) {
			t.Errorf("the proxy's log holds an OAuth secret issued by the server")
		}
	}
}
