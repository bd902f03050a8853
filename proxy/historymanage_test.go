package proxy

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ccproxy/ccproxy/history"
	"github.com/ccproxy/ccproxy/protocol"
)

// treeOf maps every path under dir to its bytes ("<dir>" for folders).
func treeOf(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			out[rel] = "<dir>"
			return nil
		}
		b, err := os.ReadFile(p)
		out[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameFiles(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s: %s missing or different (%d bytes, want %d)", what, k, len(g), len(v))
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: %s is new", what, k)
		}
	}
}

// history.manage over the protocol, on captured sessions in a temporary
// home with a second project: history/list all groups by project;
// history/rename writes the record the listing then shows; bad titles are
// bad_request naming title; history/export gives Markdown and the file's
// lines; history/delete moves the files (and the session's folder) to the
// trash, history/trash lists it, history/restore puts them back byte for
// byte, and refuses (conflict) when a file is back in the way.
func TestHistoryManage(t *testing.T) {
	project := t.TempDir()
	home := historyHome(t, project)
	other := "/work/other-project"
	otherDir := filepath.Join(home, ".claude", "projects", history.ProjectFolder(other))
	os.MkdirAll(otherDir, 0o700)
	os.WriteFile(filepath.Join(otherDir, "o1.jsonl"), []byte(`{"type":"user","uuid":"u1","sessionId":"o1","cwd":"/work/other-project","timestamp":"2020-01-01T00:00:00Z","message":{"role":"user","content":"other one"}}`+"\n"), 0o600)
	ts := startServer(t, Options{Project: project, HistoryOptions: HistoryOptions{HistoryHome: home}})
	c := ts.dial(t)
	var hello protocol.Hello
	c.waitPush(0, protocol.TypeHello, &hello, nil)
	if !slices.Contains(hello.Capabilities, protocol.CapHistoryManage) {
		t.Fatalf("hello capabilities %v lack %q", hello.Capabilities, protocol.CapHistoryManage)
	}

	var all protocol.HistoryListResult
	mustUnmarshal(t, c.do(protocol.TypeHistoryList, map[string]any{"all": true}), &all)
	if err := all.Validate(); err != nil {
		t.Fatal(err)
	}
	if all.Total != 3 || len(all.Projects) != 2 || all.Projects[0].Project != project || all.Projects[0].Sessions != 2 ||
		all.Projects[1].Project != other || all.Projects[1].Sessions != 1 || all.Projects[1].Folder != history.ProjectFolder(other) {
		t.Fatalf("history/list all: projects %+v total %d", all.Projects, all.Total)
	}
	var one protocol.HistoryListResult
	mustUnmarshal(t, c.do(protocol.TypeHistoryList, map[string]any{}), &one)
	if one.Projects != nil || one.Total != 2 {
		t.Fatalf("history/list of one project: %+v", one)
	}
	id := one.Sessions[0].ID
	folder := filepath.Join(home, ".claude", "projects", one.Sessions[0].Folder)

	// Rename.
	var rn protocol.HistoryRenameResult
	mustUnmarshal(t, c.do(protocol.TypeHistoryRename, map[string]any{"id": id, "title": " Renamed session "}), &rn)
	if rn.Title != "Renamed session" || rn.Live {
		t.Errorf("history/rename: %+v", rn)
	}
	mustUnmarshal(t, c.do(protocol.TypeHistoryList, map[string]any{}), &one)
	if i := slices.IndexFunc(one.Sessions, func(s protocol.HistorySession) bool { return s.ID == id }); i < 0 || one.Sessions[i].Title != "Renamed session" || one.Sessions[i].TitleFrom != "custom" {
		t.Errorf("history/list after the rename: %+v", one.Sessions)
	}
	for _, bad := range []string{"two\nlines", "   ", strings.Repeat("x", 201)} {
		if e := c.doErr(protocol.TypeHistoryRename, map[string]any{"id": id, "title": bad}); e.Code != protocol.CodeBadRequest || !strings.Contains(e.Message, "title") {
			t.Errorf("history/rename %q: %+v", bad, e)
		}
	}
	if e := c.doErr(protocol.TypeHistoryRename, map[string]any{"id": "no-such-session", "title": "x"}); e.Code != protocol.CodeNotFound {
		t.Errorf("history/rename of no session: %+v", e)
	}

	// Export.
	var md, js protocol.HistoryExportResult
	mustUnmarshal(t, c.do(protocol.TypeHistoryExport, map[string]any{"id": id, "format": "markdown"}), &md)
	if err := md.Validate(); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(md.Text, "# Renamed session\n") || !strings.Contains(md.Text, "![image image/png](/v1/blobs/") || md.Filename != "renamed-session.md" {
		t.Errorf("markdown export %q: %.300s", md.Filename, md.Text)
	}
	mustUnmarshal(t, c.do(protocol.TypeHistoryExport, map[string]any{"id": id, "format": "jsonl"}), &js)
	raw, _ := os.ReadFile(filepath.Join(folder, id+".jsonl"))
	if js.Text != string(raw) || js.Filename != "renamed-session.jsonl" || js.Truncated {
		t.Errorf("jsonl export: %d bytes, want the file's %d; %q", len(js.Text), len(raw), js.Filename)
	}

	// Delete, trash, restore.
	before := treeOf(t, folder)
	var del protocol.HistoryDeleteResult
	mustUnmarshal(t, c.do(protocol.TypeHistoryDelete, map[string]any{"id": id}), &del)
	if err := del.Validate(); err != nil {
		t.Fatal(err)
	}
	if del.Trashed.ID != id || del.Trashed.Title != "Renamed session" || del.Trashed.Files < 3 || del.Trashed.Project != project {
		t.Errorf("history/delete: %+v", del.Trashed)
	}
	if _, err := os.Lstat(filepath.Join(folder, id)); err == nil {
		t.Error("the session's folder is still there")
	}
	mustUnmarshal(t, c.do(protocol.TypeHistoryList, map[string]any{}), &one)
	if one.Total != 1 {
		t.Errorf("history/list after the delete: %+v", one.Sessions)
	}
	var tr protocol.HistoryTrashResult
	mustUnmarshal(t, c.do(protocol.TypeHistoryTrash, map[string]any{}), &tr)
	if len(tr.Entries) != 1 || tr.Entries[0].ID != id {
		t.Errorf("history/trash: %+v", tr)
	}
	os.WriteFile(filepath.Join(folder, id+".jsonl"), []byte("{}\n"), 0o600)
	if e := c.doErr(protocol.TypeHistoryRestore, map[string]any{"id": id}); e.Code != protocol.CodeConflict {
		t.Errorf("history/restore over a file: %+v", e)
	}
	os.Remove(filepath.Join(folder, id+".jsonl"))
	var rs protocol.HistoryRestoreResult
	mustUnmarshal(t, c.do(protocol.TypeHistoryRestore, map[string]any{"id": id}), &rs)
	if rs.Restored.ID != id {
		t.Errorf("history/restore: %+v", rs)
	}
	sameFiles(t, "after the restore", treeOf(t, folder), before)
	if e := c.doErr(protocol.TypeHistoryRestore, map[string]any{"id": id}); e.Code != protocol.CodeNotFound {
		t.Errorf("second history/restore: %+v", e)
	}
	mustUnmarshal(t, c.do(protocol.TypeHistoryTrash, map[string]any{}), &tr)
	if len(tr.Entries) != 0 {
		t.Errorf("history/trash after the restore: %+v", tr)
	}
}

// An export masks what history/read masks: the JSONL export's lines hold
// no configured secret; the Markdown's tool results show it masked.
func TestHistoryExportSecretMasked(t *testing.T) {
	const secret = "hello history" // printed by a tool in the captured session
	ts := startHistoryWithSecret(t, secret)
	c := ts.dial(t)
	var l protocol.HistoryListResult
	mustUnmarshal(t, c.do(protocol.TypeHistoryList, map[string]any{}), &l)
	var md, js protocol.HistoryExportResult
	mustUnmarshal(t, c.do(protocol.TypeHistoryExport, map[string]any{"id": l.Sessions[0].ID, "format": "jsonl"}), &js)
	if strings.Contains(js.Text, secret) || !strings.Contains(js.Text, "Echo: ***") {
		t.Errorf("the jsonl export holds the secret, or not its masked echo")
	}
	mustUnmarshal(t, c.do(protocol.TypeHistoryExport, map[string]any{"id": l.Sessions[0].ID, "format": "markdown"}), &md)
	// (Text the model wrote is not masked, as in history/read: only the
	// result block is checked.)
	if !strings.Contains(md.Text, "```\nEcho: ***\n```") || strings.Contains(md.Text, "```\nEcho: "+secret) {
		t.Errorf("the markdown export's tool result is not masked: %s", md.Text)
	}
}
