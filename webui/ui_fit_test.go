package webui_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/ccproxy/ccproxy/internal/testkit"
)

// cutControls lists the visible controls under the selectors whose text
// does not fit: a select whose shown option is wider than it (measured on
// a copy sized to its content), an empty text input whose placeholder is
// wider than its box, and any other control whose content is wider than
// it (scrollWidth > clientWidth).
const cutControls = `((sels) => {
	const ctx = document.createElement("canvas").getContext("2d");
	const textWidth = (text, e) => {
		const cs = getComputedStyle(e);
		ctx.font = cs.fontStyle + " " + cs.fontWeight + " " + cs.fontSize + " " + cs.fontFamily;
		return ctx.measureText(text).width;
	};
	const name = (e) => e.id ? "#" + e.id : e.tagName.toLowerCase() + (e.className ? "." + String(e.className).trim().replace(/\s+/g, ".") : "") + (e.getAttribute("aria-label") ? "[" + e.getAttribute("aria-label") + "]" : "");
	const cut = [];
	for (const e of document.querySelectorAll(sels)) {
		const r = e.getBoundingClientRect();
		if (r.width === 0 || r.height === 0 || getComputedStyle(e).visibility === "hidden") continue;
		const cs = getComputedStyle(e);
		const room = e.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
		if (e.tagName === "SELECT") {
			const o = e.options[e.selectedIndex];
			if (!o) continue;
			// A copy holding only the option shown, free to be as wide as
			// it: the width the select needs to show it whole.
			const copy = e.cloneNode(false); // its id too: the same rules apply
			copy.append(o.cloneNode(true));
			copy.style.cssText = "position: fixed; left: 0; top: 0; visibility: hidden; max-width: none; min-width: 0; width: auto;";
			e.parentElement.append(copy);
			const need = copy.getBoundingClientRect().width;
			copy.remove();
			if (need > r.width + 0.5) cut.push(name(e) + ': "' + o.text + '" needs ' + need.toFixed(1) + " px, has " + r.width.toFixed(1));
		} else if (e.tagName === "INPUT") {
			const text = e.value || e.placeholder;
			if (!text || e.value) continue; // a typed value scrolls; a placeholder must fit
			const need = textWidth(text, e);
			if (need > room + 0.5) cut.push(name(e) + ': placeholder "' + text + '" needs ' + need.toFixed(1) + " px, has " + room.toFixed(1));
		} else if (e.scrollWidth > e.clientWidth + 1) {
			cut.push(name(e) + ': "' + e.textContent.trim().slice(0, 40) + '" needs ' + e.scrollWidth + " px, has " + e.clientWidth);
		}
	}
	return cut;
})(SELS)`

// TestWebUINothingCut: at 1280, 400 and 360 px, light and dark (switched
// in place), no control's text is cut off: the header, the sidebar (open
// over the chat when narrow) with its project and model fields, the
// composer's buttons and pickers (the model picker shows a short name,
// "Default", the full one in its title), and the permission dialog with
// its deny message's placeholder.
func TestWebUINothingCut(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServe(t, testkit.CCProxyBinary(t), "--demo", "--demo-speed", "0")
	b := newBrowser(t)
	b.do("log in", chromedp.Navigate(srv.First.LoginURL))
	b.until("connected", `document.querySelector("#conn").dataset.state === "open"`)
	check := func(what, sels string) {
		t.Helper()
		if cut := eval[[]string](b, strings.Replace(cutControls, "SELS", jsString(sels), 1)); len(cut) > 0 {
			t.Errorf("%s: text cut off:\n  %s", what, strings.Join(cut, "\n  "))
		}
	}
	// Every width, light and dark (switched in place).
	var views []uiView
	for _, size := range uiSizes {
		for _, dark := range []bool{false, true} {
			views = append(views, uiView{size.name + map[bool]string{false: "-light", true: "-dark"}[dark], size.width, size.height, dark})
		}
	}
	const page = "header button, header .conn, header .demo-badge, .mcp-server, #sidebar input, #sidebar select, #sidebar button, #composer select, #composer button, #suggestions button"
	for _, size := range views {
		b.view(size)
		if size.width < 700 {
			b.do("open the sidebar", chromedp.Click("#sidebar-toggle"))
			b.until("the sidebar open", `getComputedStyle(document.querySelector("nav")).display !== "none"`)
		}
		check(size.name+", empty", page)
		if size.width < 700 {
			b.do("close the sidebar", chromedp.Click("#sidebar-toggle"))
		}
	}
	b.emulate(1280, 860, false)
	b.send("Hi! What does this proxy do, and what am I looking at?")
	b.until("the first reply and the models", `document.querySelectorAll(".result-line").length === 1 && document.querySelectorAll("#model-pick option").length > 1`)
	if got := eval[string](b, `(s => s.options[s.selectedIndex].text + " | " + s.title)(document.querySelector("#model-pick"))`); !strings.HasPrefix(got, "Default | Model: Default (recommended)") {
		t.Errorf("the model picker shows %q, want Default with the full name in its title", got)
	}
	b.send("Show me an image from one of the MCP servers.")
	b.until("the second reply", `document.querySelectorAll(".result-line").length === 2`)
	for _, size := range views {
		b.view(size)
		if size.width < 700 {
			b.do("open the sidebar", chromedp.Click("#sidebar-toggle"))
			b.until("the sidebar open", `getComputedStyle(document.querySelector("nav")).display !== "none"`)
		}
		check(size.name+", a session", page)
		if !size.dark {
			b.screenshot(fmt.Sprintf("fit-%d", size.width))
		}
		if size.width < 700 {
			b.do("close the sidebar", chromedp.Click("#sidebar-toggle"))
		}
	}
	b.emulate(1280, 860, false)
	b.send("Now echo a greeting through the demo server.")
	b.until("the permission dialog", `document.querySelector("#permission").open && document.querySelector("#permission .perm-message").placeholder !== ""`)
	for _, size := range views {
		b.view(size)
		check(size.name+", the permission dialog", "#permission input, #permission select, #permission button")
		if !size.dark {
			b.screenshot(fmt.Sprintf("fit-permission-%d", size.width))
		}
	}
	b.noJSDialog()
}
