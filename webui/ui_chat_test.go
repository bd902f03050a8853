package webui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/ccproxy/ccproxy/internal/testkit"
	"github.com/ccproxy/ccproxy/internal/testkit/fakeapi"
	"github.com/ccproxy/ccproxy/internal/testkit/mcptest"
)

// chatMarkdown is the model's answer to [C-MD]: Markdown with a heading, a
// highlighted code block, and markup that must stay inert.
const chatMarkdown = "# Chat heading\n\nSome **bold** text and `code`.\n\n```go\nfunc main() { fmt.Println(\"hi\") }\n```\n\n" +
	"Inert: <img src=x onerror=\"document.title='pwned-img'\"> [click](javascript:document.title='pwned-link') " +
	"<details open ontoggle=\"document.title='pwned-details'\">x</details>\n\n" +
	"<script>document.title='pwned-script'</script>\n\n" +
	"![pic](x\" onerror=\"document.title='pwned-alt')\n"

// chatServe starts `ccproxy serve` with the real CLI against a fake API
// scripted with the conversation of the chat rendering tests: Markdown,
// Write/Edit/Bash (one output large enough to be saved to a file),
// TodoWrite, an MCP image and audio (testmcp), a Task whose subagent runs
// Bash, and a long answer. The tools are allowed in the project's
// .claude/settings.local.json, so nothing asks.
func chatServe(t *testing.T, env ...string) (*testkit.Served, chan struct{}) {
	t.Helper()
	bin := testkit.CCProxyBinary(t)
	claude := testkit.Claude(t)
	testmcp := mcptest.Command(t)
	home, project := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	mcpJSON, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"testmcp": map[string]any{"command": testmcp}}})
	settings, _ := json.Marshal(map[string]any{"permissions": map[string]any{"allow": []string{"Bash", "Edit", "Write", "TodoWrite", "TaskCreate", "TaskUpdate", "Task", "Read", "mcp__testmcp"}}})
	os.MkdirAll(filepath.Join(project, ".claude"), 0o755)
	for p, b := range map[string][]byte{".mcp.json": mcpJSON, ".claude/settings.local.json": settings} {
		if err := os.WriteFile(filepath.Join(project, p), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	notes := filepath.Join(project, "notes.txt")
	long := strings.Repeat("A long answer, to scroll.\n\n", 60) + "The end of the long answer."
	release := make(chan struct{}) // [C-SLOW]'s answer waits for it
	api := fakeapi.Start(t, fakeapi.First(
		fakeapi.OnText("[C-MD]", fakeapi.Say(chatMarkdown)),
		fakeapi.OnText("[C-FILES]",
			fakeapi.CallTool("Write", map[string]any{"file_path": notes, "content": "alpha\nbeta\ngamma\n"}),
			fakeapi.CallTool("Edit", map[string]any{"file_path": notes, "old_string": "beta", "new_string": "BETA (edited)"}),
			fakeapi.CallTool("Bash", map[string]any{"command": "cat notes.txt; echo oops >&2", "description": "Show the file"}),
			fakeapi.CallTool("TodoWrite", map[string]any{"todos": []map[string]any{
				{"content": "Write the file", "status": "completed", "activeForm": "Writing the file"},
				{"content": "Edit the file", "status": "in_progress", "activeForm": "Editing the file"},
				{"content": "Ship it", "status": "pending", "activeForm": "Shipping it"},
			}}),
			fakeapi.CallTool("Bash", map[string]any{"command": "seq 1 12000", "description": "A large output"}),
			fakeapi.Say("Files done."),
		),
		fakeapi.OnText("[C-MEDIA]", fakeapi.CallTools(
			fakeapi.ToolUse("mcp__testmcp__"+mcptest.ToolImage, nil),
			fakeapi.ToolUse("mcp__testmcp__"+mcptest.ToolAudio, nil),
		), fakeapi.Say("Here are an image and a sound.")),
		// The subagent's own prompt: checked before the main turn's.
		fakeapi.OnText("[C-SUB]",
			fakeapi.CallTool("Bash", map[string]any{"command": "echo from-the-subagent", "description": "Subagent says hi"}),
			fakeapi.Say("Subagent done."),
		),
		fakeapi.OnText("[C-TASK]", fakeapi.CallTool("Task", map[string]any{
			"description":   "Run a command",
			"prompt":        "[C-SUB] Run one command.",
			"subagent_type": "general-purpose",
		})),
		fakeapi.OnText("[C-PLAN]",
			fakeapi.CallTool("TaskCreate", map[string]any{"subject": "Plan the work", "description": "First", "activeForm": "Planning"}),
			fakeapi.CallTool("TaskCreate", map[string]any{"subject": "Do the work", "description": "Second", "activeForm": "Doing"}),
			fakeapi.CallTool("TaskUpdate", map[string]any{"taskId": "1", "status": "completed"}),
			fakeapi.Say("Planned."),
		),
		fakeapi.OnText("[C-LONG]", fakeapi.Say(long)),
		fakeapi.OnText("[C-SLOW]", &fakeapi.Reply{Blocks: []fakeapi.Block{fakeapi.Text("Slow. " + long)}, Wait: release}),
		fakeapi.OnToolResults(fakeapi.Summarize),
	))
	srv := testkit.StartServeEnv(t, bin, append(api.Env(home), env...), "--project", project, "--claude", claude, "--trust-project-mcp", "--allow-mcp-tools")
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})
	return srv, release
}

// TestWebUIChatRendering drives a real conversation (real CLI, fake API)
// in the browser at 1280 and 400 px and checks how it is rendered:
// Markdown with a highlighted code block and inert markup, tool cards that
// keep their names, the Write/Edit diffs, Bash's command and output,
// TodoWrite's checklist, an MCP image and a playable sound, a large output
// as a downloadable file, a Task's subagent events nested in its card, and
// scrolling that follows the conversation only while the reader is at the
// bottom. The rendering is checked again in light and in dark, switched in
// place.
func TestWebUIChatRendering(t *testing.T) {
	t.Parallel()
	for _, width := range []int64{1280, 400} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			// TodoWrite is off by default in 2.1.329 (it answers "No such
			// tool available: TodoWrite. TodoWrite is disabled for this
			// session": the task tools replace it);
			// CLAUDE_CODE_ENABLE_TASKS=false brings it back.
			srv, release := chatServe(t, "CLAUDE_CODE_ENABLE_TASKS=false")
			b := newBrowser(t)
			b.emulate(width, 860, false)
			b.do("open", chromedp.Navigate(srv.First.LoginURL))
			b.until("connected", `document.querySelector("#conn").dataset.state === "open"`)
			if width < 700 { // the sidebar is folded behind ☰
				b.do("the ☰ button", chromedp.Click("#sidebar-toggle"))
			}
			b.do("create a session", chromedp.Click(`#new-session button[type="submit"]`))
			b.until("a session", `!document.querySelector("#send").disabled`)
			results := func(n int) string { return fmt.Sprintf(`document.querySelectorAll(".result-line").length >= %d`, n) }

			// Markdown: a heading, a highlighted code block; its markup inert.
			b.send("[C-MD] Show me some Markdown.")
			b.until("the Markdown answer", `document.querySelector(".msg.assistant .markdown h1") !== null && document.querySelector(".markdown pre code.hljs") !== null`)
			b.until("turn 1", results(1))
			if got := eval[string](b, `document.querySelector(".markdown h1").textContent`); got != "Chat heading" {
				t.Errorf("heading %q", got)
			}
			if got := eval[string](b, `document.querySelector(".markdown strong").textContent`); got != "bold" {
				t.Errorf("bold %q", got)
			}
			if n := eval[int](b, `document.querySelectorAll(".markdown pre code.language-go span[class^=hljs-]").length`); n < 2 {
				t.Errorf("the Go code block has %d highlighted tokens", n)
			}
			if n := eval[int](b, `document.querySelectorAll(".markdown img, .markdown script, .markdown details, .markdown [onerror], .markdown [ontoggle], .markdown a[href^='javascript'], .markdown style").length`); n != 0 {
				t.Errorf("markup in the Markdown became %d live element(s)", n)
			}
			if txt := eval[string](b, `document.querySelector(".msg.assistant .markdown").textContent`); !strings.Contains(txt, `<img src=x onerror=`) || !strings.Contains(txt, "<script>") {
				t.Errorf("raw HTML of the Markdown is not shown as text: %q", txt)
			}

			// Files: Write and Edit as diffs, Bash as command and output,
			// TodoWrite as a checklist, a large output as a download.
			b.send("[C-FILES] Write a file, edit it, show it, plan, print a lot.")
			b.until("turn 2", results(2))
			card := func(tool string) string { return fmt.Sprintf(`document.querySelectorAll('.tool[data-tool=%q]')`, tool) }
			for tool, n := range map[string]int{"Write": 1, "Edit": 1, "Bash": 2, "TodoWrite": 1} {
				if got := eval[int](b, card(tool)+`.length`); got != n {
					t.Errorf("%d %s card(s), want %d", got, tool, n)
				}
			}
			if got := eval[string](b, card("Edit")+`[0].querySelector(".tool-name").textContent`); got != "Edit" {
				t.Errorf("the Edit card is named %q after its result", got)
			}
			rows := func(tool, kind string) []string {
				return eval[[]string](b, card(tool)+`[0].querySelectorAll(".diff .row.`+kind+` .code").values().map(e => e.textContent).toArray()`)
			}
			if got := rows("Write", "add"); strings.Join(got, "|") != "alpha|beta|gamma" {
				t.Errorf("Write diff adds %q", got)
			}
			if got := eval[string](b, card("Write")+`[0].querySelector(".diff .hunk").textContent`); got != "@@ -0,0 +1,3 @@" {
				t.Errorf("the created file's hunk header %q, want its 3 lines counted", got)
			}
			if del, add := rows("Edit", "del"), rows("Edit", "add"); strings.Join(del, "|") != "beta" || strings.Join(add, "|") != "BETA (edited)" {
				t.Errorf("Edit diff: -%q +%q", del, add)
			}
			if ctx := rows("Edit", "ctx"); strings.Join(ctx, "|") != "alpha|gamma" {
				t.Errorf("Edit diff context %q, want the CLI's structuredPatch (alpha, gamma)", ctx)
			}
			if got := eval[string](b, card("Edit")+`[0].querySelector(".diff .hunk").textContent`); got != "@@ -1,3 +1,3 @@" {
				t.Errorf("Edit hunk header %q", got)
			}
			if got := eval[string](b, card("Bash")+`[0].querySelector(".bash-command").textContent`); got != "cat notes.txt; echo oops >&2" {
				t.Errorf("Bash command %q", got)
			}
			if got := eval[string](b, card("Bash")+`[0].querySelector(".bash-output").textContent`); !strings.Contains(got, "alpha\nBETA (edited)\ngamma") || !strings.Contains(got, "oops") {
				t.Errorf("Bash output %q", got)
			}
			if got := eval[string](b, card("Bash")+`[0].querySelector(".tool-about").textContent`); got != "Show the file" {
				t.Errorf("Bash description %q", got)
			}
			if eval[bool](b, card("TodoWrite")+`[0].classList.contains("error")`) {
				t.Errorf("TodoWrite failed: %s", eval[string](b, card("TodoWrite")+`[0].querySelector(".result").textContent`))
			}
			todos := eval[[]string](b, card("TodoWrite")+`[0].querySelectorAll(".todos li").values().map(li => li.dataset.status + ":" + li.querySelector("input").checked + ":" + li.textContent).toArray()`)
			if want := []string{"completed:true:Write the file", "in_progress:false:Editing the file", "pending:false:Ship it"}; strings.Join(todos, "|") != strings.Join(want, "|") {
				t.Errorf("checklist %q, want %q", todos, want)
			}
			b.until("the large output as a download", card("Bash")+`[1].querySelector(".saved a[download][href^='/v1/tool-results/']") !== null`)
			href := eval[string](b, card("Bash")+`[1].querySelector(".saved a").getAttribute("href")`)
			eval[any](b, `fetch(`+jsString(href)+`).then(r => r.text()).then(t => window.__saved = t); null`)
			b.until("the saved output", `typeof window.__saved === "string"`)
			if got := eval[string](b, `window.__saved`); !strings.HasPrefix(got, "1\n2\n3\n") || !strings.HasSuffix(got, "12000\n") {
				t.Errorf("the saved output from %s: %d bytes starting %.20q", href, len(got), got)
			}

			// MCP: the image inline at a sensible size, the sound playable.
			b.send("[C-MEDIA] An image and a sound, please.")
			b.until("turn 3", results(3))
			b.until("the image", `[...document.querySelectorAll(".tool img")].some(i => i.complete && i.naturalWidth > 0)`)
			b.until("at the bottom after the image", `(l => l.scrollHeight - l.scrollTop - l.clientHeight < 4)(document.querySelector("#log"))`)
			// Content that grows after it was added (as a large image does
			// when it loads, with no event to render) keeps the view at the
			// bottom.
			eval[any](b, `(() => { const d = document.createElement("div"); d.className = "late-growth"; document.querySelector("#log .session-log").lastElementChild.append(d);
				requestAnimationFrame(() => { d.style.height = "600px"; }); return null })()`)
			b.until("at the bottom after late growth", `(l => document.querySelector(".late-growth").offsetHeight === 600 && l.scrollHeight - l.scrollTop - l.clientHeight < 4)(document.querySelector("#log"))`)
			eval[any](b, `document.querySelector(".late-growth").remove(); null`)
			if w := eval[float64](b, `document.querySelector(".tool img").getBoundingClientRect().width`); w <= 0 || w > 420 || w > float64(width) {
				t.Errorf("the image is %v px wide", w)
			}
			if got := eval[string](b, `document.querySelector(".tool img").closest(".tool").querySelector(".tool-name").textContent`); got != "testmcp · image" {
				t.Errorf("the image's card is named %q", got)
			}
			// The CLI saves MCP audio to the session's tool-results folder and
			// says so in the text: the sound comes from /v1/tool-results.
			b.until("a playable sound", `[...document.querySelectorAll(".tool audio")].some(a => a.getAttribute("src").startsWith("/v1/tool-results/") && a.readyState >= 1 && a.duration > 0)`)

			// Task: the subagent's events inside the Task card.
			b.send("[C-TASK] Delegate a command.")
			b.until("the subagent's Bash in the Task card", card("Task")+`.length === 1 && `+card("Task")+`[0].querySelector('.subagent .tool[data-tool="Bash"] .bash-output') !== null`)
			if got := eval[string](b, card("Task")+`[0].querySelector('.subagent .tool[data-tool="Bash"] .bash-output').textContent`); !strings.Contains(got, "from-the-subagent") {
				t.Errorf("the subagent's Bash output %q", got)
			}
			if n := eval[int](b, `[...document.querySelectorAll('#log .tool[data-tool="Bash"]')].filter(c => !c.closest(".subagent")).length`); n != 2 {
				t.Errorf("%d Bash cards outside the subagent box, want the 2 of turn 2", n)
			}
			b.until("the subagent's answer in the Task card", card("Task")+`[0].querySelector(".subagent .msg.assistant") !== null`)
			if got := eval[string](b, card("Task")+`[0].querySelector(".tool-about").textContent`); got != "general-purpose: Run a command" {
				t.Errorf("Task card about %q", got)
			}
			if got := eval[string](b, card("Task")+`[0].querySelector(".task-prompt").textContent`); got != "[C-SUB] Run one command." {
				t.Errorf("Task card prompt %q", got)
			}
			b.until("the task turns", results(4))
			// The CLI's words for claude about an agent it started in the
			// background ("internal metadata — never quote…") are not shown:
			// the card says it plainly (as for a past session, TestWebUIHistory).
			if got := eval[string](b, card("Task")+`[0].querySelector(":scope > .body > .result").textContent`); got != "Started in the background." || strings.Contains(eval[string](b, `document.querySelector("#log").innerText`), "never quote") {
				t.Errorf("the Task card's result says %q; want it plain, with no internal notice in the log", got)
			}

			// Follow-scroll: at the bottom, a new long answer keeps the view
			// at the bottom.
			atBottom := `(l => l.scrollHeight - l.scrollTop - l.clientHeight < 4)(document.querySelector("#log"))`
			b.until("at the bottom", atBottom)
			longs := func(prefix string) string {
				return `[...document.querySelectorAll(".msg.assistant .markdown")].filter(e => e.textContent.startsWith(` + jsString(prefix) + `) && e.textContent.includes("The end of the long answer.")).length`
			}
			b.send("[C-LONG] Say a lot.")
			b.until("the long answer", longs("A long answer")+` === 1`)
			b.until("still at the bottom", atBottom)
			if !eval[bool](b, `(l => l.scrollHeight > l.clientHeight * 2)(document.querySelector("#log"))`) {
				t.Fatalf("the conversation does not overflow: nothing to test")
			}
			// Scrolled up, the reader stays where they are while an answer
			// comes (the fake holds it until the reader has scrolled).
			b.send("[C-SLOW] Take your time.")
			b.until("the slow turn started", `[...document.querySelectorAll("#sessions li .state")].some(s => s.textContent === "running")`)
			eval[any](b, `(l => { l.scrollTop = 100; l.dispatchEvent(new Event("scroll")); return null })(document.querySelector("#log"))`)
			close(release)
			b.until("the slow answer", longs("Slow.")+` === 1`)
			if top := eval[float64](b, `document.querySelector("#log").scrollTop`); top < 90 || top > 110 {
				t.Errorf("scrolled up, the view moved to %v while an answer came", top)
			}
			// The rendering again, in light and then in dark (switched in
			// place): the same assertions in both.
			rendered := func(view string) {
				t.Helper()
				if got := eval[string](b, `document.querySelector(".markdown h1").textContent + "|" + document.querySelector(".markdown strong").textContent`); got != "Chat heading|bold" {
					t.Errorf("%s: heading and bold %q", view, got)
				}
				if n := eval[int](b, `document.querySelectorAll(".markdown pre code.language-go span[class^=hljs-]").length`); n < 2 {
					t.Errorf("%s: the Go code block has %d highlighted tokens", view, n)
				}
				if n := eval[int](b, `document.querySelectorAll(".markdown img, .markdown script, .markdown details, .markdown [onerror], .markdown [ontoggle], .markdown a[href^='javascript'], .markdown style").length`); n != 0 {
					t.Errorf("%s: markup in the Markdown became %d live element(s)", view, n)
				}
				if del, add := rows("Edit", "del"), rows("Edit", "add"); strings.Join(del, "|") != "beta" || strings.Join(add, "|") != "BETA (edited)" {
					t.Errorf("%s: Edit diff: -%q +%q", view, del, add)
				}
				if got := eval[string](b, card("Bash")+`[0].querySelector(".bash-command").textContent`); got != "cat notes.txt; echo oops >&2" {
					t.Errorf("%s: Bash command %q", view, got)
				}
				if w := eval[float64](b, `document.querySelector(".tool img").getBoundingClientRect().width`); w <= 0 || w > 420 || w > float64(width) {
					t.Errorf("%s: the image is %v px wide", view, w)
				}
				if n := eval[int](b, `[...document.querySelectorAll(".tool audio")].filter(a => a.getAttribute("src").startsWith("/v1/tool-results/")).length`); n == 0 {
					t.Errorf("%s: no sound player", view)
				}
				if got := eval[string](b, card("Task")+`[0].querySelector(":scope > .body > .result").textContent`); got != "Started in the background." || strings.Contains(eval[string](b, `document.querySelector("#log").innerText`), "never quote") {
					t.Errorf("%s: the Task card's result says %q; want it plain, with no internal notice in the log", view, got)
				}
			}
			rendered(fmt.Sprintf("%d-light", width))
			b.view(uiView{fmt.Sprintf("%d-dark", width), width, 860, true})
			rendered(fmt.Sprintf("%d-dark", width))
			b.view(uiView{fmt.Sprintf("%d-light", width), width, 860, false})
			chatScreenshots(b, width, map[string]string{"": `document.querySelector(".markdown h1")`, "-tools": card("TodoWrite") + `[0]`, "-task": `document.querySelector(".tool img").closest(".tool")`})
			b.noJSDialog()
			if title := eval[string](b, `document.title`); title != "ccproxy" {
				t.Errorf("markup ran: the title is %q", title)
			}
		})
	}
}

// TestWebUITaskList: the task tools the CLI offers by default instead of
// TodoWrite (TaskCreate, TaskUpdate) show the task list as it stands after
// each change, as a checklist.
func TestWebUITaskList(t *testing.T) {
	t.Parallel()
	srv, _ := chatServe(t)
	b := newBrowser(t)
	b.do("open", chromedp.Navigate(srv.First.LoginURL))
	b.until("connected", `document.querySelector("#conn").dataset.state === "open"`)
	b.do("create a session", chromedp.Click(`#new-session button[type="submit"]`))
	b.until("a session", `!document.querySelector("#send").disabled`)
	b.send("[C-PLAN] Plan with tasks.")
	b.until("the turn", `document.querySelectorAll(".result-line").length >= 1`)
	lists := eval[[]string](b, `[...document.querySelectorAll('.tool[data-tool^="Task"]')].map(c => c.dataset.tool + ": " + [...c.querySelectorAll(".todos li")].map(li => li.dataset.status + ":" + li.querySelector("input").checked + ":" + li.textContent).join(", ") + (c.classList.contains("error") ? " ERROR " + c.querySelector(".result").textContent : ""))`)
	want := []string{
		"TaskCreate: pending:false:Plan the work",
		"TaskCreate: pending:false:Plan the work, pending:false:Do the work",
		"TaskUpdate: completed:true:Plan the work, pending:false:Do the work",
	}
	if strings.Join(lists, "\n") != strings.Join(want, "\n") {
		t.Errorf("the task cards show\n%s\nwant\n%s", strings.Join(lists, "\n"), strings.Join(want, "\n"))
	}
	b.noJSDialog()
}

// chatScreenshots takes the screenshots of the docs (docs/screenshots,
// with CCPROXY_SCREENSHOTS pointing there), each scrolled to an element:
// chat-W-light[suffix], and the same in dark when the page has a dark theme
// (prefers-color-scheme).
func chatScreenshots(b *browser, width int64, at map[string]string) {
	b.t.Helper()
	scheme := func(dark bool) {
		f := []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "light"}}
		if dark {
			f[0].Value = "dark"
		}
		ctx, cancel := context.WithTimeout(b.ctx, testkit.UIWait)
		defer cancel()
		if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Features: f}); err != nil {
			b.t.Fatalf("emulating prefers-color-scheme: %v", err)
		}
	}
	background := `[document.documentElement, document.body, document.querySelector("#log")].map(e => getComputedStyle(e).backgroundColor).join()`
	shots := func(name string) {
		for suffix, elem := range at {
			eval[any](b, elem+`.scrollIntoView({block: "start"}); null`)
			b.screenshot(fmt.Sprintf("chat-%d-%s%s", width, name, suffix))
		}
	}
	scheme(false)
	light := eval[string](b, background)
	shots("light")
	scheme(true)
	if eval[string](b, background) == light {
		b.t.Logf("the page has no dark theme: no dark screenshots")
	} else {
		shots("dark")
	}
	scheme(false)
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
