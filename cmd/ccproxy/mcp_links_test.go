package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestMCPCommandsRefuseProjectLinkOutside: `ccproxy mcp approve|reject`
// and `mcp add|add-json|remove -s project` do not write a project file
// through a link (the file or its folder) resolving outside the project:
// exit 1, the link and its target named, the file outside unchanged. A
// link inside the project and a linked ~/.claude.json are written
// through.
func TestMCPCommandsRefuseProjectLinkOutside(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need a privilege on Windows")
	}
	const victim = `{"mcpServers":{"pending":{"command":"true"}},"keep":1}`
	for _, c := range []struct {
		name, file, linkAt string // linkAt: the link, relative to the project
		args               []string
	}{
		{"approve/file", ".claude/settings.local.json", ".claude/settings.local.json", []string{"approve", "pending"}},
		{"approve/folder", ".claude/settings.local.json", ".claude", []string{"approve", "pending"}},
		{"reject/file", ".claude/settings.local.json", ".claude/settings.local.json", []string{"reject", "pending"}},
		{"add/file", ".mcp.json", ".mcp.json", []string{"add", "-s", "project", "w", "--", "node"}},
		{"add-json/file", ".mcp.json", ".mcp.json", []string{"add-json", "-s", "project", "w", `{"command":"node"}`}},
		{"remove/file", ".mcp.json", ".mcp.json", []string{"remove", "-s", "project", "pending"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := setup(t, "trusted")
			proj := filepath.Join(root, "work", "project")
			outside := filepath.Join(root, "outside")
			if err := os.MkdirAll(outside, 0o755); err != nil {
				t.Fatal(err)
			}
			victimFile := filepath.Join(outside, filepath.Base(c.file))
			if err := os.WriteFile(victimFile, []byte(victim), 0o644); err != nil {
				t.Fatal(err)
			}
			link := filepath.Join(proj, filepath.FromSlash(c.linkAt))
			target := victimFile
			if c.linkAt != c.file {
				target = outside
			}
			os.RemoveAll(link)
			if err := os.Symlink(target, link); err != nil {
				t.Fatal(err)
			}
			args := append([]string{c.args[0], "--project", proj}, c.args[1:]...)
			out, errs, code := runMCPCmd(t, args...)
			if code != 1 || !strings.Contains(errs, "not writing through "+link+": it is a link to "+target+", outside the project directory") {
				t.Errorf("%q: exit %d, stderr %q (stdout %q), want the link refused", c.args, code, errs, out)
			}
			if data, _ := os.ReadFile(victimFile); string(data) != victim {
				t.Errorf("the file outside was written: %s", data)
			}
			if ents, _ := os.ReadDir(outside); len(ents) != 1 {
				t.Errorf("files created outside: %v", ents)
			}
		})
	}
	t.Run("inside and user links followed", func(t *testing.T) {
		root := setup(t, "trusted")
		proj := filepath.Join(root, "work", "project")
		real := filepath.Join(proj, "conf", "mcp.json")
		if err := os.MkdirAll(filepath.Dir(real), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(real, []byte(victim), 0o644); err != nil {
			t.Fatal(err)
		}
		mcpJSON := filepath.Join(proj, ".mcp.json")
		os.Remove(mcpJSON)
		if err := os.Symlink("conf/mcp.json", mcpJSON); err != nil {
			t.Fatal(err)
		}
		if _, errs, code := runMCPCmd(t, "add", "--project", proj, "-s", "project", "w", "--", "node"); code != 0 {
			t.Fatalf("add through a link inside the project: %s", errs)
		}
		if m := readJSON(t, real); m["mcpServers"].(map[string]any)["w"] == nil {
			t.Errorf("not written through the link: %v", m)
		}
		dot := filepath.Join(root, "dotfiles", "claude.json")
		if err := os.MkdirAll(filepath.Dir(dot), 0o755); err != nil {
			t.Fatal(err)
		}
		cj := filepath.Join(root, "home", ".claude.json")
		if err := os.Rename(cj, dot); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(dot, cj); err != nil {
			t.Fatal(err)
		}
		if _, errs, code := runMCPCmd(t, "add", "--project", proj, "-s", "user", "u", "--", "node"); code != 0 {
			t.Fatalf("add to a linked ~/.claude.json: %s", errs)
		}
		if m := readJSON(t, dot); m["mcpServers"].(map[string]any)["u"] == nil {
			t.Errorf("~/.claude.json's target not written: %v", m)
		}
	})
}
