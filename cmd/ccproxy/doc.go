// Command ccproxy is a daemon and toolbox that sits between chat UIs and the
// Claude Code CLI.
//
// main is tiny: it sets up signal handling and calls run(ctx, args, stdin,
// stdout, stderr), which builds the command tree (newRootCmd, on
// spf13/cobra), lets cobra find the command and parse its flags, and
// returns the error unprinted; errors are printed once, in exitCode, which
// also decides the exit status: 0 success, 1 failure, 2 usage (a
// usageError: the message, then "Run 'ccproxy CMD --help' for usage.").
// Every error cobra itself returns (unknown command or flag, a bad flag
// value) is a usage error: run tells them from the commands' own errors
// because markRun notes when a command's body started. Help goes to stdout
// (exit 0), in cobra's one style for every command, ending with the exit
// status line.
//
// Each command is built by a newXCmd function next to its body, runX
// (serve.go: newServeCmd, runServe; ...): the cobra.Command binds the flags
// into a config struct and calls runX with it, the positional arguments
// and c.InOrStdin/OutOrStdout/ErrOrStderr. A group (the root, mcp,
// completion) runs groupRun: no subcommand or an unknown one is a usage
// error with cobra's suggestions. `completion bash|zsh|fish|powershell` is
// cobra's; replay-claude is hidden and parses claude's command line itself
// (DisableFlagParsing).
//
// Environment (flags.go): bindEnv binds a flag to a CCPROXY_* variable (and
// says "(env CCPROXY_X)" in its help); the root's PersistentPreRunE,
// applyEnv, sets every bound flag not on the command line from its
// variable when set, before any body runs; a value the flag refuses is a
// usage error naming the variable. Checks of flags given together look at
// the command line only (pflag's Changed), so a variable never conflicts
// with a flag; flagSource names where a value came from in messages. The
// bound flags: --token (CCPROXY_TOKEN: serve, acp, status, login-url),
// --claude (CCPROXY_CLAUDE: serve, acp, version, mcp list), --url
// (CCPROXY_URL: status, login-url) and --tls-fingerprint
// (CCPROXY_TLS_FINGERPRINT: status, login-url, acp --connect). tokenFlags is
// the one reader of --token-file / --token / CCPROXY_TOKEN; daemonFlags.call
// is the one client of a running serve's HTTP API (status, login-url), and
// pinnedTLS the one way to trust a self-signed serve (those two and acp). FindClaude reads
// $CCPROXY_CLAUDE itself (proxy.Options.Getenv) and names it in its
// messages: explicitClaude gives it --claude only when on the command line.
//
// serve and acp run the same server: addServeFlags registers serve's flags
// into a serveConfig (acp takes a subset, acpServeFlags, with serve's
// defaults for the rest and no web UI), serveConfig.check validates them,
// and newServer builds the proxy.Server from it: the token (or a random
// one), the options (the web UI, webui.FS(), unless --no-ui or acp), the
// replay stand-in of the CLI (this program's replay-claude) with
// --demo/--replay (--demo with the recording's MCP servers as its
// configuration, demomcp.go, so they show before any session), else the
// MCP config source, and TLS.
// server.Close closes the source after Serve returned. listen reports a
// port in use with the hint --addr HOST:0.
//
// Subcommands:
//
//	acp         an Agent Client Protocol agent on stdin/stdout (package acp),
//	            over an in-process proxy.Server configured as serve would be,
//	            or a running serve (--connect; --tls-fingerprint pins a
//	            self-signed one).
//	normalize   claude stream-json on stdin -> normalized events on stdout
//	            (package stream), so `claude ... | ccproxy normalize` works.
//	serve       live sessions over a websocket (package proxy); on loopback,
//	            or anywhere over TLS (--tls-cert/--tls-key, --tls-self-signed:
//	            remote.SelfSignedCert for the remote.ServedHosts), the one-time
//	            login link also drawn as a QR code (qr.go, yeqown/go-qrcode,
//	            Unicode half blocks) on stderr.
//	mcp         MCP config resolution and inspection (package mcpconfig);
//	            mcp probe exits 1 when a server asked for is not connected
//	            (failed, or not started: not active), mcp tools and mcp call
//	            when their server is not, mcp config when entries have
//	            errors (unless --allow-errors).
//	status      GET /v1/health of a running serve, printed on one screen;
//	            a self-signed server is trusted by its certificate's SHA-256.
//	login-url   POST /v1/login/code of a running serve (with the token): a new
//	            one-time login link for the web UI, printed (and with --qr
//	            drawn); same --url/--token-file/--tls-fingerprint as status.
//	version     (also --version) the build's version, VCS revision and time,
//	            Go version and platform, and the Claude Code CLI found. The
//	            version is main.version when a release build stamped it
//	            (scripts/release.sh), else the module version in the build info.
//
// At start, serve (and acp, through newServer), in every mode, --demo too,
// removes the private --mcp-config directories that killed ccproxy
// processes left (mcpconfig.RemoveStale); at a clean shutdown server.Close
// removes its own once empty (mcpconfig.ReleasePrivateDir). Every child ccproxy starts
// goes through childproc's guard, which on Linux is this binary re-executed:
// the package's init runs it before main (see internal/childproc).
package main
