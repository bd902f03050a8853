package proxy

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/proxy/mcphub"
)

// TestMCPWritesRefuseProjectLinkOutside: mcp/approve, mcp/reject, mcp/add,
// mcp/update and mcp/remove do not write a project file through a link
// (the file or its folder) resolving outside the project: bad_request
// naming the link and its target, the file outside unchanged and nothing
// created beside it.
func TestMCPWritesRefuseProjectLinkOutside(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need a privilege on Windows")
	}
	const victim = `{"mcpServers":{"proj":{"command":"true"}},"keep":1}`
	def := map[string]any{"command": "true"}
	for _, c := range []struct {
		name, file, linkAt, typ string
		data                    map[string]any
	}{
		{"approve/file", ".claude/settings.local.json", ".claude/settings.local.json", protocol.TypeMCPApprove, map[string]any{"name": "proj"}},
		{"approve/folder", ".claude/settings.local.json", ".claude", protocol.TypeMCPApprove, map[string]any{"name": "proj"}},
		{"reject/folder", ".claude/settings.local.json", ".claude", protocol.TypeMCPReject, map[string]any{"name": "proj"}},
		{"add/file", ".mcp.json", ".mcp.json", protocol.TypeMCPAdd, map[string]any{"name": "w", "scope": "project", "definition": def}},
		{"update/file", ".mcp.json", ".mcp.json", protocol.TypeMCPUpdate, map[string]any{"name": "proj", "scope": "project", "definition": def}},
		{"remove/file", ".mcp.json", ".mcp.json", protocol.TypeMCPRemove, map[string]any{"name": "proj", "scope": "project"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newMCPEnv(t)
			e.WriteMCPJSON(t, map[string]any{"proj": map[string]any{"command": "true"}})
			outside := filepath.Join(filepath.Dir(e.Project), "outside")
			if err := os.MkdirAll(outside, 0o755); err != nil {
				t.Fatal(err)
			}
			victimFile := filepath.Join(outside, filepath.Base(c.file))
			if err := os.WriteFile(victimFile, []byte(victim), 0o644); err != nil {
				t.Fatal(err)
			}
			link, target := filepath.Join(e.Project, filepath.FromSlash(c.linkAt)), victimFile
			if c.linkAt != c.file {
				target = outside
			}
			os.RemoveAll(link)
			if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, link); err != nil {
				t.Fatal(err)
			}
			src, err := mcphub.NewConfigSource(e.Opts, e.FilesDir, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { src.Close() })
			ts := startServer(t, Options{Project: e.Project, MCPOptions: MCPOptions{MCP: src}})
			cl := ts.dial(t)
			perr := cl.doErr(c.typ, c.data)
			realLink := link
			if r, err := filepath.EvalSymlinks(e.Project); err == nil {
				realLink = filepath.Join(r, filepath.FromSlash(c.linkAt))
			}
			realTarget, _ := filepath.EvalSymlinks(target)
			if perr.Code != protocol.CodeBadRequest || !strings.Contains(perr.Message, "not writing through "+realLink+": it is a link to "+realTarget+", outside the project directory") {
				t.Errorf("%s: %s %q, want bad_request naming the link and its target", c.typ, perr.Code, perr.Message)
			}
			if data, _ := os.ReadFile(victimFile); string(data) != victim {
				t.Errorf("the file outside was written: %s", data)
			}
			if ents, _ := os.ReadDir(outside); len(ents) != 1 {
				t.Errorf("files created outside: %v", ents)
			}
		})
	}
}
