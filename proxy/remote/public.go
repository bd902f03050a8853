package remote

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// PublicURL is where browsers reach the proxy when a reverse proxy (Caddy,
// nginx) in front of a loopback ccproxy terminates TLS: its origin is one
// of the proxy's own (Host and Origin checks, the login cookie), its
// scheme decides whether the cookie is Secure, and its path is a prefix
// the proxy serves under as well as at its root (whether the reverse
// proxy strips it or not). Login links and /v1/health's url name it.
type PublicURL struct {
	Origin string // scheme://host[:port], as ParseOrigin normalizes it
	Host   string // the host name, lower case, no port
	Prefix string // "" or "/path" (no trailing slash)
	Secure bool   // https
}

// ParsePublicURL checks a --public-url: http or https, a host, an
// optional port and path prefix, nothing else (no user, query or
// fragment).
func ParsePublicURL(s string) (*PublicURL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("public URL %.100q: %w", s, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("public URL %.100q: want https://host[:port][/prefix] (or http://), got scheme %q", s, u.Scheme)
	}
	if u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return nil, fmt.Errorf("public URL %.100q: want scheme://host[:port][/prefix] and nothing else (no user, query or fragment)", s)
	}
	origin, err := ParseOrigin(u.Scheme + "://" + u.Host)
	if err != nil {
		return nil, fmt.Errorf("public URL %.100q: %w", s, err)
	}
	prefix := strings.TrimRight(u.EscapedPath(), "/")
	if strings.Contains(prefix, "//") || strings.Contains(prefix, "/../") || strings.HasSuffix(prefix, "/..") || strings.Contains(prefix, "/./") {
		return nil, fmt.Errorf("public URL %.100q: the path %q is not a plain prefix", s, prefix)
	}
	if strings.HasPrefix(prefix+"/", "/v1/") {
		return nil, fmt.Errorf("public URL %.100q: the prefix %q would hide the proxy's own /v1/ paths", s, prefix)
	}
	return &PublicURL{Origin: origin, Host: strings.TrimSuffix(strings.ToLower(u.Hostname()), "."), Prefix: prefix, Secure: u.Scheme == "https"}, nil
}

// String is the public URL: origin and prefix.
func (p *PublicURL) String() string { return p.Origin + p.Prefix }

// StripPrefix serves next at the root and under the prefix: a reverse
// proxy may pass /prefix/v1/ws on as it is or strip it to /v1/ws. The
// prefix alone redirects to prefix/ (the page's relative URLs need the
// slash).
func (p *PublicURL) StripPrefix(next http.Handler) http.Handler {
	if p == nil || p.Prefix == "" {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == p.Prefix {
			http.Redirect(w, r, p.Prefix+"/", http.StatusMovedPermanently)
			return
		}
		if rest, ok := strings.CutPrefix(r.URL.Path, p.Prefix+"/"); ok {
			r2 := new(http.Request)
			*r2 = *r
			u := *r.URL
			u.Path = "/" + rest
			u.RawPath = ""
			r2.URL = &u
			next.ServeHTTP(w, r2)
			return
		}
		next.ServeHTTP(w, r)
	})
}
