package mcpconfig

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// parseServersFile is what Resolve does with one .mcp.json-shaped file.
func parseServersFile(file string, data []byte, lookup LookupFunc) ([]definition, []FileError) {
	d, ferr := parseDoc(file, data)
	if ferr != nil {
		return nil, []FileError{*ferr}
	}
	return d.serverList(member(d.root, "mcpServers"), "mcpServers", ScopeProject, 0, lookup)
}

func addSeedFiles(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(setupsDir, "*", "*", "*.json"))
	more, _ := filepath.Glob(filepath.Join(setupsDir, "*", "*", "*", "*.json"))
	more2, _ := filepath.Glob(filepath.Join(setupsDir, "*", "*", ".*.json"))
	more3, _ := filepath.Glob(filepath.Join(setupsDir, "*", "*", "*", ".*.json"))
	for _, p := range append(append(append(files, more...), more2...), more3...) {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(`{"mcpServers":{"s":{"command":"x","env":{"K":"SEKRIT-1"},"args":["--token","SEKRIT-2"]},"h":{"type":"http","url":"http://u:SEKRIT@h/?k=SEKRIT","headers":{"A":"SEKRIT"}},"bad":{"type":"http","headers":{"A":"SEKRIT"}},"bad2":{"command":"x","env":{"K":"SEKRIT","L":7}}}}`))
	f.Add([]byte("\xef\xbb\xbf{\"mcpServers\":{}}"))
	f.Add([]byte(`{"mcpServers":{"a":{"command":"x"},"a":{"type":"sse","url":"u"}}}`))
	f.Add([]byte(`{"mcpServers":{"\u00e9\n":{"command":"${A:-${B}}","args":["${}","$${X}","${X"]}}}`))
	f.Add([]byte("{\n\"mcpServers\": [\n"))
}

// keysOrTypesContain reports whether any object key, or any "type" value, of
// the JSON input contains s (those may legitimately appear in messages).
func keysOrTypesContain(data []byte, s string) bool {
	found := false
	var walk func(r gjson.Result)
	walk = func(r gjson.Result) {
		r.ForEach(func(k, v gjson.Result) bool {
			if strings.Contains(k.Str, s) || (k.Str == "type" && strings.Contains(v.Str, s)) {
				found = true
			}
			if v.IsObject() || v.IsArray() {
				walk(v)
			}
			return !found
		})
	}
	walk(gjson.ParseBytes(data))
	return found
}

// FuzzParseConfig: any bytes as a config file never crash the parser; every
// error has a sane position and no value; every accepted server comes out
// normalized, valid and redacted.
func FuzzParseConfig(f *testing.F) {
	addSeedFiles(f)
	lookup := func(k string) (string, bool) {
		if k == "SET" {
			return "SEKRIT-VALUE", true
		}
		return "", false
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		defs, errs := parseServersFile("f.json", data, lookup)
		lines := strings.Count(string(data), "\n") + 1
		secretsMayShow := keysOrTypesContain(data, "SEKRIT")
		for _, e := range errs {
			if e.File != "f.json" || e.Line < 0 || e.Line > lines || (e.Line > 0 && e.Column < 1) || e.Message == "" {
				t.Fatalf("bad error %+v (input has %d lines)", e, lines)
			}
			if !secretsMayShow && strings.Contains(e.Error(), "SEKRIT") {
				t.Fatalf("error shows a value: %v", e)
			}
		}
		for _, d := range defs {
			var m map[string]any
			if err := json.Unmarshal(d.expanded, &m); err != nil {
				t.Fatalf("expanded %s: %v", d.expanded, err)
			}
			switch m["type"] {
			case "stdio":
				if c, _ := m["command"].(string); c == "" && !strings.Contains(string(d.raw), `"command"`) {
					t.Fatalf("stdio without command: %s", d.expanded)
				}
				if _, ok := m["args"].([]any); !ok {
					t.Fatalf("stdio without args: %s", d.expanded)
				}
			case "http", "sse", "ws":
				if _, ok := m["url"].(string); !ok {
					t.Fatalf("remote without url: %s", d.expanded)
				}
			default:
				t.Fatalf("bad type in %s", d.expanded)
			}
			redacted := redactDefinition(members(gjson.ParseBytes(d.raw)), len(d.raw), d.secrets) // as resolve makes it
			if !json.Valid(redacted) {
				t.Fatalf("redacted is not JSON: %s", redacted)
			}
			if d.line < 1 || d.col < 1 {
				t.Fatalf("definition at %d:%d", d.line, d.col)
			}
			var rm map[string]any
			_ = json.Unmarshal(redacted, &rm)
			for _, k := range []string{"env", "headers"} {
				if obj, ok := rm[k].(map[string]any); ok {
					for _, v := range obj {
						if s, _ := v.(string); strings.Contains(s, "SEKRIT") && !strings.Contains(s, "${") {
							t.Fatalf("redacted %s shows a value: %s", k, redacted)
						}
					}
				}
			}
		}
	})
}

// expandReference is the CLI's rule written as its regular expression,
// /\$\{([^}]+)\}/g with the inner text split at the first ":-".
var refRE = regexp.MustCompile(`\$\{([^}]+)\}`)

func expandReference(s string, lookup LookupFunc) string {
	return refRE.ReplaceAllStringFunc(s, func(m string) string {
		inner := m[2 : len(m)-1]
		name, def, hasDef := strings.Cut(inner, ":-")
		if v, ok := lookup(name); ok {
			return v
		}
		if hasDef {
			return def
		}
		return m
	})
}

// FuzzExpand checks Expand against the regular-expression reference.
func FuzzExpand(f *testing.F) {
	for _, s := range []string{"", "plain", "${A}", "${A:-d}", "${U}", "${U:-}", "$A", "${A:-${B}}", "${U:-a:-b}", "pre${A}post${B}", "${ A }", "${}", "$${A}", "\\${A}", "${U-d}", "${A:=x}", "${", "}${A}{", "${${A}}", "${E}", "${E:-x}"} {
		f.Add(s)
	}
	env := map[string]string{"A": "a-val", "B": "${A}", "E": ""}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	f.Fuzz(func(t *testing.T, s string) {
		got, missing := Expand(s, lookup)
		if want := expandReference(s, lookup); got != want {
			t.Fatalf("Expand(%q) = %q, reference %q", s, got, want)
		}
		for _, m := range missing {
			if !strings.Contains(s, "${"+m+"}") || strings.Contains(m, ":-") {
				t.Fatalf("Expand(%q): missing %q", s, m)
			}
		}
		if !strings.Contains(s, "${") && got != s {
			t.Fatalf("Expand(%q) changed text without a reference", s)
		}
	})
}

// FuzzParseCLIText: ParseList and ParseGet never crash.
func FuzzParseCLIText(f *testing.F) {
	entries, _ := os.ReadDir(cliDir)
	for _, e := range entries {
		if data, err := os.ReadFile(filepath.Join(cliDir, e.Name())); err == nil {
			f.Add(string(data))
		}
	}
	f.Fuzz(func(t *testing.T, s string) {
		if out, err := ParseList(strings.NewReader(s)); err == nil {
			for _, e := range out.Servers {
				if e.Name == "" || e.Status == "" || e.Line < 1 {
					t.Fatalf("bad entry %+v", e)
				}
			}
		}
		if g, err := ParseGet(strings.NewReader(s)); err == nil && g.Name == "" && !strings.HasPrefix(strings.TrimSpace(s), ":") {
			t.Fatalf("get without a name: %+v", g)
		}
	})
}
