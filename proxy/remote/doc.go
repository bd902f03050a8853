// Package remote is the proxy's remote access, apart from the session
// server: which names and browser origins may reach it (Policy), how a
// request proves it may drive Claude Code (the token, or the web UI's
// login cookie), the one-time login codes that buy that cookie and the
// rate limit of failed logins, TLS on the listener (a listen address off
// loopback is served only over TLS), and the certificate helpers of
// `serve --tls-self-signed` (SelfSignedCert, CertFingerprint, SPKIHash,
// ParseFingerprint). It never imports the proxy: the proxy hands a Gate
// what it needs in Config (the token, the --allow-origin origins, the
// login limits, a logger, and its function writing an HTTP error), and
// wraps its HTTP handler with the Gate.
//
// # Reaching the proxy from other machines
//
// Whoever reaches the port and holds the token (or a login link) drives
// Claude Code on this machine. Gate.Listen (Policy.Listen), called by the
// proxy's Serve before its HTTP server starts, refuses an address off
// loopback without TLS; with TLS it wraps the listener (1.2 or newer,
// HTTP/1.1 only: the websocket upgrade needs it). The served hosts
// (ServedHosts: the --host names, the listen address or every address of
// the machine on a wildcard, and loopback names on loopback) make the own
// origins (https:// under TLS) and the Host header check (DNS rebinding: a
// page of another site whose name was re-pointed here arrives with that
// site's name, 421). A reverse proxy in front is allowed by --allow-origin:
// its origin is then accepted, and its host name in the Host header. With
// --public-url (PublicURL, Config.Public) a reverse proxy that terminates
// TLS for a loopback proxy is the proxy's own face: its origin and host
// are own, the login cookie is Secure when it is https and scoped to its
// path prefix, BaseURL (login links, /v1/health) names it, and
// PublicURL.StripPrefix serves the proxy under the prefix as well as at
// its root (a reverse proxy may strip the prefix or not). With
// --trusted-header and --trusted-proxy (TrustedHeader, Config.Trusted) a
// reverse proxy that authenticates users itself names the user in a
// header: a request from a trusted peer (loopback addresses only, never
// defaulted) with a non-empty value is let in as the cookie would be; the
// header from any other peer is ignored and logged once per peer (a
// bounded set), never with its value.
//
// Browser login: the web UI gets a one-time code in the URL fragment
// (#code=…, never sent to servers) and POSTs it to /v1/login; a valid code
// sets a cookie (a per-launch secret distinct from the token, HttpOnly,
// SameSite=Strict, named after the port, Secure under TLS). POST
// /v1/login/code mints a code valid for LoginCodeTTL, with the token, or
// with the cookie from the proxy's own origin (its Origin header
// required). Failed logins are rate-limited per client address (IPv4
// address or IPv6 /64) by a token bucket of failures in an LRU table
// bounded by Config.MaxLoginClients (when it is full, the address whose
// last failure is oldest is forgotten; logged once); a valid code is
// never refused.
//
// # Data flow of a request
//
//	request ─► Gate.Check: Host names a served host? (421) ─► Origin allowed? (403) ─► CORS headers
//	        │   (an OPTIONS preflight is answered here, 204)
//	        ├─► public: the web UI's files (the proxy's), POST /v1/login ─► Gate.ServeLogin
//	        │       code redeemed? cookie set (204) : failure charged to the address (401, 400; 429 past the limit)
//	        └─► Gate.RequireAuth: Authorization: Bearer, the ccproxy.token.T subprotocol (/v1/ws only),
//	            or the cookie or a trusted peer's user header (no Origin, or the own / an --allow-origin one)
//	            ─► 401, or the proxy's handler;
//	            POST /v1/login/code ─► Gate.ServeLoginCode
//
// The proxy's websocket upgrader asks Policy.Allowed again, and
// /v1/health reads Policy.TLS and Policy.BaseURL.
//
// # Goroutines and locks
//
// None of its own: every method runs on the caller's goroutine (the HTTP
// server's handlers). logins.mu guards the login codes and loginLimiter.mu
// the rate limit's buckets, TrustedHeader.mu the untrusted peers already
// logged; each is a leaf, taken alone, never with a lock
// of the proxy's held (the proxy takes none around the Gate). The Policy
// (served hosts, own origins) is written by Listen before the HTTP server
// starts and only read after; the cookie and the token's hash are set by
// NewGate and never change.
package remote
