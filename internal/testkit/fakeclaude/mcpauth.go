package fakeclaude

import (
	"fmt"
	"os"
	"strconv"
)

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
