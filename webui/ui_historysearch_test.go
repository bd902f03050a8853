package webui_test

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/ccproxy/ccproxy/internal/testkit"
)

// TestWebUIHistorySearch: the History panel's search box also searches
// the conversations (history/search): a word no title has lists the two
// captured sessions under "In conversations", the word marked in each
// snippet; picking one opens it; markup in a snippet stays text; at 1280
// and 400 px.
func TestWebUIHistorySearch(t *testing.T) {
	t.Parallel()
	bin := testkit.CCProxyBinary(t)
	project := t.TempDir()
	home, ids := historyHome(t, project)
	srv := testkit.StartServeEnv(t, bin, []string{"HOME=" + home}, "--demo", "--demo-speed", "0", "--project", project,
		"--history-index", t.TempDir())
	for _, width := range []int64{1280, 400} {
		b := historyPanel(t, srv, width)
		search := func(q string) {
			eval[any](b, fmt.Sprintf(`(s => { s.value = %q; s.dispatchEvent(new Event("input")); return null })(document.querySelector("#history-search"))`, q))
		}
		// "edited" is in an Edit's input in both captured sessions, in no title.
		search("Edited")
		results := `[...document.querySelectorAll("#history-results-list li")]`
		b.until("two sessions found in their conversations", `!document.querySelector("#history-results").hidden && `+results+`.length === 2`)
		if n := eval[int](b, `[...document.querySelectorAll("#history-list li")].filter(li => !li.hidden).length`); n != 0 {
			t.Errorf("%d px: %d titles match \"edited\"", width, n)
		}
		if got := eval[string](b, results+`.map(li => [...li.querySelectorAll(".snippet mark")].map(m => m.textContent.toLowerCase()).join(",")).join("|")`); got != "edited|edited" {
			t.Errorf("%d px: marked words %q", width, got)
		}
		if got := eval[string](b, results+`[0].querySelector(".snippet").dataset.role`); got != "tool" {
			t.Errorf("%d px: the match is a %q's", width, got)
		}
		if r := eval[float64](b, results+`[0].getBoundingClientRect().right`); r <= 0 || r > float64(width) {
			t.Errorf("%d px: a result's right edge is at %v px", width, r)
		}
		b.screenshot(fmt.Sprintf("history-search-%d", width))

		// Markup in what was typed stays text in a snippet.
		search("MARKUP onerror")
		b.until("the markup session", results+`.length === 1 && `+results+fmt.Sprintf(`[0].dataset.history === %q`, ids["markup"]))
		if n := eval[int](b, `document.querySelectorAll("#history-results img, #history-results b, #history-results script").length`); n != 0 {
			t.Errorf("%d px: markup in a snippet became %d element(s)", width, n)
		}
		search("zzzznothing")
		b.until("nothing found", results+`.length === 0 && document.querySelector("#history-results-status").textContent.includes("zzzznothing")`)

		// Picking a result opens that session.
		search("edited")
		b.until("found again", results+`.length === 2`)
		id := eval[string](b, results+`[1].dataset.history`)
		b.do("open a result", chromedp.Click(`#history-results-list li:nth-child(2)`))
		b.until("the conversation", fmt.Sprintf(`!document.querySelector("#history-bar").hidden && document.querySelector("#history-bar").dataset.history === %q && document.querySelector("#log .session-log[data-loaded]") !== null`, id))
		search("")
		b.until("the results gone", `document.querySelector("#history-results").hidden`)
		b.noJSDialog()
	}
}
