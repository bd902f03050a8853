package proxy

import (
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
// Login attempts are rate-limited per client address (loginLimiter): a
// token bucket per IPv4 address or IPv6 /64, in a map bounded by
// Options.MaxLoginClients.

const (
	// maxLoginCodes bounds the codes waiting to be used; minting more
	// forgets the oldest.
	maxLoginCodes = 32
	// LoginCodeTTL is how long a code minted on request stays valid.
	LoginCodeTTL = 5 * time.Minute
	loginPath    = "/v1/login"

	// DefaultLoginBurst and DefaultLoginEvery are the login rate limit per
	// client address: a burst of 10 attempts, then one every 6 s.
	DefaultLoginBurst = 10
	DefaultLoginEvery = 6 * time.Second
	// DefaultMaxLoginClients bounds the addresses the limit remembers.
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

// loginLimiter is a token bucket per client address. The map holds at
// most max addresses: when it is full, buckets that have filled up again
// (the same as new ones) are dropped; if none has, the addresses not in
// the map share the overflow bucket, so that many addresses cannot buy
// more attempts than one, and the first time it happens is logged.
type loginLimiter struct {
	burst float64
	every time.Duration
	max   int
	now   func() time.Time // time.Now; tests move it

	mu       sync.Mutex // guards the fields below
	buckets  map[string]*bucket
	overflow bucket
	warned   bool // the map was found full (logged once per fill-up)
}

type bucket struct {
	tokens float64
	at     time.Time // when tokens was computed
}

func newLoginLimiter(burst int, every time.Duration, max int) *loginLimiter {
	return &loginLimiter{burst: float64(burst), every: every, max: max, now: time.Now, buckets: map[string]*bucket{}}
}

// refill brings b up to now; a new bucket (zero at) is full.
func (l *loginLimiter) refill(b *bucket, now time.Time) {
	if b.at.IsZero() {
		b.tokens = l.burst
	} else if d := now.Sub(b.at); d > 0 {
		b.tokens = min(l.burst, b.tokens+float64(d)/float64(l.every))
	}
	b.at = now
}

// allow takes one attempt from key's bucket. When none is left it returns
// false and how long until the next; full reports that the map of
// addresses was full and key had to share the overflow bucket (for the
// first time since it was last not full).
func (l *loginLimiter) allow(key string) (ok bool, wait time.Duration, full bool) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buckets[key]
	if b == nil {
		if len(l.buckets) >= l.max {
			for k, o := range l.buckets {
				if l.refill(o, now); o.tokens >= l.burst {
					delete(l.buckets, k)
				}
			}
		}
		if len(l.buckets) < l.max {
			b = &bucket{}
			l.buckets[key] = b
			l.warned = false
		} else {
			b = &l.overflow
			full = !l.warned
			l.warned = true
		}
	}
	l.refill(b, now)
	if b.tokens >= 1 {
		b.tokens--
		return true, 0, full
	}
	return false, time.Duration((1 - b.tokens) * float64(l.every)), full
}

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
		return host
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
	if p := s.origins.listenPort(); p != 0 {
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
func (s *Server) serveLogin(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		writeHTTPError(w, http.StatusMethodNotAllowed, protocol.CodeBadRequest, "login takes POST {\"code\": …}")
		return
	}
	key := clientKey(r.RemoteAddr)
	ok, wait, full := s.logins.limit.allow(key)
	if full {
		s.log.Warn("login rate limit: every address slot is in use; new addresses share one bucket", "slots", s.opts.MaxLoginClients)
	}
	if !ok {
		secs := int(math.Ceil(wait.Seconds()))
		s.log.Warn("login attempt refused: too many from one address", "client", key)
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		writeHTTPError(w, http.StatusTooManyRequests, protocol.CodeLimitExceeded,
			fmt.Sprintf("too many login attempts from %s: try again in %d s (at most %d at once, then one every %s)", key, secs, s.opts.LoginBurst, s.opts.LoginEvery))
		return
	}
	var body struct {
		Code string `json:"code"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 4096)).Decode(&body); err != nil || body.Code == "" {
		writeHTTPError(w, http.StatusBadRequest, protocol.CodeBadRequest, "login: the body must be {\"code\": \"…\"} with the code from the login link")
		return
	}
	if !s.logins.redeem(body.Code) {
		s.log.Warn("login with an unknown, used or expired code refused")
		writeHTTPError(w, http.StatusUnauthorized, protocol.CodeUnauthorized, "this login link was already used or has expired: get a new one with `ccproxy login-url` (or POST /v1/login/code with the token)")
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: s.cookieName(), Value: s.logins.cookie, Path: "/",
		HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: s.origins.tls, // under TLS, never sent over plain HTTP
	})
	s.log.Info("browser logged in with a one-time code")
	w.WriteHeader(http.StatusNoContent)
}

// serveLoginCode is POST /v1/login/code, with the token: it mints a code
// valid for LoginCodeTTL, so that an extension host holding the token can
// open the web UI in a browser: {"code", "url"}.
func (s *Server) serveLoginCode(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		writeHTTPError(w, http.StatusMethodNotAllowed, protocol.CodeBadRequest, "POST /v1/login/code mints a login link")
		return
	}
	code := s.NewLoginCode(LoginCodeTTL)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	json.NewEncoder(w).Encode(map[string]string{"code": code, "url": s.origins.baseURL() + "/#code=" + code})
}

func randomString(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return base64.RawURLEncoding.EncodeToString(b)
}
