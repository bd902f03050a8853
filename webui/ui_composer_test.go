package webui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/ccproxy/ccproxy/internal/testkit"
	"github.com/ccproxy/ccproxy/internal/testkit/fakeapi"
)

// The composer's helpers, in the page: makeImage(w, h) is a PNG File of
// that size drawn on a canvas; pasteFiles(files) pastes them into the box
// as a clipboard would; dropFiles(files) drops them on the chat.
const composerHelpers = `
window.makeImage = (w, h, name) => new Promise((resolve) => {
	const c = document.createElement("canvas");
	c.width = w; c.height = h;
	const g = c.getContext("2d");
	g.fillStyle = "#c33"; g.fillRect(0, 0, w, h);
	g.fillStyle = "#33c"; g.fillRect(0, 0, w / 2, h / 2);
	c.toBlob((b) => resolve(new File([b], name || "red.png", { type: "image/png" })), "image/png");
});
window.pasteFiles = (files) => {
	const dt = new DataTransfer();
	for (const f of files) dt.items.add(f);
	document.querySelector("#composer textarea").dispatchEvent(new ClipboardEvent("paste", { clipboardData: dt, bubbles: true, cancelable: true }));
};
window.dropFiles = (files) => {
	const dt = new DataTransfer();
	for (const f of files) dt.items.add(f);
	const chat = document.querySelector("#chat");
	chat.dispatchEvent(new DragEvent("dragover", { dataTransfer: dt, bubbles: true, cancelable: true }));
	document.querySelector("#log").dispatchEvent(new DragEvent("drop", { dataTransfer: dt, bubbles: true, cancelable: true }));
};
null`

// grantClipboard lets the page read and write the clipboard, so a test
// reads back what a copy button copied.
func (b *browser) grantClipboard() {
	b.t.Helper()
	b.do("grant the clipboard", func(ctx context.Context, _ *chromedp.Target) (chromedp.Void, error) {
		for _, name := range []string{"clipboard-read", "clipboard-write"} {
			_, err := chromedp.Call(ctx, cdpbrowser.SetPermission, cdpbrowser.SetPermissionParams{
				Permission: &cdpbrowser.PermissionDescriptor{Name: name, AllowWithoutSanitization: true}, Setting: cdpbrowser.PermissionSettingGranted,
			})
			if err != nil {
				return chromedp.Void{}, err
			}
		}
		return chromedp.Void{}, nil
	})
}

// clipboard returns the clipboard's text.
func (b *browser) clipboard() string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, testkit.UIWait)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`navigator.clipboard.readText()`, chromedp.EvalAwaitPromise))
	if err != nil {
		b.t.Fatalf("reading the clipboard: %v", err)
	}
	return s
}

// copyAndRead reaches the copy button sel with the keyboard (Tab from the
// top of the page), presses it with Enter, waits for its copied state and
// returns the clipboard.
func (b *browser) copyAndRead(what, sel string) string {
	b.t.Helper()
	// A state left from an earlier press (it shows for a moment) is
	// cleared: the state waited for is this press's.
	eval[any](b, `navigator.clipboard.writeText("-"); delete document.querySelector(`+jsString(sel)+`).dataset.state; null`)
	b.tabTo(what, sel)
	if tag := eval[string](b, `document.activeElement.tagName`); tag != "BUTTON" {
		b.t.Fatalf("%s: the copy control is a %s, not a button", what, tag)
	}
	b.key(kb.Enter)
	b.until(what+" copied", `document.querySelector(`+jsString(sel)+`).dataset.state === "copied"`)
	return b.clipboard()
}

// tabTo moves the focus to the element sel the way a keyboard user does:
// from nothing focused, Tab until sel has the focus. It fails when sel is
// not in the page's tab order (within tabLimit presses).
func (b *browser) tabTo(what, sel string) {
	b.t.Helper()
	eval[any](b, `document.activeElement && document.activeElement.blur(); null`)
	const tabLimit = 400
	for i := 0; i < tabLimit; i++ {
		b.key(kb.Tab)
		if eval[bool](b, `document.activeElement === document.querySelector(`+jsString(sel)+`)`) {
			return
		}
	}
	b.t.Fatalf("%s: %d presses of Tab never reached %s (focus on %s)", what, tabLimit, sel,
		eval[string](b, `(e => e ? e.tagName + "." + e.className : "nothing")(document.activeElement)`))
}

// setBox puts text in the composer's box, as typing would.
func (b *browser) setBox(text string) {
	b.t.Helper()
	eval[any](b, `(() => { const ta = document.querySelector("#composer textarea"); ta.value = `+jsString(text)+`; ta.dispatchEvent(new Event("input")); })(); null`)
}

// key presses key on the element that has the focus: a keyDown that
// carries its text (as a real keyboard's: a page that cancels the keyDown
// gets no text) and a keyUp.
func (b *browser) key(key string) {
	b.t.Helper()
	b.do("press "+key, func(ctx context.Context, _ *chromedp.Target) (chromedp.Void, error) {
		evs := kb.Encode([]rune(key)[0])
		down, up := *evs[0], *evs[len(evs)-1]
		if len(evs) == 3 {
			down.Text, down.UnmodifiedText = evs[1].Text, evs[1].UnmodifiedText
		}
		for _, ev := range []*input.DispatchKeyEventParams{&down, &up} {
			if _, err := chromedp.Call(ctx, input.DispatchKeyEvent, *ev); err != nil {
				return chromedp.Void{}, err
			}
		}
		return chromedp.Void{}, nil
	})
}

// TestWebUIComposer drives the composer with the demo in each of uiViews
// (1280 and 400 px, light and dark; a browser each, in parallel): "?"
// opens the shortcuts (not while typing), the box grows with its text to
// 40% of the window and then scrolls, images pasted, dropped and attached
// show as removable thumbnails with their size and the limit, a file that
// is not an image or is over the limit is refused with the reason, the "/"
// menu lists the session's commands and skills with descriptions and
// filters as one types, a user message is rendered as Markdown (markup
// inert) with the images sent, and the copy buttons (a message, a code
// block) copy what they say. At 400 px the box keeps the composer's width.
func TestWebUIComposer(t *testing.T) {
	bin := testkit.CCProxyBinary(t)
	for _, size := range uiViews {
		name := size.name
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := newBrowser(t)
			b.grantClipboard()
			srv := testkit.StartServe(t, bin, "--demo", "--demo-speed", "20")
			b.do("open", chromedp.Navigate(srv.First.LoginURL))
			b.until("connected", `document.querySelector("#conn").dataset.state === "open"`)
			b.view(size)
			eval[any](b, composerHelpers)

			// ?: the shortcuts, from the empty box; typed as text once there is some.
			b.do("focus the box", chromedp.Focus("#composer textarea"))
			b.key("?")
			b.until("the shortcuts", `document.querySelector("#shortcuts").open`)
			if note := eval[string](b, `document.querySelector("#shortcuts").textContent`); !strings.Contains(note, "up to 5.0 MiB each") || !strings.Contains(note, "Esc") {
				t.Errorf("the shortcuts say %q", note)
			}
			b.screenshot("composer-shortcuts-" + name)
			b.key(kb.Escape)
			b.until("the shortcuts closed", `!document.querySelector("#shortcuts").open`)
			b.do("type", chromedp.SendKeys("#composer textarea", "why?"))
			if v := eval[string](b, `document.querySelector("#composer textarea").value`); v != "why?" || eval[bool](b, `document.querySelector("#shortcuts").open`) {
				t.Errorf("typing ? in a box with text: value %q, dialog open %v", v, eval[bool](b, `document.querySelector("#shortcuts").open`))
			}

			// The box grows with its text, to 40% of the window, then scrolls.
			h0 := eval[float64](b, `document.querySelector("#composer textarea").getBoundingClientRect().height`)
			b.setBox("why?\n2\n3\n4")
			h4 := eval[float64](b, `document.querySelector("#composer textarea").getBoundingClientRect().height`)
			if h4 <= h0+20 {
				t.Errorf("four lines: the box is %.0f px high, was %.0f", h4, h0)
			}
			b.setBox(strings.Repeat("a line\n", 80))
			h80 := eval[float64](b, `document.querySelector("#composer textarea").getBoundingClientRect().height`)
			limit := 0.4 * float64(size.height)
			if h80 < limit-30 || h80 > limit+2 {
				t.Errorf("80 lines: the box is %.0f px high, want about 40%% of %d (%.0f)", h80, size.height, limit)
			}
			if !eval[bool](b, `(() => { const ta = document.querySelector("#composer textarea"); return ta.scrollHeight > ta.clientHeight && getComputedStyle(ta).overflowY === "auto"; })()`) {
				t.Error("80 lines: the box does not scroll")
			}
			// Not squeezed by its controls: the box is as wide as the composer.
			if r := eval[float64](b, `document.querySelector("#composer textarea").getBoundingClientRect().width / document.querySelector("#composer").getBoundingClientRect().width`); r < 0.9 {
				t.Errorf("the box takes %.0f%% of the composer's width", r*100)
			}
			b.setBox("")

			// Images: pasted and dropped ones become thumbnails; the rest is refused, saying why.
			eval[any](b, `makeImage(40, 30, "first.png").then((f) => pasteFiles([f])); null`)
			b.until("a thumbnail", `document.querySelectorAll("#attachments .thumb img").length === 1`)
			eval[any](b, `Promise.all([makeImage(20, 20, "second.png"), makeImage(10, 10, "third.png")]).then((fs) => dropFiles([...fs, new File(["BM"], "pic.bmp", {type: "image/bmp"}), new File([new Uint8Array(5 * 1024 * 1024 + 1)], "huge.png", {type: "image/png"})])); null`)
			b.until("three thumbnails and two refusals", `document.querySelectorAll("#attachments .thumb").length === 3 && document.querySelectorAll("#attachments .attach-error").length === 2`)
			strip := eval[string](b, `document.querySelector("#attachments").textContent`)
			for _, want := range []string{"PNG, JPEG, GIF or WebP, up to 5.0 MiB each", "pic.bmp: not a PNG, JPEG, GIF or WebP image", "huge.png: 5.0 MiB, over the limit of 5.0 MiB", " B"} {
				if !strings.Contains(strip, want) {
					t.Errorf("the strip says %q, want %q in it", strip, want)
				}
			}
			b.screenshot("composer-images-" + name)
			b.do("remove the second", chromedp.Click(`#attachments .thumb:nth-child(2) button.remove`))
			b.until("two thumbnails", `document.querySelectorAll("#attachments .thumb").length === 2`)
			if alts := eval[string](b, `[...document.querySelectorAll("#attachments .thumb img")].map(i => i.alt).join(",")`); alts != "first.png,third.png" {
				t.Errorf("after removing the second: %s", alts)
			}
			// The attach button opens the file picker; a file picked there becomes a thumbnail.
			eval[any](b, `document.querySelector("#attach-input").addEventListener("click", (e) => { window.pickerOpened = true; e.preventDefault(); }, { once: true }); null`)
			b.do("attach", chromedp.Click("#attach"))
			if !eval[bool](b, `window.pickerOpened === true`) {
				t.Error("the attach button did not open the file picker")
			}
			picked := pngFile(t, filepath.Join(t.TempDir(), "picked.png"), 12, 8)
			b.do("pick a file", chromedp.SetUploadFiles("#attach-input", []string{picked}))
			b.until("the picked file's thumbnail", `document.querySelectorAll("#attachments .thumb img").length === 3`)
			if alts := eval[string](b, `[...document.querySelectorAll("#attachments .thumb img")].map(i => i.alt).join(",")`); alts != "first.png,third.png,picked.png" {
				t.Errorf("after picking a file: %s", alts)
			}

			// With images attached, an @path in the box brings the note that
			// claude then gets it as text (the CLI reads mentioned files only
			// in a turn of text alone); without one, no note.
			noteShown := `(n => !!n && !n.hidden && n.getClientRects().length > 0)(document.querySelector("#attachments .mention-note"))`
			if eval[bool](b, noteShown) {
				t.Error("the @path note shows with no @path in the box")
			}
			b.setBox("look at @src/main.go")
			if !eval[bool](b, noteShown) || !strings.Contains(eval[string](b, `document.querySelector("#attachments").textContent`), "With images, Claude gets @paths as text") {
				t.Error("with images and an @path in the box, the note does not show")
			}
			b.setBox("mail me at a@b")
			if eval[bool](b, noteShown) {
				t.Error("the @path note shows for an @ inside a word")
			}
			b.setBox("")

			// A message in Markdown, with markup that stays text, and the two images.
			msg := "Here is **code**:\n\n```go\nfunc main() { fmt.Println(\"hi\") }\n```\n\n<img src=x onerror=\"document.title='pwned'\">"
			b.send(msg)
			b.until("the bubble", `!!document.querySelector(".msg.user .markdown pre code")`)
			b.until("the reply", `document.querySelectorAll(".result-line").length === 1`)
			if n := eval[int](b, `document.querySelectorAll(".msg.user img").length`); n != 3 {
				t.Errorf("the bubble shows %d images, want 3 (two pasted or dropped, one picked)", n)
			}
			if eval[int](b, `document.querySelectorAll("#attachments .thumb").length`) != 0 || !eval[bool](b, `document.querySelector("#attachments").hidden`) {
				t.Error("the strip is not empty after sending")
			}
			if got := eval[string](b, `document.querySelector(".msg.user .markdown strong").textContent`); got != "code" {
				t.Errorf("bold in the user's message: %q", got)
			}
			if !eval[bool](b, `document.querySelector(".msg.user .markdown pre code").classList.contains("hljs")`) {
				t.Error("the user's code block is not highlighted")
			}
			if eval[int](b, `document.querySelectorAll(".msg.user .markdown img").length`) != 0 || !strings.Contains(eval[string](b, `document.querySelector(".msg.user .markdown").textContent`), "<img src=x") {
				t.Error("the markup in the user's message was not kept as text")
			}
			b.noJSDialog()
			if title := eval[string](b, `document.title`); title == "pwned" {
				t.Error("the user's markup ran")
			}
			b.screenshot("composer-markdown-" + name)

			// Copy: the code block and the whole message.
			if got := b.copyAndRead("the code block's copy", `.msg.user .code-wrap button.copy`); got != "func main() { fmt.Println(\"hi\") }" {
				t.Errorf("the code block copied %q", got)
			}
			if got := b.copyAndRead("the message's copy", `.msg.user > button.msg-copy`); got != msg {
				t.Errorf("the message copied %q, want %q", got, msg)
			}
			if got := b.copyAndRead("the reply's copy", `.msg.assistant > button.msg-copy`); !strings.Contains(got, "claude") {
				t.Errorf("the reply copied %q", got)
			}

			// "/": the session's commands, with descriptions, filtered as one types.
			b.do("focus the box", chromedp.Focus("#composer textarea"))
			b.do("type /", chromedp.SendKeys("#composer textarea", "/"))
			b.until("the commands", `!document.querySelector("#composer-menu").hidden && document.querySelectorAll("#composer-menu .menu-item").length > 5`)
			if d := eval[string](b, `document.querySelector("#composer-menu .menu-item .menu-detail")?.textContent || ""`); d == "" {
				t.Error("the first command has no description")
			}
			b.screenshot("composer-commands-" + name)
			b.do("type comp", chromedp.SendKeys("#composer textarea", "comp"))
			b.until("filtered", `(() => { const items = [...document.querySelectorAll("#composer-menu .menu-item")]; return items.length >= 1 && items.length < 10 && items.every(i => (i.dataset.value + i.textContent).toLowerCase().includes("comp")); })()`)
			if first := eval[string](b, `document.querySelector("#composer-menu .menu-item").dataset.value`); first != "compact" {
				t.Errorf("the first match of /comp is %q", first)
			}
			b.key(kb.Enter)
			if v := eval[string](b, `document.querySelector("#composer textarea").value`); v != "/compact " || !eval[bool](b, `document.querySelector("#composer-menu").hidden`) {
				t.Errorf("after Enter in the menu: box %q, menu open %v", v, !eval[bool](b, `document.querySelector("#composer-menu").hidden`))
			}
			if n := eval[int](b, `document.querySelectorAll(".msg.user").length`); n != 1 {
				t.Errorf("Enter in the menu sent the message (%d user messages)", n)
			}
			// Esc closes the menu and keeps the text.
			b.setBox("")
			b.do("type /", chromedp.SendKeys("#composer textarea", "/"))
			b.until("the menu", `!document.querySelector("#composer-menu").hidden`)
			b.key(kb.Escape)
			b.until("the menu closed", `document.querySelector("#composer-menu").hidden`)
			// Skills (init's "skills") are in the menu, marked as such.
			b.do("type simpl", chromedp.SendKeys("#composer textarea", "simpl"))
			b.until("the skill", `[...document.querySelectorAll("#composer-menu .menu-item")].some(i => i.dataset.value === "simplify")`)
			if d := eval[string](b, `[...document.querySelectorAll("#composer-menu .menu-item")].find(i => i.dataset.value === "simplify").querySelector(".menu-detail")?.textContent || ""`); !strings.HasPrefix(d, "skill · ") || len(d) < len("skill · ")+10 {
				t.Errorf("the skill simplify's detail is %q, want \"skill · <its description>\"", d)
			}
			b.key(kb.Escape)
		})
	}
}

// TestWebUIComposerRealCLI: with the real CLI (against the fake API), in
// one session switched in place to each of uiViews: the copy buttons of a
// tool's output and of a reply's code block copy them; the "/" menu lists
// the CLI's commands; the "@" menu lists the project's files from
// session/files (not what .gitignore ignores, not hidden ones), Enter puts
// "@src/main.go " in the box, and the turn reaches the API with the file's
// text, which the CLI read because of the mention. At 1280 px light and
// 400 px dark: a pasted image reaches the API; Esc interrupts a running
// turn. (The CLI reads mentions only in a turn of text alone,
// docs/CLI-NOTES.md: the image goes in a turn of its own.)
func TestWebUIComposerRealCLI(t *testing.T) {
	t.Parallel()
	b := newBrowser(t)
	b.grantClipboard()
	bin := testkit.CCProxyBinary(t)
	claude := testkit.Claude(t)
	home, project := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(home, "tmp/.keep"), "")
	writeFile(t, filepath.Join(project, ".claude/settings.local.json"), `{"permissions":{"allow":["Bash","Read"]}}`)
	writeFile(t, filepath.Join(project, "src/main.go"), "package main // MAIN-GO-MARKER-7f3a\n")
	writeFile(t, filepath.Join(project, "src/main_test.go"), "package main\n")
	writeFile(t, filepath.Join(project, "main.log"), "ignored\n")
	writeFile(t, filepath.Join(project, ".gitignore"), "*.log\n")
	writeFile(t, filepath.Join(project, ".hidden/main.txt"), "hidden\n")
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	api := fakeapi.Start(t, fakeapi.First(
		fakeapi.OnText("[K-HELLO]",
			fakeapi.CallTool("Bash", map[string]any{"command": "echo composer-output-42", "description": "Say something"}),
			fakeapi.Say("Here:\n\n```go\nfunc answer() int { return 42 }\n```\n")),
		fakeapi.OnText("[K-MENTION]", fakeapi.Say("I see the file.")),
		fakeapi.OnText("[K-IMAGE]", fakeapi.Say("A red and blue picture.")),
		fakeapi.OnText("[K-SLOW]", &fakeapi.Reply{Blocks: []fakeapi.Block{fakeapi.Text("this answer waits")}, Wait: release}),
		fakeapi.OnToolResults(fakeapi.Summarize),
	))
	srv := testkit.StartServeEnv(t, bin, api.Env(home), "--project", project, "--claude", claude)
	b.do("open", chromedp.Navigate(srv.First.LoginURL))
	b.until("connected", `document.querySelector("#conn").dataset.state === "open"`)
	eval[any](b, composerHelpers)

	// A first turn: a tool's output and a code block, each with its copy button.
	b.send("[K-HELLO] hi")
	b.until("the first result", `document.querySelectorAll(".result-line").length === 1`)
	b.until("the copy buttons", `!!document.querySelector(".msg.assistant .code-wrap button.copy")`)
	// In each view, in this session: the copy buttons of the tool's output
	// and of the reply's code block, the "/" menu of the CLI's commands,
	// and the "@" menu of the project's files as session/files lists them.
	// The last view's mention is sent.
	for i, v := range uiViews {
		b.view(v)
		if got := b.copyAndRead(v.name+": the Bash output's copy", `.tool[data-tool="Bash"] button.tool-copy`); !strings.Contains(got, "composer-output-42") {
			t.Errorf("%s: the tool output copied %q", v.name, got)
		}
		if got := b.copyAndRead(v.name+": the reply's code copy", `.msg.assistant .code-wrap button.copy`); got != "func answer() int { return 42 }" {
			t.Errorf("%s: the reply's code block copied %q", v.name, got)
		}

		// "/": the CLI's commands.
		b.setBox("")
		b.do("focus the box", chromedp.Focus("#composer textarea"))
		b.do("type /", chromedp.SendKeys("#composer textarea", "/compa"))
		b.until(v.name+": the commands", `[...document.querySelectorAll("#composer-menu .menu-item")].some(i => i.dataset.value === "compact")`)
		b.key(kb.Escape)
		b.setBox("")

		// "@": the project's files.
		b.do("type @", chromedp.SendKeys("#composer textarea", "[K-MENTION] look at @mai"))
		b.until(v.name+": the files", `document.querySelectorAll("#composer-menu .menu-item").length >= 2`)
		paths := eval[[]string](b, `[...document.querySelectorAll("#composer-menu .menu-item")].map(i => i.dataset.value)`)
		if len(paths) < 2 || paths[0] != "src/main.go" || slices.Contains(paths, "main.log") || slices.Contains(paths, ".hidden/main.txt") {
			t.Errorf("%s: the @ menu lists %q, want src/main.go first, not main.log or .hidden/main.txt", v.name, paths)
		}
		b.screenshot("composer-files-" + v.name)
		b.key(kb.Enter)
		if got := eval[string](b, `document.querySelector("#composer textarea").value`); got != "[K-MENTION] look at @src/main.go " {
			t.Errorf("%s: after choosing: %q", v.name, got)
		}
		if i < len(uiViews)-1 {
			b.setBox("")
		}
	}
	b.do("send", chromedp.Click("#send"))
	b.until("the second result", `document.querySelectorAll(".result-line").length === 2`)
	req, err := api.LastRequestWith("[K-MENTION]")
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(req.LastUser()); !strings.Contains(string(b), "MAIN-GO-MARKER-7f3a") {
		t.Errorf("the API request does not carry src/main.go's text (the @ mention): %s", b)
	}

	// A pasted image reaches the API, and Esc interrupts a running turn:
	// at 1280 px light and at 400 px dark, two views that differ in both
	// width and scheme (each is a turn of the CLI).
	for images, v := range []uiView{uiViews[0], uiViews[3]} {
		images++
		b.view(v)
		b.setBox("[K-IMAGE] what is this? " + v.name)
		eval[any](b, `makeImage(24, 16, "flag.png").then((f) => pasteFiles([f])); null`)
		b.until(v.name+": a thumbnail", `document.querySelectorAll("#attachments .thumb").length === 1`)
		b.do("send", chromedp.Click("#send"))
		b.until(v.name+": the image turn's answer", fmt.Sprintf(`[...document.querySelectorAll(".msg.assistant")].filter(m => m.textContent.includes("A red and blue picture.")).length === %d && document.querySelector("#interrupt").disabled`, images))
		if req, err = api.LastRequestWith("[K-IMAGE] what is this? " + v.name); err != nil {
			t.Fatal(err)
		}
		var image *fakeapi.ContentBlock
		for i, c := range req.LastUser().Content {
			if c.Type == "image" {
				image = &req.LastUser().Content[i]
			}
		}
		if image == nil || image.Source == nil || image.Source.MediaType != "image/png" || !strings.HasPrefix(image.Source.Data, "iVBOR") {
			t.Errorf("%s: the API request has no PNG image: %+v", v.name, req.LastUser().Content)
		}
		if n := eval[int](b, `document.querySelectorAll(".msg.user img").length`); n != images {
			t.Errorf("%s: %d images in the user bubbles, want %d", v.name, n, images)
		}

		// Esc interrupts the running turn.
		interrupted := `[...document.querySelectorAll(".notice, .result-line")].filter(n => /interrupted/i.test(n.textContent)).length`
		before := eval[int](b, interrupted)
		b.send("[K-SLOW] wait")
		b.until(v.name+": running", `!document.querySelector("#interrupt").disabled`)
		b.do("focus the box", chromedp.Focus("#composer textarea"))
		b.key(kb.Escape)
		b.until(v.name+": interrupted", fmt.Sprintf(`%s > %d`, interrupted, before))
		b.until(v.name+": idle again", `document.querySelector("#interrupt").disabled`)
	}
	b.noJSDialog()
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}
