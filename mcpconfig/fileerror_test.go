package mcpconfig

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
)

// Every function that fails on a bad file returns the problem as a
// *FileError (the one form callers test with errors.As), naming the file,
// and leaves the file alone.
func TestFileErrorIsPointer(t *testing.T) {
	def, _, _, err := NormalizeDefinition("test", "x", []byte(`{"command":"/bin/true"}`))
	if err != nil {
		t.Fatal(err)
	}
	const (
		local  = "work/project/.claude/settings.local.json"
		claude = "home/.claude.json"
	)
	for _, tc := range []struct {
		what, file, text string
		line             int // 0: the whole file
		msg              string
		call             func(opts Options) error
	}{
		{"Approve, enabledMcpjsonServers not a list", local, `{"enabledMcpjsonServers": 1}`, 1, "enabledMcpjsonServers must be an array",
			func(o Options) error { _, err := Approve(o, "pending"); return err }},
		{"Reject, invalid JSON", local, `{"enabledMcpjsonServers": [`, 1, "not JSON at line 1",
			func(o Options) error { _, err := Reject(o, "pending"); return err }},
		{"AllowRules, permissions not an object", local, `{"permissions": 1}`, 1, "permissions must be an object",
			func(o Options) error { _, err := AllowRules(o, "mcp__a"); return err }},
		{"AllowRules, permissions.allow not a list", local, `{"permissions": {"allow": "mcp__a"}}`, 1, "permissions.allow must be an array",
			func(o Options) error { _, err := AllowRules(o, "mcp__a"); return err }},
		{"AllowRules, top level not an object", local, `[]`, 1, "the top level must be a JSON object",
			func(o Options) error { _, err := AllowRules(o, "mcp__a"); return err }},
		{"AddServer user, mcpServers not an object", claude, `{"mcpServers": []}`, 1, "mcpServers must be an object",
			func(o Options) error { _, err := AddServer(o, ScopeUser, "x", def, AddNew); return err }},
		{"AddServer local, projects not an object", claude, `{"projects": 1}`, 1, "projects must be an object",
			func(o Options) error { _, err := AddServer(o, ScopeLocal, "x", def, AddNew); return err }},
		{"SetServerDisabled, project entry not an object", claude, `{"projects": {"@ROOT@/work/project": 2}}`, 1, "must be an object",
			func(o Options) error { _, err := SetServerDisabled(o, "x", true); return err }},
		{"SetServerDisabled, disabledMcpServers not a list", claude, `{"projects": {"@ROOT@/work/project": {"disabledMcpServers": {}}}}`, 1, "disabledMcpServers must be an array",
			func(o Options) error { _, err := SetServerDisabled(o, "x", true); return err }},
		{"FindServer, invalid JSON", claude, "{\n  \"mcpServers\": {,}\n}", 2, "not JSON at line 2",
			func(o Options) error { _, err := FindServer(o, "x"); return err }},
		{"RemoveServer, empty file", claude, "", 0, "file is empty",
			func(o Options) error { _, err := RemoveServer(o, ScopeUser, "x"); return err }},
	} {
		t.Run(tc.what, func(t *testing.T) {
			f := newFixture(t, "trusted")
			text := strings.ReplaceAll(tc.text, "@ROOT@", f.root)
			f.write(t, tc.file, text)
			err := tc.call(f.opts)
			var fe *FileError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v (%T), want a *FileError in its chain", err, err)
			}
			if fe.File != f.path(tc.file) || fe.Line != tc.line || !strings.Contains(fe.Message, tc.msg) {
				t.Errorf("%+v, want file %s, line %d, message with %q", fe, f.path(tc.file), tc.line, tc.msg)
			}
			if data, _ := os.ReadFile(f.path(tc.file)); string(data) != text {
				t.Errorf("the file was changed:\n%s", data)
			}
		})
	}
}

// TestNotJSONNamesPositionOnly: a configuration file that is not JSON is
// reported by file and position, "not JSON at line L, column C", with
// encoding/json's reason but never a byte of the file (the quoted
// character of "invalid character 'x'" included): the file may hold
// secrets. Every way a file is read: Resolve, each write, FindServer, a
// definition given as JSON.
func TestNotJSONNamesPositionOnly(t *testing.T) {
	const secret = "sk-live-Zq9xV2"
	for _, tc := range []struct {
		what, file, text string
		line, col        int
		reason           string
		call             func(o Options) error
	}{
		{"Resolve .mcp.json", "work/project/.mcp.json", "{\"mcpServers\": {\"s\": {\"command\": \"x\",\n  \"env\": {\"API_KEY\": " + secret + "}}}}", 2, 22,
			"invalid character looking for beginning of value",
			func(o Options) error {
				cfg, err := Resolve(o)
				if err != nil {
					return err
				}
				if len(cfg.Errors) == 0 {
					return nil
				}
				return &cfg.Errors[0]
			}},
		{"AddServer user", "home/.claude.json", `{"mcpServers": {}, "token": '` + secret + `'}`, 1, 29,
			"invalid character looking for beginning of value",
			func(o Options) error {
				_, err := AddServer(o, ScopeUser, "x", json.RawMessage(`{"type":"stdio","command":"true","args":[],"env":{}}`), AddNew)
				return err
			}},
		{"Approve settings", "work/project/.claude/settings.local.json", `{"env": {"TOKEN": "` + secret + `"}, "x": ` + "\\" + secret + `}`, 1, 43,
			"invalid character looking for beginning of value",
			func(o Options) error { _, err := Approve(o, "pending"); return err }},
		{"FindServer", "home/.claude.json", `{"a": "` + secret + `" ` + secret + `}`, 1, 24,
			"invalid character after object key:value pair",
			func(o Options) error { _, err := FindServer(o, "x"); return err }},
		{"string escape", "home/.claude.json", `{"a": "\` + secret + `"}`, 1, 9,
			"invalid character in string escape code",
			func(o Options) error { _, err := FindServer(o, "x"); return err }},
		{"end of file", "home/.claude.json", `{"a": "` + secret, 1, 22,
			"unexpected end of file",
			func(o Options) error { _, err := FindServer(o, "x"); return err }},
	} {
		t.Run(tc.what, func(t *testing.T) {
			f := newFixture(t, "trusted")
			f.write(t, tc.file, tc.text)
			err := tc.call(f.opts)
			var fe *FileError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v (%T), want a *FileError", err, err)
			}
			want := fmt.Sprintf("%s:%d:%d: not JSON at line %d, column %d: %s", f.path(tc.file), tc.line, tc.col, tc.line, tc.col, tc.reason)
			if fe.Error() != want {
				t.Errorf("got  %s\nwant %s", fe.Error(), want)
			}
			for _, bad := range []string{secret, "'", "sk-", "Zq"} {
				if strings.Contains(err.Error(), bad) {
					t.Errorf("the error shows %q of the file: %s", bad, err)
				}
			}
		})
	}
	def := "{\"command\": \"x\", \"env\": {\"K\": " + secret + "}}"
	_, _, _, err := NormalizeDefinition("the JSON argument", "w", []byte(def))
	if want := `the JSON argument:1:31: server "w": not JSON at line 1, column 31: invalid character looking for beginning of value`; err == nil || err.Error() != want {
		t.Errorf("NormalizeDefinition: %v, want %s", err, want)
	}
}

// TestSyntaxMessageQuotesNothing: whatever character encoding/json
// quotes (a quote, a backslash, a control character, a multi-byte one),
// the message shows none.
func TestSyntaxMessageQuotesNothing(t *testing.T) {
	for _, text := range []string{`{"a": '}`, `{"a": \}`, "{\"a\": \x01}", `{"a": é}`, `{"a" 1}`, `{"a": 1}x`, `{"a": 1e}`, `{"a": "x` + "\x02" + `"}`, `{"a": "\q"}`} {
		_, fe := parseDoc("f", []byte(text))
		if fe == nil {
			t.Errorf("%q: parsed", text)
			continue
		}
		if !strings.HasPrefix(fe.Message, "not JSON at line 1, column ") || strings.ContainsAny(fe.Message, `'"\`) || strings.Contains(fe.Message, "é") {
			t.Errorf("%q: %s", text, fe.Message)
		}
	}
}
