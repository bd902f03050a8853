package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
)

// Bad `ccproxy acp` command lines are usage errors (exit 2) saying what is
// wrong, and write nothing on stdout (which belongs to JSON-RPC).
func TestACPUsageErrors(t *testing.T) {
	t.Setenv("CCPROXY_TOKEN", "")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"acp", "extra"}, `unexpected argument "extra"`},
		{[]string{"acp", "--connect", "http://127.0.0.1:1"}, "--connect needs the token"},
		{[]string{"acp", "--connect", "http://127.0.0.1:1", "--demo"}, "drop --demo"},
		{[]string{"acp", "--connect", "http://127.0.0.1:1", "--trust-client-mcp"}, "the running proxy decides"},
		{[]string{"acp", "--demo", "--trust-client-mcp"}, "drop --trust-client-mcp"},
		{[]string{"acp", "--token-file", "/nonexistent"}, "--token-file goes with --connect"},
		{[]string{"acp", "--no-such-flag"}, "unknown flag: --no-such-flag"},
	} {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), c.args, strings.NewReader(""), &stdout, &stderr)
		var ue usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want a usage error containing %q", c.args, err, c.want)
		}
		if stdout.Len() > 0 {
			t.Errorf("%v: wrote %q on stdout", c.args, stdout.String())
		}
	}
}
