package mcpconfig

import (
	"errors"
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
		{"Reject, invalid JSON", local, `{"enabledMcpjsonServers": [`, 1, "invalid JSON",
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
		{"FindServer, invalid JSON", claude, "{\n  \"mcpServers\": {,}\n}", 2, "invalid JSON",
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
