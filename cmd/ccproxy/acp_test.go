package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/ccproxy/ccproxy/internal/testkit"
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
		{[]string{"acp", "--tls-fingerprint", "AB"}, "--tls-fingerprint goes with --connect"},
		{[]string{"acp", "--no-such-flag"}, "unknown flag: --no-such-flag"},
		{[]string{"acp", "--idle-timeout", "-1m"}, "--idle-timeout -1m0s is negative"},
		{[]string{"acp", "--idle-timeout", "500ms"}, "--idle-timeout 500ms is too short"},
		{[]string{"acp", "--connect", "http://127.0.0.1:1", "--idle-timeout", "1m"}, "the running proxy decides"},
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

// `ccproxy acp --connect` reaches a serve over TLS with a self-signed
// certificate when given its fingerprint, and only then.
func TestACPConnectPinnedTLS(t *testing.T) {
	bin := testkit.CCProxyBinary(t)
	srv := testkit.StartServe(t, bin, "--demo", "--demo-speed", "0", "--tls-self-signed")
	t.Setenv("CCPROXY_TOKEN", srv.First.Token)
	t.Setenv("CCPROXY_TLS_FINGERPRINT", "")
	acpRun := func(args ...string) (string, error) {
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		done := make(chan error, 1)
		go func() {
			err := run(context.Background(), append([]string{"acp", "--connect", srv.First.URL}, args...), inR, outW, io.Discard)
			outW.Close()
			done <- err
		}()
		go func() {
			io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`+"\n")
			io.WriteString(inW, `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"`+t.TempDir()+`","mcpServers":[]}}`+"\n")
		}()
		var got string
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if line := sc.Text(); strings.Contains(line, `"id":2`) {
				got = line
				break
			}
		}
		inW.Close()
		go io.Copy(io.Discard, outR)
		return got, <-done
	}
	// Without the pin, the self-signed certificate is refused.
	if _, err := acpRun(); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("acp --connect without the fingerprint: %v, want a certificate error", err)
	}
	wrong := strings.Repeat("AB:", 31) + "AB"
	if _, err := acpRun("--tls-fingerprint", wrong); err == nil || !strings.Contains(err.Error(), "fingerprint") {
		t.Errorf("acp --connect with a wrong fingerprint: %v, want a fingerprint error", err)
	}
	line, err := acpRun("--tls-fingerprint", srv.First.TLSFingerprint)
	if err != nil || !strings.Contains(line, `"sessionId"`) {
		t.Fatalf("acp --connect with the fingerprint: %v, session/new answered %q", err, line)
	}
}
