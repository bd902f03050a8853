package main

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/ccproxy/ccproxy/proxy"
)

const statusUsage = `Usage: ccproxy status [--url URL] [--token-file PATH] [--tls-fingerprint FP] [--json]

Prints a one-screen summary of a running ccproxy serve, from its GET
/v1/health: version, uptime, the Claude Code CLI, sessions by state,
clients, MCP servers by status. The URL is --url or $CCPROXY_URL (serve's
"url"); the token is read from --token-file or $CCPROXY_TOKEN. A server
with a self-signed certificate is trusted by its fingerprint: --tls-fingerprint
or $CCPROXY_TLS_FINGERPRINT (serve's "tlsFingerprint").
Exit status: 0 the daemon answered, 1 it did not, 2 usage.

Flags:
`

// maxHealthBytes bounds the /v1/health body read.
const maxHealthBytes = 1 << 20

func runStatus(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("status", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, statusUsage)
		fs.PrintDefaults()
	}
	base := fs.String("url", os.Getenv("CCPROXY_URL"), "the daemon's `URL` (default $CCPROXY_URL)")
	tokenFile := fs.String("token-file", "", "read the token from `PATH` (default: $CCPROXY_TOKEN)")
	fp := fs.String("tls-fingerprint", os.Getenv("CCPROXY_TLS_FINGERPRINT"), "trust the https server whose certificate has this SHA-256 `FINGERPRINT` (default $CCPROXY_TLS_FINGERPRINT)")
	asJSON := fs.Bool("json", false, "print the /v1/health JSON as it came")
	timeout := fs.Duration("timeout", 10*time.Second, "give up after `DURATION`")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usagef("status: %v", err)
	}
	if fs.NArg() > 0 {
		return usagef("status: unexpected argument %q", fs.Arg(0))
	}
	if *base == "" {
		return usagef("status: give the daemon's URL with --url or $CCPROXY_URL (the \"url\" of serve's first line)")
	}
	u, err := url.Parse(strings.TrimSuffix(*base, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usagef("status: --url %.200q: want http://HOST:PORT or https://HOST:PORT", *base)
	}
	token := os.Getenv("CCPROXY_TOKEN")
	if *tokenFile != "" {
		b, err := os.ReadFile(*tokenFile)
		if err != nil {
			return usagef("status: --token-file: %v", err)
		}
		token = strings.TrimSpace(string(b))
	}
	if token == "" {
		return usagef("status: no token: give --token-file PATH or set $CCPROXY_TOKEN")
	}
	if err := proxy.CheckToken(token); err != nil {
		return usagef("status: %v", err)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if *fp != "" {
		want, err := proxy.ParseFingerprint(*fp)
		if err != nil {
			return usagef("status: --tls-fingerprint: %v", err)
		}
		tr.TLSClientConfig = pinnedTLS(want)
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", u.String()+"/v1/health", nil)
	if err != nil {
		return usagef("status: %v", err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		return fmt.Errorf("status: %s: %w", u.Redacted(), err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxHealthBytes+1))
	if err != nil {
		return fmt.Errorf("status: reading the answer of %s: %w", u.Redacted(), err)
	}
	if len(body) > maxHealthBytes {
		return fmt.Errorf("status: %s answered more than %d bytes", u.Redacted(), maxHealthBytes)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error struct{ Message string } `json:"error"`
		}
		json.Unmarshal(body, &e)
		return fmt.Errorf("status: %s/v1/health: %s: %.300s", u.Redacted(), resp.Status, e.Error.Message)
	}
	var h proxy.Health
	if err := json.Unmarshal(body, &h); err != nil {
		return fmt.Errorf("status: %s/v1/health: not a health report: %w", u.Redacted(), err)
	}
	if *asJSON {
		_, err = fmt.Fprintf(stdout, "%s\n", body)
		return err
	}
	_, err = io.WriteString(stdout, formatHealth(h))
	return err
}

// pinnedTLS trusts exactly the certificate whose SHA-256 is want (the
// leaf), whoever signed it and whatever names it holds.
func pinnedTLS(want [32]byte) *tls.Config {
	return &tls.Config{
		InsecureSkipVerify: true, // replaced by the pin below
		VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
			if len(raw) == 0 {
				return errors.New("the server sent no certificate")
			}
			got := sha256.Sum256(raw[0])
			if subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
				return fmt.Errorf("the server's certificate has the fingerprint %s, not the one given", proxy.CertFingerprint(raw[0]))
			}
			return nil
		},
	}
}

// formatHealth is the one-screen summary.
func formatHealth(h proxy.Health) string {
	var b strings.Builder
	fmt.Fprintf(&b, "ccproxy %s at %s", h.Version, h.URL)
	if h.TLS {
		b.WriteString(" (TLS)")
	}
	fmt.Fprintf(&b, "\n  up %s, since %s\n", (time.Duration(h.UptimeSeconds) * time.Second).String(), h.Started.Format(time.RFC3339))
	if h.Claude != nil {
		fmt.Fprintf(&b, "  claude code: %s (%s)\n", h.Claude.Version, h.Claude.Path)
	} else {
		b.WriteString("  claude code: not found yet\n")
	}
	fmt.Fprintf(&b, "  sessions:    %d%s\n", h.Sessions, counts(h.ByState))
	fmt.Fprintf(&b, "  clients:     %d\n", h.Clients)
	fmt.Fprintf(&b, "  MCP servers: %d%s\n", h.MCPServers, counts(h.MCPByStatus))
	return b.String()
}

// counts is " (a 1, b 2)" sorted by name, or "".
func counts(m map[string]int) string {
	if len(m) == 0 {
		return ""
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return " (" + strings.Join(parts, ", ") + ")"
}
