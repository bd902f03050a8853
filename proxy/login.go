package proxy

import (
	"container/list"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	protocol "github.com/ccproxy/ccproxy/webview-protocol"
)

// Browser login. A browser cannot send the token on a websocket or an <img>
// request without putting it where it gets logged, so the web UI is given a
// one-time login code in the URL fragment (#code=…; fragments are never sent
// to servers). The page POSTs it to /v1/login and gets a cookie in
// exchange: a per-launch secret distinct from the token, HttpOnly, SameSite=
// Strict, named after the port (cookies are shared by every port of a host).
// The cookie then authenticates the websocket, the blobs and the status
// endpoint, from the proxy's own origin only. Under TLS it is Secure.
//
// Failed login attempts are rate-limited per client address
// (loginLimiter): a token bucket of failures per IPv4 address or IPv6 /64,
// in an LRU table bounded by Options.MaxLoginClients. A valid code is
// never refused.

const (
	// maxLoginCodes bounds the codes waiting to be used; minting more
	// forgets the oldest.
	maxLoginCodes = 32
	// LoginCodeTTL is how long a code minted on request stays valid.
	LoginCodeTTL = 5 * time.Minute
	loginPath    = "/v1/login"

	// DefaultLoginBurst and DefaultLoginEvery are the limit of failed
	// logins per client address: 10 at once, then one every 6 s.
	DefaultLoginBurst = 10
	DefaultLoginEvery = 6 * time.Second
	// DefaultMaxLoginClients bounds the failing addresses the limit
	// remembers.
	DefaultMaxLoginClients = 4096
)

type loginCode struct {
	hash    [32]byte
	expires time.Time // zero: until used
}

type logins struct {
	mu     sync.Mutex // guards codes
	codes  []loginCode
	cookie string   // the cookie's value
	hash   [32]byte // its sha256, for constant-time checks
	limit  *loginLimiter
}

func newLogins(opts Options) *logins {
	l := &logins{cookie: randomString(32), limit: newLoginLimiter(opts.LoginBurst, opts.LoginEvery, opts.MaxLoginClients)}
	l.hash = sha256.Sum256([]byte(l.cookie))
	return l
}

// loginLimiter counts failed logins per client address: a token bucket of
// burst failures per address, one more every every; an address with none
// left is refused (429). Only failures are charged: a valid code is never
// refused, whatever the limiter holds (see serveLogin).
//
// The addresses are kept in an LRU list bounded at max entries: when it
// is full, a new failing address takes the place of the one whose last
// failure is oldest (whose bucket is the most refilled). One entry is the
// list element, the map entry, the bucket and a key of at most
// maxClientKey bytes: under 300 bytes (TestLoginLimiterBytes measured 162
// with IPv6 keys on linux/amd64), so the limiter holds at most max × 300
// bytes: 1.2 MB at the default 4096.
type loginLimiter struct {
	burst float64
	every time.Duration
	max   int
	now   func() time.Time // time.Now; tests move it

	mu      sync.Mutex // guards the fields below
	entries map[string]*list.Element
	lru     list.List // of *loginFailures, the most recent failure first
	evicted bool      // an address was forgotten to make room (logged once)
}

// loginFailures is one address's bucket of allowed failures.
type loginFailures struct {
	key    string
	tokens float64
	at     time.Time // when tokens was computed
	logged bool      // its refusal was logged since it last had tokens
}

func newLoginLimiter(burst int, every time.Duration, max int) *loginLimiter {
	return &loginLimiter{burst: float64(burst), every: every, max: max, now: time.Now, entries: map[string]*list.Element{}}
}

// refill brings f's tokens up to now.
func (l *loginLimiter) refill(f *loginFailures, now time.Time) {
	if d := now.Sub(f.at); d > 0 {
		f.tokens = min(l.burst, f.tokens+float64(d)/float64(l.every))
	}
	f.at = now
}

// fail charges a failed login to key. ok is false when key had no failure
// left: the attempt is refused, wait says for how long, and log says it is
// the first refusal since key last had one left. firstEviction says an
// address was forgotten to make room, for the first time.
func (l *loginLimiter) fail(key string) (ok bool, wait time.Duration, log, firstEviction bool) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	var f *loginFailures
	if e := l.entries[key]; e != nil {
		f = e.Value.(*loginFailures)
		l.refill(f, now)
		l.lru.MoveToFront(e)
	} else {
		if l.lru.Len() >= max(l.max, 1) {
			old := l.lru.Back()
			delete(l.entries, old.Value.(*loginFailures).key)
			l.lru.Remove(old)
			firstEviction = !l.evicted
			l.evicted = true
		}
		f = &loginFailures{key: key, tokens: l.burst, at: now}
		l.entries[key] = l.lru.PushFront(f)
	}
	if f.tokens >= 1 {
		f.tokens--
		f.logged = false
		return true, 0, false, firstEviction
	}
	log = !f.logged
	f.logged = true
	return false, time.Duration((1 - f.tokens) * float64(l.every)), log, firstEviction
}

// forget drops key's failures (it logged in).
func (l *loginLimiter) forget(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e := l.entries[key]; e != nil {
		delete(l.entries, key)
		l.lru.Remove(e)
	}
}

// size is the number of addresses remembered.
func (l *loginLimiter) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lru.Len()
}

// maxClientKey bounds a limiter key: an IPv4 address or IPv6 /64 is
// shorter; anything else is cut.
const maxClientKey = 48

// clientKey is the rate limit's key for a remote address: the IPv4
// address, or the /64 of an IPv6 one (a single host often holds a whole
// /64).
func clientKey(remoteAddr string) string {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return truncate(host, maxClientKey)
	}
	if v4 := ip.To4(); v4 != nil {
		return v4.String()
	}
	return ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
}

// NewLoginCode mints a one-time code for the web UI's login: the page at
// /#code=CODE exchanges it for a session cookie. ttl 0 means the code stays
// valid until used (the one printed at launch).
func (s *Server) NewLoginCode(ttl time.Duration) string {
	code := randomString(24)
	lc := loginCode{hash: sha256.Sum256([]byte(code))}
	if ttl > 0 {
		lc.expires = time.Now().Add(ttl)
	}
	l := s.logins
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.codes) == maxLoginCodes {
		l.codes = l.codes[1:]
	}
	l.codes = append(l.codes, lc)
	return code
}

// redeem consumes a code; it is valid once.
func (l *logins) redeem(code string) bool {
	h := sha256.Sum256([]byte(code))
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, c := range l.codes {
		if subtle.ConstantTimeCompare(h[:], c.hash[:]) == 1 {
			l.codes = append(l.codes[:i], l.codes[i+1:]...)
			return c.expires.IsZero() || now.Before(c.expires)
		}
	}
	return false
}

func (s *Server) cookieName() string {
	if p := s.origins.Port(); p != 0 {
		return "ccproxy_session_" + strconv.Itoa(p)
	}
	return "ccproxy_session"
}

// cookieOK reports whether the request carries this launch's session cookie.
func (s *Server) cookieOK(r *http.Request) bool {
	c, err := r.Cookie(s.cookieName())
	if err != nil {
		return false
	}
	h := sha256.Sum256([]byte(c.Value))
	return subtle.ConstantTimeCompare(h[:], s.logins.hash[:]) == 1
}

// serveLogin is POST /v1/login {"code"}: a valid code sets the cookie.
// A valid, unused code is always accepted, whatever the limiter holds (the
// same address is every local process on loopback, or a whole network
// behind NAT: others' failures must not lock its holder out). A wrong one
// is charged to the client address: past its failures, 429 with
// Retry-After instead of 401. A code is 192 random bits, so the limit is
// not what stops guessing; it tells a failing client to back off and
// keeps the log short.
func (s *Server) serveLogin(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		writeHTTPError(w, http.StatusMethodNotAllowed, protocol.CodeBadRequest, "login takes POST {\"code\": …}")
		return
	}
	key := clientKey(r.RemoteAddr)
	var body struct {
		Code string `json:"code"`
	}
	err := json.NewDecoder(io.LimitReader(r.Body, 4096)).Decode(&body)
	if err == nil && body.Code != "" && s.logins.redeem(body.Code) {
		s.logins.limit.forget(key)
		http.SetCookie(w, &http.Cookie{
			Name: s.cookieName(), Value: s.logins.cookie, Path: "/",
			HttpOnly: true, SameSite: http.SameSiteStrictMode,
			Secure: s.origins.TLS(), // under TLS, never sent over plain HTTP
		})
		s.log.Info("browser logged in with a one-time code")
		w.WriteHeader(http.StatusNoContent)
		return
	}
	ok, wait, log, evicted := s.logins.limit.fail(key)
	if evicted {
		s.log.Warn("login rate limit: the table of failing addresses is full; the least recently failing ones are forgotten", "slots", s.opts.MaxLoginClients)
	}
	if !ok {
		secs := int(math.Ceil(wait.Seconds()))
		if log {
			s.log.Warn("login attempts refused: too many failures from one address", "client", key)
		}
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		writeHTTPError(w, http.StatusTooManyRequests, protocol.CodeLimitExceeded,
			fmt.Sprintf("too many failed login attempts from %s: try again in %d s (at most %d failures at once, then one every %s; a valid login link is always accepted)", key, secs, s.opts.LoginBurst, s.opts.LoginEvery))
		return
	}
	if err != nil || body.Code == "" {
		writeHTTPError(w, http.StatusBadRequest, protocol.CodeBadRequest, "login: the body must be {\"code\": \"…\"} with the code from the login link")
		return
	}
	s.log.Warn("login with an unknown, used or expired code refused")
	writeHTTPError(w, http.StatusUnauthorized, protocol.CodeUnauthorized, "this login link was already used or has expired: get a new one with `ccproxy login-url` (or POST /v1/login/code with the token)")
}

// serveLoginCode is POST /v1/login/code: it mints a code valid for
// LoginCodeTTL, {"code", "url"}, so that an extension host holding the
// token can open the web UI in a browser, or a logged-in browser can hand
// a link to a phone. With the token (Authorization: Bearer) it always
// does. With the login cookie alone, only for a page of the proxy's own
// origin (or an --allow-origin one), which must say so with its Origin
// header: a request without one is refused too (403), so that no
// cross-site request a browser sends without Origin (a form, a link) ever
// mints a link, whatever the cookie's SameSite attribute does.
func (s *Server) serveLoginCode(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		writeHTTPError(w, http.StatusMethodNotAllowed, protocol.CodeBadRequest, "POST /v1/login/code mints a login link")
		return
	}
	if !s.bearerOK(r) {
		if origin := r.Header.Get("Origin"); origin == "" || !s.origins.OwnOrExtra(origin) {
			s.log.Warn("login link refused: the login cookie without the proxy's own Origin", "origin", truncate(origin, 100))
			writeHTTPError(w, http.StatusForbidden, protocol.CodeForbiddenOrigin, "minting a login link with the login cookie takes a request from the web UI's own page (its Origin header); with the token, send Authorization: Bearer")
			return
		}
	}
	code := s.NewLoginCode(LoginCodeTTL)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	json.NewEncoder(w).Encode(map[string]string{"code": code, "url": s.origins.BaseURL() + "/#code=" + code})
}

func randomString(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return base64.RawURLEncoding.EncodeToString(b)
}
