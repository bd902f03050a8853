package remote

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"net"
	"strings"
	"time"
)

// Reaching the proxy from another machine. Whoever reaches the port and
// holds the token (or a login link) drives Claude Code on this machine, so
// a listen address off loopback is served only over TLS (Serve refuses it
// otherwise). The names the proxy is reached by — its served hosts — are
// the ones its certificate should cover, the only ones accepted in a
// request's Host header (a DNS-rebinding defence: a page of another site
// whose name was re-pointed at this machine arrives with that site's name),
// and they make the proxy's own browser origins.

// ServedHosts lists the host names (DNS names and IP literals, lower-case,
// no brackets) by which clients reach a proxy listening on listen: the
// extra names first, in order, then the listen address's host — on an
// unspecified address (0.0.0.0, ::) every unicast address of this machine's
// interfaces, link-local ones excepted — and, when loopback is served, also
// localhost, 127.0.0.1 and ::1. The first is the one to put in URLs.
func ServedHosts(listen net.Addr, extra []string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	add := func(h string) {
		if h != "" && !seen[h] {
			seen[h] = true
			out = append(out, h)
		}
	}
	for _, e := range extra {
		h, err := NormalizeHost(e)
		if err != nil {
			return nil, err
		}
		add(h)
	}
	host, _, err := net.SplitHostPort(listen.String())
	if err != nil {
		return nil, fmt.Errorf("listen address %q: %w", listen.String(), err)
	}
	ip := net.ParseIP(host)
	loopback := false
	switch {
	case ip == nil:
		add(strings.ToLower(host))
	case ip.IsUnspecified():
		addrs, err := net.InterfaceAddrs()
		if err != nil {
			return nil, fmt.Errorf("listing this machine's addresses: %w", err)
		}
		var lo []string
		for _, a := range addrs {
			n, ok := a.(*net.IPNet)
			if !ok || n.IP.IsLinkLocalUnicast() || (ip.To4() != nil && n.IP.To4() == nil) {
				continue // an IPv4 wildcard serves no IPv6 address
			}
			if n.IP.IsLoopback() {
				lo = append(lo, n.IP.String())
				loopback = true
				continue
			}
			add(n.IP.String())
		}
		for _, h := range lo {
			add(h)
		}
	default:
		add(ip.String())
		loopback = ip.IsLoopback()
	}
	if loopback {
		for _, h := range []string{"localhost", "127.0.0.1", "::1"} {
			if h == "::1" && ip != nil && ip.IsUnspecified() && ip.To4() != nil {
				continue // 0.0.0.0 is IPv4 only
			}
			add(h)
		}
	}
	return out, nil
}

// NormalizeHost checks a host name given by the operator: an IP
// literal, or a DNS name of letters, digits, '-' and '.' (a trailing dot
// dropped), lower-cased.
func NormalizeHost(h string) (string, error) {
	orig := h
	h = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSuffix(h, "]"), "["), ".")
	if ip := net.ParseIP(h); ip != nil {
		return ip.String(), nil
	}
	if h == "" || len(h) > 253 {
		return "", fmt.Errorf("host name %q: want a DNS name or an IP address", orig)
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return "", fmt.Errorf("host name %q: label %q is not a DNS label", orig, label)
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return "", fmt.Errorf("host name %q: character %q is not allowed (letters, digits, '-' and '.')", orig, c)
			}
		}
	}
	return strings.ToLower(h), nil
}

// hostOfHeader returns the host name of a Host header value (port and IPv6
// brackets removed, lower-cased, no trailing dot), or "" if it is malformed.
func hostOfHeader(v string) string {
	host := v
	if h, _, err := net.SplitHostPort(v); err == nil {
		host = h
	} else if strings.HasPrefix(v, "[") && strings.HasSuffix(v, "]") {
		host = v[1 : len(v)-1]
	}
	n, err := NormalizeHost(host)
	if err != nil {
		return ""
	}
	return n
}

// SelfSignedCert makes an ECDSA P-256 certificate for hosts (DNS names and
// IP addresses), valid from an hour ago for 90 days: `serve
// --tls-self-signed` makes one at each start. Clients trust it by its
// fingerprint (CertFingerprint, SPKIHash).
func SelfSignedCert(hosts []string) (tls.Certificate, error) {
	if len(hosts) == 0 {
		return tls.Certificate{}, errors.New("self-signed certificate: no host name to cover")
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("self-signed certificate: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("self-signed certificate: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{Organization: []string{"ccproxy"}, CommonName: hosts[0]},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(90 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("self-signed certificate: %w", err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("self-signed certificate: %w", err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, nil
}

// CertFingerprint is the SHA-256 of a certificate (DER), as browsers show
// it: upper-case hex bytes joined by colons.
func CertFingerprint(der []byte) string {
	sum := sha256.Sum256(der)
	var b strings.Builder
	for i, c := range sum {
		if i > 0 {
			b.WriteByte(':')
		}
		fmt.Fprintf(&b, "%02X", c)
	}
	return b.String()
}

// SPKIHash is the base64 SHA-256 of a certificate's public key (its
// SubjectPublicKeyInfo): what chromium's --ignore-certificate-errors-spki-list
// and HTTP public-key pins take.
func SPKIHash(cert *x509.Certificate) string {
	sum := sha256.Sum256(cert.RawSubjectPublicKeyInfo)
	return base64.StdEncoding.EncodeToString(sum[:])
}

// ParseFingerprint reads a certificate fingerprint in the form
// CertFingerprint prints (colons and case optional).
func ParseFingerprint(s string) ([32]byte, error) {
	var out [32]byte
	h := strings.ReplaceAll(strings.TrimSpace(s), ":", "")
	b, err := hex.DecodeString(h)
	if err != nil || len(b) != len(out) {
		return out, fmt.Errorf("fingerprint %.120q: want the certificate's SHA-256 as 64 hex digits (AB:CD:… as ccproxy serve prints it)", s)
	}
	copy(out[:], b)
	return out, nil
}

// serverTLSConfig is the configuration Serve wraps its listener with:
// opts' certificates, TLS 1.2 or newer, HTTP/1.1 only (the websocket
// upgrade needs it).
func serverTLSConfig(c *tls.Config) *tls.Config {
	c = c.Clone()
	if c.MinVersion < tls.VersionTLS12 {
		c.MinVersion = tls.VersionTLS12
	}
	c.NextProtos = []string{"http/1.1"}
	return c
}

// Listen readies ln for the proxy's Serve: it refuses an address off
// loopback without tlsConf, derives the served hosts (ServedHosts of ln's
// address and extraHosts) and from them p's own origins, and wraps ln in
// TLS when tlsConf is set. It is called once, before the HTTP server
// starts (p is only read after).
func (p *Policy) Listen(ln net.Listener, tlsConf *tls.Config, extraHosts []string) (net.Listener, error) {
	tcp, _ := ln.Addr().(*net.TCPAddr)
	if tlsConf == nil && (tcp == nil || !tcp.IP.IsLoopback()) {
		return nil, fmt.Errorf("proxy: listening on %s, off loopback, needs TLS (Options.TLS): whoever reaches the port could read the token and drive Claude Code", ln.Addr())
	}
	hosts, err := ServedHosts(ln.Addr(), extraHosts)
	if err != nil {
		return nil, fmt.Errorf("proxy: %w", err)
	}
	port := 0
	if tcp != nil {
		port = tcp.Port
	}
	p.SetServed(port, hosts, tlsConf != nil)
	if tlsConf != nil {
		ln = tls.NewListener(ln, serverTLSConfig(tlsConf))
	}
	return ln, nil
}
