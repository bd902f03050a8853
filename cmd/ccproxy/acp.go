package main

import (
	"context"
	"fmt"
	"io"
	"net"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ccproxy/ccproxy/acp"
	wsclient "github.com/ccproxy/ccproxy/protocol/client"
)

const acpLong = `An Agent Client Protocol agent on stdin/stdout, for editors (Zed,
JetBrains, Neovim, ...) that spawn their agent. Stdout carries only
JSON-RPC; the log goes to stderr. Each ACP session is a ccproxy session:
by default of a ccproxy started in this process (the configuration is
resolved as by serve: MCP servers merged and approved, permission prompts
through the broker); with --connect, of a running 'ccproxy serve', so the
web UI and other clients see the same live session. With --demo, sessions
replay the built-in demo: no CLI, no API key. Closing stdin closes every
session this command started. The MCP servers the editor sends with
session/new go through the same merge and approval: they start only with
--trust-client-mcp (with --connect, the running serve's flag decides), a
config file's server of the same name wins, and their tools are asked.
A session idle for --idle-timeout is suspended by the proxy: its claude
stops, and its next prompt resumes it (claude --resume, no replay to the
editor); a suspended session does not count against the limit of sessions.
With --connect, the running serve's --idle-timeout applies.`

// acpServeFlags are the flags of serve that acp takes for the server it
// runs in process (with --connect, the running serve decides them).
var acpServeFlags = []string{"project", "claude", "mcp-config", "trust-project-mcp", "trust-client-mcp", "allow-mcp-tools", "demo", "demo-speed", "log-level", "token", "token-file", "idle-timeout"}

// acpConfig is what `ccproxy acp` was asked to do: the server's
// configuration (serve's defaults, on a loopback port of its own, without
// the web UI) or the serve to connect to.
type acpConfig struct {
	serve   serveConfig
	connect string
	fp      string // --tls-fingerprint: pin an https serve's certificate (with --connect)
}

func newACPCmd() *cobra.Command {
	cfg := &acpConfig{}
	c := &cobra.Command{
		Use:   "acp [flags]",
		Short: "an Agent Client Protocol agent on stdin/stdout for editors (try --demo)",
		Long:  acpLong,
		Example: `  ccproxy acp --demo
  ccproxy acp --project ~/src/app
  ccproxy acp --connect http://127.0.0.1:PORT --token-file ~/.ccproxy-token`,
		Args: cobra.ArbitraryArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if err := cfg.check(args, c.ErrOrStderr()); err != nil {
				return err
			}
			return runACP(c.Context(), cfg, c.InOrStdin(), c.OutOrStdout(), c.ErrOrStderr())
		},
	}
	// serve's flags with their defaults; acp shows the ones it takes.
	all := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	addServeFlags(all, &cfg.serve)
	for _, name := range acpServeFlags {
		c.Flags().AddFlag(all.Lookup(name))
	}
	cfg.serve.fs, cfg.serve.tok.fs = c.Flags(), c.Flags()
	cfg.serve.noUI = true
	all.Lookup("token").Usage = "with --connect: the `TOKEN` of the running serve (env CCPROXY_TOKEN)"
	all.Lookup("token-file").Usage = "with --connect: read the token from `PATH`"
	all.Lookup("demo").Usage = "no CLI, no API key: sessions replay the built-in demo session"
	all.Lookup("demo-speed").Usage = "pace `X` of --demo: 1 is realistic, 2 twice as fast, 0 without delays"
	c.Flags().StringVar(&cfg.connect, "connect", "", "attach to the running ccproxy serve at `URL` (http://127.0.0.1:PORT) instead of starting one")
	c.Flags().StringVar(&cfg.fp, "tls-fingerprint", "", "with --connect to https: trust the serve whose certificate has this SHA-256 `FINGERPRINT` (serve's \"tlsFingerprint\")")
	bindEnv(c.Flags(), "tls-fingerprint", envTLSFingerprint)
	return c
}

// check validates the flags after parsing.
func (cfg *acpConfig) check(args []string, stderr io.Writer) error {
	if len(args) > 0 {
		return usagef("acp: unexpected argument %q", args[0])
	}
	fs := cfg.serve.fs
	if cfg.connect == "" {
		for _, name := range []string{"token", "token-file", "tls-fingerprint"} {
			if fs.Changed(name) {
				return usagef("acp: --%s goes with --connect", name)
			}
		}
		if cfg.serve.demo && cfg.serve.trustClient {
			return usagef("acp: --demo uses no MCP configuration; drop --trust-client-mcp")
		}
		return cfg.serve.check("acp", nil, stderr)
	}
	for _, name := range acpServeFlags {
		switch name {
		case "token", "token-file", "log-level", "demo-speed":
			continue
		}
		if fs.Changed(name) {
			return usagef("acp: with --connect, the running proxy decides: drop --demo, --project, --claude, --idle-timeout and the MCP flags")
		}
	}
	return cfg.serve.tok.check("acp", stderr)
}

// runACP implements `ccproxy acp`.
func runACP(ctx context.Context, cfg *acpConfig, stdin io.Reader, stdout, stderr io.Writer) error {
	log, err := newLogger(stderr, cfg.serve.logLevel)
	if err != nil {
		return usagef("acp: %v", err)
	}
	acp.Version = ccproxyVersion()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	var url, token string
	var served chan error
	if cfg.connect != "" {
		url = cfg.connect
		if token, err = cfg.serve.tok.read("acp"); err != nil {
			return err
		}
		if token == "" {
			return usagef("acp: --connect needs the token: give --token-file PATH or set $CCPROXY_TOKEN")
		}
	} else {
		// The same server as serve's, on a loopback port of its own.
		srv, err := newServer("acp", &cfg.serve, log, stderr)
		if err != nil {
			return err
		}
		defer srv.Close() // after Serve returned
		token = srv.token
		ln, err := listen(cfg.serve.addr)
		if err != nil {
			return err
		}
		url = "http://" + ln.Addr().(*net.TCPAddr).String()
		served = make(chan error, 1)
		go func() { served <- srv.Serve(ctx, ln) }()
		defer func() { cancel(); <-served }() // every session closed, every claude gone
	}
	tlsConfig, err := fingerprintTLS("acp", cfg.serve.fs, cfg.fp)
	if err != nil {
		return err
	}
	b, err := wsclient.DialTLS(ctx, url, token, tlsConfig)
	if err != nil {
		return fmt.Errorf("acp: %w", err)
	}
	defer b.Close()
	log.Info("ccproxy acp ready", "proxy", url, "connected", cfg.connect != "")
	agent := acp.NewAgent(b, log.With("component", "acp"))
	// session/load, session/list and session/resume read the proxy's own
	// history (history/list, history/read): with --connect, the running
	// serve's, on its machine, masked by it.
	done := make(chan struct{})
	var serveErr error
	go func() { // ends with stdin (Serve returns) or with ctx (the signal closes the backend)
		defer close(done)
		serveErr = agent.Serve(stdout, stdin)
	}()
	select {
	case <-done:
		if serveErr != nil { // the proxy went first (with --connect, the daemon died)
			return fmt.Errorf("acp: %w", serveErr)
		}
	case <-ctx.Done():
		// Sessions first, while the connection is up (else the daemon
		// keeps their claudes); then the connection, which ends Serve
		// (whose own Close then finds nothing left).
		agent.Close()
		b.Close()
		<-done
	}
	return nil
}
