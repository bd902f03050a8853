package remote

import (
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/websocket"

	"github.com/ccproxy/ccproxy/internal/textutil"
	"github.com/ccproxy/ccproxy/protocol"
)

// Config is what a Gate takes from the proxy.
type Config struct {
	// Token is the proxy's token (Authorization: Bearer, or the websocket's
	// ccproxy.token.T subprotocol).
	Token string
	// AllowOrigins are the --allow-origin origins, checked by the caller
	// with ParseOrigin (one that fails it is left out).
	AllowOrigins []string
	// LoginBurst, LoginEvery and MaxLoginClients bound failed logins per
	// client address (the proxy's Options of the same names, defaults set).
	LoginBurst      int
	LoginEvery      time.Duration
	MaxLoginClients int
	// Log gets the refusals and logins (never a code, cookie or token).
	Log *slog.Logger
	// WriteError writes an HTTP error in the proxy's form
	// ({"error":{"code","message"}}).
	WriteError func(w http.ResponseWriter, status int, code protocol.Code, msg string)
	// Public, when set, is where browsers reach the proxy through a
	// reverse proxy (--public-url): its origin and host are the proxy's
	// own, login links name it, and the cookie is Secure when it is https
	// and scoped to its path.
	Public *PublicURL
	// Trusted, when set (--trusted-header, --trusted-proxy), authenticates
	// a request from a trusted reverse proxy that names its user in a
	// header (TrustedHeader).
	Trusted *TrustedHeader
}

// Gate is remote access in front of the proxy's HTTP handler: the Host and
// Origin checks (its Policy), authentication (token or login cookie) and
// the login endpoints. It holds no goroutine.
type Gate struct {
	cfg    Config
	policy *Policy
	token  [32]byte // sha256 of Config.Token, for constant-time checks
	logins *logins
	limit  *loginLimiter
	log    *slog.Logger
}

// NewGate makes the Gate of one proxy: a new login cookie, no code yet.
// Its Policy learns the served hosts from Listen.
func NewGate(c Config) *Gate {
	l := newLogins(c)
	p := NewPolicy(c.AllowOrigins)
	p.public = c.Public
	if c.Public != nil {
		p.own[c.Public.Origin] = true
		p.hosts[c.Public.Host] = true
	}
	return &Gate{cfg: c, policy: p, token: sha256.Sum256([]byte(c.Token)), logins: l, limit: l.limit, log: c.Log}
}

// Public is the --public-url (nil when not set).
func (g *Gate) Public() *PublicURL { return g.cfg.Public }

// Policy is the Gate's Host and Origin rules.
func (g *Gate) Policy() *Policy { return g.policy }

// Listen readies the proxy's listener (Policy.Listen).
func (g *Gate) Listen(ln net.Listener, tlsConf *tls.Config, extraHosts []string) (net.Listener, error) {
	return g.policy.Listen(ln, tlsConf, extraHosts)
}

// NewLoginCode mints a one-time code for the web UI's login: the page at
// /#code=CODE exchanges it for a session cookie. ttl 0 means the code stays
// valid until used (the one printed at launch).
func (g *Gate) NewLoginCode(ttl time.Duration) string { return g.logins.mint(ttl) }

func (g *Gate) writeError(w http.ResponseWriter, status int, code protocol.Code, msg string) {
	g.cfg.WriteError(w, status, code, msg)
}

// Check applies the Host check, the Origin check and CORS.
func (g *Gate) Check(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !g.policy.HostAllowed(r.Host) {
			// DNS rebinding: a page of another site whose name now
			// points here. Which names are served is not said: the
			// page could read it.
			g.log.Warn("request for a host this proxy does not serve refused", "host", textutil.Truncate(r.Host, 100), "path", r.URL.Path)
			g.writeError(w, http.StatusMisdirectedRequest, protocol.CodeForbiddenOrigin, fmt.Sprintf("host %.100q is not a name this proxy is served by (its listen address, loopback names on loopback, or a name given with --host)", r.Host))
			return
		}
		origin := r.Header.Get("Origin")
		if !g.policy.Allowed(origin) {
			g.log.Warn("request from a forbidden origin refused", "origin", textutil.Truncate(origin, 100), "path", r.URL.Path)
			g.writeError(w, http.StatusForbidden, protocol.CodeForbiddenOrigin, fmt.Sprintf("origin %.100q may not use this proxy (allowed: its own origin, vscode-webview://, --allow-origin)", origin))
			return
		}
		if origin != "" {
			h := w.Header()
			h.Set("Access-Control-Allow-Origin", origin)
			h.Add("Vary", "Origin")
			if r.Method == http.MethodOptions {
				h.Set("Access-Control-Allow-Methods", "GET, HEAD")
				h.Set("Access-Control-Allow-Headers", "Authorization")
				h.Set("Access-Control-Max-Age", "600")
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// RequireAuth answers 401 unless the request carries the token (or, from
// the proxy's own origin, the session cookie or a trusted reverse
// proxy's user header).
func (g *Gate) RequireAuth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !g.authorized(r, r.URL.Path == "/v1/ws") {
			w.Header().Set("WWW-Authenticate", `Bearer realm="ccproxy"`)
			g.writeError(w, http.StatusUnauthorized, protocol.CodeUnauthorized, "missing or wrong token: send Authorization: Bearer <token> (or, for a websocket from a browser, the subprotocols ccproxy.v1 and ccproxy.token.<token>; or log the web UI in with a login link)")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// authorized checks the token in the Authorization header, or for the
// websocket in a ccproxy.token.T subprotocol, in constant time. Tokens in
// the URL are never accepted.
func (g *Gate) authorized(r *http.Request, subprotocol bool) bool {
	if g.bearerOK(r) {
		return true
	}
	if subprotocol {
		for _, p := range websocket.Subprotocols(r) {
			if t, ok := strings.CutPrefix(p, protocol.TokenSubprotocolPrefix); ok && g.tokenOK(t) {
				return true
			}
		}
	}
	// The web UI's cookie, accepted only from the proxy's own pages, origins
	// the operator allowed with --allow-origin (a reverse proxy in front),
	// and requests that carry no Origin (such as <img> loads); never from
	// webviews of any extension.
	// The same holds for a trusted reverse proxy's user header: the
	// browser's login at the proxy travels with every request, as a
	// cookie does.
	if origin := r.Header.Get("Origin"); origin == "" || g.policy.OwnOrExtra(origin) {
		return g.cookieOK(r) || g.cfg.Trusted.User(r, g) != ""
	}
	return false
}

// bearerOK reports whether the request carries the token in its
// Authorization header.
func (g *Gate) bearerOK(r *http.Request) bool {
	h := r.Header.Get("Authorization")
	if h == "" {
		return false
	}
	scheme, tok, ok := strings.Cut(h, " ")
	return ok && strings.EqualFold(scheme, "Bearer") && g.tokenOK(strings.TrimSpace(tok))
}

func (g *Gate) tokenOK(t string) bool {
	h := sha256.Sum256([]byte(t))
	return subtle.ConstantTimeCompare(h[:], g.token[:]) == 1
}

func (g *Gate) cookieName() string {
	if p := g.policy.Port(); p != 0 {
		return "ccproxy_session_" + strconv.Itoa(p)
	}
	return "ccproxy_session"
}

// cookieOK reports whether the request carries this launch's session cookie.
func (g *Gate) cookieOK(r *http.Request) bool {
	c, err := r.Cookie(g.cookieName())
	if err != nil {
		return false
	}
	h := sha256.Sum256([]byte(c.Value))
	return subtle.ConstantTimeCompare(h[:], g.logins.hash[:]) == 1
}

// ServeLogin is POST /v1/login {"code"}: a valid code sets the cookie.
// A valid, unused code is always accepted, whatever the limiter holds (the
// same address is every local process on loopback, or a whole network
// behind NAT: others' failures must not lock its holder out). A wrong one
// is charged to the client address: past its failures, 429 with
// Retry-After instead of 401. A code is 192 random bits, so the limit is
// not what stops guessing; it tells a failing client to back off and
// keeps the log short.
func (g *Gate) ServeLogin(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		g.writeError(w, http.StatusMethodNotAllowed, protocol.CodeBadRequest, "login takes POST {\"code\": …}")
		return
	}
	key := clientKey(r.RemoteAddr)
	var body struct {
		Code string `json:"code"`
	}
	err := json.NewDecoder(io.LimitReader(r.Body, 4096)).Decode(&body)
	if err == nil && body.Code != "" && g.logins.redeem(body.Code) {
		g.limit.forget(key)
		path, secure := "/", g.policy.TLS() // under TLS, never sent over plain HTTP
		if pub := g.cfg.Public; pub != nil {
			// Behind a reverse proxy: its scheme decides (https there is
			// TLS for the browser), and the cookie stays in its path.
			path, secure = pub.Prefix+"/", secure || pub.Secure
		}
		http.SetCookie(w, &http.Cookie{
			Name: g.cookieName(), Value: g.logins.cookie, Path: path,
			HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: secure,
		})
		g.log.Info("browser logged in with a one-time code")
		w.WriteHeader(http.StatusNoContent)
		return
	}
	ok, wait, log, evicted := g.limit.fail(key)
	if evicted {
		g.log.Warn("login rate limit: the table of failing addresses is full; the least recently failing ones are forgotten", "slots", g.cfg.MaxLoginClients)
	}
	if !ok {
		secs := int(math.Ceil(wait.Seconds()))
		if log {
			g.log.Warn("login attempts refused: too many failures from one address", "client", key)
		}
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		g.writeError(w, http.StatusTooManyRequests, protocol.CodeLimitExceeded,
			fmt.Sprintf("too many failed login attempts from %s: try again in %d s (at most %d failures at once, then one every %s; a valid login link is always accepted)", key, secs, g.cfg.LoginBurst, g.cfg.LoginEvery))
		return
	}
	if err != nil || body.Code == "" {
		g.writeError(w, http.StatusBadRequest, protocol.CodeBadRequest, "login: the body must be {\"code\": \"…\"} with the code from the login link")
		return
	}
	g.log.Warn("login with an unknown, used or expired code refused")
	g.writeError(w, http.StatusUnauthorized, protocol.CodeUnauthorized, "this login link was already used or has expired: get a new one with `ccproxy login-url` (or POST /v1/login/code with the token)")
}

// ServeLoginCode is POST /v1/login/code: it mints a code valid for
// LoginCodeTTL, {"code", "url"}, so that an extension host holding the
// token can open the web UI in a browser, or a logged-in browser can hand
// a link to a phone. With the token (Authorization: Bearer) it always
// does. With the login cookie alone, only for a page of the proxy's own
// origin (or an --allow-origin one), which must say so with its Origin
// header: a request without one is refused too (403), so that no
// cross-site request a browser sends without Origin (a form, a link) ever
// mints a link, whatever the cookie's SameSite attribute does.
func (g *Gate) ServeLoginCode(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		g.writeError(w, http.StatusMethodNotAllowed, protocol.CodeBadRequest, "POST /v1/login/code mints a login link")
		return
	}
	if !g.bearerOK(r) {
		if origin := r.Header.Get("Origin"); origin == "" || !g.policy.OwnOrExtra(origin) {
			g.log.Warn("login link refused: the login cookie without the proxy's own Origin", "origin", textutil.Truncate(origin, 100))
			g.writeError(w, http.StatusForbidden, protocol.CodeForbiddenOrigin, "minting a login link with the login cookie takes a request from the web UI's own page (its Origin header); with the token, send Authorization: Bearer")
			return
		}
	}
	code := g.NewLoginCode(LoginCodeTTL)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	json.NewEncoder(w).Encode(map[string]string{"code": code, "url": g.policy.BaseURL() + "/#code=" + code})
}
