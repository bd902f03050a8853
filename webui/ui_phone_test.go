package webui_test

// What a user at a phone (390 px, touch) or with a flaky connection does,
// as an explorer of the UI found it going wrong.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/ccproxy/ccproxy/internal/testkit"
	"github.com/ccproxy/ccproxy/internal/testkit/fakeapi"
	"github.com/ccproxy/ccproxy/protocol"
)

// The login link opened in the tab that shows how to log in changes only
// the URL's fragment, which loads nothing: the page logs in all the same.
func TestWebUILoginLinkInTheSameTab(t *testing.T) {
	srv := testkit.StartServe(t, testkit.CCProxyBinary(t), "--demo")
	b := newBrowser(t)
	b.do("open the page", chromedp.Navigate(srv.First.URL+"/"))
	b.until("the login help", `!document.querySelector("#login-error").hidden`)
	if off, ph := eval[bool](b, `document.querySelector("#send").disabled`), eval[string](b, `document.querySelector("#composer textarea").placeholder`); !off || !strings.Contains(ph, "Log in") {
		t.Errorf("logged out, Send is disabled %v and the message box says %q", off, ph)
	}
	loaded := make(chan struct{}, 1)
	chromedp.Listen(b.ctx, func(ev any) {
		if _, ok := ev.(*page.EventLoadEventFired); ok {
			select {
			case loaded <- struct{}{}:
			default:
			}
		}
	})
	eval[any](b, fmt.Sprintf(`location.href = %q; null`, srv.First.LoginURL))
	select {
	case <-loaded:
	case <-time.After(testkit.UIWait): // a bound, not a measure: the load is the signal
		t.Fatal("the page did nothing with the login link opened in its tab")
	}
	b.until("logged in and connected", `document.querySelector("#login-error").hidden && document.querySelector("#conn").dataset.state === "open"`)
	if h := eval[string](b, `location.hash`); h != "" {
		t.Errorf("the login code stays in the address bar: %q", h)
	}
}

// On a touch screen Enter is a new line (a soft keyboard has no Shift) and
// the Send button sends; the box says so.
func TestWebUIPhoneComposer(t *testing.T) {
	srv := testkit.StartServe(t, testkit.CCProxyBinary(t), "--demo", "--demo-speed", "0")
	b := newBrowser(t)
	b.do("a phone", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile, chromedp.EmulateTouch))
	b.do("log in", chromedp.Navigate(srv.First.LoginURL))
	b.until("connected", `document.querySelector("#conn").dataset.state === "open"`)
	if ph := eval[string](b, `document.querySelector("#composer textarea").placeholder`); strings.Contains(ph, "Enter to send") {
		t.Errorf("on a touch screen the message box says %q", ph)
	}
	b.do("type two lines", chromedp.SendKeys("#composer textarea", "first line\rsecond line"))
	if v := eval[string](b, `document.querySelector("#composer textarea").value`); v != "first line\nsecond line" {
		t.Errorf("after Enter on a touch screen the box holds %q, want two lines", v)
	}
	if n := eval[int](b, `document.querySelectorAll(".msg.user").length`); n != 0 {
		t.Errorf("Enter on a touch screen sent the message (%d user messages)", n)
	}
	b.do("send", chromedp.Click("#send"))
	b.until("sent", `document.querySelectorAll(".msg.user").length === 1 && document.querySelector("#composer textarea").value === ""`)
	// The sessions overlay closes with a tap on the chat beside it.
	b.do("open the sessions", chromedp.Click("#sidebar-toggle"))
	b.until("the sessions open", `document.body.dataset.sidebar === "open"`)
	b.do("tap beside them", chromedp.MouseClickXY(380, 400))
	b.until("the sessions closed", `document.body.dataset.sidebar === "closed"`)
}

// A message sent while the connection is down is not lost: it goes back in
// the box, with no bubble that looks sent, and is sent once connected.
// While down, the status says so plainly and the MCP chips look stale; a
// permission answer reads as what happened.
func TestWebUISendWhileDisconnected(t *testing.T) {
	fw := newForwarder(t)
	srv := testkit.StartServe(t, testkit.CCProxyBinary(t), "--demo", "--demo-speed", "0", "--allow-origin", fw.url())
	target := fmt.Sprintf("127.0.0.1:%d", srv.First.Port)
	fw.target.Store(target)
	b := newBrowser(t)
	b.do("log in", chromedp.Navigate(fw.url()+srv.First.LoginURL[len(srv.First.URL):]))
	b.until("connected", `document.querySelector("#conn").dataset.state === "open"`)
	for i, prompt := range []string{"Hi", "image", "echo"} { // the demo's third turn asks
		b.send(prompt)
		if prompt == "echo" {
			b.until("the permission dialog", `document.querySelector("#permission").open`)
			if st := eval[string](b, `document.querySelector("#status-line").textContent`); st != "waiting for your answer…" {
				t.Errorf("while the permission dialog waits the status says %q", st)
			}
			b.do("allow", chromedp.Click("#permission .allow"))
			b.until("the answer noted", `[...document.querySelectorAll(".notice")].some(n => n.textContent === "Allowed")`)
		}
		b.until(fmt.Sprintf("turn %d's end", i+1), fmt.Sprintf(`document.querySelectorAll(".result-line").length === %d`, i+1))
	}
	fw.target.Store("127.0.0.1:1") // the proxy is out of reach
	if n := fw.drop(); n == 0 {
		t.Fatal("no connection to drop")
	}
	b.until("disconnected", `document.querySelector("#conn").dataset.state === "closed"`)
	if s := eval[string](b, `document.querySelector("#conn").textContent`); s != "reconnecting…" {
		t.Errorf("while disconnected the status says %q", s)
	}
	if o := eval[[]string](b, `[...document.querySelectorAll(".mcp-server")].map(c => getComputedStyle(c).opacity)`); len(o) == 0 || o[0] == "1" {
		t.Errorf("while disconnected the MCP chips' opacity is %v: they look live", o)
	}
	b.send("are you there?")
	b.until("the message back in the box", `document.querySelector("#composer textarea").value === "are you there?"`)
	if n := eval[int](b, `document.querySelectorAll(".msg.user").length`); n != 3 {
		t.Errorf("%d user bubbles after three turns and a message that was not sent, want 3", n)
	}
	if s := eval[string](b, `[...document.querySelectorAll(".notice")].map(n => n.textContent).join(" | ")`); !strings.Contains(s, "back in the box") {
		t.Errorf("the notices %q do not say where the message went", s)
	}
	fw.target.Store(target)
	b.until("connected again", `document.querySelector("#conn").dataset.state === "open"`)
	b.do("send again", chromedp.Click("#send"))
	b.until("sent", `document.querySelectorAll(".msg.user").length === 4 && document.querySelector("#composer textarea").value === ""`)
}

// At 390 px seven MCP servers keep the header to one row of chips (scrolled
// sideways), their actions in each server's panel; the header's and the
// composer's controls are at least 32 px tall, to be tapped.
func TestWebUIPhoneManyMCPServers(t *testing.T) {
	var list []protocol.MCPServerStatus
	for i, st := range []string{"connected", "failed", "needs-auth", "pending", "disabled", "connected", "awaiting-approval"} {
		list = append(list, protocol.MCPServerStatus{Name: fmt.Sprintf("server-%d-%s", i, st), Status: st, Scope: "user", Approval: "not-needed", Transport: "http"})
	}
	stub := stubBackend(t, []string{protocol.CapSessions, protocol.CapMCPStatus, protocol.CapMCPLive, protocol.CapMCPManage}, func(f *protocol.Frame) (protocol.Data, []stubPush) {
		if f != nil && f.Type == protocol.TypeMCPSubscribe {
			return nil, []stubPush{{protocol.TypeMCPStatus, protocol.MCPStatus{Servers: list}}}
		}
		return nil, nil
	})
	b := newBrowser(t)
	b.do("a phone", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile, chromedp.EmulateTouch))
	b.do("open", chromedp.Navigate(stub.URL+"/"))
	b.until("seven chips", `document.querySelectorAll(".mcp-server").length === 7`)
	b.screenshot("phone-many-mcp-servers")
	// One row: the chips scroll sideways, everything else stays in view.
	if h := eval[float64](b, `document.querySelector("#top").getBoundingClientRect().height`); h > 60 {
		t.Errorf("the header is %.0f px tall with seven MCP servers at 390 px (one row: at most 60)", h)
	}
	if out := eval[[]string](b, `[...document.querySelectorAll("#top > *")].filter(e => e.getClientRects().length > 0 && (e.getBoundingClientRect().right > innerWidth + 0.5 || e.getBoundingClientRect().left < -0.5)).map(e => e.id || e.className)`); len(out) > 0 {
		t.Errorf("header items outside the 390 px screen: %v", out)
	}
	if !eval[bool](b, `(m => m.scrollWidth > m.clientWidth)(document.querySelector("#mcp"))`) {
		t.Errorf("seven chips fit at 390 px? the strip does not scroll")
	}
	if n := eval[int](b, `[...document.querySelectorAll(".mcp-server button")].filter(x => x.getClientRects().length > 0).length`); n != 0 {
		t.Errorf("%d action buttons shown on the chips at 390 px", n)
	}
	small := eval[[]string](b, `[...document.querySelectorAll("#top button, #top [role=button], #composer button, #composer select, #composer textarea")]
		.filter(x => x.getClientRects().length > 0 && x.getBoundingClientRect().height < 31.5)
		.map(x => (x.id || x.className || x.tagName) + " " + Math.round(x.getBoundingClientRect().height) + " px")`)
	if len(small) > 0 {
		t.Errorf("controls under 32 px tall at 390 px: %v", small)
	}
	// At 400 px (a narrow desktop window or VS Code's side panel), one row
	// too, light and dark.
	for _, v := range uiViews[2:] {
		b.view(v)
		if h := eval[float64](b, `document.querySelector("#top").getBoundingClientRect().height`); h > 60 {
			t.Errorf("%s: the header is %.0f px tall with seven MCP servers (one row: at most 60)", v.name, h)
		}
	}
	b.do("tap a chip", chromedp.Click(`.mcp-server[data-server="server-0-connected"]`))
	b.until("its panel, with its actions", `document.querySelector("#mcp-panel").open && document.querySelector("#mcp-panel .mcp-actions button.disable") !== null`)
}

// An API error the CLI reports (here a 401 from the fake API) is shown
// once, as an error, and the turn's result line says it failed.
func TestWebUIAPIErrorShownOnce(t *testing.T) {
	t.Parallel()
	claude := testkit.Claude(t)
	home, project := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	api := fakeapi.Start(t, fakeapi.OnText("[AUTH]", fakeapi.Fail(401, "invalid x-api-key")))
	srv := testkit.StartServeEnv(t, testkit.CCProxyBinary(t), api.Env(home), "--claude", claude, "--project", project)
	b := newBrowser(t)
	b.do("log in", chromedp.Navigate(srv.First.LoginURL))
	b.until("connected", `document.querySelector("#conn").dataset.state === "open"`)
	b.send("[AUTH] please")
	b.until("the turn's end", `document.querySelectorAll(".result-line").length === 1`)
	shown := eval[[]string](b, `[...document.querySelectorAll("#log .msg.assistant, #log .notice")].filter(e => /401|api error|api key/i.test(e.textContent)).map(e => e.className + ": " + e.textContent)`)
	if len(shown) != 1 || !strings.Contains(shown[0], "error") {
		t.Errorf("the API error is shown %d times, want once as an error: %q\nthe log: %s", len(shown), shown, eval[string](b, `document.querySelector("#log").innerText`))
	}
	if line := eval[string](b, `document.querySelector(".result-line").className + ": " + document.querySelector(".result-line").textContent`); !strings.Contains(line, "error: failed") {
		t.Errorf("the failed turn's result line: %q", line)
	}
}

// An interrupt reads as a notice, not as words the user typed (the CLI
// records it as a user message, "[Request interrupted by user…]").
func TestWebUIInterruptIsANotice(t *testing.T) {
	srv := testkit.StartServe(t, testkit.CCProxyBinary(t), "--demo", "--demo-speed", "0")
	b := newBrowser(t)
	b.do("log in", chromedp.Navigate(srv.First.LoginURL))
	b.until("connected", `document.querySelector("#conn").dataset.state === "open"`)
	for i, prompt := range []string{"Hi", "image"} {
		b.send(prompt)
		b.until(fmt.Sprintf("turn %d's end", i+1), fmt.Sprintf(`document.querySelectorAll(".result-line").length === %d`, i+1))
	}
	b.send("echo") // the demo's third turn asks
	b.until("the permission dialog", `document.querySelector("#permission").open`)
	eval[any](b, `document.querySelector("#interrupt").click(); null`) // the modal dialog is over it
	b.until("the interrupted turn's end", `document.querySelectorAll(".result-line").length === 3`)
	if got := eval[[]string](b, `[...document.querySelectorAll("#log .msg.user")].map(e => e.textContent)`); len(got) != 3 {
		t.Errorf("user bubbles %q, want the three prompts only", got)
	}
	if !eval[bool](b, `[...document.querySelectorAll("#log .notice")].some(n => n.textContent === "Interrupted")`) {
		t.Error("no notice that the turn was interrupted")
	}
}
