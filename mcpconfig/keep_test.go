package mcpconfig

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// TestUpdateKeepsMaskedValues: an edit sends back the redacted definition
// the client was shown with some values changed. mcp/update's write
// (ReplaceOnly) keeps the stored value behind each placeholder left as
// shown, writes the values that changed, and refuses a placeholder that
// stands for nothing stored at its place. Stdio (env, header in args) and
// http (headers, URL query) both.
func TestUpdateKeepsMaskedValues(t *testing.T) {
	opts := writeEnv(t)
	stdio := json.RawMessage(`{"type":"stdio","command":"node","args":["srv.js","-H","Authorization: Bearer abcdefghijkl0123"],"env":{"API_KEY":"sk-live-abcdef123456","MODE":"fast","AUTH":"Bearer ${TOKEN}"}}`)
	remote := json.RawMessage(`{"type":"http","url":"https://mcp.example.com/v1?key=querysecret42&x=1","headers":{"X-Api-Key":"hdr-secret-987654"}}`)
	if _, err := AddServer(opts, ScopeLocal, "s", stdio, AddNew); err != nil {
		t.Fatal(err)
	}
	if _, err := AddServer(opts, ScopeUser, "r", remote, AddNew); err != nil {
		t.Fatal(err)
	}
	shown := func(name string) string {
		cfg, err := Resolve(opts)
		if err != nil {
			t.Fatal(err)
		}
		s, ok := cfg.Server(name)
		if !ok {
			t.Fatalf("no server %s", name)
		}
		return string(s.Redacted)
	}
	stored := func(scope Scope, name string) gjson.Result {
		loc, _ := LocationOf(opts, scope)
		data, err := os.ReadFile(loc.File)
		if err != nil {
			t.Fatal(err)
		}
		return gjson.GetBytes(data, strings.TrimPrefix(loc.serversPath()+"."+name, "."))
	}
	set := func(doc, path string, v any) json.RawMessage {
		out, err := sjson.Set(doc, path, v)
		if err != nil {
			t.Fatal(err)
		}
		return json.RawMessage(out)
	}

	// stdio: API_KEY and the args' header left masked, MODE changed, AUTH
	// (shown "***${TOKEN}") left, a new secret added.
	red := shown("s")
	if strings.Contains(red, "sk-live") || strings.Contains(red, "abcdefghijkl0123") {
		t.Fatalf("the view is not redacted: %s", red)
	}
	edit := set(red, "env.MODE", "slow")
	edit = set(string(edit), "env.NEW_SECRET", "brand-new-value")
	if _, err := AddServer(opts, ScopeLocal, "s", edit, ReplaceOnly); err != nil {
		t.Fatal(err)
	}
	got := stored(ScopeLocal, "s")
	for path, want := range map[string]string{
		"env.API_KEY": "sk-live-abcdef123456", "env.MODE": "slow", "env.AUTH": "Bearer ${TOKEN}",
		"env.NEW_SECRET": "brand-new-value", "args.2": "Authorization: Bearer abcdefghijkl0123", "args.0": "srv.js",
	} {
		if g := got.Get(path).String(); g != want {
			t.Errorf("stdio %s = %q, want %q (file: %s)", path, g, want, got.Raw)
		}
	}
	// A changed secret replaces the stored one.
	edit = set(shown("s"), "env.API_KEY", "sk-live-rotated")
	if _, err := AddServer(opts, ScopeLocal, "s", edit, ReplaceOnly); err != nil {
		t.Fatal(err)
	}
	if g := stored(ScopeLocal, "s").Get("env.API_KEY").String(); g != "sk-live-rotated" {
		t.Errorf("a changed secret was not written: %q", g)
	}

	// http: headers and the URL's query kept; the URL's host edited while
	// its query stays masked is refused (the file is left as it was).
	red = shown("r")
	if strings.Contains(red, "querysecret42") || strings.Contains(red, "hdr-secret") {
		t.Fatalf("the view is not redacted: %s", red)
	}
	if _, err := AddServer(opts, ScopeUser, "r", json.RawMessage(red), ReplaceOnly); err != nil {
		t.Fatal(err)
	}
	got = stored(ScopeUser, "r")
	if got.Get("url").String() != "https://mcp.example.com/v1?key=querysecret42&x=1" || got.Get("headers.X-Api-Key").String() != "hdr-secret-987654" {
		t.Errorf("http secrets not kept: %s", got.Raw)
	}
	before := got.Raw
	for _, c := range []struct {
		what string
		edit json.RawMessage
		want string
	}{
		{"an edited URL with a masked part", set(red, "url", strings.Replace(gjson.Get(red, "url").String(), "mcp.example.com", "other.example.com", 1)), `server "r": url holds the masked placeholder`},
		{"a placeholder under a new name", set(red, "headers.X-Other", "***"), `server "r": headers.X-Other holds the masked placeholder`},
	} {
		_, err := AddServer(opts, ScopeUser, "r", c.edit, ReplaceOnly)
		if !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want ErrBadInput with %q", c.what, err, c.want)
		}
		if err != nil && (strings.Contains(err.Error(), "querysecret42") || strings.Contains(err.Error(), "hdr-secret")) {
			t.Errorf("%s: the error shows a secret: %v", c.what, err)
		}
		if g := stored(ScopeUser, "r").Raw; g != before {
			t.Errorf("%s: the file changed: %s", c.what, g)
		}
	}

	// mcp/add (AddNew, AddOrReplace) writes what it is given.
	loc, _ := LocationOf(opts, ScopeUser)
	if _, err := AddServer(opts, ScopeUser, "lit", json.RawMessage(`{"type":"stdio","command":"node","args":[],"env":{"K":"***"}}`), AddNew); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Clean(loc.File))
	if g := gjson.GetBytes(data, "mcpServers.lit.env.K").String(); g != "***" {
		t.Errorf("add changed a literal value: %q", g)
	}
}

func TestMaskedFormOf(t *testing.T) {
	for _, c := range []struct {
		masked, value string
		want          bool
	}{
		{"***", "x", true},
		{"***", "", false},
		{"***${TOKEN}", "Bearer ${TOKEN}", true},
		{"***${TOKEN}", "${TOKEN}", false},
		{"${KEY:-***}", "${KEY:-fallback}", true},
		{"https://h/p?key=***&x=***", "https://h/p?key=abc&x=1", true},
		{"https://h/p?key=***&x=***", "https://h/p?key=abc&y=1", false},
		{"https://h/p?key=***", "https://g/p?key=abc", false},
		{"a***b***c", "aXbYc", true},
		{"a***b***c", "abc", false},
		{"******", "xy", true},
		{"******", "x", false},
		{"plain", "plain", true},
	} {
		if got := maskedFormOf(c.masked, c.value); got != c.want {
			t.Errorf("maskedFormOf(%q, %q) = %v, want %v", c.masked, c.value, got, c.want)
		}
	}
}
