package webui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/tidwall/gjson"

	"github.com/ccproxy/ccproxy/internal/testkit"
	"github.com/ccproxy/ccproxy/protocol"
)

// Browser tests of the reference web UI: Debian's chromium, headless,
// driven by chromedp, against the real ccproxy binary (demo and replay
// backends) and, for the MCP status states, a stub proxy speaking the
// protocol. Screenshots of the main states go to $CCPROXY_SCREENSHOTS (or a
// folder under the system temp dir, named in the log).

type browser struct {
	t      *testing.T
	ctx    context.Context
	dialog atomic.Value // string: text of a JavaScript dialog, if one opened
}

func newBrowser(t *testing.T, extra ...chromedp.ExecAllocatorOption) *browser {
	t.Helper()
	chromium := testkit.Chromium(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:], extra...)
	opts = append(opts,
		chromedp.ExecPath(chromium),
		chromedp.NoSandbox, // as root
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.NoFirstRun,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 860),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	b := &browser{t: t, ctx: ctx}
	if err := chromedp.Listen(ctx, func(ev any) {
		if d, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			b.dialog.Store(fmt.Sprintf("%s: %s", d.Type, d.Message))
			go chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true})
		}
	}); err != nil {
		cancel()
		cancelAlloc()
		testkit.Missing(t, "chromium (chromedp could not start it)", err)
	}
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	return b
}

func (b *browser) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, testkit.UIWait)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

// eval evaluates a JavaScript expression into a value of type T.
func eval[T any](b *browser, expr string) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, testkit.UIWait)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		b.t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// until waits for a JavaScript predicate to hold.
func (b *browser) until(what, predicate string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, testkit.UIWait)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](predicate, chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(testkit.UIWait))); err != nil {
		b.t.Fatalf("waiting for %s (%s): %v", what, predicate, err)
	}
}

func (b *browser) screenshot(name string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, testkit.UIWait)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	dir := os.Getenv("CCPROXY_SCREENSHOTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "ccproxy-screenshots")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.t.Fatal(err)
	}
	path := filepath.Join(dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
	b.t.Logf("screenshot: %s", path)
}

func (b *browser) noJSDialog() {
	b.t.Helper()
	if d, _ := b.dialog.Load().(string); d != "" {
		b.t.Fatalf("a JavaScript dialog opened: %s (markup was executed)", d)
	}
}

// send types a turn into the composer and sends it.
func (b *browser) send(text string) {
	b.t.Helper()
	js, _ := json.Marshal(text)
	eval[any](b, `document.querySelector("#composer textarea").value = `+string(js)+`; null`)
	b.do("send "+text, chromedp.Click("#send"))
}

// forwarder relays TCP connections to a target and can cut them all: a
// network drop on the server side, as the browser sees it.
type forwarder struct {
	ln     net.Listener
	target atomic.Value // string
	mu     sync.Mutex
	conns  map[net.Conn]bool
	wg     sync.WaitGroup
}

func newForwarder(t *testing.T) *forwarder {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &forwarder{ln: ln, conns: map[net.Conn]bool{}}
	f.wg.Add(1)
	go f.accept()
	t.Cleanup(func() {
		ln.Close()
		f.drop()
		f.wg.Wait()
	})
	return f
}

func (f *forwarder) url() string { return "http://" + f.ln.Addr().String() }

func (f *forwarder) accept() {
	defer f.wg.Done()
	for {
		c, err := f.ln.Accept()
		if err != nil {
			return
		}
		u, err := net.Dial("tcp", f.target.Load().(string))
		if err != nil {
			c.Close()
			continue
		}
		f.mu.Lock()
		f.conns[c], f.conns[u] = true, true
		f.mu.Unlock()
		f.wg.Add(2)
		pipe := func(dst, src net.Conn) {
			defer f.wg.Done()
			io.Copy(dst, src)
			dst.Close()
			src.Close()
		}
		go pipe(u, c)
		go pipe(c, u)
	}
}

// drop cuts every relayed connection.
func (f *forwarder) drop() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := len(f.conns)
	for c := range f.conns {
		c.Close()
		delete(f.conns, c)
	}
	return n
}

// demoAssistantTexts returns the texts of the demo transcript's assistant
// text blocks, in order.
func demoAssistantTexts(t *testing.T) []string {
	data, err := os.ReadFile("../internal/replay/transcripts/demo.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(data), "\n") {
		if gjson.Get(l, "type").Str == "assistant" && gjson.Get(l, "message.content.0.type").Str == "text" {
			out = append(out, gjson.Get(l, "message.content.0.text").Str)
		}
	}
	return out
}

// TestWebUIDemo walks the demo in a real browser: login by the one-time
// link, streaming text, the MCP image, a permission prompt, a network drop
// in the middle of a streamed reply, and the MCP status dots.
func TestWebUIDemo(t *testing.T) {
	b := newBrowser(t)
	bin := testkit.CCProxyBinary(t)
	fw := newForwarder(t)
	srv := testkit.StartServe(t, bin, "--demo", "--demo-speed", "2", "--allow-origin", fw.url())
	fw.target.Store(fmt.Sprintf("127.0.0.1:%d", srv.First.Port))
	login := fw.url() + srv.First.LoginURL[len(srv.First.URL):]

	// The page loads, logs in, connects; the code leaves the address bar
	// and the cookie is out of JavaScript's reach.
	b.do("open the login link", chromedp.Navigate(login))
	b.until("connected", `document.querySelector("#conn").dataset.state === "open"`)
	if h := eval[string](b, `location.href`); strings.Contains(h, "code=") {
		t.Errorf("the login code is still in the URL: %s", h)
	}
	if c := eval[string](b, `document.cookie`); strings.Contains(c, "ccproxy_session") {
		t.Errorf("the session cookie is readable from JavaScript: %q", c)
	}

	b.do("create a session", chromedp.Click(`#new-session button[type="submit"]`))
	b.until("a session", `document.querySelectorAll("#sessions li").length === 1 && !document.querySelector("#send").disabled`)

	// Turn 1 streams: watch the reply grow.
	eval[any](b, `window.__lens = []; new MutationObserver(() => {
		const el = document.querySelector(".msg.assistant .text");
		if (el) window.__lens.push(el.textContent.length);
	}).observe(document.querySelector("#log"), {subtree: true, childList: true, characterData: true}); null`)
	b.send("Hi! What does this proxy do, and what am I looking at?")
	b.until("the first reply", `document.querySelectorAll(".result-line").length === 1`)
	texts := demoAssistantTexts(t)
	// The Markdown source, as streamed, and rendered: the demo's `claude`
	// is a code span.
	first := eval[string](b, `document.querySelector(".msg.assistant .text").markdown`)
	if first != texts[0] {
		t.Errorf("first reply:\n got %q\nwant %q", first, texts[0])
	}
	lens := eval[[]int](b, `[...new Set(window.__lens)]`)
	if len(lens) < 5 {
		t.Errorf("the reply did not stream: the text took %d distinct lengths (%v)", len(lens), lens)
	}
	if got := eval[string](b, `document.querySelector(".msg.assistant .text code").textContent`); got != "claude" {
		t.Errorf("the first code span of the reply is %q, want claude rendered as Markdown", got)
	}
	if eval[bool](b, `document.querySelector("details.thinking").open`) {
		t.Errorf("thinking should be collapsed")
	}
	if eval[int](b, `document.querySelectorAll(".msg.user").length`) != 1 {
		t.Errorf("the user's message is not shown once")
	}
	b.screenshot("chat")

	// Turn 2: an MCP tool card with the image, loaded from /v1/blobs with
	// the cookie.
	b.send("Show me an image from one of the MCP servers.")
	b.until("the image", `[...document.querySelectorAll(".tool img")].some(i => i.complete && i.naturalWidth > 0)`)
	if name := eval[string](b, `document.querySelector(".tool .tool-name").textContent`); name != "demo · get-tiny-image" {
		t.Errorf("tool card name %q", name)
	}
	if src := eval[string](b, `document.querySelector(".tool img").getAttribute("src")`); !strings.HasPrefix(src, "/v1/blobs/") {
		t.Errorf("image src %q, want a blob URL", src)
	}
	// The text around the image, with neither base64 nor the placeholder
	// of the image the card shows (nor the CLI's note of its saved copy).
	if txt := eval[string](b, `document.querySelector(".tool .result").textContent`); strings.Contains(txt, "iVBOR") || strings.Contains(txt, "[image image/png") || strings.Contains(txt, "[Image: source") || !strings.Contains(txt, "Here's the image you requested") {
		t.Errorf("tool result text %q: want the text around the image, no base64, no placeholder", txt)
	}
	b.until("second result", `document.querySelectorAll(".result-line").length === 2`)
	// The CLI's saved copy of the image (recorded on another machine) is
	// not asked for, and nothing the page loaded failed.
	if !eval[bool](b, `"responseStatus" in PerformanceResourceTiming.prototype`) {
		t.Fatal("this chromium's resource timing has no responseStatus")
	}
	if bad := eval[[]string](b, `performance.getEntriesByType("resource").filter(e => e.name.includes("/v1/tool-results/") || e.responseStatus >= 400).map(e => e.name + " " + e.responseStatus)`); len(bad) != 0 {
		t.Errorf("requests for the saved copy or that failed: %q", bad)
	}
	b.screenshot("mcp-image")

	// Turn 3: the permission dialog; allow.
	b.send("Now echo a greeting through the demo server.")
	b.until("the permission dialog", `document.querySelector("#permission").open`)
	if tool := eval[string](b, `document.querySelector("#permission .perm-tool").textContent`); tool != "demo · echo" {
		t.Errorf("permission for %q", tool)
	}
	if in := eval[string](b, `document.querySelector("#permission .perm-input").textContent`); !strings.Contains(in, "Hello from the ccproxy demo!") {
		t.Errorf("permission input %q", in)
	}
	b.screenshot("permission")
	b.do("allow", chromedp.Click("#permission .allow"))
	b.until("the echo result", `!document.querySelector("#permission").open && [...document.querySelectorAll(".tool .result")].some(r => r.textContent.includes("Echo: Hello from the ccproxy demo!"))`)
	b.until("third result", `document.querySelectorAll(".result-line").length === 3`)

	// Turn 4: cut the network while the reply streams; the page reconnects,
	// resumes after its last seq, and shows the reply once, whole.
	b.send("Thanks! Summarize what we just did.")
	b.until("turn 4 streaming", `[...document.querySelectorAll(".msg.assistant .text")].some(e => e.textContent.startsWith("Here is what"))`)
	if n := fw.drop(); n == 0 {
		t.Fatalf("no connection to drop")
	}
	b.until("a reconnect", `document.body.dataset.connects === "2"`)
	b.until("fourth result", `document.querySelectorAll(".result-line").length === 4`)
	last := eval[string](b, `[...document.querySelectorAll(".msg.assistant .text")].pop().markdown`)
	if want := texts[len(texts)-1]; last != want {
		t.Errorf("after the drop, the reply is\n%q\nwant\n%q", last, want)
	}
	if n := eval[int](b, `document.querySelectorAll(".msg.user").length`); n != 4 {
		t.Errorf("%d user messages shown, want 4", n)
	}
	if n := eval[int](b, `document.querySelectorAll(".tool").length`); n != 2 {
		t.Errorf("%d tool cards, want 2", n)
	}

	// The MCP status dot of the demo's one server.
	b.until("MCP dots", `[...document.querySelectorAll(".mcp-server")].map(e => e.dataset.server + ":" + e.querySelector(".dot").dataset.status).join(" ") === "demo:connected"`)
	b.screenshot("demo")
	b.noJSDialog()
}

// TestWebUIRendersMarkupAsText replays a real capture whose model text,
// thinking, tool input and MCP tool result all carry markup: none of it may
// become DOM, nothing may run. (The model's text is rendered as Markdown,
// whose raw HTML must stay text.)
func TestWebUIRendersMarkupAsText(t *testing.T) {
	b := newBrowser(t)
	bin := testkit.CCProxyBinary(t)
	transcript, err := filepath.Abs("../testdata/transcripts/captured/xss.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	srv := testkit.StartServe(t, bin, "--replay", transcript, "--demo-speed", "0")
	b.do("open", chromedp.Navigate(srv.First.LoginURL))
	b.until("connected", `document.querySelector("#conn").dataset.state === "open"`)
	b.do("create a session", chromedp.Click(`#new-session button[type="submit"]`))
	b.until("a session", `!document.querySelector("#send").disabled`)
	const payload = `<img src=x onerror=alert(1)> <script>alert(2)</script> <b>bold?</b> &amp; <a href="javascript:alert(3)">link</a>`
	b.send("Render this: " + payload)
	b.until("the reply", `document.querySelectorAll(".result-line").length === 1`)
	b.until("the tool result", `[...document.querySelectorAll(".tool .result")].some(r => r.textContent.startsWith("Echo: "))`)
	// Let an injected onerror or script fire if there were any.
	eval[any](b, `new Promise(r => setTimeout(r, 300)).then(() => null)`)

	if n := eval[int](b, `document.querySelectorAll("#log img, #log script, #log b, #log a, #permission img").length`); n != 0 {
		t.Errorf("markup became %d DOM element(s)", n)
	}
	if n := eval[int](b, `document.querySelector("#log").textContent.split(`+"`"+payload+"`"+`).length - 1`); n < 2 {
		t.Errorf("the payload shows as text %d times, want it in the thinking and the tool result (>= 2)", n)
	}
	// The model's text and the user's are Markdown: raw HTML shows as
	// text, and &amp; is the entity for &.
	asMarkdown := strings.ReplaceAll(payload, "&amp;", "&")
	if n := eval[int](b, `[...document.querySelectorAll("#log .markdown")].filter(e => e.textContent.includes(`+"`"+asMarkdown+"`"+`)).length`); n < 3 {
		t.Errorf("the payload shows as text in %d Markdown blocks, want 3 (the user turn and the two text blocks)", n)
	}
	b.noJSDialog()
	b.screenshot("xss-inert")
}

// TestWebUIMCPStatusStates feeds the page an mcp/status with every status
// from a stub proxy (the real ones come from live sessions and probes; here
// the UI's rendering is under test) and checks the dots, their reasons, and
// the approve button's request.
func TestWebUIMCPStatusStates(t *testing.T) {
	b := newBrowser(t)
	approved := make(chan string, 1)
	statuses := []protocol.MCPServerStatus{
		{Name: "a-connected", Status: "connected", Scope: "user", Approval: "not-needed", ToolCount: protocol.Ptr[int64](13)},
		{Name: "b-failed", Status: "failed", Scope: "local", Approval: "not-needed", Error: "ECONNREFUSED: Unable to connect"},
		{Name: "c-pending", Status: "pending", Scope: "user", Approval: "not-needed"},
		{Name: "d-needs-auth", Status: "needs-auth", Scope: "user", Approval: "not-needed", Error: "the server requires OAuth authorization"},
		{Name: "e-disabled", Status: "disabled", Scope: "local", Approval: "not-needed"},
		{Name: "f-awaiting", Status: "awaiting-approval", Scope: "project", Approval: "awaiting"},
		{Name: "g-rejected", Status: "rejected", Scope: "project", Approval: "rejected"},
	}
	stub := stubBackend(t, nil, func(f *protocol.Frame) (protocol.Data, []stubPush) {
		switch {
		case f == nil:
		case f.Type == protocol.TypeMCPApprove:
			var a protocol.MCPApprove
			json.Unmarshal(f.Data, &a)
			approved <- a.Name
			return protocol.MCPApprovalResult{Name: a.Name, Approval: "approved"}, nil
		case f.Type == protocol.TypeMCPSubscribe:
			return nil, []stubPush{{protocol.TypeMCPStatus, protocol.MCPStatus{Servers: statuses}}}
		}
		return nil, nil
	})

	b.do("open", chromedp.Navigate(stub.URL+"/"))
	b.until("the dots", `document.querySelectorAll(".mcp-server").length === 7`)
	for _, s := range statuses {
		sel := fmt.Sprintf(`.mcp-server[data-server=%q]`, s.Name)
		if got := eval[string](b, `document.querySelector('`+sel+` .dot').dataset.status`); got != s.Status {
			t.Errorf("%s: dot status %q", s.Name, got)
		}
		title := eval[string](b, `document.querySelector('`+sel+`').title`)
		if !strings.Contains(title, s.Status) || !strings.Contains(title, "set up by ") || strings.Contains(title, " scope") || (s.Error != "" && !strings.Contains(title, s.Error)) {
			t.Errorf("%s: title %q lacks status, who set it up (in plain words, not \"scope\") or reason", s.Name, title)
		}
	}
	if title := eval[string](b, `document.querySelector('.mcp-server[data-server="a-connected"]').title`); !strings.Contains(title, "13 tools") {
		t.Errorf("tool count missing: %q", title)
	}
	colors := eval[[]string](b, `[...document.querySelectorAll(".mcp-server .dot")].map(d => getComputedStyle(d).backgroundColor + "/" + getComputedStyle(d).borderColor + "/" + getComputedStyle(d).animationName)`)
	seen := map[string]bool{}
	for _, c := range colors[:4] { // connected, failed, pending, needs-auth look different
		seen[c] = true
	}
	if len(seen) != 4 {
		t.Errorf("the dots of connected, failed, pending and needs-auth must look different: %v", colors)
	}
	if n := eval[int](b, `document.querySelectorAll(".mcp-server button.approve").length`); n != 1 {
		t.Errorf("%d approve buttons, want 1 (the awaiting server)", n)
	}
	b.screenshot("mcp-status")
	b.do("approve", chromedp.Click(`.mcp-server[data-server="f-awaiting"] button.approve`))
	select {
	case name := <-approved:
		if name != "f-awaiting" {
			t.Errorf("approved %q", name)
		}
	case <-time.After(testkit.UIWait):
		t.Fatal("the approve button sent no mcp/approve")
	}
	b.noJSDialog()
}
