package webui_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/ccproxy/ccproxy/internal/testkit"
)

// TestWebUIDemoSaysSo: `serve --demo` says it is a demo (a header badge,
// and on the empty state a note on how to run for real), the empty state
// offers suggested prompts that fit, in each of uiViews, and a click on one
// starts a session that answers it, with no "Rewind to here" (the demo
// cannot rewind).
func TestWebUIDemoSaysSo(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServe(t, testkit.CCProxyBinary(t), "--demo", "--demo-speed", "0")
	b := newBrowser(t)
	for i, size := range uiViews {
		// A page load per width; the theme switched in place.
		switch {
		case i == 0:
			b.emulate(size.width, size.height, size.dark)
			b.do("log in", chromedp.Navigate(srv.First.LoginURL))
		case size.width != uiViews[i-1].width:
			b.emulate(size.width, size.height, size.dark)
			b.do("reload", chromedp.Reload())
		}
		b.until("connected, the demo badge", `document.querySelector("#conn").dataset.state === "open" && !document.querySelector("#demo-badge").hidden`)
		b.view(size)
		if got := eval[string](b, `document.querySelector("#demo-badge").textContent`); got != "demo" {
			t.Errorf("%s: the badge says %q", size.name, got)
		}
		note := eval[string](b, `document.querySelector("#demo-note").innerText`)
		if eval[bool](b, `document.querySelector("#demo-note").hidden`) || !strings.Contains(note, "npm install -g @anthropic-ai/claude-code") || !strings.Contains(note, "ccproxy serve") {
			t.Errorf("%s: the demo note %q: want how to run for real", size.name, note)
		}
		if n := eval[int](b, `document.querySelectorAll("#suggestions button").length`); n != 3 {
			t.Errorf("%s: %d suggested prompts, want 3", size.name, n)
		}
		if eval[bool](b, `[...document.querySelectorAll("#empty, #empty *, header > *:not([hidden])")].some(e => { const r = e.getBoundingClientRect(); return r.width > 0 && (r.left < -0.5 || r.right > innerWidth + 0.5); })`) {
			t.Errorf("%s: the empty state or the header overflows", size.name)
		}
		if eval[bool](b, `(r => r.top > document.querySelector("#conn").getBoundingClientRect().bottom)(document.querySelector("#demo-badge").getBoundingClientRect())`) {
			t.Errorf("%s: the badge is off the header's row", size.name)
		}
		// The MCP strip shows the demo's own server from the first load,
		// before any session, as a live setup shows its configured ones.
		if n := eval[int](b, `document.querySelectorAll("#sessions li").length`); n != 0 {
			t.Fatalf("%s: %d sessions before any was asked for", size.name, n)
		}
		b.until(size.name+": the demo's server in the MCP strip", `document.querySelector('.mcp-server[data-server="demo"] .dot')?.dataset.status === "connected"`)
		if got := eval[string](b, `[...document.querySelectorAll(".mcp-server")].map(e => e.dataset.server + " " + e.title).join("|")`); got != "demo demo: connected · set up by ccproxy's command line (--mcp-config) · 16 tools" {
			t.Errorf("%s: the MCP strip shows %q, want the demo's one server with its 16 tools", size.name, got)
		}
		b.screenshot(size.shot("demo-empty"))
		// The server's panel says why its 16 tools are not listed (a replay
		// has no mcp.tools), in plain words.
		b.do("open the demo server's panel", chromedp.Click(`.mcp-server[data-server="demo"] > span:last-of-type`))
		b.until("the panel's tools row", `document.querySelector("#mcp-panel").open && [...document.querySelectorAll("#mcp-panel dt")].some(d => d.textContent === "tools")`)
		if got := eval[string](b, `[...document.querySelectorAll("#mcp-panel dt")].find(d => d.textContent === "tools").nextElementSibling.textContent`); got != "16 (this proxy does not list them)" {
			t.Errorf("%s: the panel's tools row says %q", size.name, got)
		}
		b.key(kb.Escape)
		b.until("the panel closed", `!document.querySelector("#mcp-panel").open`)
	}
	first := eval[string](b, `document.querySelector("#suggestions button").textContent`)
	b.do("a suggested prompt", chromedp.Click("#suggestions button"))
	b.until("its session and reply", `document.querySelectorAll("#sessions li").length === 1 && document.querySelectorAll(".result-line").length === 1`)
	if got := eval[string](b, `document.querySelector(".msg.user").innerText`); !strings.Contains(got, first) {
		t.Errorf("the turn sent is %q, want the suggestion %q", got, first)
	}
	if !eval[bool](b, `document.querySelector("#empty").hidden`) {
		t.Errorf("the empty state still shows beside a session")
	}
	// A replay cannot rewind (the proxy refuses it, SPEC §3): the user
	// message, known by its uuid, offers no "Rewind to here".
	b.until("the user message's uuid", `document.querySelector(".msg.user[data-uuid]") !== null`)
	b.until("the models", `document.querySelectorAll("#model-pick option").length > 1`)
	// In each view (switched in place): no rewind; the models people know;
	// the server keeps its name.
	for _, v := range uiViews {
		b.view(v)
		if n := eval[int](b, `document.querySelectorAll(".msg.user .rewind-btn, .rewind-panel").length`); n != 0 {
			t.Errorf("%s: the demo offers %d rewind buttons or panels, want none", v.name, n)
		}
		if got := eval[string](b, `[...document.querySelectorAll("#model-pick option")].map(o => o.value).join(" ")`); got != "default opus sonnet haiku" {
			t.Errorf("%s: the model picker offers %q, want default opus sonnet haiku", v.name, got)
		}
		if got := eval[string](b, `[...document.querySelectorAll(".mcp-server")].map(e => e.dataset.server).join(" ")`); got != "demo" {
			t.Errorf("%s: after a turn the MCP strip shows %q, want demo", v.name, got)
		}
	}
	b.noJSDialog()
}
