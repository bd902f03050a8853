package fakeclaude

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// mcpAuthArgs reads the arguments of `mcp login|logout` as the CLI's
// option parser does (2.1.329, 2.1.332; docs/CLI-NOTES.md): -h/--help
// anywhere before "--" prints the usage and exits 0 (so `mcp login -h
// --no-browser` "succeeds" without signing in), another option is
// refused, the first other argument, or the one after "--", is NAME.
func mcpAuthArgs(sub string, args []string) int {
	name, named := "", false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			if !named && i+1 < len(args) {
				name, named = args[i+1], true
			}
			i = len(args)
		case a == "-h" || a == "--help":
			fmt.Printf("Usage: claude mcp %s [options] <name>\n", sub)
			return 0
		case a == "--no-browser" && sub == "login":
		case strings.HasPrefix(a, "-"):
			fmt.Fprintf(os.Stderr, "error: unknown option '%s'\n", a)
			return 1
		case !named:
			name, named = a, true
		}
	}
	if !named {
		fmt.Fprintln(os.Stderr, "error: missing required argument 'name'")
		return 1
	}
	return mcpAuth(sub, name)
}

// mcpAuth plays `claude mcp login NAME --no-browser` and `claude mcp
// logout NAME` as measured on 2.1.329 (docs/CLI-NOTES.md): login refuses
// a stdin that is not a terminal, prints the authorization URL on a line
// of its own, waits, and reports. FAKE_LOGIN picks how it ends: "" (waits
// for FAKE_LOGIN_GATE, a FIFO, then succeeds), "fail" (waits for the gate,
// then fails with a message holding a URL with a code), "early" (fails
// before printing a URL), "hang" (never ends). FAKE_LOGIN_PIDFILE gets its
// pid. FAKE_LOGOUT "fail" makes logout fail.
func mcpAuth(sub, name string) int {
	if sub == "logout" {
		if os.Getenv("FAKE_LOGOUT") == "fail" {
			fmt.Fprintf(os.Stderr, "Couldn't clear the credentials of %q: the store is locked\n", name)
			return 1
		}
		fmt.Printf("Signed out of %q. Run `claude mcp login %s` to authenticate again.\n", name, name)
		return 0
	}
	if f := os.Getenv("FAKE_LOGIN_PIDFILE"); f != "" {
		os.WriteFile(f, []byte(strconv.Itoa(os.Getpid())), 0o644)
	}
	mode := os.Getenv("FAKE_LOGIN")
	fmt.Printf("Starting authentication for %q…\n", name)
	if mode == "early" {
		fmt.Fprintf(os.Stderr, "No MCP server named %q. Configured servers: other\n", name)
		return 1
	}
	fmt.Printf("Visit this URL to authorize:\n  \x1b]8;;http://127.0.0.1:1/authorize?client_id=c1&redirect_uri=http%%3A%%2F%%2Flocalhost%%3A1%%2Fcallback&state=st1\x07http://127.0.0.1:1/authorize?client_id=c1&redirect_uri=http%%3A%%2F%%2Flocalhost%%3A1%%2Fcallback&state=st1\x1b]8;;\x07\n\n")
	if !isTerminal(0) {
		fmt.Fprintf(os.Stderr, "Couldn't complete authentication for %q: this isn't an interactive terminal.\n", name)
		return 1
	}
	fmt.Println("Waiting for authorization… (^C to cancel)")
	if mode == "hang" {
		hang()
	}
	if gate := os.Getenv("FAKE_LOGIN_GATE"); gate != "" {
		os.ReadFile(gate) // a FIFO: returns once the test has written and closed it
	}
	if mode == "fail" {
		fmt.Fprintf(os.Stderr, "Couldn't complete authentication for %q: OAuth error: invalid_grant - redirect http://localhost:5/callback?code=CODE-SECRET-1&state=st1 refused\n", name)
		return 1
	}
	fmt.Printf("Authenticated with %q. Its tools are now available in Claude Code.\n", name)
	return 0
}
