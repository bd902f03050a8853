package webui_test

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/ccproxy/ccproxy/internal/testkit"
)

// TestWebUIBehindCaddy: a real Caddy (Debian's) terminates TLS in front
// of a loopback `serve --demo --public-url https://localhost:PORT/ccp`,
// under a path prefix it strips (handle_path), as README's snippet sets
// it up. The browser logs in with the printed link (the public URL), gets
// a Secure cookie scoped to the prefix, runs a turn over wss through
// Caddy, and after a reload reconnects to the same session with its
// reply; when the websocket drops it reconnects through Caddy on its own
// and a second turn (an MCP image under the prefix) works. Without --public-url the same set-up fails at the first step
// (the Host and Origin are not the proxy's own, and the UI's absolute
// paths miss the prefix).
func TestWebUIBehindCaddy(t *testing.T) {
	caddy := testkit.Caddy(t)
	bin := testkit.CCProxyBinary(t)
	port := freePort(t)
	public := fmt.Sprintf("https://localhost:%d/ccp", port)
	srv := testkit.StartServe(t, bin, "--demo", "--demo-speed", "4", "--public-url", public)
	if !strings.HasPrefix(srv.First.LoginURL, public+"/#code=") {
		t.Fatalf("login link %q: want one under the public URL %s", srv.First.LoginURL, public)
	}
	// Caddy reaches serve through a forwarder that can cut the connections:
	// a dropped websocket, as the browser sees it through Caddy.
	fw := newForwarder(t)
	fw.target.Store(fmt.Sprintf("127.0.0.1:%d", srv.First.Port))
	startCaddy(t, caddy, fmt.Sprintf(`https://localhost:%d {
	tls internal
	handle_path /ccp/* {
		reverse_proxy %s
	}
}
`, port, strings.TrimPrefix(fw.url(), "http://")))

	b := newBrowser(t, chromedp.Flag("ignore-certificate-errors", true))
	b.do("open the login link through Caddy", chromedp.Navigate(srv.First.LoginURL))
	b.until("connected", `document.querySelector("#conn").dataset.state === "open"`)
	if h := eval[string](b, `location.href`); h != public+"/" {
		t.Errorf("the page is at %s, want %s/", h, public)
	}
	cookies := sessionCookies(t, b, public+"/")
	for _, c := range cookies {
		if !c.Secure || !c.HTTPOnly || c.Path != "/ccp/" {
			t.Errorf("session cookie %s: Secure %v, HttpOnly %v, Path %q; want Secure, HttpOnly, /ccp/", c.Name, c.Secure, c.HTTPOnly, c.Path)
		}
	}
	if len(cookies) == 0 {
		t.Fatalf("no session cookie after the login through Caddy")
	}
	eval[any](b, `window.__health = null; fetch("v1/health", {credentials: "same-origin"}).then(r => r.json()).then(h => { window.__health = h.url; }); null`)
	b.until("/v1/health through Caddy", `window.__health !== null`)
	if u := eval[string](b, `window.__health`); u != public {
		t.Errorf("/v1/health through Caddy says url %q, want the public URL %q", u, public)
	}

	b.do("create a session", chromedp.Click(`#new-session button[type="submit"]`))
	b.until("a session", `document.querySelectorAll("#sessions li").length === 1 && !document.querySelector("#send").disabled`)
	b.send("Hi! What does this proxy do, and what am I looking at?")
	b.until("the first reply", `document.querySelectorAll(".result-line").length === 1`)
	want := demoAssistantTexts(t)[0]
	if got := eval[string](b, `document.querySelector(".msg.assistant .text").markdown`); got != want {
		t.Errorf("reply through Caddy:\n got %q\nwant %q", got, want)
	}

	// A reconnect: the page reloads (the cookie holds), the websocket
	// comes back through Caddy, and the session is there with its reply.
	b.do("reload", chromedp.Reload())
	b.until("connected again", `document.querySelector("#conn").dataset.state === "open"`)
	b.until("the session and its reply again", `document.querySelectorAll("#sessions li").length === 1 && document.querySelectorAll(".result-line").length === 1`)
	if got := eval[string](b, `document.querySelector(".msg.assistant .text").markdown`); got != want {
		t.Errorf("reply after the reconnect:\n got %q\nwant %q", got, want)
	}
	// A dropped websocket: the page reconnects through Caddy on its own,
	// and a second turn (an MCP image, loaded under the prefix) works.
	if n := fw.drop(); n == 0 {
		t.Fatalf("no connection to drop")
	}
	b.until("a reconnect through Caddy", `document.body.dataset.connects === "2" && document.querySelector("#conn").dataset.state === "open"`)
	b.send("Show me an image from one of the MCP servers.")
	b.until("the second reply, with its image", `document.querySelectorAll(".result-line").length === 2 && [...document.querySelectorAll(".tool img")].some(i => i.complete && i.naturalWidth > 0)`)
	b.screenshot("caddy-public-url")
	b.noJSDialog()
}

// TestWebUIBehindCaddyTrustedHeader: Caddy in front authenticates the
// user itself and names it in Remote-User (header_up, as basic_auth's
// {http.auth.user.id} would); serve trusts that header from Caddy's
// loopback address (--trusted-header Remote-User --trusted-proxy
// 127.0.0.1). The browser opens the public URL with no login link, no
// token and no cookie, reaches the chat and runs a turn; the same
// server opened directly (no Caddy, so no header) asks for a login link.
// Without the trust the first page asks for a login link too.
func TestWebUIBehindCaddyTrustedHeader(t *testing.T) {
	caddy := testkit.Caddy(t)
	bin := testkit.CCProxyBinary(t)
	port := freePort(t)
	public := fmt.Sprintf("https://localhost:%d", port)
	srv := testkit.StartServe(t, bin, "--demo", "--demo-speed", "4", "--public-url", public,
		"--trusted-header", "Remote-User", "--trusted-proxy", "127.0.0.1")
	startCaddy(t, caddy, fmt.Sprintf(`https://localhost:%d {
	tls internal
	reverse_proxy %s {
		header_up Remote-User alice
	}
}
`, port, strings.TrimPrefix(srv.First.URL, "http://")))

	b := newBrowser(t, chromedp.Flag("ignore-certificate-errors", true))
	b.do("open the public URL, no login link", chromedp.Navigate(public+"/"))
	b.until("connected", `document.querySelector("#conn").dataset.state === "open"`)
	b.do("create a session", chromedp.Click(`#new-session button[type="submit"]`))
	b.until("a session", `document.querySelectorAll("#sessions li").length === 1 && !document.querySelector("#send").disabled`)
	b.send("Hi! What does this proxy do, and what am I looking at?")
	b.until("the first reply", `document.querySelectorAll(".result-line").length === 1`)
	if got, want := eval[string](b, `document.querySelector(".msg.assistant .text").markdown`), demoAssistantTexts(t)[0]; got != want {
		t.Errorf("reply through Caddy:\n got %q\nwant %q", got, want)
	}
	if c := sessionCookies(t, b, public+"/"); len(c) != 0 {
		t.Errorf("a session cookie %s was set: the header alone should let the browser in", c[0].Name)
	}
	if h := eval[string](b, `location.href`); strings.Contains(h, "code=") {
		t.Errorf("the page is at %s: no login link was given", h)
	}

	// Directly, without Caddy: no header, so the login link is needed.
	b.do("open the server directly", chromedp.Navigate(srv.First.URL+"/"))
	b.until("the login help", `!document.querySelector("#login-error").hidden`)
	if eval[string](b, `document.querySelector("#conn").dataset.state`) == "open" {
		t.Errorf("the page opened directly is connected without a login")
	}
	b.noJSDialog()
}

// freePort is a loopback port free a moment ago, for a server that must
// be told its port before it starts (Caddy here, named in --public-url).
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// caddyGlobals are the global options of every test's Caddyfile: no admin
// endpoint, no system trust store, Caddy's own local certificates.
const caddyGlobals = `{
	admin off
	skip_install_trust
	local_certs
	auto_https disable_redirects
}
`

// startCaddy runs caddy with the Caddyfile caddyGlobals + conf (its sites), its state in a temporary
// HOME, until the test ends; it returns once Caddy says it serves.
func startCaddy(t *testing.T, caddy, conf string) {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "Caddyfile")
	if err := os.WriteFile(file, []byte(caddyGlobals+conf), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(caddy, "run", "--config", file, "--adapter", "caddyfile")
	cmd.Env = []string{"HOME=" + dir, "XDG_DATA_HOME=" + filepath.Join(dir, "data"), "XDG_CONFIG_HOME=" + filepath.Join(dir, "config"), "PATH=" + os.Getenv("PATH")}
	testkit.DieWithTest(cmd)
	var stderr testkit.SyncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-done
		if t.Failed() {
			t.Logf("caddy stderr:\n%s", stderr.String())
		}
	})
	if !stderr.WaitFor("serving initial configuration", testkit.UIWait) {
		t.Fatalf("caddy did not start:\n%s", stderr.String())
	}
}
