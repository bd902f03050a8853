package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"

	"github.com/ccproxy/ccproxy/acp"
	"github.com/ccproxy/ccproxy/history"
	"github.com/ccproxy/ccproxy/mcpconfig"
	"github.com/ccproxy/ccproxy/proxy"
)

const acpUsage = `Usage: ccproxy acp [flags]

An Agent Client Protocol agent on stdin/stdout, for editors (Zed,
JetBrains, Neovim, ...) that spawn their agent. Stdout carries only
JSON-RPC; the log goes to stderr. Each ACP session is a ccproxy session:
by default of a ccproxy started in this process (the configuration is
resolved as by serve: MCP servers merged and approved, permission prompts
through the broker); with --connect, of a running 'ccproxy serve', so the
web UI and other clients see the same live session. Closing stdin closes
every session this command started. The MCP servers the editor sends with
session/new go through the same merge and approval: they start only with
--trust-client-mcp (with --connect, the running proxy decides), a config
file's server of the same name wins, and their tools are asked.

Flags:
`

// runACP implements `ccproxy acp`.
func runACP(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("acp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, acpUsage); fs.PrintDefaults() }
	connect := fs.String("connect", "", "attach to the running ccproxy serve at `URL` (http://127.0.0.1:PORT) instead of starting one")
	tokenFile := fs.String("token-file", "", "with --connect: read the token from `PATH` (default: $CCPROXY_TOKEN)")
	project := fs.String("project", "", "default working `DIR` of sessions, whose .mcp.json is read (default: the current directory)")
	claude := fs.String("claude", "", "the Claude Code CLI to run (default: $CCPROXY_CLAUDE, then claude on PATH)")
	var mcpConfigs multiFlag
	fs.Var(&mcpConfigs, "mcp-config", "extra MCP config `FILE` (repeatable)")
	trust := fs.Bool("trust-project-mcp", false, "approve every project .mcp.json server not rejected")
	trustClient := fs.Bool("trust-client-mcp", false, "start the MCP servers the editor sends with session/new and session/load (config files still win on a name clash; their tools are still asked)")
	allowMCP := fs.Bool("allow-mcp-tools", false, "allow every tool of every active MCP server without asking")
	demo := fs.Bool("demo", false, "no CLI, no API key: sessions replay the built-in demo session")
	demoSpeed := fs.Float64("demo-speed", 1, "pace of --demo: 1 is realistic, 0 without delays")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usagef("acp: %v", err)
	}
	if fs.NArg() > 0 {
		return usagef("acp: unexpected argument %q", fs.Arg(0))
	}
	log, err := newLogger(stderr, *logLevel)
	if err != nil {
		return err
	}
	acp.Version = ccproxyVersion()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	var url, token string
	var served chan error
	if *demo && *trustClient {
		return usagef("acp: --demo uses no MCP configuration; drop --trust-client-mcp")
	}
	if *connect != "" {
		if *demo || *project != "" || *claude != "" || len(mcpConfigs) > 0 || *trust || *trustClient || *allowMCP {
			return usagef("acp: with --connect, the running proxy decides: drop --demo, --project, --claude and the MCP flags")
		}
		url = *connect
		token = os.Getenv("CCPROXY_TOKEN")
		if *tokenFile != "" {
			b, err := os.ReadFile(*tokenFile)
			if err != nil {
				return usagef("acp: --token-file: %v", err)
			}
			token = strings.TrimSpace(string(b))
		}
		if token == "" {
			return usagef("acp: --connect needs the token: give --token-file PATH or set $CCPROXY_TOKEN")
		}
	} else {
		if *tokenFile != "" {
			return usagef("acp: --token-file goes with --connect")
		}
		// The same resolution as serve, on a loopback port of its own.
		sargs := []string{"--addr", "127.0.0.1:0", "--no-ui", "--log-level", *logLevel, "--demo-speed", strconv.FormatFloat(*demoSpeed, 'g', -1, 64)}
		if *project != "" {
			sargs = append(sargs, "--project", *project)
		}
		if *claude != "" {
			sargs = append(sargs, "--claude", *claude)
		}
		for _, m := range mcpConfigs {
			sargs = append(sargs, "--mcp-config", m)
		}
		if *trust {
			sargs = append(sargs, "--trust-project-mcp")
		}
		if *allowMCP {
			sargs = append(sargs, "--allow-mcp-tools")
		}
		if *demo {
			sargs = append(sargs, "--demo")
		}
		cfg, err := parseServe(sargs, stderr)
		if err != nil {
			return fmt.Errorf("acp: %w", err)
		}
		if token, _, err = resolveToken(cfg); err != nil {
			return err
		}
		opts := cfg.opts
		opts.Token, opts.Project, opts.ClaudePath, opts.Logger, opts.Version = token, cfg.project, cfg.claude, log, ccproxyVersion()
		if cfg.demo {
			self, err := os.Executable()
			if err != nil {
				return fmt.Errorf("acp --demo: finding ccproxy's own executable: %w", err)
			}
			opts.ClaudePath = self
			opts.ClaudePrefixArgs = []string{"replay-claude", "--speed", strconv.FormatFloat(cfg.demoSpeed, 'g', -1, 64)}
		} else {
			removeStaleMCPConfigs(log)
			src, err := proxy.NewMCPConfigSource(mcpconfig.Options{
				ProjectDir: cfg.project, Extra: cfg.mcpConfigs, TrustProject: cfg.trustProject, TrustClient: *trustClient,
				AllowServerTools: cfg.allowMCPTools, Logger: log.With("component", "mcpconfig"),
			}, "", log.With("component", "mcpconfig"))
			if err != nil {
				return fmt.Errorf("acp: %w", err)
			}
			defer src.Close() // after Serve returned
			opts.MCP = src
		}
		srv, err := proxy.New(opts)
		if err != nil {
			return usagef("acp: %v", err)
		}
		ln, err := listen(cfg.addr)
		if err != nil {
			return err
		}
		url = "http://" + ln.Addr().(*net.TCPAddr).String()
		served = make(chan error, 1)
		go func() { served <- srv.Serve(ctx, ln) }()
		defer func() { cancel(); <-served }() // every session closed, every claude gone
	}
	b, err := acp.Dial(ctx, url, token)
	if err != nil {
		return fmt.Errorf("acp: %w", err)
	}
	defer b.Close()
	log.Info("ccproxy acp ready", "proxy", url, "connected", *connect != "")
	agent := acp.NewAgent(b, log.With("component", "acp"))
	// session/load reads Claude Code's stored sessions on this machine
	// (with --connect, the daemon's claude resumes them: the same machine
	// and user is assumed).
	if store, err := history.Open(history.Options{Logger: log.With("component", "history")}); err != nil {
		log.Warn("no session/load: Claude Code's session store cannot be read", "err", err)
	} else {
		agent.History = store
	}
	done := make(chan struct{})
	go func() { // ends with stdin (Serve returns) or with ctx (the signal closes the backend)
		defer close(done)
		agent.Serve(stdout, stdin)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		b.Close()
		<-done
	}
	return nil
}
