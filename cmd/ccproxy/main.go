// Command ccproxy sits between chat UIs and the Claude Code CLI. See doc.go.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

// usageError marks an error in the command line; it exits 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// exitCode prints err once and decides the exit code: 0 ok, 2 usage, 1 other.
func exitCode(err error, stderr io.Writer) int {
	if err == nil || errors.Is(err, flag.ErrHelp) { // help was printed by the flag set
		return 0
	}
	fmt.Fprintln(stderr, "ccproxy:", err)
	var ue usageError
	if errors.As(err, &ue) {
		return 2
	}
	return 1
}

const usage = `ccproxy — a safe, well-formed event feed between chat UIs and the Claude Code CLI.

Usage:
  ccproxy serve [--addr 127.0.0.1:PORT] [--project DIR] [--token T | --token-file PATH] [--allow-origin O]...
              [--tls-self-signed | --tls-cert FILE --tls-key FILE] [--host NAME]... [--qr] [--demo]
        run live Claude Code sessions for webviews over a websocket (off loopback: TLS only)
  ccproxy acp [--demo | --connect URL --token-file PATH] [--project DIR] [--mcp-config FILE]...
        an Agent Client Protocol agent on stdin/stdout for editors (Zed, JetBrains, Neovim)
  ccproxy normalize [--max-line BYTES] [--attachments strip|inline]
        read claude stream-json on stdin, write normalized events to stdout
  ccproxy mcp config [--project DIR] [--json] [--mcp-config FILE]... [--trust-project-mcp]
        print the MCP servers Claude Code would load: merged, approved, redacted
  ccproxy mcp list --from-cli [--claude PATH] [--project DIR]
        run 'claude mcp list' and show its parsed result
  ccproxy mcp approve|reject NAME [--project DIR]
        approve or reject a project (.mcp.json) server, as the interactive CLI records it
  ccproxy mcp probe [NAME] [--json] [--timeout D] [--project DIR] [--mcp-config FILE]...
        connect to the MCP servers (or NAME): status, latency, tools; inactive ones are not started
  ccproxy mcp tools NAME [--json] [--project DIR] [--mcp-config FILE]...
        list the tools of server NAME with their parameters
  ccproxy mcp call NAME TOOL [--args JSON|-] [--json] [--project DIR] [--mcp-config FILE]...
        call TOOL of server NAME directly, its arguments checked against the tool's schema first
  ccproxy status [--url URL] [--token-file PATH] [--tls-fingerprint FP] [--json]
        a one-screen summary of a running daemon ($CCPROXY_URL, $CCPROXY_TOKEN)
  ccproxy login-url [--url URL] [--token-file PATH] [--tls-fingerprint FP] [--qr]
        print a new one-time login link for the web UI of a running daemon
  ccproxy version [--json] [--claude PATH]   (or ccproxy --version)
        print ccproxy's version, revision, Go version and platform, and the Claude Code CLI found
  ccproxy help
        print this help
`

// run is the whole program: it parses args and dispatches to a subcommand.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return usagef("no command given")
	}
	switch args[0] {
	case "serve":
		return runServe(ctx, args[1:], stdin, stdout, stderr)
	case "acp":
		return runACP(ctx, args[1:], stdin, stdout, stderr)
	case "normalize":
		return runNormalize(ctx, args[1:], stdin, stdout, stderr)
	case "mcp":
		return runMCP(ctx, args[1:], stdin, stdout, stderr)
	case "status":
		return runStatus(ctx, args[1:], stdout, stderr)
	case "login-url":
		return runLoginURL(ctx, args[1:], stdout, stderr)
	case "replay-claude":
		// Impersonates the Claude Code CLI by replaying a transcript; used
		// by `serve --demo` and tests. Not listed in the usage.
		return runReplayClaude(ctx, args[1:], stdin, stdout, stderr)
	case "version", "--version":
		return runVersion(ctx, args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	default:
		fmt.Fprint(stderr, usage)
		return usagef("unknown command %q", args[0])
	}
}
