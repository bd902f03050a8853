package webui_test

import "fmt"

// uiView is one of the views every UI item of issue 23 is checked in: a
// width and the system's color scheme.
type uiView struct {
	name          string
	width, height int64
	dark          bool
}

// uiViews are the four views: 1280 and 400 px wide (a desktop, and a
// phone or VS Code's side panel), each light and dark. A test switches
// between them in the same page (b.view), which costs a few milliseconds,
// and repeats the item's assertions in each.
var uiViews = []uiView{
	{"1280-light", 1280, 860, false},
	{"1280-dark", 1280, 860, true},
	{"400-light", 400, 780, false},
	{"400-dark", 400, 780, true},
}

// view switches the page to v in place (viewport and prefers-color-scheme,
// no reload) and checks that the page took it: its width, the scheme its
// media queries see, and the theme it draws (the body's background light or
// dark), so that an assertion made "in dark" is made on the dark theme.
func (b *browser) view(v uiView) {
	b.t.Helper()
	b.emulate(v.width, v.height, v.dark)
	b.until(v.name, fmt.Sprintf(`innerWidth === %d && matchMedia("(prefers-color-scheme: dark)").matches === %v`, v.width, v.dark))
	c, _ := rgb(b.t, eval[string](b, `getComputedStyle(document.body).backgroundColor`))
	if l := luminance(c); v.dark && l > 0.2 || !v.dark && l < 0.6 {
		b.t.Fatalf("%s: the page's background has luminance %.2f: not the %s theme", v.name, l, map[bool]string{false: "light", true: "dark"}[v.dark])
	}
}

// shot names a screenshot of v: prefix-1280 in light (the name such
// screenshots had before the dark ones were taken), prefix-1280-dark in
// dark.
func (v uiView) shot(prefix string) string {
	if v.dark {
		return fmt.Sprintf("%s-%d-dark", prefix, v.width)
	}
	return fmt.Sprintf("%s-%d", prefix, v.width)
}
