package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

const loginURLLong = `Prints a new one-time login link for the web UI of a running ccproxy serve,
for when the link it printed at start was used (each works once) or a
second browser or a phone needs one. It asks the daemon (POST
/v1/login/code with the token); the link is valid for 5 minutes. The URL is
--url (serve's "url"); the token is read from --token-file, --token or
$CCPROXY_TOKEN (serve's "token" when it made one up). A server with a
self-signed certificate is trusted by its fingerprint: --tls-fingerprint
(serve's "tlsFingerprint"). With --qr the link is also drawn as a QR code
on stderr.
Exit status: 0 a link was printed, 1 the daemon gave none, 2 usage.`

// maxLoginCodeBytes bounds the answer of POST /v1/login/code read.
const maxLoginCodeBytes = 64 << 10

// loginURLConfig is what `ccproxy login-url` was asked to do.
type loginURLConfig struct {
	daemon daemonFlags
	qr     bool
}

func newLoginURLCmd() *cobra.Command {
	cfg := &loginURLConfig{}
	c := &cobra.Command{
		Use:   "login-url [flags]",
		Short: "print a new one-time login link for the web UI of a running serve",
		Long:  loginURLLong,
		Example: `  CCPROXY_URL=http://127.0.0.1:PORT CCPROXY_TOKEN=... ccproxy login-url
  ccproxy login-url --url https://192.0.2.10:8443 --token-file ~/.ccproxy-token --tls-fingerprint AB:CD:... --qr`,
		Args: cobra.ArbitraryArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("login-url: unexpected argument %q", args[0])
			}
			return runLoginURL(c.Context(), cfg, c.OutOrStdout(), c.ErrOrStderr())
		},
	}
	cfg.daemon.register(c.Flags())
	c.Flags().BoolVar(&cfg.qr, "qr", false, "also print the link as a QR code on stderr, for a phone")
	return c
}

// runLoginURL implements `ccproxy login-url`.
func runLoginURL(ctx context.Context, cfg *loginURLConfig, stdout, stderr io.Writer) error {
	body, err := cfg.daemon.call(ctx, "login-url", "POST", "/v1/login/code", maxLoginCodeBytes, stderr)
	if err != nil {
		return err
	}
	var r struct {
		URL string `json:"url"`
	}
	if err := json.Unmarshal(body, &r); err != nil || r.URL == "" {
		return fmt.Errorf("login-url: %s/v1/login/code: the answer holds no link", cfg.daemon.base)
	}
	if _, err := fmt.Fprintln(stdout, r.URL); err != nil {
		return err
	}
	if cfg.qr {
		return printLoginQR(stderr, r.URL)
	}
	return nil
}
