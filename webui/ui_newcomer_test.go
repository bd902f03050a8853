package webui_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/ccproxy/ccproxy/internal/testkit"
	"github.com/ccproxy/ccproxy/internal/testkit/fakeapi"
)

// TestWebUINewcomer walks what a newcomer hit, against a real serve
// --demo: the plain address (no login link) explains how to log in
// instead of reconnecting forever; Enter in the composer before any
// session creates one and sends; sessions of one project get distinct
// names; a spent login link says how to get a new one, unless the browser
// is still logged in, when the page just carries on.
func TestWebUINewcomer(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServe(t, testkit.CCProxyBinary(t), "--demo", "--demo-speed", "0")
	b := newBrowser(t)

	b.do("open the plain address", chromedp.Navigate(srv.First.URL+"/"))
	b.until("the login help", `!document.querySelector("#login-error").hidden`)
	help := eval[string](b, `document.querySelector("#login-error").innerText`)
	for _, want := range []string{"Log in to ccproxy", "one-time login link", "ccproxy serve", "ccproxy login-url --url " + srv.First.URL, "/v1/login/code"} {
		if !strings.Contains(help, want) {
			t.Errorf("the plain address shows %q, which lacks %q", help, want)
		}
	}
	if n := eval[string](b, `document.body.dataset.connects || "0"`); n != "0" {
		t.Errorf("the page connected %s times without a login", n)
	}
	b.screenshot("newcomer-plain-url")
	// The help fits and reads well at each size and scheme.
	for _, dark := range []bool{false, true} {
		for _, size := range uiSizes {
			name := size.name + map[bool]string{false: "-light", true: "-dark"}[dark]
			b.emulate(size.width, size.height, dark)
			b.do("reopen the plain address", chromedp.Navigate("about:blank"), chromedp.Navigate(srv.First.URL+"/"))
			b.until("the login help", `!document.querySelector("#login-error").hidden`)
			if eval[bool](b, `(r => r.left < 0 || r.right > innerWidth || r.bottom > innerHeight)(document.querySelector("#login-error").getBoundingClientRect())`) {
				t.Errorf("%s: the login help does not fit the screen", name)
			}
			colors := eval[[]string](b, `[getComputedStyle(document.querySelector("#login-error p")).color, getComputedStyle(document.querySelector("#login-error")).backgroundColor]`)
			fg, _ := rgb(t, colors[0])
			bg, _ := rgb(t, colors[1])
			if c := contrast(fg, bg); c < 4.5 {
				t.Errorf("%s: the login help's text has contrast %.2f", name, c)
			}
		}
	}
	b.screenshot("newcomer-plain-url-360-dark")
	b.emulate(400, 780, true)

	// Log in (at 400 px, dark); type and press Enter without creating a
	// session first.
	b.do("open the login link", chromedp.Navigate("about:blank"), chromedp.Navigate(srv.First.LoginURL))
	b.until("connected", `document.querySelector("#conn").dataset.state === "open" && document.querySelector("#login-error").hidden`)
	if eval[bool](b, `document.querySelector("#send").disabled`) {
		t.Errorf("Send is disabled before a session exists")
	}
	const prompt = "Hi! What does this proxy do, and what am I looking at?"
	b.do("type and press Enter", chromedp.SendKeys("#composer textarea", prompt+"\r"))
	b.until("a session with the turn", `document.querySelectorAll("#sessions li").length === 1 && document.querySelectorAll(".msg.user").length === 1 && document.querySelectorAll(".result-line").length === 1`)
	if got := eval[string](b, `document.querySelector(".msg.user").textContent`); got != prompt {
		t.Errorf("the turn sent is %q", got)
	}

	// A second session of the same project gets another name (at 400 px
	// the form is in the folded sidebar).
	b.do("open the sidebar", chromedp.Click("#sidebar-toggle"))
	b.do("new session", chromedp.Click(`#new-session button[type="submit"]`))
	b.until("two sessions", `document.querySelectorAll("#sessions li").length === 2`)
	names := eval[[]string](b, `[...document.querySelectorAll("#sessions li .name")].map(n => n.textContent)`)
	if names[0] == names[1] || !strings.HasPrefix(names[0], "Hi! What does this proxy do") || !strings.HasSuffix(names[1], " #2") {
		t.Errorf("session names %q: want the first prompt, then the folder #2", names)
	}

	b.emulate(1280, 860, false)
	// The same (spent) link in a browser that is still logged in: on.
	b.do("reopen the spent link", chromedp.Navigate("about:blank"), chromedp.Navigate(srv.First.LoginURL))
	b.until("connected again", `document.querySelector("#conn").dataset.state === "open" && document.querySelectorAll("#sessions li").length === 2`)
	if !eval[bool](b, `document.querySelector("#login-error").hidden`) {
		t.Errorf("a logged-in browser reopening its spent link sees %q", eval[string](b, `document.querySelector("#login-error").innerText`))
	}

	// In another browser, the spent link says so and how to get a new one.
	b2 := newBrowser(t)
	b2.do("open the spent link", chromedp.Navigate(srv.First.LoginURL))
	b2.until("the spent-link help", `!document.querySelector("#login-error").hidden`)
	help = eval[string](b2, `document.querySelector("#login-error").innerText`)
	for _, want := range []string{"already used or has expired", "ccproxy login-url --url " + srv.First.URL} {
		if !strings.Contains(help, want) {
			t.Errorf("a spent link shows %q, which lacks %q", help, want)
		}
	}
	b2.screenshot("newcomer-spent-link")
	b.noJSDialog()
	b2.noJSDialog()
}

// TestWebUIPermissionFromRealCLI: a real Claude Code turn (the fake API
// asks for Write, then Edit, then Bash) shows each permission dialog with
// what will happen — the new file's lines, the edit's diff, the command —
// and allowing them changes the project as shown.
func TestWebUIPermissionFromRealCLI(t *testing.T) {
	t.Parallel()
	claude := testkit.Claude(t)
	home, project := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	notes := filepath.Join(project, "notes.txt")
	api := fakeapi.Start(t, fakeapi.First(
		fakeapi.OnText("FILES",
			fakeapi.CallTool("Write", map[string]any{"file_path": notes, "content": "alpha\nbeta\ngamma\n"}),
			fakeapi.CallTool("Edit", map[string]any{"file_path": notes, "old_string": "beta", "new_string": "BETA (edited)"}),
			fakeapi.CallTool("Bash", map[string]any{"command": "touch ccproxy-ui-made-this.txt", "description": "Create a marker file"}),
		),
		fakeapi.OnToolResults(fakeapi.Summarize),
	))
	srv := testkit.StartServeEnv(t, testkit.CCProxyBinary(t), api.Env(home), "--claude", claude, "--project", project)
	b := newBrowser(t)
	b.do("log in", chromedp.Navigate(srv.First.LoginURL))
	b.until("connected", `document.querySelector("#conn").dataset.state === "open"`)
	b.send("FILES: write, edit, then touch a file")

	dialog := func(tool string) (detail, diff string) {
		t.Helper()
		b.until(tool+" permission", `document.querySelector("#permission").open && document.querySelector("#permission .perm-tool").textContent === "`+tool+`"`)
		return eval[string](b, `document.querySelector("#permission .perm-detail").innerText`),
			eval[string](b, `[...document.querySelectorAll("#permission .perm-diff > span")].map(s => s.className + ":" + s.textContent).join("\n")`)
	}
	allow := func() {
		t.Helper()
		b.do("allow once", chromedp.Click("#permission .allow"))
		b.until("the dialog closed", `!document.querySelector("#permission").open || document.querySelector("#permission .perm-tool").textContent === ""`)
	}

	detail, diff := dialog("Write")
	if !strings.HasPrefix(detail, "Write "+notes+" (3 lines") || diff != "add:+ alpha\nadd:+ beta\nadd:+ gamma" {
		t.Errorf("Write dialog:\n%s\n%s", detail, diff)
	}
	b.screenshot("real-cli-write")
	allow()
	b.emulate(400, 780, true) // the next dialogs on a phone, dark
	detail, diff = dialog("Edit")
	if !strings.HasPrefix(detail, "Edit "+notes) || diff != "del:- beta\nadd:+ BETA (edited)" {
		t.Errorf("Edit dialog:\n%s\n%s", detail, diff)
	}
	if eval[bool](b, `(r => r.left < 0 || r.right > innerWidth || r.bottom > innerHeight)(document.querySelector("#permission").getBoundingClientRect())`) {
		t.Errorf("the Edit dialog does not fit a 400 px screen")
	}
	b.screenshot("real-cli-edit")
	allow()
	detail, _ = dialog("Bash")
	if !strings.Contains(detail, "Run this command:") || !strings.Contains(detail, "Create a marker file") || !strings.Contains(detail, "touch ccproxy-ui-made-this.txt") {
		t.Errorf("Bash dialog:\n%s", detail)
	}
	b.screenshot("real-cli-bash")
	allow()
	b.until("the turn's end", `document.querySelectorAll(".result-line").length === 1`)

	if got, err := os.ReadFile(notes); err != nil || string(got) != "alpha\nBETA (edited)\ngamma\n" {
		t.Errorf("notes.txt after the turn: %q %v", got, err)
	}
	if _, err := os.Stat(filepath.Join(project, "ccproxy-ui-made-this.txt")); err != nil {
		t.Errorf("the allowed command did not run: %v", err)
	}
	b.noJSDialog()
}

// TestWebUILoggedOut: when the connection drops and the proxy no longer
// knows the browser's cookie (a restarted proxy mints a new one), the page
// says it is logged out and how to log in again, and stops reconnecting.
func TestWebUILoggedOut(t *testing.T) {
	fw := newForwarder(t)
	srv := testkit.StartServe(t, testkit.CCProxyBinary(t), "--demo", "--allow-origin", fw.url())
	fw.target.Store(fmt.Sprintf("127.0.0.1:%d", srv.First.Port))
	b := newBrowser(t)
	b.do("log in", chromedp.Navigate(fw.url()+srv.First.LoginURL[len(srv.First.URL):]))
	b.until("connected", `document.querySelector("#conn").dataset.state === "open"`)
	if _, err := chromedp.Call(b.ctx, network.ClearBrowserCookies, cdp.Empty{}); err != nil {
		t.Fatalf("clearing the cookies: %v", err)
	}
	if n := fw.drop(); n == 0 {
		t.Fatal("no connection to drop")
	}
	b.until("the logged-out help", `!document.querySelector("#login-error").hidden`)
	help := eval[string](b, `document.querySelector("#login-error").innerText`)
	if !strings.Contains(help, "Logged out") || !strings.Contains(help, "ccproxy login-url") {
		t.Errorf("after losing the login the page shows %q", help)
	}
	if c := eval[string](b, `document.body.dataset.connects`); c != "1" {
		t.Errorf("the page connected %s times: it should stop once logged out", c)
	}
	if s := eval[string](b, `document.querySelector("#conn").textContent`); s != "not logged in" {
		t.Errorf("connection status %q", s)
	}
	b.noJSDialog()
}
