package remote

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/ccproxy/ccproxy/internal/textutil"
)

// Policy decides which browser origins may use the proxy (SPEC §1.3)
// and which names a request's Host header may carry. It is written by
// Listen (or SetServed) before the HTTP server starts and only read afterwards.
type Policy struct {
	extra  map[string]bool // normalized scheme://host[:port], or "null"
	own    map[string]bool // SCHEME://HOST:PORT for every served host
	hosts  map[string]bool // served hosts and the hosts of extra origins: the Host header check
	base   string          // SCHEME://HOST:PORT of the first served host
	port   int
	tls    bool
	public *PublicURL // --public-url, or nil
}

func NewPolicy(extra []string) *Policy {
	p := &Policy{extra: map[string]bool{}, own: map[string]bool{}, hosts: map[string]bool{}}
	for _, o := range extra {
		n, err := ParseOrigin(o)
		if err != nil {
			continue // the caller checks them with ParseOrigin
		}
		p.extra[n] = true
		if u, err := url.Parse(n); err == nil && u.Hostname() != "" {
			// A reverse proxy in front (--allow-origin) may pass its
			// own name on.
			p.hosts[strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")] = true
		}
	}
	return p
}

// SetServed derives the proxy's own origins from the port it listens on
// and the hosts it serves (ServedHosts): SCHEME://HOST:PORT, https under
// TLS, http otherwise.
func (p *Policy) SetServed(port int, hosts []string, tls bool) {
	scheme := "http"
	if tls {
		scheme = "https"
	}
	p.port, p.tls = port, tls
	for i, h := range hosts {
		o := scheme + "://" + strings.ToLower(net.JoinHostPort(h, strconv.Itoa(port)))
		if i == 0 {
			p.base = o
		}
		if n, err := ParseOrigin(o); err == nil {
			o = n // as an Origin header names it: without a default port
		}
		p.own[o] = true
		p.hosts[h] = true
	}
}

// HostAllowed reports whether a Host header names a served host (or the
// host of an --allow-origin origin); its port is not checked.
func (p *Policy) HostAllowed(hostHeader string) bool {
	h := hostOfHeader(hostHeader)
	return h != "" && p.hosts[h]
}

// OwnOrExtra reports whether origin is the proxy's own (from its listen
// address) or one given with --allow-origin.
func (p *Policy) OwnOrExtra(origin string) bool {
	n, err := ParseOrigin(origin)
	return err == nil && (p.own[n] || p.extra[n])
}

// Port is the port the proxy listens on (0 before Listen).
func (p *Policy) Port() int { return p.port }

// TLS reports whether the proxy is served over TLS.
func (p *Policy) TLS() bool { return p.tls }

// BaseURL is where browsers reach the proxy: the public URL (with its
// prefix) behind a reverse proxy, else SCHEME://HOST:PORT of the first
// served host.
func (p *Policy) BaseURL() string {
	if p.public != nil {
		return p.public.String()
	}
	return p.base
}

// Allowed reports whether a request with this Origin header may use the
// proxy: none (not a browser), its own origins, vscode-webview:// and the
// --allow-origin ones ("null" only when allowed so).
func (p *Policy) Allowed(origin string) bool {
	if origin == "" {
		return true // not a browser; the token is still required
	}
	if origin == "null" {
		return p.extra["null"] // only if --allow-origin null
	}
	n, err := ParseOrigin(origin)
	if err != nil {
		return false
	}
	if strings.HasPrefix(n, "vscode-webview://") {
		return true
	}
	return p.own[n] || p.extra[n]
}

// ParseOrigin normalizes an origin: scheme://host[:port] with scheme and
// host lower-cased (both are case-insensitive), the port in decimal and
// left out when it is the scheme's default (80 for http and ws, 443 for
// https and wss: a browser never sends it, and an explicit one names the
// same origin), or "null". An origin is exactly that serialization (RFC
// 6454 §6.2): anything after the host or port — a path, even a lone "/",
// a query, a fragment — or a user before it, is refused, not trimmed.
func ParseOrigin(o string) (string, error) {
	if o == "null" {
		return o, nil
	}
	u, err := url.Parse(o)
	if err != nil {
		return "", fmt.Errorf("not an origin (scheme://host[:port]): %w", err)
	}
	if u.Scheme == "" || u.Host == "" || !strings.EqualFold(o, u.Scheme+"://"+u.Host) {
		return "", fmt.Errorf("not an origin: want scheme://host[:port] and nothing else (no user, no path, not even a trailing \"/\", no query, no fragment)")
	}
	scheme, host := strings.ToLower(u.Scheme), strings.ToLower(u.Host)
	i := strings.LastIndexByte(host, ':')
	if i < 0 || strings.HasSuffix(host, "]") {
		return scheme + "://" + host, nil
	}
	n, err := strconv.Atoi(host[i+1:])
	if err != nil || n < 1 || n > 65535 {
		return "", fmt.Errorf("not an origin: port %q is not a port number (1 to 65535)", textutil.Truncate(host[i+1:], 20))
	}
	if n == defaultPorts[scheme] {
		return scheme + "://" + host[:i], nil
	}
	return scheme + "://" + host[:i] + ":" + strconv.Itoa(n), nil
}

// defaultPorts are the ports an origin leaves out.
var defaultPorts = map[string]int{"http": 80, "ws": 80, "https": 443, "wss": 443}
