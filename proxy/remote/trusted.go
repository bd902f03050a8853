package remote

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"

	"github.com/ccproxy/ccproxy/internal/textutil"
)

// TrustedHeader is `serve --trusted-header NAME --trusted-proxy ADDR`: a
// reverse proxy in front of a loopback ccproxy that authenticates its
// users itself (Caddy's basic_auth or forward_auth, nginx's auth_basic)
// and names the user in a header. A request from a trusted peer (its
// address in Proxies) with a non-empty Name header is authenticated as if
// it had the token; from any other peer the header is ignored (and logged
// once per peer, without its value). Every process of the machine that
// can connect from a trusted address can send the header too, which is
// why it is opt-in and the proxies are never defaulted.
type TrustedHeader struct {
	Name    string         // canonical header name (textproto form)
	Proxies []netip.Prefix // loopback addresses or prefixes only

	mu     sync.Mutex          // guards warned and full; a leaf
	warned map[netip.Addr]bool // untrusted peers already logged; at most maxWarnedPeers
	full   bool                // warned is full (said once)
}

// maxWarnedPeers bounds the untrusted peers remembered as logged: past it,
// one more warning says so and the rest go unlogged.
const maxWarnedPeers = 256

// refusedTrustedHeaders are header names a reverse proxy or browser gives
// a meaning of their own: trusting one of them would trust what every
// client sends.
var refusedTrustedHeaders = map[string]bool{
	"Authorization": true, "Cookie": true, "Host": true, "Origin": true, "Referer": true,
	"Connection": true, "Upgrade": true, "Content-Type": true, "Content-Length": true,
	"User-Agent": true, "Sec-Websocket-Protocol": true, "Sec-Websocket-Key": true,
}

// ParseTrustedHeader checks --trusted-header and --trusted-proxy: a header
// name (letters, digits and -, not one of the standard request headers)
// and at least one proxy address (an IP or a CIDR prefix, each on
// loopback: a proxy on another machine would reach ccproxy over the
// network, where any host can claim the header). Each proxy may be a
// comma-separated list.
func ParseTrustedHeader(name string, proxies []string) (*TrustedHeader, error) {
	if name == "" {
		if len(proxies) > 0 {
			return nil, errors.New("--trusted-proxy needs --trusted-header NAME (the header the proxy names the user in)")
		}
		return nil, nil
	}
	if !validHeaderName(name) {
		return nil, fmt.Errorf("trusted header %.100q: want a header name (letters, digits and -), such as Remote-User", name)
	}
	canon := http.CanonicalHeaderKey(name)
	if refusedTrustedHeaders[canon] {
		return nil, fmt.Errorf("trusted header %q: a standard request header, which every client sends as it likes; use the proxy's own, such as Remote-User", name)
	}
	t := &TrustedHeader{Name: canon, warned: map[netip.Addr]bool{}}
	for _, list := range proxies {
		for _, s := range strings.Split(list, ",") {
			s = strings.TrimSpace(s)
			if s == "" {
				continue
			}
			p, err := parseProxyAddr(s)
			if err != nil {
				return nil, err
			}
			t.Proxies = append(t.Proxies, p)
		}
	}
	if len(t.Proxies) == 0 {
		return nil, errors.New("--trusted-header needs --trusted-proxy ADDR: the loopback address the reverse proxy connects from (such as 127.0.0.1 or ::1); there is no default, since every local process can connect from it")
	}
	return t, nil
}

// parseProxyAddr is one --trusted-proxy: an IP address or CIDR prefix,
// all of it on loopback.
func parseProxyAddr(s string) (netip.Prefix, error) {
	var p netip.Prefix
	if strings.Contains(s, "/") {
		var err error
		if p, err = netip.ParsePrefix(s); err != nil {
			return p, fmt.Errorf("trusted proxy %.100q: want an IP address or a CIDR prefix: %v", s, err)
		}
		p = p.Masked()
	} else {
		a, err := netip.ParseAddr(s)
		if err != nil {
			return p, fmt.Errorf("trusted proxy %.100q: want an IP address or a CIDR prefix (no host names or ports)", s)
		}
		a = a.Unmap()
		p = netip.PrefixFrom(a, a.BitLen())
	}
	if a := p.Addr().Unmap(); p.Addr().Is4In6() {
		p = netip.PrefixFrom(a, p.Bits()-96)
	}
	if !p.Addr().IsLoopback() || (p.Addr().Is4() && p.Bits() < 8) || (p.Addr().Is6() && p.Bits() < 128) {
		return p, fmt.Errorf("trusted proxy %.100q: only loopback addresses (127.0.0.0/8, ::1) may be trusted: a proxy on another machine reaches ccproxy over the network, where any host can send the header", s)
	}
	return p, nil
}

func validHeaderName(s string) bool {
	if len(s) == 0 || len(s) > 100 {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// remoteHost is the host part of a request's RemoteAddr (all of it when
// it has no port).
func remoteHost(remoteAddr string) string {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		return remoteAddr
	}
	return host
}

// peerAddr is the IP address of r's peer (the TCP connection's), unmapped.
func peerAddr(r *http.Request) (netip.Addr, bool) {
	a, err := netip.ParseAddr(remoteHost(r.RemoteAddr))
	if err != nil {
		return netip.Addr{}, false
	}
	return a.Unmap().WithZone(""), true
}

func (t *TrustedHeader) trusts(a netip.Addr) bool {
	for _, p := range t.Proxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// User is the user a trusted peer names in the header of r: "" when the
// header is absent or empty, or r comes from a peer not trusted (then
// the header is ignored, and logged once per peer, without its value).
func (t *TrustedHeader) User(r *http.Request, g *Gate) string {
	if t == nil {
		return ""
	}
	v := strings.TrimSpace(r.Header.Get(t.Name))
	if v == "" {
		return ""
	}
	a, ok := peerAddr(r)
	if ok && t.trusts(a) {
		return v
	}
	t.warnOnce(a, g)
	return ""
}

// warnOnce logs the first request carrying the header from the untrusted
// peer a (never the value: from an untrusted peer it may be anything).
func (t *TrustedHeader) warnOnce(a netip.Addr, g *Gate) {
	var warn, warnFull bool
	t.mu.Lock()
	switch {
	case t.warned[a]:
	case len(t.warned) < maxWarnedPeers:
		t.warned[a], warn = true, true
	case !t.full:
		t.full, warnFull = true, true
	}
	t.mu.Unlock()
	if warn {
		g.log.Warn("trusted header from a peer not trusted ignored (logged once per peer)", "header", t.Name, "peer", textutil.Truncate(a.String(), 60), "trusted", fmt.Sprint(t.Proxies))
	}
	if warnFull {
		g.log.Warn("trusted header: more untrusted peers sent it than are remembered; the rest are not logged", "header", t.Name, "peers", maxWarnedPeers)
	}
}
