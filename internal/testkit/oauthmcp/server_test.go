package oauthmcp_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/ccproxy/ccproxy/internal/testkit/mcptest"
	"github.com/ccproxy/ccproxy/internal/testkit/oauthmcp"
)

func getJSON(t *testing.T, u string, v any) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %s", u, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
}

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// TestOAuthFlow walks the flow a client such as `claude mcp login` takes:
// 401 with resource_metadata, both metadata documents, registration,
// authorize (auto-approved redirect), token with PKCE, then MCP with the
// token. Bad PKCE, reuse of a code and a revoked token are refused.
func TestOAuthFlow(t *testing.T) {
	ctx := context.Background()
	s := oauthmcp.Serve(t, mcptest.NewServer(), oauthmcp.Options{})

	// Without a token: 401 pointing at the resource metadata.
	resp, err := http.Post(s.URL, "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	chs, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if resp.StatusCode != 401 || err != nil || len(chs) != 1 || chs[0].Params["resource_metadata"] == "" {
		t.Fatalf("unauthenticated MCP request: %s, challenges %v (%v)", resp.Status, chs, err)
	}
	prm, err := oauthex.GetProtectedResourceMetadata(ctx, chs[0].Params["resource_metadata"], s.URL, nil)
	if err != nil || len(prm.AuthorizationServers) != 1 {
		t.Fatalf("protected resource metadata: %+v, %v", prm, err)
	}
	var asm struct {
		AuthorizationEndpoint string `json:"authorization_endpoint"`
		TokenEndpoint         string `json:"token_endpoint"`
	}
	getJSON(t, prm.AuthorizationServers[0]+"/.well-known/oauth-authorization-server", &asm)
	// The go-sdk's own metadata reader checks issuer, PKCE support and URL schemes.
	if _, err := oauthex.GetAuthServerMeta(ctx, prm.AuthorizationServers[0]+"/.well-known/oauth-authorization-server", s.Base, nil); err != nil {
		t.Fatalf("GetAuthServerMeta: %v", err)
	}
	reg, err := oauthex.RegisterClient(ctx, s.Base+"/register", &oauthex.ClientRegistrationMetadata{
		RedirectURIs: []string{"http://localhost:1234/callback"}, TokenEndpointAuthMethod: "none",
	}, nil)
	if err != nil || reg.ClientID == "" {
		t.Fatalf("register: %+v, %v", reg, err)
	}

	verifier := "a-verifier-that-is-long-enough-for-pkce-0123456789"
	sum := sha256.Sum256([]byte(verifier))
	q := url.Values{"response_type": {"code"}, "client_id": {reg.ClientID}, "state": {"st"},
		"redirect_uri":   {"http://localhost:5555/callback"}, // another loopback port: allowed (RFC 8252)
		"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"}, "resource": {s.URL}}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	// authorize asks for a code with q and returns what the redirect to
	// host carries.
	authorize := func(host string) url.Values {
		t.Helper()
		resp, err := noFollow.Get(asm.AuthorizationEndpoint + "?" + q.Encode())
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		loc, err := url.Parse(resp.Header.Get("Location"))
		if resp.StatusCode != 302 || err != nil || loc.Host != host {
			t.Fatalf("authorize with %v: %s to %q, want a redirect to %s", q, resp.Status, resp.Header.Get("Location"), host)
		}
		return loc.Query()
	}
	back := authorize("localhost:5555")
	if back.Get("state") != "st" || back.Get("code") == "" {
		t.Fatalf("authorize redirect query: %v", back)
	}
	token := func(code, verifier string) (map[string]any, int) {
		resp, err := http.PostForm(asm.TokenEndpoint, url.Values{"grant_type": {"authorization_code"}, "code": {code},
			"redirect_uri": {q.Get("redirect_uri")}, "client_id": {reg.ClientID}, "code_verifier": {verifier}})
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		json.NewDecoder(resp.Body).Decode(&m)
		return m, resp.StatusCode
	}
	if m, code := token(back.Get("code"), "wrong-verifier"); code != 400 || m["error"] != "invalid_grant" {
		t.Fatalf("token with a wrong verifier: %d %v", code, m)
	}
	if m, code := token(back.Get("code"), verifier); code != 400 {
		t.Fatalf("a code used once (even in a failed exchange) was accepted again: %d %v", code, m)
	}
	back = authorize("localhost:5555")
	tok, code := token(back.Get("code"), verifier)
	at, _ := tok["access_token"].(string)
	if code != 200 || at == "" || tok["token_type"] != "Bearer" {
		t.Fatalf("token: %d %v", code, tok)
	}

	// An authorization request without redirect_uri (the client registered
	// one) is answered at the registered one, and its token request need
	// not repeat it (RFC 6749 §4.1.3); a different one is refused.
	q.Del("redirect_uri")
	for _, tc := range []struct {
		redirect string
		status   int
	}{{"", 200}, {"http://localhost:1234/other", 400}} {
		back := authorize("localhost:1234") // the registered redirect_uri
		form := url.Values{"grant_type": {"authorization_code"}, "code": {back.Get("code")}, "client_id": {reg.ClientID}, "code_verifier": {verifier}}
		if tc.redirect != "" {
			form.Set("redirect_uri", tc.redirect)
		}
		tr, err := http.PostForm(asm.TokenEndpoint, form)
		if err != nil {
			t.Fatal(err)
		}
		tr.Body.Close()
		if tr.StatusCode != tc.status {
			t.Errorf("token after an authorization without redirect_uri, redirect_uri %q: %s, want %d", tc.redirect, tr.Status, tc.status)
		}
	}

	client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.URL, HTTPClient: &http.Client{Transport: bearer{at}}}, nil)
	if err != nil {
		t.Fatalf("MCP with the token: %v", err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: mcptest.ToolEcho, Arguments: map[string]any{"message": "hi"}})
	if err != nil || res.IsError {
		t.Fatalf("echo: %v %+v", err, res)
	}
	cs.Close()

	s.Revoke()
	_, err = client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.URL, HTTPClient: &http.Client{Transport: bearer{at}}}, nil)
	if err == nil {
		t.Fatal("a revoked token still connects")
	}
	c := s.Counts()
	if c.Registrations != 1 || c.Authorizations != 4 || c.Tokens != 2 || c.Unauthorized < 2 || c.Authorized == 0 {
		t.Errorf("counts %+v", c)
	}
	if secrets := s.Secrets(); len(secrets) != 8 { // 4 codes, 2 × (access + refresh token)
		t.Errorf("secrets: %d, want 8", len(secrets))
	}
}
