package webui_test

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/ccproxy/ccproxy/protocol"
)

// TestWebUIThemeSwitch: the header's theme button cycles system → light
// → dark, each choice beats the system's scheme, the highlighting sheet
// follows, the choice is remembered across a reload, and it fits the
// header at 1280 and 400 px.
func TestWebUIThemeSwitch(t *testing.T) {
	t.Parallel()
	b := newBrowser(t)
	stub := stubBackend(t, []string{protocol.CapSessions}, func(f *protocol.Frame) (protocol.Data, []stubPush) {
		if f != nil && f.Type == protocol.TypeSessionList {
			return protocol.SessionListResult{}, nil
		}
		return nil, nil
	})
	bg := func() float64 {
		c, _ := rgb(t, eval[string](b, `getComputedStyle(document.body).backgroundColor`))
		return luminance(c)
	}
	theme := func() string { return eval[string](b, `document.documentElement.dataset.theme || ""`) }
	darkSheet := func() string {
		return eval[string](b, `document.querySelector("link[data-scheme=dark]").media`)
	}
	for _, size := range uiSizes {
		b.emulate(size.width, size.height, false)
		b.do("open "+size.name, chromedp.Navigate(stub.URL+"/"))
		eval[any](b, `localStorage.removeItem("ccproxy.theme"); null`)
		b.do("reload "+size.name, chromedp.Reload())
		b.until("the theme button", `!document.querySelector("#theme").hidden`)
		if theme() != "system" || bg() < 0.8 {
			t.Fatalf("%s: start: theme %q, background luminance %.2f; want system, light", size.name, theme(), bg())
		}
		if eval[bool](b, `(r => r.right > innerWidth || r.top > document.querySelector("#conn").getBoundingClientRect().bottom)(document.querySelector("#theme").getBoundingClientRect())`) {
			t.Errorf("%s: the theme button is off the header's row", size.name)
		}
		b.do("theme: light", chromedp.Click("#theme"))
		if theme() != "light" || bg() < 0.8 {
			t.Errorf("%s: light: theme %q, luminance %.2f", size.name, theme(), bg())
		}
		b.do("theme: dark", chromedp.Click("#theme"))
		if theme() != "dark" || bg() > 0.05 || darkSheet() != "all" {
			t.Errorf("%s: dark under a light system: theme %q, luminance %.2f, dark highlighting %q", size.name, theme(), bg(), darkSheet())
		}
		b.do("reload", chromedp.Reload())
		b.until("the theme button", `!document.querySelector("#theme").hidden`)
		if theme() != "dark" || bg() > 0.05 {
			t.Errorf("%s: after a reload: theme %q, luminance %.2f; want dark remembered", size.name, theme(), bg())
		}
		if l := eval[string](b, `document.querySelector("#theme").getAttribute("aria-label")`); l != "Theme: dark (click for system)" {
			t.Errorf("%s: the button's label %q", size.name, l)
		}
		// Under a dark system: system is dark, light beats it.
		b.emulate(size.width, size.height, true)
		b.do("theme: system", chromedp.Click("#theme"))
		if theme() != "system" || bg() > 0.05 {
			t.Errorf("%s: system under a dark system: theme %q, luminance %.2f", size.name, theme(), bg())
		}
		b.do("theme: light", chromedp.Click("#theme"))
		if theme() != "light" || bg() < 0.8 || darkSheet() != "not all" {
			t.Errorf("%s: light under a dark system: theme %q, luminance %.2f, dark highlighting %q", size.name, theme(), bg(), darkSheet())
		}
		b.screenshot(fmt.Sprintf("theme-light-over-dark-%s", size.name))
	}
	b.noJSDialog()
}
