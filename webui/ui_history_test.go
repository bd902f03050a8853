package webui_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/ccproxy/ccproxy/history"
	"github.com/ccproxy/ccproxy/internal/testkit"
)

// historyHome returns a home directory whose .claude/projects holds the
// sessions captured from the real CLI (testdata/history), moved to
// project; the 2.1.329 one's first prompt is renamed so that the two
// titles differ.
func historyHome(t *testing.T, project string) (home string, ids map[string]string) {
	t.Helper()
	home, ids = testkit.HistoryHome(t, project, func(version string, b []byte) []byte {
		if version == "2.1.329" {
			b = bytes.ReplaceAll(b, []byte("[H-TEXT] Say hello"), []byte("[H-TEXT] Greet me"))
		}
		return b
	})
	dst := filepath.Join(home, ".claude", "projects", history.ProjectFolder(project))
	// A session whose prompt and answer are markup: they must stay text.
	ids["markup"] = "0badc0de-0000-4000-8000-000000000001"
	markup := fmt.Sprintf(`{"type":"user","message":{"role":"user","content":%[1]q},"uuid":"u-1","timestamp":"2026-11-01T10:00:00.000Z","cwd":%[3]q,"sessionId":%[4]q}
{"type":"assistant","message":{"id":"msg_markup","role":"assistant","content":[{"type":"text","text":%[2]q}]},"uuid":"u-2","timestamp":"2026-11-01T10:00:01.000Z","cwd":%[3]q,"sessionId":%[4]q}
`, markupPrompt, markupAnswer, project, ids["markup"])
	if err := os.WriteFile(filepath.Join(dst, ids["markup"]+".jsonl"), []byte(markup), 0o600); err != nil {
		t.Fatal(err)
	}
	return home, ids
}

const (
	markupPrompt = `MARKUP <img src=x onerror=alert(1)> <b>bold?</b>`
	markupAnswer = `<script>alert(2)</script><img src=y onerror=alert(3)> answer`
)

// TestWebUIHistory: the sidebar lists the project's past sessions (from
// history/list), filters them by title, opens one rendered like a live
// session (from history/read, images from /v1/blobs), and continues it as
// a new session resumed by claude; at 1280 and 400 px, the past session's
// rendering checked in light and in dark.
func TestWebUIHistory(t *testing.T) {
	t.Parallel()
	bin := testkit.CCProxyBinary(t)
	project := t.TempDir()
	home, ids := historyHome(t, project)
	srv := testkit.StartServeEnv(t, bin, []string{"HOME=" + home}, "--demo", "--demo-speed", "0", "--project", project)
	for _, width := range []int64{1280, 400} {
		b := newBrowser(t)
		b.emulate(width, 860, false)
		b.do("open a login link", chromedp.Navigate(loginLink(t, srv)))
		b.until("connected", `document.querySelector("#conn").dataset.state === "open"`)
		// Below 700 px the sidebar is collapsed behind the ☰ button, and
		// picking an item in it closes it again.
		sidebar := func(open bool) {
			if width < 700 && eval[bool](b, `document.body.dataset.sidebar === "open"`) != open {
				b.do("the ☰ button", chromedp.Click("#sidebar-toggle"))
			}
		}
		sidebar(true)
		b.until("the past sessions", `document.querySelectorAll("#history-list li").length === 3`)
		if w := eval[float64](b, `document.querySelector("#history-list li").getBoundingClientRect().right`); w <= 0 || w > float64(width) {
			t.Errorf("%d px: the history list's right edge is at %v px", width, w)
		}

		// Search by title.
		search := func(q string) string {
			return fmt.Sprintf(`(s => { s.value = %q; s.dispatchEvent(new Event("input")); return null })(document.querySelector("#history-search"))`, q)
		}
		eval[any](b, search("GREET"))
		visible := `[...document.querySelectorAll("#history-list li")].filter(li => !li.hidden)`
		b.until("one match", visible+`.length === 1`)
		if id := eval[string](b, visible+`[0].dataset.history`); id != ids["2.1.329"] {
			t.Errorf("%d px: search for GREET shows %s, want %s", width, id, ids["2.1.329"])
		}
		eval[any](b, search("say hello"))
		b.until("the other match", visible+`.length === 1 && `+visible+fmt.Sprintf(`[0].dataset.history === %q`, ids["2.1.330"]))
		eval[any](b, search(""))
		b.until("all again", visible+`.length === 3`)

		// Markup in a title and in a past conversation stays text.
		b.do("open the markup session", chromedp.Click(fmt.Sprintf(`#history-list li[data-history=%q]`, ids["markup"])))
		b.until("its answer", `document.querySelector("#log .msg.assistant .text") !== null`)
		if n := eval[int](b, `document.querySelectorAll("#history-list img, #history-list b, #history-bar img, #log img, #log script, #log b").length`); n != 0 {
			t.Errorf("%d px: markup of a past session became %d element(s)", width, n)
		}
		if got := eval[string](b, `document.querySelector("#log .msg.assistant .text").textContent.trim()`); got != markupAnswer {
			t.Errorf("%d px: answer shown as %q", width, got)
		}
		if got := eval[string](b, `document.querySelector("#history-bar .history-title").textContent`); got != markupPrompt {
			t.Errorf("%d px: title shown as %q", width, got)
		}

		// Open one: rendered as a live session is. The item must really be
		// on screen (not covered, not squeezed to nothing).
		sidebar(true)
		onScreen := fmt.Sprintf(`(li => { li.scrollIntoView({block: "nearest"}); const r = li.getBoundingClientRect();
			return r.height >= 20 && r.width >= 150 && li.contains(document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2)) })(document.querySelector('#history-list li[data-history=%q]'))`, ids["2.1.329"])
		if !eval[bool](b, onScreen) {
			t.Errorf("%d px: the past session's item is not on screen", width)
		}
		b.do("open a past session", chromedp.Click(fmt.Sprintf(`#history-list li[data-history=%q]`, ids["2.1.329"])))
		b.until("the conversation", `!document.querySelector("#history-bar").hidden && document.querySelector("#log .session-log[data-loaded]") !== null`)
		sidebar(true)
		if !eval[bool](b, onScreen) {
			t.Errorf("%d px: with a conversation shown, the past session's item is not on screen", width)
		}
		sidebar(false)
		// What the past session shows, checked in light and then in dark
		// (switched in place).
		rendered := func(view string) {
			t.Helper()
			if got := eval[string](b, `document.querySelector("#log .msg.user").textContent`); got != "[H-TEXT] Greet me, after some thought." {
				t.Errorf("%s: first user turn %q", view, got)
			}
			if got := eval[string](b, `document.querySelector("#log .msg.assistant .text").markdown`); got != "Hello! This is the **first** answer." {
				t.Errorf("%s: first answer %q", view, got)
			}
			if got := eval[string](b, `document.querySelector("#log .msg.assistant .text strong")?.textContent ?? ""`); got != "first" {
				t.Errorf("%s: the first answer's **first** shows as %q, want it bold (Markdown)", view, got)
			}
			if n := eval[int](b, `document.querySelectorAll("#log .tool").length`); n < 3 {
				t.Errorf("%s: %d tool cards", view, n)
			}
			// The CLI's feedback to claude when a background task ends is not
			// the user's words: a notice, not a user bubble.
			if got := eval[string](b, `[...document.querySelectorAll("#log .msg.user")].map(e => e.textContent).filter(t => t.includes("task-notification")).join("|")`); got != "" {
				t.Errorf("%s: a task notification shown as the user's words: %.200q", view, got)
			}
			if !eval[bool](b, `[...document.querySelectorAll("#log .notice")].some(n => n.textContent === 'Background task: Agent "Echo via MCP" finished')`) {
				t.Errorf("%s: no notice of the finished background task", view)
			}
			// The same renderer as live sessions: built-in tools' cards (from
			// the session file's toolUseResult), the subagent inside its Task
			// card, the saved large output as a download.
			if del, add := eval[string](b, `[...document.querySelectorAll('#log .tool[data-tool="Edit"] .diff .row.del .code')].map(e => e.textContent).join("|")`),
				eval[string](b, `[...document.querySelectorAll('#log .tool[data-tool="Edit"] .diff .row.add .code')].map(e => e.textContent).join("|")`); del != "beta" || add != "BETA (edited)" {
				t.Errorf("%s: the past Edit's diff: -%q +%q", view, del, add)
			}
			if got := eval[string](b, `[...document.querySelectorAll('#log .tool[data-tool="Bash"] .bash-command')].map(e => e.textContent).join("|")`); !strings.Contains(got, "cat notes.txt") {
				t.Errorf("%s: the past Bash commands %q", view, got)
			}
			if got := eval[string](b, `[...document.querySelectorAll('#log .tool[data-tool="Task"] .subagent .tool .tool-name')].map(e => e.textContent).join("|")`); got != "everything · echo|Bash" {
				t.Errorf("%s: the past Task card holds the tool cards %q, want the subagent's echo and Bash", view, got)
			}
			// The CLI's words for claude about the agent it started in the
			// background ("internal metadata — never quote…", its internal id)
			// are not shown, as in a live session: the card says it plainly.
			if got := eval[string](b, `document.querySelector('#log .tool[data-tool="Task"] > .body > .result').textContent`); got != "Started in the background." {
				t.Errorf("%s: the past Task card's result says %q", view, got)
			}
			if log := eval[string](b, `document.querySelector("#log").innerText`); strings.Contains(log, "never quote") || strings.Contains(log, "do not mention to user") {
				t.Errorf("%s: the past session shows the CLI's internal notice", view)
			}
			b.until("the saved output of the past session as a download", `document.querySelector("#log .tool .saved a[download][href$='/bjftokvr0.txt']") !== null`)
			b.until("a tool's image from /v1/blobs", `[...document.querySelectorAll("#log .tool img")].some(i => i.getAttribute("src").startsWith("/v1/blobs/") && i.complete && i.naturalWidth > 0)`)
			if !eval[bool](b, `document.querySelector("#send").disabled`) {
				t.Errorf("%s: the composer is enabled on a past session", view)
			}
			if ph := eval[string](b, `document.querySelector("#composer textarea").placeholder`); !strings.Contains(ph, "Continue") {
				t.Errorf("%s: on a past session the message box says %q, not how to go on with it", view, ph)
			}
		}
		rendered(fmt.Sprintf("%d-light", width))
		b.view(uiView{fmt.Sprintf("%d-dark", width), width, 860, true})
		rendered(fmt.Sprintf("%d-dark", width))
		b.screenshot(fmt.Sprintf("history-%d-dark", width))
		b.view(uiView{fmt.Sprintf("%d-light", width), width, 860, false})
		b.screenshot(fmt.Sprintf("history-%d", width))

		// Continue: a new session, claude resumed with the past session's id.
		b.do("continue", chromedp.Click("#history-continue"))
		b.until("a live session", `!document.querySelector("#send").disabled && document.querySelector("#history-bar").hidden`)
		if n := eval[int](b, `document.querySelectorAll("#log .continued").length`); n != 1 {
			t.Errorf("%d px: the continued session does not show what came before", width)
		}
		b.send("Hi! What does this proxy do, and what am I looking at?")
		b.until("claude resumed the past session", fmt.Sprintf(`document.querySelector('#sessions li[aria-current="true"][data-claude-session=%q]') !== null`, ids["2.1.329"]))
		b.screenshot(fmt.Sprintf("history-continued-%d", width))
		b.noJSDialog()
	}
}

// historyPanel opens srv in a new browser at width (logged in with a fresh
// link), opens the sidebar below 700 px, and waits for the three past
// sessions of historyHome in the History panel.
func historyPanel(t *testing.T, srv *testkit.Served, width int64) *browser {
	t.Helper()
	b := newBrowser(t)
	b.do("viewport", chromedp.EmulateViewport(width, 860))
	b.do("open a login link", chromedp.Navigate(loginLink(t, srv)))
	b.until("connected", `document.querySelector("#conn").dataset.state === "open"`)
	if width < 700 {
		b.do("the ☰ button", chromedp.Click("#sidebar-toggle"))
	}
	b.until("the past sessions", `document.querySelectorAll("#history-list li").length === 3`)
	return b
}

// loginLink mints a new one-time login link (POST /v1/login/code).
func loginLink(t *testing.T, srv *testkit.Served) string {
	t.Helper()
	req, err := http.NewRequest("POST", srv.First.URL+"/v1/login/code", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+srv.First.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct{ URL string }
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || resp.StatusCode != 200 || r.URL == "" {
		t.Fatalf("POST /v1/login/code: %s %v", resp.Status, err)
	}
	return r.URL
}
