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

func writeEnv(t *testing.T) Options {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home, proj := filepath.Join(root, "home"), filepath.Join(root, "proj")
	for _, d := range []string{home, proj} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return Options{HomeDir: home, ProjectDir: proj, ManagedPath: filepath.Join(root, "none")}
}

// TestSetServerDisabled: the disabled list is where the resolver reads it,
// other keys are kept, a second identical call writes nothing, and
// enabling removes the name.
func TestSetServerDisabled(t *testing.T) {
	opts := writeEnv(t)
	def, _ := BuildDefinition(AddSpec{Transport: TransportStdio, CommandOrURL: "node"})
	if _, err := AddServer(opts, ScopeUser, "srv", def, AddNew); err != nil {
		t.Fatal(err)
	}
	cj := filepath.Join(opts.HomeDir, ".claude.json")
	cfg, err := SetServerDisabled(opts, "srv", true)
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := cfg.Server("srv"); s.Active || !strings.Contains(s.Reason, "disabledMcpServers") {
		t.Errorf("after disabling: active=%v reason=%q", s.Active, s.Reason)
	}
	st1, _ := os.Stat(cj)
	if _, err := SetServerDisabled(opts, "srv", true); err != nil {
		t.Fatal(err)
	}
	if st2, _ := os.Stat(cj); !st2.ModTime().Equal(st1.ModTime()) || st2.Size() != st1.Size() {
		t.Errorf("an identical call rewrote the file")
	}
	var doc struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
		Projects   map[string]struct {
			Disabled []string `json:"disabledMcpServers"`
		} `json:"projects"`
	}
	data, _ := os.ReadFile(cj)
	if err := json.Unmarshal(data, &doc); err != nil || doc.MCPServers["srv"] == nil || len(doc.Projects[opts.ProjectDir].Disabled) != 1 {
		t.Fatalf("file: %s (%v)", data, err)
	}
	cfg, err = SetServerDisabled(opts, "srv", false)
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := cfg.Server("srv"); !s.Active {
		t.Errorf("after enabling: %+v", s)
	}
}

func TestNormalizeDefinition(t *testing.T) {
	for _, c := range []struct{ in, want, dropped string }{
		{`{"command":"node"}`, `{"command":"node","args":[]}`, ""},
		{`{"type":"streamable-http","url":"https://x.example","x":1,"headers":{"a":"b"}}`, `{"type":"http","url":"https://x.example","headers":{"a":"b"}}`, "x"},
		{`{"env":{"A":"1"},"type":"stdio","command":"/bin/s","cwd":"/"}`, `{"type":"stdio","command":"/bin/s","args":[],"env":{"A":"1"}}`, "cwd"},
	} {
		got, _, dropped, err := NormalizeDefinition("d", "n", []byte(c.in))
		if err != nil || string(got) != c.want || strings.Join(dropped, ",") != c.dropped {
			t.Errorf("%s: %s %v %v, want %s dropped %q", c.in, got, dropped, err, c.want, c.dropped)
		}
	}
	for _, c := range []struct{ in, want string }{
		{`{"command":"node",}`, `server "n": not JSON at line 1, column 20`},
		{`"x"`, `the definition must be a JSON object, not a string`},
		{`{"type":"sse"}`, `"url" is missing`},
		{`{"command":"bin/x"}`, `d:1:12: server "n": command "bin/x" is a relative path`},
		{`{"type":"http","url":"ftp://x"}`, `is not an absolute http(s) URL`},
	} {
		_, _, _, err := NormalizeDefinition("d", "n", []byte(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.in, err, c.want)
		}
	}
}

func TestDetectStyle(t *testing.T) {
	for _, c := range []struct {
		in     string
		indent string
		nl     bool
	}{
		{"{\n  \"a\": 1\n}", "  ", false},
		{"{\n\t\"a\": 1\n}\n", "\t", true},
		{"{\"a\":1}\n", "", true},
		{"{}", "  ", false},
		{"{\n    \"a\": {\n        \"b\": 1\n    }\n}\r\n", "    ", true},
	} {
		indent, nl := detectStyle(c.in)
		if indent != c.indent || nl != c.nl {
			t.Errorf("%q: %q %v, want %q %v", c.in, indent, nl, c.indent, c.nl)
		}
	}
}

// The writers of ~/.claude.json's project entry (a local server, the
// disabled list, the trust) refuse a projects, or an entry, that is not an
// object, saying which, and leave the file as it was.
func TestProjectEntryRefused(t *testing.T) {
	def, _ := BuildDefinition(AddSpec{Transport: TransportStdio, CommandOrURL: "node"})
	writers := map[string]func(Options) error{
		"AddServer":         func(o Options) error { _, err := AddServer(o, ScopeLocal, "srv", def, AddNew); return err },
		"SetServerDisabled": func(o Options) error { _, err := SetServerDisabled(o, "srv", true); return err },
		"TrustWorkspace":    func(o Options) error { _, err := TrustWorkspace(o); return err },
	}
	for what, write := range writers {
		opts := writeEnv(t)
		cj := filepath.Join(opts.HomeDir, ".claude.json")
		for _, c := range []struct{ text, want string }{
			{`{"projects": []}`, "projects must be an object, not an array"},
			{`{"projects": {"` + opts.ProjectDir + `": 1}}`, "must be an object, not a number"},
		} {
			if err := os.WriteFile(cj, []byte(c.text), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := write(opts); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s with %s: err %v, want %q", what, c.text, err, c.want)
			}
			if data, _ := os.ReadFile(cj); string(data) != c.text {
				t.Errorf("%s with %s changed the file: %s", what, c.text, data)
			}
		}
	}
}

// pathKey makes any key one part of a path that sjson writes and gjson
// reads back as that very key, including one that starts with ':' (which
// sjson would otherwise take as "force an object key" and drop).
func TestPathKey(t *testing.T) {
	for _, k := range []string{":x", "x:", "a.b", "a:b", "*", "x?", "@y", "#", `a\b`, "|", "!=", "a b", "é"} {
		out, err := sjson.Set(`{"m":{}}`, "m."+pathKey(k), 1)
		if err != nil {
			t.Fatalf("%q: %v", k, err)
		}
		var doc struct{ M map[string]int }
		if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.M) != 1 || doc.M[k] != 1 {
			t.Errorf("set %q: wrote %s", k, out)
		}
		if got := gjson.Get(out, "m."+pathKey(k)); got.Int() != 1 {
			t.Errorf("get %q from %s: %s", k, out, got.Raw)
		}
	}
}

// A server whose hand-written name starts with ':' is removed by that
// name, and a server named like it without the ':' is left alone.
func TestRemoveServerColonName(t *testing.T) {
	opts := writeEnv(t)
	cj := filepath.Join(opts.HomeDir, ".claude.json")
	if err := os.WriteFile(cj, []byte(`{"mcpServers":{":x":{"command":"a"},"x":{"command":"b"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := RemoveServer(opts, ScopeUser, ":x"); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(cj)
	var doc struct{ MCPServers map[string]json.RawMessage }
	if err := json.Unmarshal(data, &doc); err != nil || len(doc.MCPServers) != 1 || doc.MCPServers["x"] == nil {
		t.Errorf("after removing \":x\": %s (%v), want only \"x\" left", data, err)
	}
}

// TestCheckNameRule: the rule of new server names is the CLI's, measured
// on 2.1.329 and 2.1.332 (docs/CLI-NOTES.md: `claude mcp add -- NAME
// /bin/echo` in a temporary HOME), except that a name starting with "-"
// (which the CLI accepts) is refused; CheckNameRef, for names already
// configured, refuses only that and the empty name.
func TestCheckNameRule(t *testing.T) {
	for _, tc := range []struct {
		name     string
		cli, ref bool // accepted by the CLI; by CheckNameRef
		want     string
	}{
		{"", false, false, "the server name is empty"},
		{"-h", true, false, `Invalid name -h. A server name must not start with "-"`},
		{"-x", true, false, `must not start with "-"`},
		{"--version", true, false, `must not start with "-"`},
		{"-", true, false, `must not start with "-"`},
		{"a b", false, true, "Invalid name a b. Names can only contain letters, numbers, hyphens, and underscores."},
		{"a.b", false, true, "Invalid name a.b."},
		{"a/b", false, true, "Invalid name a/b."},
		{"a:b", false, true, "Invalid name a:b."},
		{"héllo", false, true, "Invalid name héllo."},
		{strings.Repeat("b", 5000), true, true, ""},
		{"a-b_c", true, true, ""},
		{"_a", true, true, ""},
		{"123", true, true, ""},
		{"a-", true, true, ""},
	} {
		err := CheckName(tc.name)
		wantOK := tc.cli && !strings.HasPrefix(tc.name, "-")
		if (err == nil) != wantOK || (err != nil && (!strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrBadInput))) {
			t.Errorf("CheckName(%.20q) = %v, want ok=%v %q", tc.name, err, wantOK, tc.want)
		}
		if err := CheckNameRef(tc.name); (err == nil) != tc.ref {
			t.Errorf("CheckNameRef(%.20q) = %v, want ok=%v", tc.name, err, tc.ref)
		}
	}
}

// TestOptionNameRefusedEverywhere: every function of the package that
// takes a server name refuses one starting with "-", also when a file
// defines it (the CLI writes `claude mcp add -- -h …`), and writes
// nothing; a configured name that breaks the rule of new names is still
// found and removed.
func TestOptionNameRefusedEverywhere(t *testing.T) {
	f := newFixture(t, "trusted")
	f.write(t, "work/project/.mcp.json", `{"mcpServers": {"-h": {"command": "true"}, "a.b": {"command": "true"}}}`)
	f.write(t, "home/.claude.json", `{"mcpServers": {"-h": {"command": "true"}}}`)
	def := json.RawMessage(`{"type":"stdio","command":"true","args":[],"env":{}}`)
	before := map[string]string{}
	for _, p := range []string{"work/project/.mcp.json", "home/.claude.json", "work/project/.claude/settings.local.json"} {
		b, _ := os.ReadFile(f.path(p))
		before[p] = string(b)
	}
	for what, call := range map[string]func() error{
		"AddServer":         func() error { _, err := AddServer(f.opts, ScopeUser, "-h", def, AddOrReplace); return err },
		"RemoveServer":      func() error { _, err := RemoveServer(f.opts, ScopeUser, "-h"); return err },
		"FindServer":        func() error { _, err := FindServer(f.opts, "-h"); return err },
		"Approve":           func() error { _, err := Approve(f.opts, "-h"); return err },
		"Reject":            func() error { _, err := Reject(f.opts, "-h"); return err },
		"SetServerDisabled": func() error { _, err := SetServerDisabled(f.opts, "-h", true); return err },
		"ResolveUnsaved":    func() error { _, err := ResolveUnsaved(f.opts, "-h", def); return err },
		"ParseClientServers": func() error {
			_, err := ParseClientServers("mcpServers", []byte(`{"-h": {"command": "true"}}`))
			return err
		},
	} {
		err := call()
		if err == nil || !strings.Contains(err.Error(), `Invalid name -h. A server name must not start with "-"`) {
			t.Errorf("%s(-h): %v", what, err)
		}
	}
	for p, b := range before {
		if after, _ := os.ReadFile(f.path(p)); string(after) != b {
			t.Errorf("%s changed:\n%s", p, after)
		}
	}
	if found, err := FindServer(f.opts, "a.b"); err != nil || len(found) != 1 {
		t.Errorf("FindServer(a.b) = %v, %v", found, err)
	}
	if _, err := RemoveServer(f.opts, ScopeProject, "a.b"); err != nil {
		t.Errorf("RemoveServer(a.b): %v", err)
	}
}
