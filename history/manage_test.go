package history_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ccproxy/ccproxy/history"
	"github.com/ccproxy/ccproxy/stream"
)

var updateExport = flag.Bool("update-export", false, "rewrite the export goldens in testdata/export")

// Rename appends the CLI's custom-title record; List shows it as the title
// (titleFrom custom), the last one winning; a file without a final "\n"
// gets one first; bad titles are refused, naming what is wrong.
func TestRename(t *testing.T) {
	root := t.TempDir()
	p := writeSession(t, root, "/p", "s1", line("user", "s1", 1, "/p", "first prompt"))
	st := open(t, root)
	ctx := context.Background()
	if got := listAll(t, st, history.ListOptions{}).Sessions[0]; got.Title != "first prompt" || got.TitleFrom != "prompt" {
		t.Fatalf("before: %q %q", got.Title, got.TitleFrom)
	}
	if title, err := st.Rename(ctx, "s1", "", "  Fix the <login> bug & more  "); err != nil || title != "Fix the <login> bug & more" {
		t.Fatalf("Rename = %q, %v", title, err)
	}
	b, _ := os.ReadFile(p)
	if want := `{"type":"custom-title","customTitle":"Fix the <login> bug & more","sessionId":"s1"}` + "\n"; !strings.HasSuffix(string(b), want) {
		t.Fatalf("file ends %q, want %q", b[len(b)-100:], want)
	}
	if got := listAll(t, st, history.ListOptions{}).Sessions[0]; got.Title != "Fix the <login> bug & more" || got.TitleFrom != "custom" {
		t.Fatalf("after: %q %q", got.Title, got.TitleFrom)
	}
	// A last line without "\n" (complete JSON) is ended first.
	appendTo(t, p, strings.TrimSuffix(line("assistant", "s1", 2, "/p", "hi"), "\n"))
	if _, err := st.Rename(ctx, "s1", "/p", "Second name"); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(p)
	if lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n"); len(lines) != 4 || !strings.Contains(lines[3], "Second name") {
		t.Fatalf("lines: %q", lines)
	}
	if got := listAll(t, st, history.ListOptions{}).Sessions[0]; got.Title != "Second name" || got.Messages != 2 {
		t.Fatalf("after the second: %+v", got)
	}
	for _, bad := range []string{"", "   ", "two\nlines", "tab\there", strings.Repeat("é", 201), "bad \xff utf8"} {
		if _, err := st.Rename(ctx, "s1", "", bad); !errors.Is(err, history.ErrBadTitle) {
			t.Errorf("Rename(%q) = %v, want ErrBadTitle", bad, err)
		}
	}
	if _, err := st.Rename(ctx, "s1", "", strings.Repeat("é", 200)); err != nil {
		t.Errorf("200 characters: %v", err)
	}
	if _, err := st.Rename(ctx, "nope", "", "x"); !errors.Is(err, history.ErrNotFound) {
		t.Errorf("unknown id: %v", err)
	}
	if _, err := st.Rename(ctx, "../s1", "", "x"); !errors.Is(err, history.ErrBadID) {
		t.Errorf("bad id: %v", err)
	}
}

// Rename never writes through a symbolic link.
func TestRenameNoSymlink(t *testing.T) {
	root := t.TempDir()
	target := filepath.Join(t.TempDir(), "elsewhere.jsonl")
	os.WriteFile(target, []byte(line("user", "s2", 1, "/p", "x")), 0o600)
	dir := filepath.Join(root, history.ProjectFolder("/p"))
	os.MkdirAll(dir, 0o700)
	if err := os.Symlink(target, filepath.Join(dir, "s2.jsonl")); err != nil {
		t.Fatal(err)
	}
	st := open(t, root)
	if _, err := st.Rename(context.Background(), "s2", "", "x"); err == nil {
		t.Fatal("renamed through a symbolic link")
	}
	if b, _ := os.ReadFile(target); strings.Contains(string(b), "custom-title") {
		t.Fatal("the link's target was written")
	}
}

// snapshot maps every path under dir to its bytes ("<dir>" for folders).
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			out[rel] = "<dir>"
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		fi, err := d.Info()
		if err != nil {
			t.Fatal(err)
		}
		// The mode and the modification time (the CLI lists sessions by
		// it) before the bytes.
		out[rel] = fmt.Sprintf("%v %d\n", fi.Mode(), fi.ModTime().UnixNano()) + string(b)
		return nil
	})
	return out
}

func sameTree(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %s differs or is missing (%d bytes, want %d)", what, k, len(got[k]), len(v))
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: %s is new", what, k)
		}
	}
}

// Delete moves the session file and its folder (subagents, tool results)
// into the trash, out of the listing; Restore puts them back byte for
// byte; a restore onto a file that is there again is refused and moves
// nothing; the trash lists what it holds, newest first.
func TestTrashRoundTrip(t *testing.T) {
	t.Run("rename", func(t *testing.T) { trashRoundTrip(t, false) })
	// The trash on another file system: every rename fails with EXDEV, the
	// files are copied (bytes, mode, modification time), then removed.
	t.Run("across file systems", func(t *testing.T) { trashRoundTrip(t, true) })
}

func trashRoundTrip(t *testing.T, across bool) {
	home := t.TempDir()
	root := filepath.Join(home, "projects")
	src := filepath.Join("..", "testdata", "history", "2.1.329", "projects")
	if err := os.CopyFS(root, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	const id = "a53a96ea-6d00-48d2-90ad-6cb56a9ff999"
	folder := filepath.Join(root, "-tmp-cchist-project")
	before := snapshot(t, folder)
	if _, ok := before[filepath.Join(id, "subagents")]; !ok {
		t.Fatalf("the captured session has no subagents folder: %v", before)
	}
	st := open(t, root)
	ctx := context.Background()
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	tr := history.OpenTrashAt(t, st, filepath.Join(home, "trash"), func() time.Time { return now })
	if across {
		history.AcrossFileSystems(tr)
	}

	e, err := tr.Delete(ctx, id, "")
	if err != nil {
		t.Fatal(err)
	}
	if e.ID != id || e.Project != "/tmp/cchist/project" || e.Folder != "-tmp-cchist-project" || e.Files < 3 || e.Title == "" || !e.Expires.Equal(now.Add(history.TrashKeep)) {
		t.Errorf("entry: %+v", e)
	}
	after := snapshot(t, folder)
	if len(after) != 1 { // the folder itself
		t.Errorf("left in the project folder: %v", keys(after))
	}
	if p := listAll(t, st, history.ListOptions{}); p.Total != 0 {
		t.Errorf("still listed: %+v", p.Sessions)
	}
	if l := tr.List(); len(l) != 1 || l[0].ID != id {
		t.Errorf("trash: %+v", l)
	}
	if _, err := tr.Delete(ctx, id, ""); !errors.Is(err, history.ErrNotFound) {
		t.Errorf("second delete: %v", err)
	}

	// The CLI wrote the session again: no restore over it.
	again := filepath.Join(folder, id+".jsonl")
	os.WriteFile(again, []byte("new\n"), 0o600)
	if _, err := tr.Restore(id); !errors.Is(err, history.ErrExists) || !strings.Contains(err.Error(), again) {
		t.Fatalf("restore over a file: %v", err)
	}
	if b, _ := os.ReadFile(again); string(b) != "new\n" {
		t.Fatal("the file in the way was changed")
	}
	os.Remove(again)

	r, err := tr.Restore(id)
	if err != nil {
		t.Fatal(err)
	}
	if r.ID != id {
		t.Errorf("restored %+v", r)
	}
	sameTree(t, "after restore", snapshot(t, folder), before)
	if l := tr.List(); len(l) != 0 {
		t.Errorf("trash after restore: %+v", l)
	}
	if ents, _ := os.ReadDir(filepath.Join(home, "trash")); len(ents) != 0 {
		t.Errorf("trash folders left: %v", ents)
	}
	if p := listAll(t, st, history.ListOptions{}); p.Total != 1 {
		t.Errorf("not listed again: %+v", p)
	}
	if _, err := tr.Restore(id); !errors.Is(err, history.ErrNotFound) {
		t.Errorf("second restore: %v", err)
	}
}

// The trash forgets what was deleted more than 30 days ago, at open and
// when listed.
func TestTrashPurge(t *testing.T) {
	home := t.TempDir()
	root := filepath.Join(home, "projects")
	writeSession(t, root, "/p", "old", line("user", "old", 1, "/p", "old one"))
	writeSession(t, root, "/p", "new", line("user", "new", 1, "/p", "new one"))
	st := open(t, root)
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	tr := history.OpenTrashAt(t, st, filepath.Join(home, "trash"), clock)
	if _, err := tr.Delete(context.Background(), "old", ""); err != nil {
		t.Fatal(err)
	}
	now = now.Add(20 * 24 * time.Hour)
	if _, err := tr.Delete(context.Background(), "new", ""); err != nil {
		t.Fatal(err)
	}
	if l := tr.List(); len(l) != 2 || l[0].ID != "new" {
		t.Fatalf("trash: %+v", l)
	}
	now = now.Add(11 * 24 * time.Hour) // old: 31 days
	if l := tr.List(); len(l) != 1 || l[0].ID != "new" {
		t.Fatalf("after 31 days: %+v", l)
	}
	now = now.Add(20 * 24 * time.Hour)
	tr = history.OpenTrashAt(t, st, filepath.Join(home, "trash"), clock)
	if ents, _ := os.ReadDir(filepath.Join(home, "trash")); len(ents) != 0 {
		t.Errorf("not purged at open: %v", ents)
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// Listing every project groups the sessions by project (the cwd the
// records name), most recently updated first.
func TestListAllProjects(t *testing.T) {
	root := t.TempDir()
	writeSession(t, root, "/work/a", "a1", line("user", "a1", 1, "/work/a", "one"))
	writeSession(t, root, "/work/a", "a2", line("user", "a2", 5, "/work/a", "two"))
	writeSession(t, root, "/work/b-c", "b1", line("user", "b1", 3, "/work/b-c", "three"))
	st := open(t, root)
	p := listAll(t, st, history.ListOptions{Limit: 1})
	if len(p.Projects) != 2 || p.Projects[0].Project != "/work/a" || p.Projects[0].Sessions != 2 ||
		p.Projects[1].Project != "/work/b-c" || p.Projects[1].Folder != "-work-b-c" || p.Projects[1].Sessions != 1 {
		t.Fatalf("projects: %+v", p.Projects)
	}
	if one := listAll(t, st, history.ListOptions{Project: "/work/a"}); one.Projects != nil || one.Total != 2 {
		t.Fatalf("one project: %+v", one)
	}
}

// Export: Markdown of the captured sessions matches the goldens (tool
// calls summarised, results cut, images as links to the blob store,
// subagents nested, no thinking or bookkeeping); JSONL is the file's
// lines, each through Scrub.
func TestExportCaptured(t *testing.T) {
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			st, err := history.Open(history.Options{Root: filepath.Join("..", "testdata", "history", v, "projects")})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			page := listAll(t, st, history.ListOptions{})
			id := page.Sessions[0].ID
			md, err := st.Export(ctx, history.ExportOptions{ID: id, Format: history.ExportMarkdown,
				Normalize: stream.Options{Attachments: stream.AttachSink, Sink: &memSink{}}})
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "export", v+".md")
			if *updateExport {
				os.MkdirAll(filepath.Dir(golden), 0o755)
				if err := os.WriteFile(golden, []byte(md.Text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if md.Text != string(want) {
				t.Errorf("markdown differs from %s (go test ./history -run TestExportCaptured -update-export); got:\n%s", golden, md.Text)
			}
			for _, must := range []string{"## User", "## Claude", "**Tool call:**", "![image image/png](/v1/blobs/", "> **Subagent**"} {
				if !strings.Contains(md.Text, must) {
					t.Errorf("markdown lacks %q", must)
				}
			}
			if !strings.HasSuffix(md.Filename, ".md") || md.Truncated {
				t.Errorf("filename %q truncated %v", md.Filename, md.Truncated)
			}

			raw, _ := os.ReadFile(filepath.Join("..", "testdata", "history", v, "projects", page.Sessions[0].Folder, id+".jsonl"))
			js, err := st.Export(ctx, history.ExportOptions{ID: id, Format: history.ExportJSONL})
			if err != nil || js.Text != string(raw) {
				t.Fatalf("jsonl export differs from the file (%d bytes, want %d): %v", len(js.Text), len(raw), err)
			}
			masked, err := st.Export(ctx, history.ExportOptions{ID: id, Format: history.ExportJSONL, MaxBytes: 20000,
				Scrub: func(b []byte) []byte { return bytes.ReplaceAll(b, []byte(id), []byte("***")) }})
			if err != nil || strings.Contains(masked.Text, id) || !masked.Truncated || len(masked.Text) > 20000 || !strings.HasSuffix(masked.Text, "\n") {
				t.Fatalf("masked, capped jsonl: %d bytes, truncated %v, err %v", len(masked.Text), masked.Truncated, err)
			}
		})
	}
}

// Deletes, restores, lists and renames of one session at once: every
// outcome is a success or a clear refusal (not found, already there), and
// at the end the session is in exactly one place, whole.
func TestTrashConcurrent(t *testing.T) {
	home := t.TempDir()
	root := filepath.Join(home, "projects")
	p := writeSession(t, root, "/p", "s1", line("user", "s1", 1, "/p", "hello"), line("assistant", "s1", 2, "/p", "hi"))
	os.MkdirAll(filepath.Join(filepath.Dir(p), "s1", "subagents"), 0o700)
	os.WriteFile(filepath.Join(filepath.Dir(p), "s1", "subagents", "agent-a.jsonl"), []byte("{}\n"), 0o600)
	st := open(t, root)
	tr := history.OpenTrashAt(t, st, filepath.Join(home, "trash"), time.Now)
	ctx := context.Background()
	done := make(chan error)
	const workers, rounds = 4, 20
	for w := range workers {
		go func() {
			var bad error
			for range rounds {
				var err error
				switch w {
				case 0:
					_, err = tr.Delete(ctx, "s1", "")
				case 1:
					_, err = tr.Restore("s1")
				case 2:
					tr.List()
					_, err = st.List(ctx, history.ListOptions{})
				case 3:
					_, err = st.Rename(ctx, "s1", "", "name")
				}
				if err != nil && !errors.Is(err, history.ErrNotFound) && !errors.Is(err, history.ErrExists) && bad == nil {
					bad = err
				}
			}
			done <- bad
		}()
	}
	for range workers {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
	inTrash := len(tr.List())
	_, statErr := os.Stat(p)
	if inTrash+btoi(statErr == nil) != 1 {
		t.Fatalf("in the trash %d times, in place: %v", inTrash, statErr == nil)
	}
	if inTrash == 1 {
		if _, err := tr.Restore("s1"); err != nil {
			t.Fatal(err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(filepath.Dir(p), "s1", "subagents", "agent-a.jsonl")); string(b) != "{}\n" {
		t.Fatalf("the subagent file is %q", b)
	}
	if b, _ := os.ReadFile(p); !strings.HasPrefix(string(b), line("user", "s1", 1, "/p", "hello")) {
		t.Fatalf("the session file starts %.80q", b)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
