package main

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ccproxy/ccproxy/proxy"
	"github.com/ccproxy/ccproxy/proxy/remote"
)

const statusLong = `Prints a one-screen summary of a running ccproxy serve, from its GET
/v1/health: version, uptime, the Claude Code CLI, sessions by state,
clients, MCP servers by status. The URL is --url (serve's "url"); the
token is read from --token-file, --token or $CCPROXY_TOKEN. A server
with a self-signed certificate is trusted by its fingerprint:
--tls-fingerprint (serve's "tlsFingerprint").
Exit status: 0 the daemon answered, 1 it did not, 2 usage.`

// maxHealthBytes bounds the /v1/health body read.
const maxHealthBytes = 1 << 20

// daemonFlags are the flags of a command that talks to a running serve
// (status, login-url): its URL, token and certificate fingerprint.
type daemonFlags struct {
	base, fp string
	tok      tokenFlags
	timeout  time.Duration
	fs       *pflag.FlagSet
}

func (d *daemonFlags) register(fs *pflag.FlagSet) {
	d.fs = fs
	fs.StringVar(&d.base, "url", "", "the daemon's `URL`")
	bindEnv(fs, "url", envURL)
	d.tok.register(fs, "the `TOKEN` of the daemon", "read the token from `PATH`")
	fs.StringVar(&d.fp, "tls-fingerprint", "", "trust the https server whose certificate has this SHA-256 `FINGERPRINT`")
	bindEnv(fs, "tls-fingerprint", envTLSFingerprint)
	fs.DurationVar(&d.timeout, "timeout", 10*time.Second, "give up after `DURATION`")
}

// call sends method path to the daemon with its token, over TLS pinned to
// the fingerprint when one is given, and returns the body of a 200 answer
// (at most max bytes). cmd prefixes the messages; the token never appears
// in them.
func (d *daemonFlags) call(ctx context.Context, cmd, method, path string, max int64, stderr io.Writer) ([]byte, error) {
	if err := d.tok.check(cmd, stderr); err != nil {
		return nil, err
	}
	if d.base == "" {
		return nil, usagef("%s: give the daemon's URL with --url or $CCPROXY_URL (the \"url\" of serve's first line)", cmd)
	}
	u, err := url.Parse(strings.TrimSuffix(d.base, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return nil, usagef("%s: %s %.200q: want http://HOST:PORT or https://HOST:PORT", cmd, flagSource(d.fs, "url"), d.base)
	}
	token, err := d.tok.read(cmd)
	if err != nil {
		return nil, err
	}
	if token == "" {
		return nil, usagef("%s: no token: give --token-file PATH or set $CCPROXY_TOKEN (the token serve was started with, or the \"token\" of its first line)", cmd)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if tc, err := fingerprintTLS(cmd, d.fs, d.fp); err != nil {
		return nil, err
	} else if tc != nil { // else the transport's own (it offers HTTP/2)
		tr.TLSClientConfig = tc
	}
	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, u.String()+path, nil)
	if err != nil {
		return nil, usagef("%s: %v", cmd, err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", cmd, u.Redacted(), err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		return nil, fmt.Errorf("%s: reading the answer of %s: %w", cmd, u.Redacted(), err)
	}
	if int64(len(body)) > max {
		return nil, fmt.Errorf("%s: %s answered more than %d bytes", cmd, u.Redacted(), max)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error struct{ Message string } `json:"error"`
		}
		json.Unmarshal(body, &e)
		return nil, fmt.Errorf("%s: %s%s: %s: %.300s", cmd, u.Redacted(), path, resp.Status, e.Error.Message)
	}
	return body, nil
}

// statusConfig is what `ccproxy status` was asked to do.
type statusConfig struct {
	daemon daemonFlags
	asJSON bool
}

func newStatusCmd() *cobra.Command {
	cfg := &statusConfig{}
	c := &cobra.Command{
		Use:   "status [flags]",
		Short: "a one-screen summary of a running ccproxy serve",
		Long:  statusLong,
		Example: `  CCPROXY_URL=http://127.0.0.1:PORT CCPROXY_TOKEN=... ccproxy status
  ccproxy status --url https://192.0.2.10:8443 --token-file ~/.ccproxy-token --tls-fingerprint AB:CD:...`,
		Args: cobra.ArbitraryArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("status: unexpected argument %q", args[0])
			}
			return runStatus(c.Context(), cfg, c.OutOrStdout(), c.ErrOrStderr())
		},
	}
	cfg.daemon.register(c.Flags())
	c.Flags().BoolVar(&cfg.asJSON, "json", false, "print the /v1/health JSON as it came")
	return c
}

func runStatus(ctx context.Context, cfg *statusConfig, stdout, stderr io.Writer) error {
	body, err := cfg.daemon.call(ctx, "status", "GET", "/v1/health", maxHealthBytes, stderr)
	if err != nil {
		return err
	}
	var h proxy.Health
	if err := json.Unmarshal(body, &h); err != nil {
		return fmt.Errorf("status: %s/v1/health: not a health report: %w", cfg.daemon.base, err)
	}
	if cfg.asJSON {
		_, err = fmt.Fprintf(stdout, "%s\n", body)
		return err
	}
	_, err = io.WriteString(stdout, formatHealth(h, ccproxyVersion()))
	return err
}

// fingerprintTLS is the TLS configuration of --tls-fingerprint fp (pinnedTLS;
// nil when fp is ""); a bad fingerprint is a usage error of cmd naming where
// it came from (the flag or its variable).
func fingerprintTLS(cmd string, fs *pflag.FlagSet, fp string) (*tls.Config, error) {
	if fp == "" {
		return nil, nil
	}
	want, err := remote.ParseFingerprint(fp)
	if err != nil {
		return nil, usagef("%s: %s: %v", cmd, flagSource(fs, "tls-fingerprint"), err)
	}
	return pinnedTLS(want), nil
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
				return fmt.Errorf("the server's certificate has the fingerprint %s, not the one given", remote.CertFingerprint(raw[0]))
			}
			return nil
		},
	}
}

// formatHealth is the one-screen summary; local is this binary's version,
// shown when the daemon's differs (a daemon from `go run`, which stamps no
// version, says "(devel)" while an installed ccproxy has a pseudo-version).
func formatHealth(h proxy.Health, local string) string {
	var b strings.Builder
	v := h.Version
	if v == "(devel)" {
		v = "(devel: built with no version stamped, as `go run` builds)"
	}
	fmt.Fprintf(&b, "ccproxy %s at %s", v, h.URL)
	if h.TLS {
		b.WriteString(" (TLS)")
	}
	fmt.Fprintf(&b, "\n  up %s, since %s\n", (time.Duration(h.UptimeSeconds) * time.Second).String(), h.Started.Format(time.RFC3339))
	if local != "" && local != h.Version {
		fmt.Fprintf(&b, "  this ccproxy: %s (a different build from the daemon's)\n", local)
	}
	if h.Claude != nil && h.Claude.Replay != "" {
		fmt.Fprintf(&b, "  claude code: none: replaying %s (recorded with Claude Code %s)\n", h.Claude.Replay, h.Claude.Version)
	} else if h.Claude != nil {
		fmt.Fprintf(&b, "  claude code: %s (%s)\n", h.Claude.Version, h.Claude.Path)
	} else {
		b.WriteString("  claude code: not found yet\n")
	}
	fmt.Fprintf(&b, "  sessions:    %d%s\n", h.Sessions, counts(h.ByState))
	if h.Spares > 0 {
		fmt.Fprintf(&b, "  spares:      %d parked (--warm)\n", h.Spares)
	}
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
