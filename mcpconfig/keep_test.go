package mcpconfig

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strconv"
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

// TestKeepMaskedNoOracle: only the exact text a view shows keeps a stored
// value. A pattern that merely matches it ("sk-***") is refused like one
// that does not, so whether an edit is accepted tells a client nothing of
// the secret (before, "s***" was accepted and "x***" refused: a client
// could read a secret one character at a time).
func TestKeepMaskedNoOracle(t *testing.T) {
	stored := json.RawMessage(`{"type":"http","url":"https://mcp.example.com/v1?key=querysecret42&x=1","headers":{"X-Api-Key":"hdr-secret-987654"},"env":{"AUTH":"Bearer ${TOKEN}"}}`)
	for _, c := range []struct {
		path, sent string
		keep       bool
	}{
		{"headers.X-Api-Key", "***", true},
		{"headers.X-Api-Key", "hdr-***", false},
		{"headers.X-Api-Key", "h***", false},
		{"headers.X-Api-Key", "***4", false},
		{"headers.X-Api-Key", "x***", false},
		{"url", "https://mcp.example.com/v1?key=***&x=***", true},
		{"url", "***", true}, // the whole value masked
		{"url", "https://mcp.example.com/v1?key=q***&x=***", false},
		{"url", "https://mcp.example.com/v1?key=***2&x=1", false},
		{"env.AUTH", "***${TOKEN}", true},
		{"env.AUTH", "B***${TOKEN}", false},
	} {
		sent, err := sjson.SetBytes(stored, c.path, c.sent)
		if err != nil {
			t.Fatal(err)
		}
		got, err := KeepMasked("r", stored, sent, nil)
		if !c.keep {
			if !errors.Is(err, ErrBadInput) {
				t.Errorf("%s = %q: err %v, want ErrBadInput", c.path, c.sent, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s = %q: %v", c.path, c.sent, err)
			continue
		}
		if g, w := gjson.GetBytes(got, c.path).String(), gjson.GetBytes(stored, c.path).String(); g != w {
			t.Errorf("%s = %q kept %q, want %q", c.path, c.sent, g, w)
		}
	}
}

// A value of one server shown masked in another's view (Resolve masks it
// everywhere: the URL path segment below) is kept when that view is sent
// back.
func TestUpdateKeepsSecretsOfOtherServers(t *testing.T) {
	opts := writeEnv(t)
	if _, err := AddServer(opts, ScopeUser, "a", json.RawMessage(`{"type":"stdio","command":"node","args":[],"env":{"K":"shared-secret-99"}}`), AddNew); err != nil {
		t.Fatal(err)
	}
	if _, err := AddServer(opts, ScopeUser, "b", json.RawMessage(`{"type":"http","url":"https://h.example/shared-secret-99/mcp"}`), AddNew); err != nil {
		t.Fatal(err)
	}
	cfg, err := Resolve(opts)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := cfg.Server("b")
	if u := gjson.GetBytes(b.Redacted, "url").String(); u != "https://h.example/***/mcp" {
		t.Fatalf("b's url is shown %q", u)
	}
	if _, err := AddServer(opts, ScopeUser, "b", b.Redacted, ReplaceOnly); err != nil {
		t.Fatal(err)
	}
	loc, _ := LocationOf(opts, ScopeUser)
	data, _ := os.ReadFile(loc.File)
	if u := gjson.GetBytes(data, "mcpServers.b.url").String(); u != "https://h.example/shared-secret-99/mcp" {
		t.Errorf("b's url became %q", u)
	}
}

// TestUpdateKeepsMaskedValuesOfOddKeys: env and header names that gjson
// paths would read as syntax (a leading { or [, dots, wildcards) keep
// their stored secret when left masked, and no second key appears.
func TestUpdateKeepsMaskedValuesOfOddKeys(t *testing.T) {
	opts := writeEnv(t)
	keys := []string{"{X}", "[0]", "a.b", "W*", "Q?", "#n", "@m", "p|q", "e!=f"}
	env := map[string]string{}
	for i, k := range keys {
		env[k] = fmt.Sprintf("odd-secret-%02d-abcdef", i)
	}
	envJSON, _ := json.Marshal(env)
	def := json.RawMessage(`{"type":"stdio","command":"node","args":[],"env":` + string(envJSON) + `}`)
	if _, err := AddServer(opts, ScopeUser, "o", def, AddNew); err != nil {
		t.Fatal(err)
	}
	cfg, err := Resolve(opts)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := cfg.Server("o")
	if strings.Contains(string(s.Redacted), "odd-secret") {
		t.Fatalf("shown unmasked: %s", s.Redacted)
	}
	if _, err := AddServer(opts, ScopeUser, "o", s.Redacted, ReplaceOnly); err != nil {
		t.Fatal(err)
	}
	loc, _ := LocationOf(opts, ScopeUser)
	data, _ := os.ReadFile(loc.File)
	var stored struct {
		MCPServers map[string]struct {
			Env map[string]string `json:"env"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal(data, &stored); err != nil {
		t.Fatal(err)
	}
	if got := stored.MCPServers["o"].Env; !maps.Equal(got, env) {
		t.Errorf("env after the masked edit:\n got %v\nwant %v", got, env)
	}
	for _, k := range keys {
		if n := strings.Count(string(data), strconv.Quote(k)+":"); n != 1 {
			t.Errorf("key %q is in the file %d times:\n%s", k, n, data)
		}
	}
	if strings.Contains(string(data), "***") {
		t.Errorf("a placeholder was written:\n%s", data)
	}
}

// TestTrustWorkspace: a project server approved in the project's
// settings.local.json awaits only trust (NeedsTrust), one approved nowhere
// does not; TrustWorkspace records hasTrustDialogAccepted where the
// resolver (and the CLI) read it, keeps the other keys, activates the
// first server only, and a second call writes nothing.
func TestTrustWorkspace(t *testing.T) {
	opts := writeEnv(t)
	write := func(path, text string) {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(opts.ProjectDir, ".mcp.json"), `{"mcpServers":{"p":{"command":"node"},"q":{"command":"node"}}}`)
	write(filepath.Join(opts.ProjectDir, ".claude", "settings.local.json"), `{"enabledMcpjsonServers":["p"]}`)
	cj := filepath.Join(opts.HomeDir, ".claude.json")
	write(cj, `{"numStartups": 3, "projects": {"`+opts.ProjectDir+`": {"allowedTools": ["Read"]}}}`)
	cfg, err := Resolve(opts)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := cfg.Server("p")
	q, _ := cfg.Server("q")
	if p.Active || !p.NeedsTrust || q.Active || q.NeedsTrust || cfg.Trusted {
		t.Fatalf("before: p active=%v needsTrust=%v, q active=%v needsTrust=%v, trusted=%v", p.Active, p.NeedsTrust, q.Active, q.NeedsTrust, cfg.Trusted)
	}
	cfg, err = TrustWorkspace(opts)
	if err != nil {
		t.Fatal(err)
	}
	p, _ = cfg.Server("p")
	q, _ = cfg.Server("q")
	if !cfg.Trusted || !p.Active || p.NeedsTrust || q.Active {
		t.Errorf("after: trusted=%v, p active=%v needsTrust=%v, q active=%v", cfg.Trusted, p.Active, p.NeedsTrust, q.Active)
	}
	data, _ := os.ReadFile(cj)
	entry := gjson.GetBytes(data, "projects."+gjson.Escape(opts.ProjectDir))
	if entry.Get("hasTrustDialogAccepted").Type != gjson.True || entry.Get("allowedTools.0").String() != "Read" || gjson.GetBytes(data, "numStartups").Int() != 3 {
		t.Errorf("~/.claude.json: %s", data)
	}
	st1, _ := os.Stat(cj)
	if _, err := TrustWorkspace(opts); err != nil {
		t.Fatal(err)
	}
	if st2, _ := os.Stat(cj); !st2.ModTime().Equal(st1.ModTime()) || st2.Size() != st1.Size() {
		t.Errorf("a second call rewrote the file")
	}

	// A project ~/.claude.json does not know yet gets the CLI's new entry.
	opts2 := writeEnv(t)
	if _, err := TrustWorkspace(opts2); err != nil {
		t.Fatal(err)
	}
	data, _ = os.ReadFile(filepath.Join(opts2.HomeDir, ".claude.json"))
	entry = gjson.GetBytes(data, "projects."+gjson.Escape(opts2.ProjectDir))
	if entry.Get("hasTrustDialogAccepted").Type != gjson.True || !entry.Get("enabledMcpjsonServers").IsArray() {
		t.Errorf("new entry: %s", data)
	}
}
