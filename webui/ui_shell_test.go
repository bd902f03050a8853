package webui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/ccproxy/ccproxy/internal/testkit"
	"github.com/ccproxy/ccproxy/protocol"
)

// Browser tests of the web UI's frame: the layout at a desktop width and
// at phone / side-panel widths, the light and dark themes, VS Code's theme
// variables, and the browser notifications.

// uiSizes are the widths the UI must work at: a desktop and a phone (or
// VS Code's side panel).
var uiSizes = []struct {
	name          string
	width, height int64
}{{"1280", 1280, 860}, {"400", 400, 780}, {"360", 360, 700}}

// emulate sets the viewport and prefers-color-scheme.
func (b *browser) emulate(width, height int64, dark bool) {
	b.t.Helper()
	scheme := "light"
	if dark {
		scheme = "dark"
	}
	b.do(fmt.Sprintf("emulate %dx%d %s", width, height, scheme),
		chromedp.EmulateViewport(width, height),
		func(ctx context.Context, _ *chromedp.Target) (chromedp.Void, error) {
			_, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
				Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
			})
			return chromedp.Void{}, err
		})
}

// setHidden minimizes (or restores) the browser window: the page's
// document.visibilityState becomes "hidden" (or "visible"), as when the
// user switches away. (Another tab in front does not hide a headless
// page; a minimized window does.)
func (b *browser) setHidden(hidden bool) {
	b.t.Helper()
	w, err := chromedp.Call(b.ctx, cdpbrowser.GetWindowForTarget, cdpbrowser.GetWindowForTargetParams{})
	if err != nil {
		b.t.Fatalf("the window: %v", err)
	}
	state := cdpbrowser.WindowStateNormal
	if hidden {
		state = cdpbrowser.WindowStateMinimized
	}
	if _, err := chromedp.CallBrowser(b.ctx, cdpbrowser.SetWindowBounds, cdpbrowser.SetWindowBoundsParams{WindowID: w.WindowID, Bounds: &cdpbrowser.Bounds{WindowState: state}}); err != nil {
		b.t.Fatalf("window %s: %v", state, err)
	}
	want := map[bool]string{true: "hidden", false: "visible"}[hidden]
	b.until("the page "+want, `document.visibilityState === "`+want+`"`)
}

// rgb parses a computed CSS color, rgb(r, g, b) or rgba(r, g, b, a).
func rgb(t *testing.T, css string) (c [3]float64, alpha float64) {
	t.Helper()
	s := strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(css, "rgba("), "rgb("), ")")
	parts := strings.Split(s, ",")
	if len(parts) < 3 {
		t.Fatalf("color %q is not rgb()", css)
	}
	alpha = 1
	for i, p := range parts {
		var v float64
		if _, err := fmt.Sscan(strings.TrimSpace(p), &v); err != nil {
			t.Fatalf("color %q: %v", css, err)
		}
		if i < 3 {
			c[i] = v
		} else {
			alpha = v
		}
	}
	return c, alpha
}

// luminance is WCAG 2's relative luminance.
func luminance(c [3]float64) float64 {
	var l [3]float64
	for i, v := range c {
		v /= 255
		if v <= 0.03928 {
			l[i] = v / 12.92
		} else {
			l[i] = math.Pow((v+0.055)/1.055, 2.4)
		}
	}
	return 0.2126*l[0] + 0.7152*l[1] + 0.0722*l[2]
}

// contrast is WCAG 2's contrast ratio of two opaque colors.
func contrast(a, b [3]float64) float64 {
	la, lb := luminance(a), luminance(b)
	if la < lb {
		la, lb = lb, la
	}
	return (la + 0.05) / (lb + 0.05)
}

// TestWebUIThemeAndLayout loads the UI at 1280, 400 and 360 px, light and
// dark: the colors follow prefers-color-scheme with readable text (WCAG AA
// contrast for every text on its background), nothing overflows the
// viewport, and below 700 px the sidebar is collapsed behind the ☰ button,
// opens over the chat, and closes when a session is picked. Sessions of
// one project get distinct names. VS Code's --vscode-* variables on :root
// override the theme.
func TestWebUIThemeAndLayout(t *testing.T) {
	t.Parallel()
	b := newBrowser(t)
	created := mustTime(t, "2026-11-24T06:00:00Z")
	list := protocol.SessionListResult{Sessions: []protocol.SessionInfo{
		{Session: "s-aaaaaaaaaa01", State: "idle", Cwd: "/home/u/api", CreatedAt: created, FirstSeq: 1, PermissionMode: "default"},
		{Session: "s-aaaaaaaaaa02", State: "idle", Cwd: "/home/u/api", CreatedAt: created, FirstSeq: 1, PermissionMode: "default"},
		{Session: "s-aaaaaaaaaa03", State: "running", Cwd: "/home/u/web", CreatedAt: created, FirstSeq: 1, PermissionMode: "plan"},
	}}
	stub := stubBackend(t, []string{protocol.CapSessions, protocol.CapMCPStatus, protocol.CapMCPManage}, func(f *protocol.Frame) (protocol.Data, []stubPush) {
		switch {
		case f == nil:
		case f.Type == protocol.TypeSessionList:
			return list, nil
		case f.Type == protocol.TypeSessionSubscribe:
			return subscribed(f, "idle"), nil
		case f.Type == protocol.TypeMCPSubscribe:
			return nil, []stubPush{{protocol.TypeMCPStatus, protocol.MCPStatus{Servers: []protocol.MCPServerStatus{
				{Name: "everything", Status: "connected", Scope: "user", Approval: "not-needed"},
				{Name: "memory-with-a-long-name", Status: "failed", Scope: "project", Approval: "approved", Error: "ENOENT"},
			}}}}
		}
		return nil, nil
	})

	// pairs of (text color, background) that must be readable.
	const colors = `(() => {
		const cs = (sel) => getComputedStyle(document.querySelector(sel));
		const pair = (name, fgSel, bgSel, fgProp = "color", bgProp = "backgroundColor") => [name, cs(fgSel)[fgProp], cs(bgSel || fgSel)[bgProp]];
		return [
			pair("body text", "body", "body"),
			pair("sidebar text", "#sessions li .name", "nav"),
			pair("muted sidebar text", "#sessions li .state", "nav"),
			pair("composer text", "#composer textarea"),
			pair("button", "#interrupt"),
			pair("primary button", "#send"),
			pair("header", ".brand", "header"),
			pair("selected session", "#sessions li[aria-current=true] .name", "#sessions li[aria-current=true]"),
		];
	})()`
	bodyBG := map[bool][3]float64{}
	for _, dark := range []bool{false, true} {
		scheme := map[bool]string{false: "light", true: "dark"}[dark]
		for _, size := range uiSizes {
			name := size.name + "-" + scheme
			b.emulate(size.width, size.height, dark)
			b.do("open "+name, chromedp.Navigate(stub.URL+"/"))
			b.until("the sessions", `document.querySelectorAll("#sessions li").length === 3 && !!document.querySelector("#sessions li[aria-current=true]")`)
			if got := eval[bool](b, `matchMedia("(prefers-color-scheme: dark)").matches`); got != dark {
				t.Fatalf("%s: prefers-color-scheme dark is %v", name, got)
			}

			for _, p := range eval[[][]string](b, colors) {
				fg, fa := rgb(t, p[1])
				bg, ba := rgb(t, p[2])
				if fa != 1 || ba != 1 {
					t.Errorf("%s: %s: %s on %s: not opaque", name, p[0], p[1], p[2])
					continue
				}
				if c := contrast(fg, bg); c < 4.5 {
					t.Errorf("%s: %s: %s on %s has contrast %.2f, want >= 4.5", name, p[0], p[1], p[2], c)
				}
			}
			bg, _ := rgb(t, eval[string](b, `getComputedStyle(document.body).backgroundColor`))
			bodyBG[dark] = bg
			if l := luminance(bg); dark && l > 0.05 || !dark && l < 0.8 {
				t.Errorf("%s: the page background %v has luminance %.2f", name, bg, l)
			}

			if names := eval[[]string](b, `[...document.querySelectorAll("#sessions li .name")].map(n => n.textContent)`); strings.Join(names, "|") != "api #1|api #2|web #3" {
				t.Errorf("%s: session names %q, want distinct names per project", name, names)
			}
			if m := eval[string](b, `document.querySelector("#perm-mode").value`); m != "plan" {
				t.Errorf("%s: the mode switch of the selected session (plan) shows %q", name, m)
			}

			overflow := `document.documentElement.scrollWidth > innerWidth || [...document.querySelectorAll("header, #composer, #chat, header > *")].some(e => { const r = e.getBoundingClientRect(); return r.right > innerWidth + 0.5 || r.bottom > innerHeight + 0.5; })`
			if eval[bool](b, overflow) {
				t.Errorf("%s: something overflows the %d px viewport: %s", name, size.width,
					eval[string](b, `[...document.querySelectorAll("body *")].filter(e => e.getBoundingClientRect().right > innerWidth + 0.5).map(e => e.tagName + "#" + e.id + "." + e.className).slice(0, 5).join(", ")`))
			}
			if eval[string](b, `getComputedStyle(document.querySelector("#history-bar")).display`) != "none" {
				t.Errorf("%s: the past-session bar shows with no past session open", name)
			}
			b.do("the MCP form", chromedp.Click("#mcp-add"))
			if eval[bool](b, `(r => r.left < 0 || r.right > innerWidth || r.width < 200)(document.querySelector("#mcp-form").getBoundingClientRect())`) {
				t.Errorf("%s: the MCP form does not fit the %d px viewport", name, size.width)
			}
			b.do("close the MCP form", chromedp.Click("#mcp-form .cancel"))
			navShown := `getComputedStyle(document.querySelector("nav")).display !== "none"`
			toggleShown := `getComputedStyle(document.querySelector("#sidebar-toggle")).display !== "none"`
			if size.width > 700 {
				if !eval[bool](b, navShown) || eval[bool](b, toggleShown) {
					t.Errorf("%s: the sidebar must show, without the ☰ button", name)
				}
				if w := eval[float64](b, `document.querySelector("#chat").getBoundingClientRect().width`); w < 800 {
					t.Errorf("%s: the chat is %.0f px wide", name, w)
				}
			} else {
				if eval[bool](b, navShown) || !eval[bool](b, toggleShown) {
					t.Errorf("%s: the sidebar must be collapsed behind the ☰ button", name)
				}
				if w := eval[float64](b, `document.querySelector("#composer textarea").getBoundingClientRect().width`); w < float64(size.width)/2 {
					t.Errorf("%s: the composer is %.0f px wide", name, w)
				}
				b.do("open the sidebar", chromedp.Click("#sidebar-toggle"))
				if !eval[bool](b, navShown) || eval[bool](b, `document.querySelector("nav").getBoundingClientRect().right > innerWidth`) {
					t.Errorf("%s: the ☰ button did not open the sidebar within the viewport", name)
				}
				b.screenshot("ui-" + name + "-sidebar")
				// An overlay: the chat beside it is dimmed by a backdrop, a
				// tap on which closes the sidebar.
				if bd := eval[string](b, `getComputedStyle(document.querySelector("#chat"), "::before").backgroundColor`); bd == "" || bd == "rgba(0, 0, 0, 0)" {
					t.Errorf("%s: no backdrop beside the open sidebar (%q)", name, bd)
				}
				b.do("tap the backdrop", chromedp.MouseClickXY(float64(size.width)-10, float64(size.height)/2))
				b.until("the sidebar closed by the backdrop", `!(`+navShown+`)`)
				b.do("open the sidebar again", chromedp.Click("#sidebar-toggle"))
				b.do("pick a session", chromedp.Click(`#sessions li[data-session="s-aaaaaaaaaa01"]`))
				b.until("the sidebar closed", `!(`+navShown+`)`)
				if cur := eval[string](b, `document.querySelector("#sessions li[aria-current=true]").dataset.session`); cur != "s-aaaaaaaaaa01" {
					t.Errorf("%s: picked session %q", name, cur)
				}
			}
			b.screenshot("ui-" + name + "-layout")
		}
	}
	if bodyBG[false] == bodyBG[true] {
		t.Errorf("light and dark backgrounds are the same: %v", bodyBG[false])
	}

	// Inside VS Code: its theme variables on the root element win, in
	// either scheme.
	eval[any](b, `(() => { const s = document.documentElement.style;
		s.setProperty("--vscode-editor-background", "rgb(1, 2, 3)");
		s.setProperty("--vscode-editor-foreground", "rgb(250, 240, 230)");
		s.setProperty("--vscode-button-background", "rgb(10, 100, 10)");
		s.setProperty("--vscode-input-background", "rgb(4, 5, 6)"); return null; })()`)
	for _, c := range []struct{ expr, want string }{
		{`getComputedStyle(document.body).backgroundColor`, "rgb(1, 2, 3)"},
		{`getComputedStyle(document.body).color`, "rgb(250, 240, 230)"},
		{`getComputedStyle(document.querySelector("#send")).backgroundColor`, "rgb(10, 100, 10)"},
		{`getComputedStyle(document.querySelector("#composer textarea")).backgroundColor`, "rgb(4, 5, 6)"},
	} {
		if got := eval[string](b, c.expr); got != c.want {
			t.Errorf("with VS Code's variables, %s = %q, want %q", c.expr, got, c.want)
		}
	}
	b.noJSDialog()
}

// TestWebUINotifications: once the user allowed notifications (the
// "Notify me" button, on screen at 1280 and 400 px, light and dark, then
// the browser's grant), a permission request and the end of a turn make a
// Notification while the page is hidden, and none while it is visible.
func TestWebUINotifications(t *testing.T) {
	t.Parallel()
	for _, dark := range []bool{false, true} {
		for _, size := range uiSizes[:2] {
			name := size.name + map[bool]string{false: "-light", true: "-dark"}[dark]
			t.Run(name, func(t *testing.T) { testNotifications(t, size.width, size.height, dark) })
		}
	}
}

func testNotifications(t *testing.T, width, height int64, dark bool) {
	b := newBrowser(t)
	b.emulate(width, height, dark)
	const sess = "s-bbbbbbbbbb01"
	// cue holds the stub's answer to session/subscribe and each
	// permission/respond until the test says what to push.
	cue := make(chan []stubPush)
	done := make(chan struct{})
	wait := func() []stubPush {
		select {
		case ps := <-cue:
			return ps
		case <-done:
			return nil
		}
	}
	stub := stubBackend(t, []string{protocol.CapSessions}, func(f *protocol.Frame) (protocol.Data, []stubPush) {
		switch {
		case f == nil:
		case f.Type == protocol.TypeSessionList:
			return protocol.SessionListResult{Sessions: []protocol.SessionInfo{{Session: sess, State: "running", Cwd: "/home/u/api", CreatedAt: mustTime(t, "2026-11-24T06:00:00Z"), FirstSeq: 1}}}, nil
		case f.Type == protocol.TypeSessionSubscribe:
			return subscribed(f, "running"), wait()
		case f.Type == protocol.TypePermissionRespond:
			return nil, wait()
		}
		return nil, nil
	})
	t.Cleanup(func() { close(done) }) // before the stub closes
	// Record every Notification the page constructs.
	b.do("watch notifications", func(ctx context.Context, _ *chromedp.Target) (chromedp.Void, error) {
		_, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: `
			window.__notes = [];
			if (window.Notification) window.Notification = new Proxy(window.Notification, {
				construct(target, args) {
					window.__notes.push({ title: args[0], body: (args[1] || {}).body, tag: (args[1] || {}).tag });
					return Reflect.construct(target, args);
				},
			});`})
		return chromedp.Void{}, err
	})
	b.do("open", chromedp.Navigate(stub.URL+"/"))
	b.until("the Notify me button", `!document.querySelector("#notify-enable").hidden && Notification.permission === "default"`)
	if eval[bool](b, `(r => r.width === 0 || r.right > innerWidth)(document.querySelector("#notify-enable").getBoundingClientRect())`) {
		t.Errorf("the Notify me button is not on the %d px screen", width)
	}
	if _, err := chromedp.CallBrowser(b.ctx, cdpbrowser.SetPermission, cdpbrowser.SetPermissionParams{
		Permission: &cdpbrowser.PermissionDescriptor{Name: "notifications"}, Setting: cdpbrowser.PermissionSettingGranted, Origin: stub.URL,
	}); err != nil {
		t.Fatalf("granting notifications: %v", err)
	}
	b.do("allow notifications", chromedp.Click("#notify-enable"))
	b.until("the button gone", `document.querySelector("#notify-enable").hidden && Notification.permission === "granted"`)

	perm := func(id, command string) stubPush {
		return stubPush{protocol.TypePermissionRequest, protocol.PermissionRequest{Session: sess, RequestID: id, Kind: "tool", ToolName: "Bash",
			Input: []byte(fmt.Sprintf(`{"command":%q}`, command))}}
	}
	resolved := func(id string) stubPush {
		return stubPush{protocol.TypePermissionResolved, protocol.PermissionResolved{Session: sess, RequestID: id, Behavior: "deny", Reason: "answered"}}
	}
	notes := `window.__notes.map(n => n.title + " | " + n.body).join("\n")`

	// Visible: the dialog, no notification.
	cue <- []stubPush{perm("r1", "ls")}
	b.until("the first dialog", `document.querySelector("#permission").open`)
	b.do("deny", chromedp.Click("#permission .deny"))
	// Hidden: a notification for the next request.
	b.setHidden(true)
	cue <- []stubPush{resolved("r1"), perm("r2", "rm -rf build")}
	b.until("a notification", `window.__notes.length >= 1`)
	if got := eval[string](b, notes); got != "Claude is waiting for you | Run: rm -rf build" {
		t.Errorf("notifications:\n%s\nwant one for the permission r2 only (none while visible)", got)
	}
	// The turn ends while hidden.
	eval[any](b, `document.querySelector("#permission .deny").click(); null`)
	cue <- []stubPush{resolved("r2"), {protocol.TypeSessionState, protocol.SessionState{Session: sess, State: "idle"}}}
	b.until("a second notification", `window.__notes.length >= 2`)
	if got := eval[string](b, `window.__notes[1].title + " | " + window.__notes[1].body`); got != "Claude finished | api #1" {
		t.Errorf("turn-end notification %q", got)
	}
	b.setHidden(false)
	b.noJSDialog()
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// subscribed is a stub's reply to session/subscribe: an empty log.
func subscribed(f *protocol.Frame, state string) protocol.SessionSubscribeResult {
	var d protocol.SessionSubscribe
	json.Unmarshal(f.Data, &d)
	return protocol.SessionSubscribeResult{Session: d.Session, State: state, FirstSeq: 1}
}

// TestWebUIConversationThemes renders the demo's first two turns (text,
// thinking, an MCP tool card with its image) at 1280 and 400 px, light
// and dark: every kind of text stays readable on its background (WCAG AA)
// and nothing overflows. Its screenshots are the README's
// docs/screenshots/ui-<width>-<scheme>.png (copied from the folder the log
// names).
func TestWebUIConversationThemes(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServe(t, testkit.CCProxyBinary(t), "--demo", "--demo-speed", "0")
	b := newBrowser(t)
	b.do("log in", chromedp.Navigate(srv.First.LoginURL))
	b.until("connected", `document.querySelector("#conn").dataset.state === "open"`)
	b.send("Hi! What does this proxy do, and what am I looking at?")
	b.until("the first reply", `document.querySelectorAll(".result-line").length === 1`)
	b.send("Show me an image from one of the MCP servers.")
	b.until("the image", `document.querySelectorAll(".result-line").length === 2 && [...document.querySelectorAll(".tool img")].some(i => i.complete && i.naturalWidth > 0)`)

	const pairs = `(() => {
		const cs = (sel) => getComputedStyle(document.querySelector(sel));
		const bg = (sel) => { for (let e = document.querySelector(sel); e; e = e.parentElement) { const c = getComputedStyle(e).backgroundColor; if (c !== "rgba(0, 0, 0, 0)") return c; } return "rgb(255, 255, 255)"; };
		if (!document.querySelector("#links-probe")) { // links as Markdown and tool cards render them (the demo has none)
			const p = document.createElement("div");
			p.id = "links-probe";
			p.innerHTML = '<div class="msg assistant"><div class="markdown"><a href="#l">a link</a></div></div><details class="tool" open><summary>t</summary><div class="body"><a class="att" href="#a">a file</a></div></details>';
			document.querySelector("#log").append(p);
		}
		return [".msg.user", ".msg.assistant .text", "details.thinking summary", ".tool .tool-name", ".tool pre.input", ".tool pre.result", ".result-line", "#status-line", ".mcp-server", "#links-probe .markdown a", "#links-probe .tool a.att"]
			.map(sel => [sel, cs(sel).color, bg(sel)]);
	})()`
	for _, dark := range []bool{false, true} {
		scheme := map[bool]string{false: "light", true: "dark"}[dark]
		for _, size := range uiSizes[:2] {
			name := size.name + "-" + scheme
			b.emulate(size.width, size.height, dark)
			b.do("reload "+name, chromedp.Reload())
			b.until("the conversation again", `document.querySelectorAll(".result-line").length === 2 && [...document.querySelectorAll(".tool img")].some(i => i.complete && i.naturalWidth > 0)`)
			for _, p := range eval[[][]string](b, pairs) {
				fg, _ := rgb(t, p[1])
				bg, _ := rgb(t, p[2])
				if c := contrast(fg, bg); c < 4.5 {
					t.Errorf("%s: %s: %s on %s has contrast %.2f, want >= 4.5", name, p[0], p[1], p[2], c)
				}
			}
			if eval[bool](b, `document.documentElement.scrollWidth > innerWidth || document.querySelector("#log").scrollWidth > document.querySelector("#log").clientWidth`) {
				t.Errorf("%s: the conversation overflows sideways", name)
			}
			// The probe is no part of the conversation the screenshot shows.
			eval[any](b, `document.querySelector("#links-probe")?.remove(); (l => { l.scrollTop = l.scrollHeight * 0.35; return null })(document.querySelector("#log"))`)
			b.screenshot("ui-" + name)
		}
	}
	b.noJSDialog()
}
