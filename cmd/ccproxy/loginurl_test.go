package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccproxy/ccproxy/internal/testkit"
)

func TestLoginURLUsage(t *testing.T) {
	t.Setenv("CCPROXY_URL", "")
	t.Setenv("CCPROXY_TOKEN", "")
	t.Setenv("CCPROXY_TLS_FINGERPRINT", "")
	missing := filepath.Join(t.TempDir(), "missing")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "give the daemon's URL"},
		{[]string{"--url", "ftp://x"}, "want http://HOST:PORT"},
		{[]string{"--url", "http://user:pw@127.0.0.1:1"}, "want http://HOST:PORT"},
		{[]string{"--url", "http://127.0.0.1:1"}, "no token"},
		{[]string{"--url", "http://127.0.0.1:1", "--token-file", missing}, "--token-file"},
		{[]string{"--url", "http://127.0.0.1:1", "extra"}, `unexpected argument "extra"`},
	} {
		var stderr bytes.Buffer
		err := run(context.Background(), append([]string{"login-url"}, tc.args...), nil, &bytes.Buffer{}, &stderr)
		if _, ok := err.(usageError); !ok || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("login-url %q: %v, want a usage error with %q", tc.args, err, tc.want)
		}
	}
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"login-url", "--help"}, nil, &stdout, &stderr)
	if code := exitCode(err, &bytes.Buffer{}); code != 0 || !strings.Contains(stdout.String(), "ccproxy login-url [flags]") || !strings.Contains(stdout.String(), "--token-file") {
		t.Errorf("login-url --help: exit %d, %s", code, stdout.String())
	}
	stdout.Reset()
	run(context.Background(), []string{"help"}, nil, &stdout, &stderr)
	if !strings.Contains(stdout.String(), "login-url") {
		t.Errorf("the usage lacks login-url:\n%s", stdout.String())
	}
}

// TestLoginURL: against a real serve, login-url prints a link whose code
// logs a browser in once; a wrong token is refused with the daemon's
// reason; a spent code's error says how to get a new one.
func TestLoginURL(t *testing.T) {
	srv := testkit.StartServe(t, testkit.CCProxyBinary(t), "--demo")
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte(srv.First.Token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"login-url", "--url", srv.First.URL, "--token-file", tokenFile}, nil, &out, &bytes.Buffer{}); err != nil {
		t.Fatalf("login-url: %v", err)
	}
	link := strings.TrimSpace(out.String())
	code, ok := strings.CutPrefix(link, srv.First.URL+"/#code=")
	if !ok || code == "" || strings.Contains(link, "\n") {
		t.Fatalf("login-url printed %q, want one link %s/#code=…", out.String(), srv.First.URL)
	}
	login := func() (int, string) {
		body, _ := json.Marshal(map[string]string{"code": code})
		resp, err := http.Post(srv.First.URL+"/v1/login", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var e struct{ Error struct{ Message string } }
		json.NewDecoder(resp.Body).Decode(&e)
		return resp.StatusCode, e.Error.Message
	}
	if st, msg := login(); st != http.StatusNoContent {
		t.Fatalf("logging in with the printed code: %d %s", st, msg)
	}
	if st, msg := login(); st != http.StatusUnauthorized || !strings.Contains(msg, "ccproxy login-url") {
		t.Errorf("a spent code: %d %q, want 401 saying how to get a new link", st, msg)
	}

	t.Setenv("CCPROXY_TOKEN", "not-the-token-0123456789")
	err := run(context.Background(), []string{"login-url", "--url", srv.First.URL}, nil, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "401") || strings.Contains(err.Error(), "not-the-token") {
		t.Errorf("a wrong token: %v, want the daemon's 401 without the token", err)
	}
}
