package remote

import (
	"container/list"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net"
	"sync"
	"time"

	"github.com/ccproxy/ccproxy/internal/textutil"
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
// in an LRU table bounded by Config.MaxLoginClients. A valid code is
// never refused.

const (
	// maxLoginCodes bounds the codes waiting to be used; minting more
	// forgets the oldest.
	maxLoginCodes = 32
	// LoginCodeTTL is how long a code minted on request stays valid.
	LoginCodeTTL = 5 * time.Minute
	// LoginPath is the login endpoint; LoginPath+"/code" mints codes.
	LoginPath = "/v1/login"

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

func newLogins(c Config) *logins {
	l := &logins{cookie: randomString(32), limit: newLoginLimiter(c.LoginBurst, c.LoginEvery, c.MaxLoginClients)}
	l.hash = sha256.Sum256([]byte(l.cookie))
	return l
}

// loginLimiter counts failed logins per client address: a token bucket of
// burst failures per address, one more every every; an address with none
// left is refused (429). Only failures are charged: a valid code is never
// refused, whatever the limiter holds (see Gate.ServeLogin).
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
	host := remoteHost(remoteAddr)
	ip := net.ParseIP(host)
	if ip == nil {
		return textutil.Truncate(host, maxClientKey)
	}
	if v4 := ip.To4(); v4 != nil {
		return v4.String()
	}
	return ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
}

// mint makes a one-time code valid for ttl (0: until used).
func (l *logins) mint(ttl time.Duration) string {
	code := randomString(24)
	lc := loginCode{hash: sha256.Sum256([]byte(code))}
	if ttl > 0 {
		lc.expires = time.Now().Add(ttl)
	}
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

func randomString(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return base64.RawURLEncoding.EncodeToString(b)
}
