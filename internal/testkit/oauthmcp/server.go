package oauthmcp

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	mcpPath           = "/mcp"
	resourceMetaPath  = "/.well-known/oauth-protected-resource"
	authServerMetaURL = "/.well-known/oauth-authorization-server"
	registerPath      = "/register"
	authorizePath     = "/authorize"
	tokenPath         = "/token"

	codeTTL = time.Minute
	// maxBody bounds the bodies of /register and /token.
	maxBody = 64 << 10
	// maxEntries bounds each of the maps of clients, codes and tokens: a
	// test that issues more is broken.
	maxEntries = 1000
)

// Options configure a Server. The zero value is usable.
type Options struct {
	// Scopes the server advertises and grants ("mcp" when empty).
	Scopes []string
	// TokenTTL is the lifetime of an access token (1 hour when zero).
	TokenTTL time.Duration
}

// Counts says how often each endpoint did its job.
type Counts struct {
	Registrations  int // clients registered
	Authorizations int // codes issued by /authorize
	Tokens         int // access tokens issued by /token
	Unauthorized   int // MCP requests refused with 401
	Authorized     int // MCP requests let through
}

// Server is an OAuth-protected MCP server with its authorization server.
type Server struct {
	// Base is the server's root URL (http://127.0.0.1:PORT), also the
	// authorization server's issuer.
	Base string
	// URL is the MCP endpoint, Base + "/mcp".
	URL string

	ts   *httptest.Server
	opts Options

	mu      sync.Mutex // guards everything below
	clients map[string]client
	codes   map[string]grant
	tokens  map[string]time.Time // access token → expiry
	refresh map[string]string    // refresh token → client id
	secrets []string             // every code and token ever issued
	counts  Counts
}

type client struct {
	redirectURIs []string
}

type grant struct {
	clientID, redirectURI, challenge string
	// asked says whether the authorization request named redirectURI:
	// only then must the token request repeat it (RFC 6749 §4.1.3).
	asked   bool
	expires time.Time
}

// New starts a Server serving srv on loopback. Close it when done.
func New(srv *mcp.Server, opts Options) *Server {
	if len(opts.Scopes) == 0 {
		opts.Scopes = []string{"mcp"}
	}
	if opts.TokenTTL == 0 {
		opts.TokenTTL = time.Hour
	}
	s := &Server{
		opts:    opts,
		clients: map[string]client{},
		codes:   map[string]grant{},
		tokens:  map[string]time.Time{},
		refresh: map[string]string{},
	}
	mux := http.NewServeMux()
	s.ts = httptest.NewUnstartedServer(mux)
	s.ts.Start()
	s.Base = s.ts.URL
	s.URL = s.Base + mcpPath

	streamable := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	bearer := auth.RequireBearerToken(s.verify, &auth.RequireBearerTokenOptions{
		ResourceMetadataURL: s.Base + resourceMetaPath + mcpPath,
	})
	mux.Handle(mcpPath, s.countMCP(bearer(streamable)))
	meta := s.resourceMetadata
	mux.HandleFunc(resourceMetaPath, meta)
	mux.HandleFunc(resourceMetaPath+mcpPath, meta)
	mux.HandleFunc(authServerMetaURL, s.authServerMetadata)
	mux.HandleFunc(registerPath, s.register)
	mux.HandleFunc(authorizePath, s.authorize)
	mux.HandleFunc(tokenPath, s.token)
	return s
}

// Serve is New for tests: the server is closed when the test ends.
func Serve(t testing.TB, srv *mcp.Server, opts Options) *Server {
	t.Helper()
	s := New(srv, opts)
	t.Cleanup(s.Close)
	return s
}

// Close stops the server and waits for its handlers.
func (s *Server) Close() {
	s.ts.CloseClientConnections() // an open SSE stream would hold Close
	s.ts.Close()
}

// Counts returns what the endpoints did so far.
func (s *Server) Counts() Counts {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts
}

// Secrets returns every authorization code, access token and refresh
// token issued so far, for leak assertions. (Client ids are public: they
// are in the authorization URL.)
func (s *Server) Secrets() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.secrets)
}

// Revoke forgets every access and refresh token: the next MCP request
// gets 401.
func (s *Server) Revoke() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.tokens)
	clear(s.refresh)
}

func (s *Server) countMCP(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cw := &statusWriter{ResponseWriter: w}
		h.ServeHTTP(cw, r)
		s.mu.Lock()
		if cw.status == http.StatusUnauthorized {
			s.counts.Unauthorized++
		} else {
			s.counts.Authorized++
		}
		s.mu.Unlock()
	})
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Flush keeps the streamable handler's streaming working through the wrapper.
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the real writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// verify is the bearer check of the MCP endpoint.
func (s *Server) verify(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	exp, ok := s.tokens[token]
	if !ok || time.Now().After(exp) {
		return nil, fmt.Errorf("%w: unknown or expired access token", auth.ErrInvalidToken)
	}
	return &auth.TokenInfo{Scopes: s.opts.Scopes, Expiration: exp}, nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// oauthError writes an RFC 6749 §5.2 error.
func oauthError(w http.ResponseWriter, status int, code, desc string) {
	writeJSON(w, status, map[string]string{"error": code, "error_description": desc})
}

func getOnly(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", "GET")
		http.Error(w, "GET only", http.StatusMethodNotAllowed)
		return false
	}
	return true
}

func (s *Server) resourceMetadata(w http.ResponseWriter, r *http.Request) {
	if !getOnly(w, r) {
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"resource":                 s.URL,
		"authorization_servers":    []string{s.Base},
		"scopes_supported":         s.opts.Scopes,
		"bearer_methods_supported": []string{"header"},
		"resource_name":            "ccproxy oauthmcp test server",
	})
}

func (s *Server) authServerMetadata(w http.ResponseWriter, r *http.Request) {
	if !getOnly(w, r) {
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer":                                s.Base,
		"authorization_endpoint":                s.Base + authorizePath,
		"token_endpoint":                        s.Base + tokenPath,
		"registration_endpoint":                 s.Base + registerPath,
		"scopes_supported":                      s.opts.Scopes,
		"response_types_supported":              []string{"code"},
		"grant_types_supported":                 []string{"authorization_code", "refresh_token"},
		"token_endpoint_auth_methods_supported": []string{"none"},
		"code_challenge_methods_supported":      []string{"S256"},
	})
}

// register is RFC 7591 for public clients: it needs redirect_uris, each an
// absolute http(s) URL, and issues a client id with no secret.
func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	var meta struct {
		RedirectURIs []string `json:"redirect_uris"`
		ClientName   string   `json:"client_name"`
		GrantTypes   []string `json:"grant_types"`
		AuthMethod   string   `json:"token_endpoint_auth_method"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, maxBody)).Decode(&meta); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_client_metadata", "the body is not JSON client metadata: "+err.Error())
		return
	}
	if len(meta.RedirectURIs) == 0 {
		oauthError(w, http.StatusBadRequest, "invalid_redirect_uri", "redirect_uris is required")
		return
	}
	for _, u := range meta.RedirectURIs {
		p, err := url.Parse(u)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" || p.Fragment != "" {
			oauthError(w, http.StatusBadRequest, "invalid_redirect_uri", fmt.Sprintf("redirect_uri %q is not an absolute http(s) URL without a fragment", u))
			return
		}
	}
	if meta.AuthMethod == "" {
		meta.AuthMethod = "none"
	}
	if meta.AuthMethod != "none" {
		oauthError(w, http.StatusBadRequest, "invalid_client_metadata", "only public clients (token_endpoint_auth_method none) are supported")
		return
	}
	id := "client-" + random(12)
	s.mu.Lock()
	if len(s.clients) >= maxEntries {
		s.mu.Unlock()
		oauthError(w, http.StatusBadRequest, "invalid_client_metadata", "too many clients registered")
		return
	}
	s.clients[id] = client{redirectURIs: slices.Clone(meta.RedirectURIs)}
	s.counts.Registrations++
	s.mu.Unlock()
	grants := meta.GrantTypes
	if len(grants) == 0 {
		grants = []string{"authorization_code"}
	}
	writeJSON(w, http.StatusCreated, map[string]any{
		"client_id":                  id,
		"client_id_issued_at":        time.Now().Unix(),
		"redirect_uris":              meta.RedirectURIs,
		"client_name":                meta.ClientName,
		"grant_types":                grants,
		"response_types":             []string{"code"},
		"token_endpoint_auth_method": "none",
	})
}

// redirectURIMatches compares a requested redirect_uri with a registered
// one; for loopback redirect URIs the port may differ (RFC 8252 §7.3).
func redirectURIMatches(registered, got string) bool {
	if registered == got {
		return true
	}
	a, err1 := url.Parse(registered)
	b, err2 := url.Parse(got)
	if err1 != nil || err2 != nil {
		return false
	}
	loopback := func(h string) bool { return h == "127.0.0.1" || h == "localhost" || h == "::1" }
	return a.Scheme == "http" && b.Scheme == "http" && loopback(a.Hostname()) && a.Hostname() == b.Hostname() &&
		a.Path == b.Path && a.RawQuery == b.RawQuery
}

// authorize approves every valid request at once. Errors about the client
// or the redirect URI are shown (400), never redirected (RFC 6749 §4.1.2.1);
// the others go back to the redirect URI as error=….
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	if !getOnly(w, r) {
		return
	}
	q := r.URL.Query()
	clientID, redirectURI := q.Get("client_id"), q.Get("redirect_uri")
	s.mu.Lock()
	c, ok := s.clients[clientID]
	s.mu.Unlock()
	if !ok {
		http.Error(w, "authorize: unknown client_id", http.StatusBadRequest)
		return
	}
	if redirectURI == "" && len(c.redirectURIs) == 1 {
		redirectURI = c.redirectURIs[0]
	}
	if !slices.ContainsFunc(c.redirectURIs, func(u string) bool { return redirectURIMatches(u, redirectURI) }) {
		http.Error(w, "authorize: redirect_uri is not one the client registered", http.StatusBadRequest)
		return
	}
	back := func(params url.Values) {
		u, _ := url.Parse(redirectURI)
		v := u.Query()
		for k, vs := range params {
			v[k] = vs
		}
		if st := q.Get("state"); st != "" {
			v.Set("state", st)
		}
		u.RawQuery = v.Encode()
		http.Redirect(w, r, u.String(), http.StatusFound)
	}
	fail := func(code, desc string) { back(url.Values{"error": {code}, "error_description": {desc}}) }
	switch {
	case q.Get("response_type") != "code":
		fail("unsupported_response_type", "response_type must be code")
		return
	case q.Get("code_challenge") == "":
		fail("invalid_request", "code_challenge is required (PKCE)")
		return
	case q.Get("code_challenge_method") != "S256":
		fail("invalid_request", "code_challenge_method must be S256")
		return
	}
	if res := q.Get("resource"); res != "" && res != s.URL && res != s.Base {
		fail("invalid_target", "resource is not this server")
		return
	}
	code := "code-" + random(16)
	s.mu.Lock()
	if len(s.codes) >= maxEntries {
		s.mu.Unlock()
		fail("temporarily_unavailable", "too many codes outstanding")
		return
	}
	s.codes[code] = grant{clientID: clientID, redirectURI: redirectURI, challenge: q.Get("code_challenge"), asked: q.Has("redirect_uri"), expires: time.Now().Add(codeTTL)}
	s.secrets = append(s.secrets, code)
	s.counts.Authorizations++
	s.mu.Unlock()
	back(url.Values{"code": {code}})
}

// token serves grant_type authorization_code and refresh_token.
func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/x-www-form-urlencoded" {
		oauthError(w, http.StatusBadRequest, "invalid_request", "the body must be application/x-www-form-urlencoded")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxBody)
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", "bad form body: "+err.Error())
		return
	}
	f := r.PostForm
	clientID := f.Get("client_id")
	if id, _, ok := r.BasicAuth(); ok && clientID == "" {
		clientID, _ = url.QueryUnescape(id)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.clients[clientID]; !ok {
		oauthError(w, http.StatusUnauthorized, "invalid_client", "unknown client_id")
		return
	}
	switch f.Get("grant_type") {
	case "authorization_code":
		code := f.Get("code")
		g, ok := s.codes[code]
		delete(s.codes, code) // single use, even when the exchange fails
		switch {
		case !ok || time.Now().After(g.expires):
			oauthError(w, http.StatusBadRequest, "invalid_grant", "unknown, used or expired code")
			return
		case g.clientID != clientID:
			oauthError(w, http.StatusBadRequest, "invalid_grant", "the code was issued to another client")
			return
		case (g.asked || f.Has("redirect_uri")) && f.Get("redirect_uri") != g.redirectURI:
			oauthError(w, http.StatusBadRequest, "invalid_grant", "redirect_uri differs from the authorization request's")
			return
		}
		sum := sha256.Sum256([]byte(f.Get("code_verifier")))
		if subtle.ConstantTimeCompare([]byte(base64.RawURLEncoding.EncodeToString(sum[:])), []byte(g.challenge)) != 1 {
			oauthError(w, http.StatusBadRequest, "invalid_grant", "code_verifier does not match the code_challenge")
			return
		}
	case "refresh_token":
		rt := f.Get("refresh_token")
		if id, ok := s.refresh[rt]; !ok || id != clientID {
			oauthError(w, http.StatusBadRequest, "invalid_grant", "unknown refresh token")
			return
		}
		delete(s.refresh, rt) // rotated
	default:
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type", "grant_type must be authorization_code or refresh_token")
		return
	}
	if len(s.tokens) >= maxEntries {
		oauthError(w, http.StatusServiceUnavailable, "temporarily_unavailable", "too many tokens")
		return
	}
	at, rt := "at-"+random(24), "rt-"+random(24)
	s.tokens[at] = time.Now().Add(s.opts.TokenTTL)
	s.refresh[rt] = clientID
	s.secrets = append(s.secrets, at, rt)
	s.counts.Tokens++
	writeJSON(w, http.StatusOK, map[string]any{
		"access_token":  at,
		"token_type":    "Bearer",
		"expires_in":    int(s.opts.TokenTTL / time.Second),
		"refresh_token": rt,
		"scope":         strings.Join(s.opts.Scopes, " "),
	})
}

func random(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
