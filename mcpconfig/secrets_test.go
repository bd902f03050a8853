package mcpconfig

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestRedactArgsHeaders(t *testing.T) {
	for _, tt := range []struct{ in, want []string }{
		{[]string{"mcp-remote", "https://h/mcp", "--header", "Authorization: Bearer sk-abc123"},
			[]string{"mcp-remote", "https://h/mcp", "--header", "Authorization: ***"}},
		{[]string{"--header", "Authorization:${AUTH_HEADER}"}, []string{"--header", "Authorization:${AUTH_HEADER}"}},
		{[]string{"--header", "Authorization:Bearer ${T}"}, []string{"--header", "Authorization:***${T}"}},
		{[]string{"-H", "X-Custom: plain-value"}, []string{"-H", "X-Custom: ***"}},
		{[]string{"-H", "not a header"}, []string{"-H", "***"}},
		{[]string{"--headers", `{"Authorization":"Bearer x"}`}, []string{"--headers", "***"}},
		{[]string{"--header=X-Api-Key: k-123456"}, []string{"--header=X-Api-Key: ***"}},
		{[]string{"--header=garbage"}, []string{"--header=***"}},
		{[]string{"--http-header", "Cookie: a=b"}, []string{"--http-header", "Cookie: ***"}},
		{[]string{"Authorization: Bearer tok-9"}, []string{"Authorization: ***"}},
		{[]string{"X-Api-Key: abc=def"}, []string{"X-Api-Key: ***"}},
		{[]string{"X-Foo-Key:zzz"}, []string{"X-Foo-Key:***"}},
		// Split at spaces, as `claude mcp list` prints a command line.
		{[]string{"npx", "--header", "Authorization:", "Bearer", "sk-1", "--verbose", "x"},
			[]string{"npx", "--header", "Authorization:", "***", "***", "--verbose", "x"}},
		{[]string{"Authorization:", "Bearer", "sk-1"}, []string{"Authorization:", "***", "***"}},
		// Not headers.
		{[]string{"-h", "localhost:8080", "Host: example.com", "http://u@h/"}, []string{"-h", "localhost:8080", "Host: example.com", "http://***@h/"}},
		{[]string{"--header"}, []string{"--header"}},
	} {
		if got := RedactArgs(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("RedactArgs(%q)\n got %q\nwant %q", tt.in, got, tt.want)
		}
	}
}

func TestSecretsRedactPathSegments(t *testing.T) {
	sec := NewSecrets("sk-path-secret", "tok en 42", "short")
	for _, tt := range []struct{ in, want string }{
		{"https://h/v1/sk-path-secret/mcp", "https://h/v1/***/mcp"},
		{"https://h/v1/sk-path-secret", "https://h/v1/***"},
		{"https://h/sk-path-secret?x=1#f", "https://h/***?x=***#***"},
		{"https://h/tok%20en%2042/mcp", "https://h/***/mcp"}, // decoded
		{"https://h/sk-path-secret-not/mcp", "https://h/sk-path-secret-not/mcp"},
		{"https://h/short/mcp", "https://h/short/mcp"},           // below MinSecretLen: not a secret
		{"https://sk-path-secret/x", "https://sk-path-secret/x"}, // the host is not a path segment
	} {
		if got := sec.RedactURL(tt.in); got != tt.want {
			t.Errorf("RedactURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	args := []string{"--url", "https://h/sk-path-secret/mcp", "sk-path-secret", "--opt=sk-path-secret", "plain"}
	want := []string{"--url", "https://h/***/mcp", "***", "--opt=***", "plain"}
	if got := sec.RedactArgs(args); !slices.Equal(got, want) {
		t.Errorf("RedactArgs:\n got %q\nwant %q", got, want)
	}
}

func TestSecretsScrub(t *testing.T) {
	env := []string{"ANTHROPIC_API_KEY=sk-ant-api03-zzzz", "GITHUB_TOKEN=ghp_abcdefgh", "my_password=hunter22",
		"AWS_SECRET_ACCESS_KEY=aws/secret+value", "X_CREDENTIALS=cred-value", "SOME_AUTH=true", "HOME=/home/me", "PATH=/usr/bin", "EDITOR=vim-editor"}
	sec := EnvSecrets(env)
	got := sec.Values()
	want := []string{"sk-ant-api03-zzzz", "aws/secret+value", "ghp_abcdefgh", "cred-value", "hunter22"}
	if !slices.Equal(got, want) {
		t.Errorf("EnvSecrets = %q, want %q", got, want)
	}
	text := "auth failed for sk-ant-api03-zzzz; tried ghp_abcdefgh and hunter22 (not hunter222), home /home/me, true"
	wantText := "auth failed for ***; tried *** and *** (not hunter222), home /home/me, true"
	if got := sec.Scrub(text); got != wantText {
		t.Errorf("Scrub:\n got %q\nwant %q", got, wantText)
	}
	if (*Secrets)(nil).Scrub("x") != "x" || MergeSecrets(nil, nil) != nil {
		t.Error("the nil set is not empty")
	}
}

// TestViewsHideHeaderAndPathSecrets: the redacted view of a server (what
// `mcp config`, mcp/config and mcp/status show) masks header arguments,
// path segments equal to a configured secret (of any server: "http" shows
// in its URL path the env value "stdio" configures) or to the value of a
// ${VAR} used in the config, and Config.Secrets holds all of them.
func TestViewsHideHeaderAndPathSecrets(t *testing.T) {
	const (
		headerSecret = "sk-header-0123456789"
		pathSecret   = "path-token-abcdef"  // the value of ${PATH_TOKEN}
		envSecret    = "env-secret-9876543" // an env value, also written in a URL path
	)
	dir := t.TempDir()
	extra := filepath.Join(dir, "extra.json")
	servers := map[string]any{
		"remote": map[string]any{"command": "npx", "args": []string{"mcp-remote", "https://h/mcp/" + pathSecret + "/sse",
			"--header", "Authorization: Bearer " + headerSecret, "--header", "X-Api-Key:${PATH_TOKEN}"}},
		"http": map[string]any{"type": "http", "url": "https://h/u/" + envSecret + "/mcp",
			"headers": map[string]string{"X-Token": "${PATH_TOKEN}"}},
		"stdio": map[string]any{"command": "srv", "args": []string{"--db", "https://h/" + envSecret},
			"env": map[string]string{"DB_PASSWORD": envSecret}},
	}
	b, _ := json.Marshal(map[string]any{"mcpServers": servers})
	if err := os.WriteFile(extra, b, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Resolve(Options{HomeDir: filepath.Join(dir, "home"), ProjectDir: dir, ManagedPath: filepath.Join(dir, "none"), Extra: []string{extra},
		Env: func(k string) (string, bool) {
			if k == "PATH_TOKEN" {
				return pathSecret, true
			}
			return "", false
		}})
	if err != nil || len(cfg.Errors) > 0 {
		t.Fatal(err, cfg.Errors)
	}
	view, _ := json.Marshal(cfg.Redacted())
	for _, s := range []string{headerSecret, pathSecret, envSecret} {
		if strings.Contains(string(view), s) {
			t.Errorf("the view shows %q: %s", s, view)
		}
	}
	for _, s := range []string{`"Authorization: ***"`, `"X-Api-Key:${PATH_TOKEN}"`, `"https://h/mcp/***/sse"`, `"https://h/u/***/mcp"`} {
		if !strings.Contains(string(view), s) {
			t.Errorf("the view lacks %s: %s", s, view)
		}
	}
	all := cfg.Secrets()
	for _, s := range []string{headerSecret, pathSecret, envSecret} {
		if !slices.Contains(all.Values(), s) {
			t.Errorf("Config.Secrets lacks %q: %q", s, all.Values())
		}
		if got := all.Scrub("echo " + s + "!"); got != "echo ***!" {
			t.Errorf("Scrub = %q", got)
		}
	}
}

func TestSecretsScrubCut(t *testing.T) {
	sec := NewSecrets("sk-live-0123456789abcdef")
	for _, tt := range []struct {
		in         string
		start, end bool
		want       string
	}{
		{"6789abcdef\nfatal: bad token", true, false, "***\nfatal: bad token"},
		{"fatal: token sk-live-01", false, true, "fatal: token ***"},
		{"fatal: token sk-live-01", false, false, "fatal: token sk-live-01"},
		{"def rest", true, false, "def rest"}, // under minCutLen
		{"sk-live-0123456789abcdef ok", true, true, "*** ok"},
	} {
		if got := sec.ScrubCut(tt.in, tt.start, tt.end); got != tt.want {
			t.Errorf("ScrubCut(%q, %v, %v) = %q, want %q", tt.in, tt.start, tt.end, got, tt.want)
		}
	}
}

// TestServerSecretsFindURLSecretsLikeRedactURL: a server's Secrets hold
// exactly the URL parts RedactURL masks, also in URLs net/url reads
// differently (a bad escape in the query, a value it would decode), and
// Scrub replaces the URL by its redacted form.
func TestServerSecretsFindURLSecretsLikeRedactURL(t *testing.T) {
	for _, tt := range []struct {
		url     string
		secrets []string // each must be masked when it appears alone
	}{
		{"https://h/mcp?key=abc%zzdef123xyz", []string{"abc%zzdef123xyz"}},
		{"https://h/mcp?key=tok%20en-5678&x=y;z=secret-semicolon", []string{"tok%20en-5678", "tok en-5678", "y;z=secret-semicolon"}},
		{"https://alice-user:p%41ss-word-99@h/mcp#frag-secret", []string{"alice-user", "p%41ss-word-99", "pAss-word-99", "frag-secret"}},
	} {
		s := Server{Expanded: []byte(`{"type":"http","url":"` + tt.url + `"}`)}
		sec := s.Secrets()
		for _, secret := range tt.secrets {
			text := "the server said: rejected " + secret + " (try again)"
			if got := sec.Scrub(text); strings.Contains(got, secret) || !strings.Contains(got, Mask) {
				t.Errorf("%s: Scrub(%q) = %q", tt.url, text, got)
			}
		}
		if got := sec.Scrub("connecting to " + tt.url); got != "connecting to "+RedactURL(tt.url) {
			t.Errorf("%s: the URL is scrubbed to %q", tt.url, got)
		}
	}
}

// References are not secrets: "${TOKEN}" stays visible where it is written.
func TestSecretsSkipReferences(t *testing.T) {
	s := Server{Expanded: []byte(`{"type":"stdio","command":"x","args":["--key","${API_KEY}"],"env":{"A":"${TOKEN_VAR}"}}`)}
	if v := s.Secrets().Values(); len(v) != 0 {
		t.Errorf("secrets %q", v)
	}
	if got := s.Secrets().Scrub("set ${TOKEN_VAR} first"); got != "set ${TOKEN_VAR} first" {
		t.Errorf("Scrub = %q", got)
	}
}
