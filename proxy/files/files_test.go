package files

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ccproxy/ccproxy/protocol"
)

// tree makes files (a name ending in / is a folder) under a new directory.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func list(t *testing.T, l *Lister, root, query string, limit int64) protocol.SessionFilesResult {
	t.Helper()
	d := &protocol.SessionFiles{Session: "s", Query: query}
	if limit > 0 {
		d.Limit = &limit
	}
	res, err := l.List(context.Background(), root, d)
	if err != nil {
		t.Fatalf("List(%q): %v", query, err)
	}
	return res.(protocol.SessionFilesResult)
}

func sorted(s []string) []string {
	slices.Sort(s)
	return s
}

func paths(r protocol.SessionFilesResult) []string {
	out := []string{}
	for _, f := range r.Files {
		out = append(out, f.Path)
	}
	return out
}

// .gitignore files, the directory's and a folder's, decide what is listed:
// negation, folder-only patterns, anchored ones and ** as git reads them;
// an ignored folder is not entered; hidden entries are skipped.
func TestListHonoursGitignore(t *testing.T) {
	root := tree(t, map[string]string{
		".gitignore":        "# build output\n*.log\n!keep.log\nbuild/\n/top.txt\ndocs/**/draft.md\n",
		"a.log":             "",
		"keep.log":          "",
		"top.txt":           "",
		"sub/top.txt":       "",
		"build/out.bin":     "",
		"notbuild":          "",
		"docs/x/y/draft.md": "",
		"docs/final.md":     "",
		"src/.gitignore":    "gen.go\n",
		"src/main.go":       "",
		"src/gen.go":        "",
		"other/gen.go":      "",
		".git/config":       "",
		".env":              "SECRET=1",
		".hidden/file.txt":  "",
		"node/.cache/x":     "",
	})
	got := sorted(paths(list(t, New(Options{}), root, "", 200)))
	want := []string{"docs/", "docs/final.md", "docs/x/", "docs/x/y/", "keep.log", "node/", "notbuild", "other/", "other/gen.go", "src/", "src/main.go", "sub/", "sub/top.txt"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("listed %q\nwant   %q", got, want)
	}
}

// A link is listed only when it resolves inside the directory, and is
// never followed into; a link that leads out is not listed.
func TestListStaysInside(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	outside := tree(t, map[string]string{"secret.txt": "", "deep/secret2.txt": ""})
	root := tree(t, map[string]string{"src/main.go": ""})
	for link, target := range map[string]string{
		"out-dir":  outside,
		"out-file": filepath.Join(outside, "secret.txt"),
		"out-rel":  "../" + filepath.Base(outside),
		"in-dir":   filepath.Join(root, "src"),
		"in-file":  "src/main.go",
		"src/up":   "..",
		"dangling": filepath.Join(root, "nope"),
	} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	got := sorted(paths(list(t, New(Options{}), root, "", 200)))
	want := []string{"in-dir/", "in-file", "src/", "src/main.go", "src/up/"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("listed %q\nwant   %q", got, want)
	}
	for _, p := range paths(list(t, New(Options{}), root, "secret", 200)) {
		t.Errorf("a file outside the directory was listed: %s", p)
	}
	// The session's directory may itself be reached through a link.
	alias := filepath.Join(t.TempDir(), "alias")
	if err := os.Symlink(root, alias); err != nil {
		t.Fatal(err)
	}
	if got := paths(list(t, New(Options{}), alias, "main", 0)); !reflect.DeepEqual(got, []string{"src/main.go"}) {
		t.Errorf("through a linked directory: %q", got)
	}
}

// Matches are ranked: a name starting with the query, then a path holding
// it, then a path holding its characters in order; shallower first; cut
// to limit.
func TestListRanksAndLimits(t *testing.T) {
	root := tree(t, map[string]string{
		"cmd/main.go": "", "main.go": "", "domain/x.txt": "", "m/a/i/n.txt": "", "readme.md": "", "Makefile": "",
	})
	got := paths(list(t, New(Options{}), root, "MAIN", 0))
	want := []string{"main.go", "cmd/main.go", "domain/", "domain/x.txt", "m/a/i/n.txt"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("query MAIN: %q\nwant       %q", got, want)
	}
	if got := paths(list(t, New(Options{}), root, "main", 2)); len(got) != 2 || got[0] != "main.go" {
		t.Errorf("limit 2: %q", got)
	}
	if got := paths(list(t, New(Options{}), root, "zzz", 0)); len(got) != 0 {
		t.Errorf("query zzz: %q", got)
	}
}

// A listing stops at its bounds, entries looked at or time, and says so.
func TestListBounded(t *testing.T) {
	files := map[string]string{}
	for i := range 50 {
		files[filepath.Join("d", strings.Repeat("x", i+1))] = ""
	}
	root := tree(t, files)
	r := list(t, New(Options{MaxEntries: 10}), root, "", 200)
	if !r.Truncated || len(r.Files) > 10 {
		t.Errorf("MaxEntries 10: truncated %v, %d files", r.Truncated, len(r.Files))
	}
	if r := list(t, New(Options{}), root, "", 200); r.Truncated || len(r.Files) != 51 {
		t.Errorf("unbounded: truncated %v, %d files", r.Truncated, len(r.Files))
	}
	// Time: a listing whose time is up before it starts lists nothing more.
	res, err := New(Options{Timeout: time.Nanosecond}).List(context.Background(), root, &protocol.SessionFiles{Session: "s"})
	if err != nil || !res.(protocol.SessionFilesResult).Truncated {
		t.Errorf("timeout: %v, %+v", err, res)
	}
}

// Listings beyond MaxWalks are refused, not queued; a directory that is
// gone is not_found.
func TestListRefusals(t *testing.T) {
	l := New(Options{MaxWalks: 1})
	l.slots <- struct{}{} // one listing running
	_, err := l.List(context.Background(), t.TempDir(), &protocol.SessionFiles{Session: "s"})
	if protocol.CodeOf(err) != protocol.CodeLimitExceeded {
		t.Errorf("beyond MaxWalks: %v", err)
	}
	<-l.slots
	_, err = l.List(context.Background(), filepath.Join(t.TempDir(), "gone"), &protocol.SessionFiles{Session: "s"})
	if protocol.CodeOf(err) != protocol.CodeNotFound || !strings.Contains(err.Error(), "gone") {
		t.Errorf("a directory that is gone: %v", err)
	}
}

func TestIgnoredPatterns(t *testing.T) {
	for _, tt := range []struct {
		pattern, path string
		dir, want     bool
	}{
		{"*.o", "a/b.o", false, true},
		{"/a.o", "x/a.o", false, false},
		{"a/*.o", "a/b.o", false, true},
		{"a/*.o", "a/c/b.o", false, false},
		{"**/x", "a/b/x", false, true},
		{"**/x", "x", false, true},
		{"a/**", "a/b/c", false, true},
		{"out/", "out", false, false},
		{"out/", "out", true, true},
		{`\#x`, "#x", false, true},
		{"f[0-9]", "f7", false, true},
	} {
		r, _ := parseRule(tt.pattern, "")
		if got := ignored([]rule{r}, tt.path, tt.dir); got != tt.want {
			t.Errorf("%q ignores %q (dir %v): %v, want %v", tt.pattern, tt.path, tt.dir, got, tt.want)
		}
	}
}
