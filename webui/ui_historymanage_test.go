package webui_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/ccproxy/ccproxy/history"
	"github.com/ccproxy/ccproxy/internal/testkit"
)

// TestWebUIHistoryManage: in the History panel, the project picker lists
// this project, all projects (each item saying its project) or one other
// project; Rename renames inline (Enter saves: the CLI's custom-title record
// is in the file); Export gives Markdown as a download; Delete deletes (the files
// leave the projects folder) and the toast's Undo restores them byte for
// byte; at 1280 and 400 px.
func TestWebUIHistoryManage(t *testing.T) {
	t.Parallel()
	bin := testkit.CCProxyBinary(t)
	project := t.TempDir()
	home, ids := historyHome(t, project)
	other := "/work/other-project"
	otherDir := filepath.Join(home, ".claude", "projects", history.ProjectFolder(other))
	os.MkdirAll(otherDir, 0o700)
	os.WriteFile(filepath.Join(otherDir, "0the0000-0000-4000-8000-000000000009.jsonl"), []byte(`{"type":"user","uuid":"u1","sessionId":"0the0000-0000-4000-8000-000000000009","cwd":"/work/other-project","timestamp":"2020-01-01T00:00:00Z","message":{"role":"user","content":"the other project's session"}}`+"\n"), 0o600)
	srv := testkit.StartServeEnv(t, bin, []string{"HOME=" + home}, "--demo", "--demo-speed", "0", "--project", project)
	id := ids["2.1.329"]
	folder := filepath.Join(home, ".claude", "projects", history.ProjectFolder(project))
	file := filepath.Join(folder, id+".jsonl")
	item := fmt.Sprintf(`document.querySelector('#history-list li[data-history=%q]')`, id)
	for _, width := range []int64{1280, 400} {
		b := historyPanel(t, srv, width)

		// The project picker.
		b.until("the picker", `!document.querySelector("#history-project").hidden && document.querySelector("#history-project").options.length === 4`)
		pick := func(v string) {
			eval[any](b, fmt.Sprintf(`(s => { s.value = %q; s.dispatchEvent(new Event("change")); return null })(document.querySelector("#history-project"))`, v))
		}
		pick("*")
		b.until("all projects", `document.querySelectorAll("#history-list li").length === 4`)
		if !eval[bool](b, `[...document.querySelectorAll("#history-list li .meta")].some(m => m.textContent.endsWith("· /work/other-project"))`) {
			t.Errorf("%d px: with all projects, no item says its project", width)
		}
		pick(other)
		b.until("the other project", `document.querySelectorAll("#history-list li").length === 1 && document.querySelector("#history-list li .title").textContent === "the other project's session"`)
		pick("")
		b.until("this project again", `document.querySelectorAll("#history-list li").length === 3`)

		// Rename inline.
		title := fmt.Sprintf("Renamed at %d px", width)
		b.do("Rename", chromedp.Click(fmt.Sprintf(`#history-list li[data-history=%q] button.rename`, id)))
		b.until("the title input", item+`.querySelector("input.rename-input") === document.activeElement`)
		eval[any](b, fmt.Sprintf(`(i => { i.value = %q; i.dispatchEvent(new KeyboardEvent("keydown", {key: "Enter", bubbles: true})); return null })(%s.querySelector("input.rename-input"))`, title, item))
		b.until("the new title", item+fmt.Sprintf(`.querySelector(".title")?.textContent === %q`, title))
		if raw, _ := os.ReadFile(file); !strings.Contains(string(raw), `{"type":"custom-title","customTitle":"`+title+`","sessionId":"`+id+`"}`) {
			t.Errorf("%d px: the file has no custom-title record for %q", width, title)
		}

		// Export Markdown: the download's name and text.
		eval[any](b, `(() => { window.__downloads = []; const make = URL.createObjectURL;
			URL.createObjectURL = (blob) => { const u = make(blob); blob.text().then(t => window.__downloads.push({u, t})); return u; };
			const click = HTMLAnchorElement.prototype.click;
			HTMLAnchorElement.prototype.click = function () { if (this.download) { window.__names = (window.__names || []).concat(this.download); return; } return click.call(this); };
			return null })()`)
		b.do("Export", chromedp.Click(fmt.Sprintf(`#history-list li[data-history=%q] button.export`, id)))
		b.do("Markdown", chromedp.Click(fmt.Sprintf(`#history-list li[data-history=%q] .export-menu button[data-format=markdown]`, id)))
		b.until("the download", `window.__downloads.length === 1 && (window.__names || []).length === 1`)
		if got := eval[string](b, `window.__names[0]`); got != fmt.Sprintf("renamed-at-%d-px.md", width) {
			t.Errorf("%d px: download named %q", width, got)
		}
		if got := eval[string](b, `window.__downloads[0].t`); !strings.HasPrefix(got, "# "+title+"\n") || !strings.Contains(got, "## Claude") {
			t.Errorf("%d px: the Markdown export: %.200q", width, got)
		}
		b.screenshot(fmt.Sprintf("history-manage-%d", width))

		// Delete, then Undo.
		before := treeOf(t, folder)
		b.do("Delete", chromedp.Click(fmt.Sprintf(`#history-list li[data-history=%q] button.delete`, id)))
		b.until("gone from the list, the toast", item+` === null && !document.querySelector("#toast").hidden && document.querySelector("#toast .toast-action")?.textContent === "Undo"`)
		if _, err := os.Stat(file); err == nil {
			t.Errorf("%d px: the session file is still in the project folder", width)
		}
		b.screenshot(fmt.Sprintf("history-deleted-%d", width))
		b.do("Undo", chromedp.Click("#toast .toast-action"))
		b.until("back in the list", item+` !== null`)
		after := treeOf(t, folder)
		for k, v := range before {
			if after[k] != v {
				t.Errorf("%d px: %s is not back as it was", width, k)
			}
		}
		if len(after) != len(before) {
			t.Errorf("%d px: %d paths after the undo, %d before", width, len(after), len(before))
		}
	}
}

// treeOf maps every path under dir to its bytes ("<dir>" for folders).
func treeOf(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if fi.IsDir() {
			out[rel] = "<dir>"
			return nil
		}
		b, err := os.ReadFile(p)
		out[rel] = string(b)
		return err
	})
	return out
}
