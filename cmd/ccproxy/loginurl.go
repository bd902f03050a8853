package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/ccproxy/ccproxy/proxy"
)

const loginURLUsage = `Usage: ccproxy login-url [--url URL] [--token-file PATH] [--tls-fingerprint FP] [--qr]

Prints a new one-time login link for the web UI of a running ccproxy serve,
for when the link it printed at start was used (each works once) or a
second browser or a phone needs one. It asks the daemon (POST
/v1/login/code with the token); the link is valid for 5 minutes. The URL is
--url or $CCPROXY_URL (serve's "url"); the token is read from --token-file
or $CCPROXY_TOKEN (serve's "token" when it made one up). A server with a
self-signed certificate is trusted by its fingerprint: --tls-fingerprint or
$CCPROXY_TLS_FINGERPRINT. With --qr the link is also drawn as a QR code on
stderr. Exit status: 0 a link was printed, 1 the daemon gave none, 2 usage.

Flags:
`

// maxLoginCodeBytes bounds the answer of POST /v1/login/code read.
const maxLoginCodeBytes = 64 << 10

// runLoginURL implements `ccproxy login-url`.
func runLoginURL(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("login-url", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, loginURLUsage)
		fs.PrintDefaults()
	}
	base := fs.String("url", os.Getenv("CCPROXY_URL"), "the daemon's `URL` (default $CCPROXY_URL)")
	tokenFile := fs.String("token-file", "", "read the token from `PATH` (default: $CCPROXY_TOKEN)")
	fp := fs.String("tls-fingerprint", os.Getenv("CCPROXY_TLS_FINGERPRINT"), "trust the https server whose certificate has this SHA-256 `FINGERPRINT` (default $CCPROXY_TLS_FINGERPRINT)")
	qr := fs.Bool("qr", false, "also print the link as a QR code on stderr, for a phone")
	timeout := fs.Duration("timeout", 10*time.Second, "give up after `DURATION`")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usagef("login-url: %v", err)
	}
	if fs.NArg() > 0 {
		return usagef("login-url: unexpected argument %q", fs.Arg(0))
	}
	if *base == "" {
		return usagef("login-url: give the daemon's URL with --url or $CCPROXY_URL (the \"url\" of serve's first line)")
	}
	u, err := url.Parse(strings.TrimSuffix(*base, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return usagef("login-url: --url %.200q: want http://HOST:PORT or https://HOST:PORT", *base)
	}
	token := os.Getenv("CCPROXY_TOKEN")
	if *tokenFile != "" {
		b, err := os.ReadFile(*tokenFile)
		if err != nil {
			return usagef("login-url: --token-file: %v", err)
		}
		token = strings.TrimSpace(string(b))
	}
	if token == "" {
		return usagef("login-url: no token: give --token-file PATH or set $CCPROXY_TOKEN (the token serve was started with, or the \"token\" of its first line)")
	}
	if err := proxy.CheckToken(token); err != nil {
		return usagef("login-url: %v", err)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if *fp != "" {
		want, err := proxy.ParseFingerprint(*fp)
		if err != nil {
			return usagef("login-url: --tls-fingerprint: %v", err)
		}
		tr.TLSClientConfig = pinnedTLS(want)
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "POST", u.String()+"/v1/login/code", nil)
	if err != nil {
		return usagef("login-url: %v", err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		return fmt.Errorf("login-url: %s: %w", u.Redacted(), err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxLoginCodeBytes+1))
	if err != nil {
		return fmt.Errorf("login-url: reading the answer of %s: %w", u.Redacted(), err)
	}
	if len(body) > maxLoginCodeBytes {
		return fmt.Errorf("login-url: %s answered more than %d bytes", u.Redacted(), maxLoginCodeBytes)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error struct{ Message string } `json:"error"`
		}
		json.Unmarshal(body, &e)
		return fmt.Errorf("login-url: %s/v1/login/code: %s: %.300s", u.Redacted(), resp.Status, e.Error.Message)
	}
	var r struct {
		URL string `json:"url"`
	}
	if err := json.Unmarshal(body, &r); err != nil || r.URL == "" {
		return fmt.Errorf("login-url: %s/v1/login/code: the answer holds no link", u.Redacted())
	}
	if _, err := fmt.Fprintln(stdout, r.URL); err != nil {
		return err
	}
	if *qr {
		return printLoginQR(stderr, r.URL)
	}
	return nil
}
