package testkit

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccproxy/ccproxy/history"
)

// CapturedHistoryProject is the cwd of the sessions captured from the real
// CLI in the module's testdata/history/<version>.
const CapturedHistoryProject = "/tmp/cchist/project"

// HistoryHome returns a new home directory whose .claude/projects holds the
// sessions captured from the real CLI (2.1.329 and 2.1.330), moved to
// project: their cwd rewritten, in project's folder. edit, when not nil,
// may change each .json and .jsonl file of a version further. ids maps
// each version to its session's id.
func HistoryHome(t testing.TB, project string, edit func(version string, b []byte) []byte) (home string, ids map[string]string) {
	t.Helper()
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	home, ids = t.TempDir(), map[string]string{}
	dst := filepath.Join(home, ".claude", "projects", history.ProjectFolder(project))
	for _, v := range []string{"2.1.329", "2.1.330"} {
		src := filepath.Join(root, "testdata", "history", v, "projects", history.ProjectFolder(CapturedHistoryProject))
		err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(src, p)
			if d.IsDir() {
				return os.MkdirAll(filepath.Join(dst, rel), 0o700)
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if strings.HasSuffix(p, ".json") || strings.HasSuffix(p, ".jsonl") {
				b = bytes.ReplaceAll(b, []byte(CapturedHistoryProject), []byte(project))
				if edit != nil {
					b = edit(v, b)
				}
			}
			if filepath.Dir(rel) == "." && strings.HasSuffix(rel, ".jsonl") {
				ids[v] = strings.TrimSuffix(rel, ".jsonl")
			}
			return os.WriteFile(filepath.Join(dst, rel), b, 0o600)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return home, ids
}
