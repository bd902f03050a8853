package proxy

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"io"
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
// endpoint, from the proxy's own origin only.

const (
	// maxLoginCodes bounds the codes waiting to be used; minting more
	// forgets the oldest.
	maxLoginCodes = 32
	// LoginCodeTTL is how long a code minted on request stays valid.
	LoginCodeTTL = 5 * time.Minute
	loginPath    = "/v1/login"
)

type loginCode struct {
	hash    [32]byte
	expires time.Time // zero: until used
}

type logins struct {
	mu     sync.Mutex
	codes  []loginCode
	cookie string   // the cookie's value
	hash   [32]byte // its sha256, for constant-time checks
}

func newLogins() *logins {
	l := &logins{cookie: randomString(32)}
	l.hash = sha256.Sum256([]byte(l.cookie))
	return l
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
	var body struct {
		Code string `json:"code"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 4096)).Decode(&body); err != nil || body.Code == "" {
		writeHTTPError(w, http.StatusBadRequest, protocol.CodeBadRequest, "login: the body must be {\"code\": \"…\"} with the code from the login link")
		return
	}
	if !s.logins.redeem(body.Code) {
		s.log.Warn("login with an unknown, used or expired code refused")
		writeHTTPError(w, http.StatusUnauthorized, protocol.CodeUnauthorized, "this login link was already used or has expired: get a new one from ccproxy (POST /v1/login/code with the token)")
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: s.cookieName(), Value: s.logins.cookie, Path: "/",
		HttpOnly: true, SameSite: http.SameSiteStrictMode,
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
