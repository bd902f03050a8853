package webui_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/ccproxy/ccproxy/internal/testkit"
)

// TestWebUIOverTLS logs the real browser in over TLS: `serve --demo
// --tls-self-signed` on 127.0.0.1, chromium trusting exactly that
// certificate by its public key (--ignore-certificate-errors-spki-list,
// the tlsSPKI of serve's first line), the one-time link, a Secure cookie,
// and a demo reply streamed over wss.
func TestWebUIOverTLS(t *testing.T) {
	bin := testkit.CCProxyBinary(t)
	srv := testkit.StartServe(t, bin, "--demo", "--demo-speed", "4", "--tls-self-signed")
	base := fmt.Sprintf("https://127.0.0.1:%d", srv.First.Port)
	if srv.First.TLSSPKI == "" || !strings.HasPrefix(srv.First.LoginURL, base+"/#code=") {
		t.Fatalf("first line %+v: want an https login link and tlsSPKI", srv.First)
	}
	b := newBrowser(t, chromedp.Flag("ignore-certificate-errors-spki-list", srv.First.TLSSPKI))

	b.do("open the login link", chromedp.Navigate(srv.First.LoginURL))
	b.until("connected", `document.querySelector("#conn").dataset.state === "open"`)
	if !eval[bool](b, `window.isSecureContext && location.protocol === "https:"`) {
		t.Errorf("the page is not a secure https context")
	}
	if h := eval[string](b, `location.href`); strings.Contains(h, "code=") {
		t.Errorf("the login code is still in the URL: %s", h)
	}

	cookies := sessionCookies(t, b, base+"/")
	for _, c := range cookies {
		if !c.Secure || !c.HTTPOnly || c.SameSite != network.CookieSameSiteStrict {
			t.Errorf("session cookie %s: Secure %v, HttpOnly %v, SameSite %q; want Secure, HttpOnly, Strict", c.Name, c.Secure, c.HTTPOnly, c.SameSite)
		}
	}
	if len(cookies) == 0 {
		t.Fatalf("no session cookie after the login")
	}

	b.do("create a session", chromedp.Click(`#new-session button[type="submit"]`))
	b.until("a session", `document.querySelectorAll("#sessions li").length === 1 && !document.querySelector("#send").disabled`)
	eval[any](b, `window.__lens = []; new MutationObserver(() => {
		const el = document.querySelector(".msg.assistant .text");
		if (el) window.__lens.push(el.textContent.length);
	}).observe(document.querySelector("#log"), {subtree: true, childList: true, characterData: true}); null`)
	b.send("Hi! What does this proxy do, and what am I looking at?")
	b.until("the first reply", `document.querySelectorAll(".result-line").length === 1`)
	if got, want := eval[string](b, `document.querySelector(".msg.assistant .text").markdown`), demoAssistantTexts(t)[0]; got != want {
		t.Errorf("reply over TLS:\n got %q\nwant %q", got, want)
	}
	if lens := eval[[]int](b, `[...new Set(window.__lens)]`); len(lens) < 5 {
		t.Errorf("the reply did not stream: %d distinct lengths", len(lens))
	}
	b.screenshot("tls-login")
	b.noJSDialog()
}

// sessionCookies returns the browser's ccproxy session cookies for url.
func sessionCookies(t *testing.T, b *browser, url string) []*network.Cookie {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, testkit.UIWait)
	res, err := chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{url}})
	cancel()
	if err != nil {
		t.Fatalf("reading the cookies: %v", err)
	}
	var out []*network.Cookie
	for _, c := range res.Cookies {
		if strings.HasPrefix(c.Name, "ccproxy_session_") {
			out = append(out, c)
		}
	}
	return out
}
