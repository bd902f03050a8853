package webui_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/ccproxy/ccproxy/internal/testkit"
)

// themePairs returns, for each selector that matches an element, the
// element's text color and the background it is drawn on: the element's
// and its ancestors' backgrounds composed up to the first opaque one (the
// page's, white, at the bottom), as rgb().
const themePairs = `((sels) => {
	const parse = (c) => { const m = c.match(/[\d.]+/g) || []; return { r: +m[0] || 0, g: +m[1] || 0, b: +m[2] || 0, a: m.length > 3 ? +m[3] : 1 }; };
	const bg = (e) => {
		const layers = [];
		for (; e; e = e.parentElement) {
			const c = parse(getComputedStyle(e).backgroundColor);
			if (c.a > 0) layers.push(c);
			if (c.a >= 1) break;
		}
		let out = { r: 255, g: 255, b: 255 };
		for (const c of layers.reverse()) out = { r: c.r * c.a + out.r * (1 - c.a), g: c.g * c.a + out.g * (1 - c.a), b: c.b * c.a + out.b * (1 - c.a) };
		return "rgb(" + out.r + ", " + out.g + ", " + out.b + ")";
	};
	return sels.map((s) => { const e = document.querySelector(s); return e ? [s, getComputedStyle(e).color, bg(e)] : [s, "", ""]; });
})(SELS)`

// TestWebUILightAndDark: the newer parts of the UI stay readable in the
// light and the dark theme at 1280 and 400 px: the demo badge, the
// suggested prompts and the demo note, the theme switch, the MCP chip,
// the history's manage buttons and search, the copy buttons of a message
// and of a code block, a user message in Markdown, the "/" menu of the
// composer, an image thumbnail, the rewind panel, the usage meter, an MCP
// image's tool card and its lightbox. One page load: the theme follows the
// emulated system scheme; each key element's text must stand out from the
// background it is drawn on (WCAG contrast >= 4.5), with a screenshot of
// each theme and width.
func TestWebUILightAndDark(t *testing.T) {
	t.Parallel()
	project := t.TempDir()
	home, _ := historyHome(t, project)
	srv := testkit.StartServeEnv(t, testkit.CCProxyBinary(t), []string{"HOME=" + home}, "--demo", "--demo-speed", "0", "--project", project)
	b := newBrowser(t)
	b.do("log in", chromedp.Navigate(srv.First.LoginURL))
	b.until("connected, the demo, its server, the history", `document.querySelector("#conn").dataset.state === "open" && !document.querySelector("#demo-badge").hidden && document.querySelector(".mcp-server") !== null && document.querySelectorAll("#history-list li").length > 0`)

	check := func(phase string, sels []string) {
		t.Helper()
		js, _ := json.Marshal(sels)
		for _, dark := range []bool{false, true} {
			scheme := map[bool]string{false: "light", true: "dark"}[dark]
			for _, size := range uiSizes[:2] {
				name := fmt.Sprintf("%s-%s-%s", phase, size.name, scheme)
				b.emulate(size.width, size.height, dark)
				for _, p := range eval[[][]string](b, strings.Replace(themePairs, "SELS", string(js), 1)) {
					if p[1] == "" {
						t.Errorf("%s: nothing matches %s", name, p[0])
						continue
					}
					fg, _ := rgb(t, p[1])
					bg, _ := rgb(t, p[2])
					if c := contrast(fg, bg); c < 4.5 {
						t.Errorf("%s: %s: %s on %s has contrast %.2f, want >= 4.5", name, p[0], p[1], p[2], c)
					}
				}
				b.screenshot("themes-" + name)
			}
		}
	}

	// The empty state of the demo.
	check("empty", []string{"#demo-badge", "#suggestions button", "#demo-note", "#theme", ".mcp-server", "#history-search", "#history-list li button", "#history-list li"})

	// A conversation: Markdown with a code block from the user, an MCP
	// image, the "/" menu, a pasted image, the rewind panel.
	b.emulate(1280, 860, false)
	b.send("Hi! What does this proxy do?\n\n```go\nfmt.Println(\"hi\")\n```")
	b.until("the first reply", `document.querySelectorAll(".result-line").length === 1`)
	b.send("Show me an image from one of the MCP servers.")
	b.until("the image", `document.querySelectorAll(".result-line").length === 2 && [...document.querySelectorAll(".tool img")].some(i => i.complete && i.naturalWidth > 0) && document.querySelector(".usage-meter") !== null`)
	eval[any](b, composerHelpers)
	eval[any](b, `makeImage(40, 30, "first.png").then((f) => pasteFiles([f])); null`)
	b.until("the thumbnail", `document.querySelector(".thumb img")?.complete === true`)
	// The demo offers no rewind (a replay cannot rewind): the panel is put
	// in as rewind.js builds it, for its colors.
	eval[any](b, `(u => { const p = document.createElement("div"); p.className = "rewind-panel"; p.innerHTML = '<p>Rewind the conversation to before this message? No file changed since.</p><div class="rewind-actions"><button type="button" class="rewind-go">Rewind</button><button type="button" class="rewind-cancel">Cancel</button></div>'; u.after(p); return null })(document.querySelector(".msg.user"))`)
	openMenu := `(ta => { ta.focus(); ta.value = "/"; ta.dispatchEvent(new Event("input", { bubbles: true })); return null })(document.querySelector("#composer textarea"))`
	eval[any](b, openMenu)
	b.until("the / menu", `!document.querySelector("#composer-menu").hidden && document.querySelectorAll("#composer-menu .menu-item").length > 0`)
	check("conversation", []string{
		".msg.user .markdown", ".msg.user .code-wrap > button.copy", ".msg.user .code-wrap pre", ".msg.user > .msg-copy", ".msg.assistant > .msg-copy",
		".tool .tool-name", ".tool .tool-copy", "#composer-menu .menu-name", "#composer-menu .menu-detail", `#composer-menu .menu-item[aria-selected="true"] .menu-name`,
		".thumb figcaption", ".thumb .remove", ".rewind-panel p", ".rewind-panel button", ".usage-meter", "#model-pick", "#perm-mode",
	})

	// The lightbox of the MCP image.
	b.do("enlarge the image", chromedp.Click(".tool img"))
	b.until("the lightbox", `document.querySelector("dialog.lightbox")?.open === true`)
	check("lightbox", []string{"dialog.lightbox"})
	if eval[bool](b, `(d => getComputedStyle(d).backgroundColor === getComputedStyle(document.body).backgroundColor && getComputedStyle(d, "::backdrop").backgroundColor === "rgba(0, 0, 0, 0)")(document.querySelector("dialog.lightbox"))`) {
		t.Error("the lightbox does not stand out from the page")
	}
	b.noJSDialog()
}
