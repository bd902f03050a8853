package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMCPCommandsRefuseOptionNames: every `ccproxy mcp` command that takes
// a server name refuses one starting with "-" (given after "--", as the
// CLI takes it), with the message naming it, and changes no file; the
// CLI's own rule applies to new names.
func TestMCPCommandsRefuseOptionNames(t *testing.T) {
	home, project := manageRoot(t)
	cj := filepath.Join(home, ".claude.json")
	// As `claude mcp add -s user -- -h /bin/echo` writes it (2.1.329).
	if err := os.WriteFile(cj, []byte(`{"mcpServers": {"-h": {"type": "stdio", "command": "/bin/echo", "args": [], "env": {}}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(project, ".mcp.json"), []byte(`{"mcpServers": {"-x": {"command": "true"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	files := []string{cj, filepath.Join(project, ".mcp.json"), filepath.Join(project, ".claude", "settings.local.json")}
	const refused = `. A server name must not start with "-" (it would read as an option)`
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"add", "-s", "user", "--", "-h", "node"}, "Invalid name -h" + refused},
		{[]string{"add", "--", "--version", "node"}, "Invalid name --version" + refused},
		{[]string{"add-json", "--", "-x", `{"command":"node"}`}, "Invalid name -x" + refused},
		{[]string{"remove", "-s", "user", "--", "-h"}, "Invalid name -h" + refused},
		{[]string{"remove", "--", "-h"}, "Invalid name -h" + refused},
		{[]string{"get", "--", "-h"}, "Invalid name -h" + refused},
		{[]string{"approve", "--", "-x"}, "Invalid name -x" + refused},
		{[]string{"reject", "--", "-x"}, "Invalid name -x" + refused},
		{[]string{"add", "--", "a.b", "node"}, "Invalid name a.b. Names can only contain letters, numbers, hyphens, and underscores."},
	} {
		before := fileSum(t, files...)
		out, errs, code := runMCPCmd(t, append([]string{c.args[0], "--project", project}, c.args[1:]...)...)
		if code == 0 || !strings.Contains(errs, c.want) {
			t.Errorf("%q: exit %d, stderr %q, want an error containing %q (stdout %q)", c.args, code, errs, c.want, out)
		}
		if fileSum(t, files...) != before {
			t.Errorf("%q changed a file", c.args)
		}
	}
}
