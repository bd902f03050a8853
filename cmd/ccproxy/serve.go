package main

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ccproxy/ccproxy/internal/replay"
	"github.com/ccproxy/ccproxy/mcpconfig"
	"github.com/ccproxy/ccproxy/mcpconfig/calllog"
	"github.com/ccproxy/ccproxy/proxy"
	"github.com/ccproxy/ccproxy/proxy/mcphub"
	"github.com/ccproxy/ccproxy/proxy/remote"
	"github.com/ccproxy/ccproxy/webui"
)

const serveLong = `Runs live Claude Code sessions for webviews over a websocket at /v1/ws.
The first line on stdout is {"url","port","pid","loginURL"} (and "token"
when ccproxy made the token up; under TLS also "tlsFingerprint", the
certificate's SHA-256, and "tlsSPKI", its public key's base64 SHA-256);
the log goes to stderr. The web UI is at /: open loginURL, a one-time link,
in a browser. When ccproxy listens off loopback and stderr is a terminal
(or with --qr) a second one-time link is printed there as a QR code, for a
phone. With --demo, sessions replay a recorded demo: no CLI, no API key.

ccproxy listens on loopback unless it serves TLS: to reach it from a phone
or another machine, give --addr 0.0.0.0:PORT (or an address of this
machine) with --tls-cert and --tls-key, or with --tls-self-signed (a new
certificate at each start: check its fingerprint when the browser asks).
Requests must name a served host: the listen address, loopback names on
loopback, every address of this machine on 0.0.0.0, or a --host name.`

// serveConfig is what `ccproxy serve` (or `ccproxy acp`, which runs the
// same server in process) was asked to do.
type serveConfig struct {
	addr, project, claude, logLevel, replay string
	tok                                     tokenFlags
	origins, mcpConfigs                     []string
	trustProject, demo, allowMCPTools       bool
	trustClient                             bool // start the MCP servers clients send with session/create
	tlsCert, tlsKey                         string
	tlsSelfSigned, qr                       bool
	noUI                                    bool // --no-ui: no web UI (proxy.Options.UI nil), no login link
	hosts                                   []string
	demoSpeed                               float64
	opts                                    proxy.Options
	fs                                      *pflag.FlagSet // where the flags are, for Changed
}

func newServeCmd() *cobra.Command {
	cfg := &serveConfig{}
	c := &cobra.Command{
		Use:   "serve [flags]",
		Short: "run live Claude Code sessions for webviews over a websocket (try --demo)",
		Long:  serveLong,
		Example: `  ccproxy serve --demo                                    # the web UI on a replayed demo session
  ccproxy serve --project ~/src/app --token-file ~/.ccproxy-token
  ccproxy serve --addr 0.0.0.0:8443 --tls-self-signed     # from a phone`,
		Args: cobra.ArbitraryArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if err := cfg.check("serve", args, c.ErrOrStderr()); err != nil {
				return err
			}
			return runServe(c.Context(), cfg, c.OutOrStdout(), c.ErrOrStderr())
		},
	}
	addServeFlags(c.Flags(), cfg)
	// serve's alone (acp's sessions start as the editor asks).
	c.Flags().IntVar(&cfg.opts.WarmSpares, "warm", 1, "keep `N` claudes started ahead of need, parked (--await-claim), so a new session starts at once; each costs one claude's memory; not counted in --max-sessions; 0: none (--demo and --replay keep none)")
	return c
}

// server is the proxy.Server serve and acp run, as newServer built it.
type server struct {
	*proxy.Server
	token     string   // what clients present
	generated bool     // token was made up: serve prints it
	hosts     []string // the served hosts (remote.ServedHosts); the first goes in links
	cert      *tls.Certificate
	src       *mcphub.ConfigSource // nil with --demo and --replay
	log       *slog.Logger
}

// Close releases what newServer made besides the server: the MCP config
// source and its files, then this process's private directory for them
// once it is empty (a clean shutdown leaves none behind). Call it after
// Serve returned (no claude uses them any more).
func (s *server) Close() {
	if s.src != nil {
		s.src.Close()
	}
	if _, err := mcpconfig.ReleasePrivateDir(); err != nil {
		s.log.Warn("removing this process's --mcp-config directory; the next start removes it", "err", err)
	}
}

// newServer builds the server cfg describes, the one setup that serve and
// acp share: the token (--token-file, --token, $CCPROXY_TOKEN or a random
// one), the proxy options, the replay stand-in of the CLI (this very
// program) with --demo or --replay, else the MCP config source, and TLS.
// First, in every mode, the --mcp-config files killed ccproxy processes
// left are removed (a demo may follow a killed live serve). cmd prefixes
// the messages.
func newServer(cmd string, cfg *serveConfig, log *slog.Logger, stderr io.Writer) (*server, error) {
	token, err := cfg.tok.read(cmd)
	if err != nil {
		return nil, err
	}
	removeStaleMCPConfigs(log)
	s := &server{token: token, log: log}
	if s.token == "" {
		var b [32]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, fmt.Errorf("%s: making a token: %w", cmd, err)
		}
		s.token, s.generated = base64.RawURLEncoding.EncodeToString(b[:]), true
	}
	opts := cfg.opts
	opts.Token = s.token
	opts.AllowOrigins = cfg.origins
	opts.Project = cfg.project
	opts.ClaudePath = explicitClaude(cfg.fs)
	opts.Logger = log
	opts.Version = ccproxyVersion()
	if !cfg.noUI {
		opts.UI = webui.FS()
	}
	if cfg.demo || cfg.replay != "" {
		// The replay stand-in of the CLI: this very program.
		self, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("%s --demo: finding ccproxy's own executable: %w", cmd, err)
		}
		opts.ClaudePath = self
		opts.ClaudePrefixArgs = []string{"replay-claude", "--speed", strconv.FormatFloat(cfg.demoSpeed, 'g', -1, 64)}
		opts.Replay = "the built-in demo"
		if cfg.replay != "" {
			opts.ClaudePrefixArgs = append(opts.ClaudePrefixArgs, "--replay", cfg.replay)
			opts.Replay = cfg.replay
		} else if tr, err := replay.Demo(); err == nil {
			if m := newDemoMCP(tr); m != nil {
				opts.MCP = m // the demo's server shows before any session (demomcp.go)
			}
		}
	} else {
		s.src, err = mcphub.NewConfigSource(mcpconfig.Options{
			ProjectDir:       cfg.project,
			Extra:            cfg.mcpConfigs,
			TrustProject:     cfg.trustProject,
			TrustClient:      cfg.trustClient,
			AllowServerTools: cfg.allowMCPTools,
			Logger:           log.With("component", "mcpconfig"),
		}, "", log.With("component", "mcpconfig"))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", cmd, err)
		}
		opts.MCP = s.src
	}
	if s.hosts, s.cert, err = serveTLS(cfg, stderr); err != nil {
		s.Close()
		return nil, err
	}
	opts.Hosts = cfg.hosts
	if s.cert != nil {
		opts.TLS = &tls.Config{Certificates: []tls.Certificate{*s.cert}}
	}
	if s.Server, err = proxy.New(opts); err != nil {
		s.Close()
		return nil, usagef("%s: %v", cmd, err)
	}
	return s, nil
}

// runServe implements `ccproxy serve`: it builds the server, listens,
// prints where it listens, and serves until ctx is done (SIGINT/SIGTERM in
// main), when every session is closed.
func runServe(ctx context.Context, cfg *serveConfig, stdout, stderr io.Writer) error {
	log, err := newLogger(stderr, cfg.logLevel)
	if err != nil {
		return err
	}
	if os.Getenv("GOGC") == "" {
		// Most of the heap is bounded on purpose (replay logs, blobs); what
		// churns is the buffers of multi-megabyte lines. Collecting at 1.5×
		// the live heap instead of 2× keeps a 1 GB stream under 200 MB of
		// RSS for some CPU (see proxy/internal/rssbench).
		debug.SetGCPercent(50)
	}
	fellBack := demoWithoutCLI(cfg)
	if fellBack {
		log.Warn("no Claude Code CLI: no --claude, no $" + proxy.ClaudeEnv + ", no claude on PATH; serving the built-in demo instead (install it: npm install -g @anthropic-ai/claude-code; --demo asks for the demo on purpose)")
	}
	srv, err := newServer("serve", cfg, log, stderr)
	if err != nil {
		return err
	}
	defer srv.Close() // after Serve returned: no claude uses its files any more
	ln, err := listen(cfg.addr)
	if err != nil {
		return err
	}
	hosts, cert := srv.hosts, srv.cert
	port := ln.Addr().(*net.TCPAddr).Port
	base := "http://" + ln.Addr().String()
	if cert != nil {
		base = "https://" + net.JoinHostPort(hosts[0], strconv.Itoa(port))
	} else if len(cfg.hosts) > 0 {
		base = "http://" + net.JoinHostPort(hosts[0], strconv.Itoa(port))
	}
	first := map[string]any{"url": base, "port": port, "pid": os.Getpid()}
	if cfg.demo {
		first["demo"] = true
	}
	if srv.generated {
		first["token"] = srv.token // stdout goes to whoever spawned ccproxy, not to a log
	}
	if cert != nil {
		first["tlsFingerprint"] = remote.CertFingerprint(cert.Leaf.Raw)
		first["tlsSPKI"] = remote.SPKIHash(cert.Leaf)
	}
	// Browsers come through the reverse proxy when there is one: login
	// links name its URL; "url" stays the address to reach serve here.
	browserBase := base
	if cfg.opts.PublicURL != "" {
		pub, _ := remote.ParsePublicURL(cfg.opts.PublicURL) // checked
		browserBase = pub.String()
		first["publicURL"] = browserBase
	}
	if !cfg.noUI {
		// A one-time link for a browser: the code is in the fragment, which
		// browsers never send, and the page trades it for a cookie.
		first["loginURL"] = browserBase + "/#code=" + srv.NewLoginCode(0)
	}
	line, _ := json.Marshal(first)
	if _, err := fmt.Fprintf(stdout, "%s\n", line); err != nil {
		ln.Close()
		return fmt.Errorf("serve: writing the address line: %w", err)
	}
	if f, ok := stdout.(*os.File); ok && isTerminal(f) && first["loginURL"] != nil {
		if fellBack {
			fmt.Fprintf(stdout, "\nNo Claude Code CLI was found, so this is the built-in demo (a recorded session).\nInstall the CLI (npm install -g @anthropic-ai/claude-code) or give --claude PATH for live sessions.\n")
		}
		fmt.Fprintf(stdout, "\nccproxy is ready. Open this one-time link in your browser:\n\n    %s\n\n", first["loginURL"])
	}
	offLoopback := !ln.Addr().(*net.TCPAddr).IP.IsLoopback()
	if f, ok := stderr.(*os.File); !cfg.noUI && (cfg.qr || offLoopback && ok && isTerminal(f)) {
		// For a phone: only when one can reach the proxy, unless asked.
		// A link of its own, so that the phone does not spend the one on
		// stdout.
		if err := printLoginQR(stderr, browserBase+"/#code="+srv.NewLoginCode(0)); err != nil {
			log.Warn("no QR code of the login link", "err", err)
		}
	}
	log.Info("ccproxy serving", "url", first["url"], "project", cfg.project, "generated_token", srv.generated)
	return srv.Serve(ctx, ln)
}

// demoWithoutCLI turns cfg into a demo when nothing names a Claude Code CLI
// and none is on PATH (a first `go run ./cmd/ccproxy serve` on a machine
// without it), and reports whether it did. A CLI that is named (--claude,
// $CCPROXY_CLAUDE) or found but broken is an error as always, never a demo;
// so is a missing one when flags that --demo refuses ask for a live MCP
// setup (--mcp-config, --trust-project-mcp). The demo is the one check
// makes of --demo: it keeps no MCP call log (the demo's recorded tool calls
// would go into the project's real one).
func demoWithoutCLI(cfg *serveConfig) bool {
	if cfg.demo || cfg.replay != "" || cfg.fs.Changed("claude") || os.Getenv(proxy.ClaudeEnv) != "" ||
		len(cfg.mcpConfigs) > 0 || cfg.trustProject {
		return false
	}
	if _, err := exec.LookPath("claude"); err == nil {
		return false
	}
	cfg.demo = true
	cfg.opts.CallLogDir = "" // as check does for --demo
	return true
}

// isTerminal reports whether f is a character device (a terminal).
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// addServeFlags registers serve's flags on fs, into cfg, with their
// defaults. acp takes some of them (addACPFlags).
func addServeFlags(fs *pflag.FlagSet, cfg *serveConfig) {
	cfg.fs = fs
	fs.StringVar(&cfg.addr, "addr", "127.0.0.1:0", "`HOST:PORT` to listen on (port 0: a free one); off loopback only with TLS")
	fs.StringVar(&cfg.project, "project", "", "default working `DIR` of sessions, whose .mcp.json is read (default: the current directory)")
	cfg.tok.register(fs, "the `TOKEN` clients must present (default: --token-file, or a random one printed on stdout)", "read the token from `PATH`")
	fs.StringArrayVar(&cfg.origins, "allow-origin", nil, "also allow browser `ORIGIN` (scheme://host[:port]; repeatable)")
	fs.StringVar(&cfg.claude, "claude", "", "the Claude Code CLI to run, at `PATH` (default: claude on $PATH)")
	bindEnv(fs, "claude", envClaude)
	fs.StringArrayVar(&cfg.mcpConfigs, "mcp-config", nil, "extra MCP config `FILE` (repeatable; a later one wins; over every scope but managed)")
	fs.BoolVar(&cfg.trustProject, "trust-project-mcp", false, "approve every project .mcp.json server not rejected")
	fs.BoolVar(&cfg.trustClient, "trust-client-mcp", false, "start the MCP servers a client sends with session/create (ACP editors: session/new); config files still win on a name clash, and their tools are still asked")
	fs.BoolVar(&cfg.allowMCPTools, "allow-mcp-tools", false, "allow every tool of every active MCP server without asking (default: MCP tool calls ask, unless a permissions.allow rule allows them)")
	fs.BoolVar(&cfg.demo, "demo", false, "no CLI, no API key: sessions replay a recorded demo session")
	fs.StringVar(&cfg.replay, "replay", "", "like --demo, replaying the transcript `FILE` (.jsonl or .jsonl.gz)")
	fs.Float64Var(&cfg.demoSpeed, "demo-speed", 1, "pace `X` of --demo and --replay: 1 is realistic, 2 twice as fast, 0 without delays")
	fs.BoolVar(&cfg.noUI, "no-ui", false, "do not serve the web UI at / (nor its login)")
	fs.DurationVar(&cfg.opts.PermissionTimeout, "permission-timeout", proxy.DefaultPermissionTimeout, "deny permission requests nobody answered after `DURATION` (0: wait forever)")
	fs.Int64Var(&cfg.opts.ReplayBytes, "replay-bytes", proxy.DefaultReplayBytes, "`BYTES` of each session's newest events kept in memory for replay and catch-up (older ones go to disk)")
	fs.Int64Var(&cfg.opts.ReplayDiskBytes, "replay-disk-bytes", proxy.DefaultReplayDiskBytes, "`BYTES` of each session's older events kept on disk (beyond, clients get session/gap)")
	fs.Int64Var(&cfg.opts.ReplayMemoryBytes, "replay-memory-bytes", proxy.DefaultReplayMemoryBytes, "`BYTES` of all sessions' replay logs kept in memory together (exited sessions' go to disk first)")
	fs.StringVar(&cfg.opts.SpoolDir, "spool-dir", proxy.DefaultSpoolDir(), "private `DIR` (0700) where replay logs spill to disk; what a killed ccproxy left there is removed at start")
	fs.DurationVar(&cfg.opts.SessionTTL, "session-ttl", proxy.DefaultSessionTTL, "forget an exited session `DURATION` after its exit (or earlier, when a new session needs its room at --max-sessions)")
	fs.IntVar(&cfg.opts.SendQueueFrames, "send-queue", proxy.DefaultSendQueueFrames, "`FRAMES` queued per client; beyond, the client catches up from the replay log")
	fs.Int64Var(&cfg.opts.SendQueueBytes, "send-queue-bytes", proxy.DefaultSendQueueBytes, "`BYTES` queued per client; beyond, the client catches up from the replay log")
	fs.Int64Var(&cfg.opts.InboundBytes, "inbound-bytes", proxy.DefaultInboundBytes, "`BYTES` of client frames read and handled at once, all connections (at least --max-frame); a frame beyond is refused with limit_exceeded")
	fs.Int64Var(&cfg.opts.MaxFrameBytes, "max-frame", proxy.DefaultMaxFrameBytes, "largest client frame in `BYTES`")
	fs.DurationVar(&cfg.opts.IdleTimeout, "idle-timeout", proxy.DefaultIdleTimeout, "suspend a session idle for `DURATION` (no turn running or queued, no permission asked): its claude stops, and its next turn resumes it with --resume; at least 1s; 0: never")
	fs.IntVar(&cfg.opts.MaxSessions, "max-sessions", proxy.DefaultMaxSessions, "`N` live sessions at once (exited ones do not count: the oldest is evicted to make room)")
	fs.Int64Var(&cfg.opts.BlobBytes, "blob-bytes", proxy.DefaultBlobBytes, "`BYTES` of attachments (images, ...) kept for /v1/blobs")
	callLogDir, _ := calllog.DefaultDir() // "" without a home directory: no call log unless given
	fs.StringVar(&cfg.opts.CallLogDir, "call-log-dir", callLogDir, "keep the log of MCP tool calls (mcp/log) in `DIR`, one file per project; \"\" keeps none (--demo and --replay keep none)")
	fs.BoolVar(&cfg.opts.CallLogIO, "call-log-io", false, "also keep tool inputs and outputs in the MCP call log")
	fs.StringVar(&cfg.opts.HistoryIndexDir, "history-index", "", "keep history/search's full-text index in `DIR` (default: the user's cache directory, ccproxy/search)")
	fs.StringVar(&cfg.opts.HistoryHome, "history-home", "", "serve history/list and history/read from the Claude Code sessions under `DIR`/.claude/projects (default: $HOME); \"-\" serves no history")
	fs.BoolVar(&cfg.opts.AutoProbe, "probe-mcp", true, "probe the active MCP servers at start and after each config change, for the status indicator")
	fs.StringVar(&cfg.logLevel, "log-level", "info", "`LEVEL` of the log on stderr: debug, info, warn or error")
	fs.StringVar(&cfg.tlsCert, "tls-cert", "", "serve HTTPS with the certificate (chain) in PEM `FILE`; with --tls-key")
	fs.StringVar(&cfg.tlsKey, "tls-key", "", "the private key of --tls-cert, in PEM `FILE`")
	fs.BoolVar(&cfg.tlsSelfSigned, "tls-self-signed", false, "serve HTTPS with a new self-signed ECDSA certificate for the served hosts; its SHA-256 fingerprint is printed")
	fs.StringArrayVar(&cfg.hosts, "host", nil, "also accept requests for host `NAME` (a DNS name or an IP address clients use; repeatable; the first goes in login links)")
	fs.BoolVar(&cfg.qr, "qr", false, "print a one-time login link as a QR code on stderr (default: when listening off loopback with stderr a terminal)")
	fs.StringVar(&cfg.opts.PublicURL, "public-url", "", "behind a reverse proxy that terminates TLS (Caddy, nginx): the `URL` browsers use, https://host[:port][/prefix]; its origin and host are accepted, login links name it, the cookie is Secure for https (README: Behind a reverse proxy)")
	fs.StringVar(&cfg.opts.TrustedHeader, "trusted-header", "", "with --public-url and --trusted-proxy: let in a request from the reverse proxy that names its authenticated user in header `NAME` (such as Remote-User) as if it had the token")
	fs.StringSliceVar(&cfg.opts.TrustedProxies, "trusted-proxy", nil, "the loopback `ADDR` (IP or CIDR; comma-separated or repeated) the reverse proxy of --trusted-header connects from; no default: every local process can connect from it too")
}

// check validates the flags after parsing (args are the positional
// arguments, of which there must be none). cmd prefixes the messages.
func (cfg *serveConfig) check(cmd string, args []string, stderr io.Writer) error {
	if len(args) > 0 {
		return usagef("%s: unexpected argument %q", cmd, args[0])
	}
	if err := cfg.tok.check(cmd, stderr); err != nil {
		return err
	}
	if cfg.demo && cfg.replay != "" {
		return usagef("%s: give --demo or --replay FILE, not both", cmd)
	}
	if cfg.opts.WarmSpares < 0 {
		return usagef("%s: --warm %d is negative (0 keeps no spare)", cmd, cfg.opts.WarmSpares)
	}
	if cfg.demo || cfg.replay != "" {
		switch {
		case cfg.fs.Changed("claude"): // $CCPROXY_CLAUDE is no conflict: it is not used
			return usagef("%s: --demo and --replay run no Claude Code CLI; drop --claude", cmd)
		case len(cfg.mcpConfigs) > 0:
			return usagef("%s: --demo and --replay use no MCP configuration; drop --mcp-config", cmd)
		case cfg.trustProject:
			return usagef("%s: --demo and --replay use no MCP configuration; drop --trust-project-mcp", cmd)
		}
		cfg.opts.CallLogDir = "" // replayed sessions call no real MCP server
	}
	if err := replay.CheckSpeed(cfg.demoSpeed); err != nil {
		return usagef("%s: --demo-speed: %v", cmd, err)
	}
	if cfg.replay != "" {
		// Each session's replay-claude runs in the session's directory: it
		// gets an absolute path, to a transcript known to be good.
		abs, err := filepath.Abs(cfg.replay)
		if err == nil {
			_, err = replay.Open(abs)
		}
		if err != nil {
			return usagef("%s: --replay %s: %v", cmd, cfg.replay, err)
		}
		cfg.replay = abs
	}
	switch {
	case cfg.opts.PermissionTimeout < 0:
		return usagef("%s: --permission-timeout must not be negative", cmd)
	case cfg.opts.PermissionTimeout == 0:
		cfg.opts.PermissionTimeout = -1 // proxy: never
	}
	if err := idleTimeout(cmd, &cfg.opts.IdleTimeout); err != nil {
		return err
	}
	for _, v := range []struct {
		name string
		n    int64
	}{{"--replay-bytes", cfg.opts.ReplayBytes}, {"--send-queue", int64(cfg.opts.SendQueueFrames)},
		{"--max-frame", cfg.opts.MaxFrameBytes}, {"--max-sessions", int64(cfg.opts.MaxSessions)}, {"--blob-bytes", cfg.opts.BlobBytes},
		{"--replay-disk-bytes", cfg.opts.ReplayDiskBytes}, {"--replay-memory-bytes", cfg.opts.ReplayMemoryBytes},
		{"--send-queue-bytes", cfg.opts.SendQueueBytes}, {"--inbound-bytes", cfg.opts.InboundBytes}, {"--session-ttl", int64(cfg.opts.SessionTTL)}} {
		if v.n <= 0 {
			return usagef("%s: %s must be positive, got %d", cmd, v.name, v.n)
		}
	}
	if cfg.opts.InboundBytes < cfg.opts.MaxFrameBytes {
		return usagef("%s: --inbound-bytes (%d) must be at least --max-frame (%d)", cmd, cfg.opts.InboundBytes, cfg.opts.MaxFrameBytes)
	}
	if cfg.opts.SpoolDir == "" {
		return usagef("%s: --spool-dir must not be empty", cmd)
	}
	switch {
	case (cfg.tlsCert == "") != (cfg.tlsKey == ""):
		return usagef("%s: give --tls-cert and --tls-key together", cmd)
	case cfg.tlsSelfSigned && cfg.tlsCert != "":
		return usagef("%s: give --tls-cert and --tls-key, or --tls-self-signed, not both", cmd)
	}
	if _, err := newLogger(io.Discard, cfg.logLevel); err != nil {
		return usagef("%s: %v", cmd, err)
	}
	if cfg.opts.PublicURL != "" {
		if _, err := remote.ParsePublicURL(cfg.opts.PublicURL); err != nil {
			return usagef("%s: --public-url: %v", cmd, err)
		}
	}
	if th, err := remote.ParseTrustedHeader(cfg.opts.TrustedHeader, cfg.opts.TrustedProxies); err != nil {
		return usagef("%s: %v", cmd, err)
	} else if th != nil && cfg.opts.PublicURL == "" {
		return usagef("%s: --trusted-header is for a reverse proxy in front: give its URL with --public-url", cmd)
	}
	if cfg.tlsCert == "" && !cfg.tlsSelfSigned {
		return checkLoopback(cfg.addr)
	}
	return checkAddr(cfg.addr)
}

// serveTLS returns the hosts served at cfg.addr (remote.ServedHosts) and,
// with --tls-cert/--tls-key or --tls-self-signed, the certificate, whose
// fingerprint it prints on stderr (nil without TLS).
func serveTLS(cfg *serveConfig, stderr io.Writer) ([]string, *tls.Certificate, error) {
	host, _, _ := net.SplitHostPort(cfg.addr)
	if host == "localhost" {
		host = "127.0.0.1" // as listen does
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return nil, nil, usagef("serve: --addr %q: want an IP address or localhost (name other hosts with --host)", cfg.addr)
	}
	hosts, err := remote.ServedHosts(&net.TCPAddr{IP: ip}, cfg.hosts)
	if err != nil {
		return nil, nil, usagef("serve: --host: %v", err)
	}
	var cert tls.Certificate
	switch {
	case cfg.tlsSelfSigned:
		if cert, err = remote.SelfSignedCert(hosts); err != nil {
			return nil, nil, fmt.Errorf("serve: %w", err)
		}
	case cfg.tlsCert != "":
		if cert, err = tls.LoadX509KeyPair(cfg.tlsCert, cfg.tlsKey); err != nil {
			return nil, nil, usagef("serve: --tls-cert %s / --tls-key %s: %v", cfg.tlsCert, cfg.tlsKey, err)
		}
		if err := cert.Leaf.VerifyHostname(hosts[0]); err != nil {
			fmt.Fprintf(stderr, "ccproxy: warning: the --tls-cert certificate does not cover %s, the host in the login links (%v); name the host it covers with --host\n", hosts[0], err)
		}
	default:
		return hosts, nil, nil
	}
	fmt.Fprintf(stderr, "ccproxy: TLS certificate SHA-256 fingerprint: %s\n", remote.CertFingerprint(cert.Leaf.Raw))
	return hosts, &cert, nil
}

// checkAddr checks that addr is HOST:PORT with a valid port.
func checkAddr(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return usagef("serve: --addr %q: want HOST:PORT, e.g. 127.0.0.1:0", addr)
	}
	if _, err := net.LookupPort("tcp", port); err != nil {
		return usagef("serve: --addr %q: bad port %q", addr, port)
	}
	return nil
}

// checkLoopback refuses addresses that are not on loopback when ccproxy
// serves no TLS: whoever reaches the port and has the token drives Claude
// Code on this machine, and the token would cross the network in clear.
func checkLoopback(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return usagef("serve: --addr %q: want HOST:PORT, e.g. 127.0.0.1:0", addr)
	}
	if _, err := net.LookupPort("tcp", port); err != nil {
		return usagef("serve: --addr %q: bad port %q", addr, port)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return usagef("serve: --addr %q: ccproxy listens on loopback only (127.0.0.1, ::1 or localhost) unless it serves TLS: give --tls-cert and --tls-key, or --tls-self-signed", addr)
	}
	return nil
}

func listen(addr string) (net.Listener, error) {
	host, port, _ := net.SplitHostPort(addr)
	if host == "localhost" {
		host = "127.0.0.1"
		addr = net.JoinHostPort(host, port)
	}
	ln, err := net.Listen("tcp", addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		// The conventional fix: let the system choose a free port (the
		// first line on stdout says which).
		return nil, fmt.Errorf("serve: --addr %s: the port is in use (by another ccproxy?); give --addr %s for a free one: %w", addr, net.JoinHostPort(host, "0"), err)
	}
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	return ln, nil
}

func newLogger(w io.Writer, level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, usagef("--log-level %q: want debug, info, warn or error", level)
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l})), nil
}

// removeStaleMCPConfigs removes the private --mcp-config directories that
// killed ccproxy processes left (never those of a live one); this
// process's files go to a private directory of its own.
func removeStaleMCPConfigs(log *slog.Logger) {
	if removed, err := mcpconfig.RemoveStale(); err != nil {
		log.Warn("removing --mcp-config files left by stopped ccproxy processes", "err", err)
	} else if len(removed) > 0 {
		log.Info("removed --mcp-config files left by stopped ccproxy processes", "dirs", removed)
	}
}
