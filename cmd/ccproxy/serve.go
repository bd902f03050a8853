package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/ccproxy/ccproxy/internal/replay"
	"github.com/ccproxy/ccproxy/mcpconfig"
	"github.com/ccproxy/ccproxy/mcpconfig/calllog"
	"github.com/ccproxy/ccproxy/proxy"
)

const serveUsage = `Usage: ccproxy serve [flags]

Runs live Claude Code sessions for webviews over a websocket at /v1/ws.
The first line on stdout is {"url","port","pid","loginURL"} (and "token"
when ccproxy made the token up); the log goes to stderr. The web UI is at /:
open loginURL, a one-time link, in a browser.

Flags:
`

// serveConfig is what `ccproxy serve` was asked to do.
type serveConfig struct {
	addr, project, token, tokenFile, claude, logLevel, replay string
	origins, mcpConfigs                                       multiFlag
	trustProject, demo                                        bool
	demoSpeed                                                 float64
	opts                                                      proxy.Options
}

// runServe implements `ccproxy serve`: it checks the flags, listens on a
// loopback address, prints where it listens, and serves until ctx is done
// (SIGINT/SIGTERM in main), when every session is closed.
func runServe(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	cfg, err := parseServe(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
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
	generated := false
	if cfg.token, generated, err = resolveToken(cfg); err != nil {
		return err
	}
	opts := cfg.opts
	opts.Token = cfg.token
	opts.AllowOrigins = cfg.origins
	opts.Project = cfg.project
	opts.ClaudePath = cfg.claude
	opts.Logger = log
	opts.Version = ccproxyVersion()

	if cfg.demo || cfg.replay != "" {
		// The replay stand-in of the CLI: this very program.
		self, err := os.Executable()
		if err != nil {
			return fmt.Errorf("serve --demo: finding ccproxy's own executable: %w", err)
		}
		opts.ClaudePath = self
		opts.ClaudePrefixArgs = []string{"replay-claude", "--speed", strconv.FormatFloat(cfg.demoSpeed, 'g', -1, 64)}
		if cfg.replay != "" {
			opts.ClaudePrefixArgs = append(opts.ClaudePrefixArgs, "--replay", cfg.replay)
		}
	} else {
		src, err := proxy.NewMCPConfigSource(mcpconfig.Options{
			ProjectDir:   cfg.project,
			Extra:        cfg.mcpConfigs,
			TrustProject: cfg.trustProject,
			Logger:       log.With("component", "mcpconfig"),
		}, "", log.With("component", "mcpconfig"))
		if err != nil {
			return fmt.Errorf("serve: %w", err)
		}
		defer src.Close() // after Serve returned: no claude uses its files any more
		opts.MCP = src
	}

	srv, err := proxy.New(opts)
	if err != nil {
		return usagef("serve: %v", err)
	}
	ln, err := listen(cfg.addr)
	if err != nil {
		return err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	base := "http://" + ln.Addr().String()
	first := map[string]any{"url": base, "port": port, "pid": os.Getpid()}
	if generated {
		first["token"] = cfg.token // stdout goes to whoever spawned ccproxy, not to a log
	}
	if !cfg.opts.NoUI {
		// A one-time link for a browser: the code is in the fragment, which
		// browsers never send, and the page trades it for a cookie.
		first["loginURL"] = base + "/#code=" + srv.NewLoginCode(0)
	}
	line, _ := json.Marshal(first)
	if _, err := fmt.Fprintf(stdout, "%s\n", line); err != nil {
		ln.Close()
		return fmt.Errorf("serve: writing the address line: %w", err)
	}
	if f, ok := stdout.(*os.File); ok && isTerminal(f) && first["loginURL"] != nil {
		fmt.Fprintf(stdout, "\nccproxy is ready. Open this one-time link in your browser:\n\n    %s\n\n", first["loginURL"])
	}
	log.Info("ccproxy serving", "url", first["url"], "project", opts.Project, "generated_token", generated)
	return srv.Serve(ctx, ln)
}

// isTerminal reports whether f is a character device (a terminal).
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func parseServe(args []string, stderr io.Writer) (*serveConfig, error) {
	cfg := &serveConfig{}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, serveUsage)
		fs.PrintDefaults()
	}
	fs.StringVar(&cfg.addr, "addr", "127.0.0.1:0", "loopback `HOST:PORT` to listen on (port 0: a free one)")
	fs.StringVar(&cfg.project, "project", "", "default working `DIR` of sessions, whose .mcp.json is read (default: the current directory)")
	fs.StringVar(&cfg.token, "token", "", "the `TOKEN` clients must present (default: $CCPROXY_TOKEN, --token-file, or a random one printed on stdout)")
	fs.StringVar(&cfg.tokenFile, "token-file", "", "read the token from `PATH`")
	fs.Var(&cfg.origins, "allow-origin", "also allow browser `ORIGIN` (scheme://host[:port]; repeatable)")
	fs.StringVar(&cfg.claude, "claude", "", "the Claude Code CLI to run (default: $CCPROXY_CLAUDE, then claude on PATH)")
	fs.Var(&cfg.mcpConfigs, "mcp-config", "extra MCP config `FILE` (repeatable; a later one wins; over every scope but managed)")
	fs.BoolVar(&cfg.trustProject, "trust-project-mcp", false, "approve every project .mcp.json server not rejected")
	fs.BoolVar(&cfg.demo, "demo", false, "no CLI, no API key: sessions replay a recorded demo session")
	fs.StringVar(&cfg.replay, "replay", "", "like --demo, replaying the transcript `FILE` (.jsonl or .jsonl.gz)")
	fs.Float64Var(&cfg.demoSpeed, "demo-speed", 1, "pace of --demo and --replay: 1 is realistic, 2 twice as fast, 0 without delays")
	fs.BoolVar(&cfg.opts.NoUI, "no-ui", false, "do not serve the web UI at / (nor its login)")
	fs.DurationVar(&cfg.opts.PermissionTimeout, "permission-timeout", proxy.DefaultPermissionTimeout, "deny permission requests nobody answered after `DURATION` (0: wait forever)")
	fs.Int64Var(&cfg.opts.ReplayBytes, "replay-bytes", proxy.DefaultReplayBytes, "`BYTES` of events each session keeps for clients that reconnect")
	fs.IntVar(&cfg.opts.SendQueueFrames, "send-queue", proxy.DefaultSendQueueFrames, "`FRAMES` queued per client before a slow client is dropped")
	fs.Int64Var(&cfg.opts.MaxFrameBytes, "max-frame", proxy.DefaultMaxFrameBytes, "largest client frame in `BYTES`")
	fs.IntVar(&cfg.opts.MaxSessions, "max-sessions", proxy.DefaultMaxSessions, "live sessions at once")
	fs.Int64Var(&cfg.opts.BlobBytes, "blob-bytes", proxy.DefaultBlobBytes, "`BYTES` of attachments (images, ...) kept for /v1/blobs")
	callLogDir, _ := calllog.DefaultDir() // "" without a home directory: no call log unless given
	fs.StringVar(&cfg.opts.CallLogDir, "call-log-dir", callLogDir, "keep the log of MCP tool calls (mcp/log) in `DIR`, one file per project; \"\" keeps none (--demo and --replay keep none)")
	fs.BoolVar(&cfg.opts.CallLogIO, "call-log-io", false, "also keep tool inputs and outputs in the MCP call log")
	fs.BoolVar(&cfg.opts.AutoProbe, "probe-mcp", true, "probe the active MCP servers at start and after each config change, for the status indicator")
	fs.StringVar(&cfg.logLevel, "log-level", "info", "debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, usagef("serve: %v", err)
	}
	if fs.NArg() > 0 {
		return nil, usagef("serve: unexpected argument %q", fs.Arg(0))
	}
	if cfg.token != "" {
		fmt.Fprintln(stderr, "ccproxy: warning: --token puts the token on the command line, where any user of this machine can read it (/proc/PID/cmdline); use --token-file or $CCPROXY_TOKEN instead")
	}
	if cfg.token != "" && cfg.tokenFile != "" {
		return nil, usagef("serve: give --token or --token-file, not both")
	}
	if cfg.demo && cfg.replay != "" {
		return nil, usagef("serve: give --demo or --replay FILE, not both")
	}
	if cfg.demo || cfg.replay != "" {
		switch {
		case cfg.claude != "":
			return nil, usagef("serve: --demo and --replay run no Claude Code CLI; drop --claude")
		case len(cfg.mcpConfigs) > 0:
			return nil, usagef("serve: --demo and --replay use no MCP configuration; drop --mcp-config")
		case cfg.trustProject:
			return nil, usagef("serve: --demo and --replay use no MCP configuration; drop --trust-project-mcp")
		}
		cfg.opts.CallLogDir = "" // replayed sessions call no real MCP server
	}
	if err := replay.CheckSpeed(cfg.demoSpeed); err != nil {
		return nil, usagef("serve: --demo-speed: %v", err)
	}
	if cfg.replay != "" {
		// Each session's replay-claude runs in the session's directory: it
		// gets an absolute path, to a transcript known to be good.
		abs, err := filepath.Abs(cfg.replay)
		if err == nil {
			_, err = replay.Open(abs)
		}
		if err != nil {
			return nil, usagef("serve: --replay %s: %v", cfg.replay, err)
		}
		cfg.replay = abs
	}
	switch {
	case cfg.opts.PermissionTimeout < 0:
		return nil, usagef("serve: --permission-timeout must not be negative")
	case cfg.opts.PermissionTimeout == 0:
		cfg.opts.PermissionTimeout = -1 // proxy: never
	}
	for _, v := range []struct {
		name string
		n    int64
	}{{"--replay-bytes", cfg.opts.ReplayBytes}, {"--send-queue", int64(cfg.opts.SendQueueFrames)},
		{"--max-frame", cfg.opts.MaxFrameBytes}, {"--max-sessions", int64(cfg.opts.MaxSessions)}, {"--blob-bytes", cfg.opts.BlobBytes}} {
		if v.n <= 0 {
			return nil, usagef("serve: %s must be positive, got %d", v.name, v.n)
		}
	}
	if err := checkLoopback(cfg.addr); err != nil {
		return nil, err
	}
	return cfg, nil
}

// checkLoopback refuses addresses that are not on loopback: whoever reaches
// the port and has the token drives Claude Code on this machine.
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
		return usagef("serve: --addr %q: ccproxy listens on loopback only (127.0.0.1, ::1 or localhost)", addr)
	}
	return nil
}

func listen(addr string) (net.Listener, error) {
	host, port, _ := net.SplitHostPort(addr)
	if host == "localhost" {
		addr = net.JoinHostPort("127.0.0.1", port)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	return ln, nil
}

// resolveToken returns the token: --token, --token-file, $CCPROXY_TOKEN, or a
// new random one (generated reports that).
func resolveToken(cfg *serveConfig) (token string, generated bool, err error) {
	switch {
	case cfg.token != "":
		token = cfg.token
	case cfg.tokenFile != "":
		b, err := os.ReadFile(cfg.tokenFile)
		if err != nil {
			return "", false, usagef("serve: --token-file: %v", err)
		}
		token = strings.TrimSpace(string(b))
		if token == "" {
			return "", false, usagef("serve: --token-file %s is empty", cfg.tokenFile)
		}
	case os.Getenv("CCPROXY_TOKEN") != "":
		token = os.Getenv("CCPROXY_TOKEN")
	default:
		var b [32]byte
		if _, err := rand.Read(b[:]); err != nil {
			return "", false, fmt.Errorf("serve: making a token: %w", err)
		}
		return base64.RawURLEncoding.EncodeToString(b[:]), true, nil
	}
	if err := proxy.CheckToken(token); err != nil {
		return "", false, usagef("serve: %v", err) // says what is wrong, never the token
	}
	return token, false, nil
}

func newLogger(w io.Writer, level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, usagef("serve: --log-level %q: want debug, info, warn or error", level)
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l})), nil
}
