package webui_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/tidwall/gjson"

	"github.com/ccproxy/ccproxy/internal/testkit"
	"github.com/ccproxy/ccproxy/internal/testkit/fakeapi"
	"github.com/ccproxy/ccproxy/internal/testkit/mcptest"
)

// TestWebUIMCPPanel: the MCP panel against a real `ccproxy serve` (the
// real CLI, the fake API, the test MCP server as real processes):
//   - a failed server's panel shows the probe's error and its stderr tail,
//     in plain words, in each of uiViews;
//   - a project server approved in settings.local.json of an untrusted
//     workspace says why it is off and offers to trust the workspace,
//     naming the server in the confirmation; confirming records
//     hasTrustDialogAccepted in ~/.claude.json and the server connects;
//   - add → test → save: the new server shows connected, its panel lists
//     its tools with their parameters, and the call form calls one (result
//     shown; the proxy's validation errors shown by field);
//   - edit: the form shows the secret masked, the user changes another
//     value and saves without retyping it: the file keeps the secret, and
//     the page never held it;
//   - disable and enable for the project (disabledMcpServers);
//   - at 400 px the panel and the form fit the screen.
func TestWebUIMCPPanel(t *testing.T) {
	t.Parallel()
	bin := testkit.CCProxyBinary(t)
	claude := testkit.Claude(t)
	testmcp := mcptest.Command(t)
	api := fakeapi.Start(t, fakeapi.First(fakeapi.OnText("hello", fakeapi.Say("hi"))))
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home, project := filepath.Join(root, "home"), filepath.Join(root, "project")
	for _, d := range []string{filepath.Join(home, "tmp"), filepath.Join(project, ".claude")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeJSON := func(path string, v any) {
		b, _ := json.MarshalIndent(v, "", "  ")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// pj: a project server approved in the project's settings of an
	// untrusted workspace. broken: a user server whose process exits with
	// a message on stderr.
	writeJSON(filepath.Join(project, ".mcp.json"), map[string]any{"mcpServers": map[string]any{"pj": map[string]any{"command": testmcp}, "pk": map[string]any{"command": testmcp}}})
	writeJSON(filepath.Join(project, ".claude", "settings.local.json"), map[string]any{"enabledMcpjsonServers": []string{"pj"}})
	claudeJSON := filepath.Join(home, ".claude.json")
	writeJSON(claudeJSON, map[string]any{"mcpServers": map[string]any{"broken": map[string]any{"type": "stdio", "command": testmcp, "args": []string{"--no-such-flag"}, "env": map[string]any{}}}})
	env := append(api.Env(home), "HOME="+home)
	srv := testkit.StartServeEnv(t, bin, env, "--claude", claude, "--project", project)
	const secret = "tok-secret-5f1c9a77"

	b := newBrowser(t)
	b.do("open a login link", chromedp.Navigate(loginLink(t, srv)))
	b.until("connected", `document.querySelector("#conn").dataset.state === "open"`)
	chip := func(name string) string {
		return fmt.Sprintf(`document.querySelector('.mcp-server[data-server=%q]')`, name)
	}
	panelOf := func(name string) string {
		return fmt.Sprintf(`(document.querySelector("#mcp-panel").open && document.querySelector("#mcp-panel").dataset.server === %q)`, name)
	}
	const closeTopJS = `document.querySelector("#mcp-panel .mcp-panel-close").getBoundingClientRect().top`
	var closeTop float64
	open := func(name string) {
		t.Helper()
		b.until(name+"'s chip", chip(name)+` !== null`)
		b.do("open "+name, chromedp.Click(fmt.Sprintf(`.mcp-server[data-server=%q] > span:last-of-type`, name)))
		b.until(name+"'s panel", panelOf(name))
		closeTop = eval[float64](b, closeTopJS)
	}
	closePanel := func() {
		t.Helper()
		// The panel's head stays where it was when the panel opened, however
		// its content grew since (a centred dialog moved it, and a click
		// aimed at the close button could land on the backdrop).
		b.until("the tools settled", `document.querySelector("#mcp-panel .mcp-tools-state").textContent !== "loading tools…"`)
		if top := eval[float64](b, closeTopJS); top != closeTop {
			t.Errorf("the close button moved from y=%v to y=%v while the panel was open", closeTop, top)
		}
		b.do("close the panel", chromedp.Click(`#mcp-panel .mcp-panel-close`))
		b.until("the panel closed", `!document.querySelector("#mcp-panel").open`)
	}

	// A failed server: the probe's error and the server's stderr tail.
	b.until("broken failed", chip("broken")+`?.querySelector(".dot").dataset.status === "failed"`)
	// The configured servers show at load, before any session.
	if got := eval[string](b, `document.querySelectorAll("#sessions li").length + " " + [...document.querySelectorAll(".mcp-server")].map(e => e.dataset.server).join(",")`); got != "0 broken,pj,pk" {
		t.Errorf("sessions and chips at load: %q, want no session and the three configured servers", got)
	}
	// Its panel, in each view (switched in place): the probe's error and
	// stderr tail, and plain words, not the config's terms: who set it up,
	// and what its approval means.
	for _, v := range uiViews {
		b.view(v)
		open("broken")
		b.until(v.name+": the stderr tail", `!document.querySelector("#mcp-panel .mcp-failure").hidden && !document.querySelector("#mcp-panel .stderr").hidden`)
		if tail := eval[string](b, `document.querySelector("#mcp-panel .stderr").textContent`); !strings.Contains(tail, "no-such-flag") {
			t.Errorf("%s: stderr tail %q, want testmcp's complaint about --no-such-flag", v.name, tail)
		}
		if src := eval[string](b, `document.querySelector('#mcp-panel dd[data-field="source"]')?.textContent || ""`); src != claudeJSON {
			t.Errorf("%s: source %q, want %s", v.name, src, claudeJSON)
		}
		info := eval[string](b, `document.querySelector("#mcp-panel dl").innerText`)
		for _, want := range []string{"set up by", "you (all your projects)", "not needed (only project servers ask)"} {
			if !strings.Contains(info, want) {
				t.Errorf("%s: the panel of a user server lacks %q:\n%s", v.name, want, info)
			}
		}
		for _, jargon := range []string{"scope", "not-needed", "transport"} {
			if strings.Contains(info, jargon) {
				t.Errorf("%s: the panel still says %q:\n%s", v.name, jargon, info)
			}
		}
		if v == uiViews[0] {
			b.screenshot("mcp-failed")
		}
		closePanel()
	}
	b.view(uiViews[0])

	// Approving in an untrusted workspace: recorded, but it says the
	// approval waits for trust, and offers it.
	open("pk")
	if eval[bool](b, `document.querySelector("#mcp-panel .mcp-trust") !== null`) {
		t.Errorf("pk, approved nowhere, is offered trust")
	}
	b.do("approve pk", chromedp.Click(`#mcp-panel .mcp-actions button.approve`))
	b.until("pk's approval waits for trust", `document.querySelector("#mcp-panel .mcp-message")?.textContent.includes("counts once the workspace is trusted") && document.querySelector("#mcp-panel .mcp-trust button.trust") !== null`)
	if eval[bool](b, `document.querySelector("#mcp-panel .mcp-actions button.approve") !== null`) {
		t.Errorf("pk, approved, is offered approve again")
	}
	closePanel()

	// Untrusted workspace: the reason, the offer, the confirmation naming
	// the servers, then trust recorded as the CLI records it.
	open("pj")
	b.until("the trust offer", `document.querySelector("#mcp-panel .mcp-trust button.trust") !== null`)
	if reason := eval[string](b, `document.querySelector('#mcp-panel dd[data-field="reason"]').textContent`); !strings.Contains(reason, "trusted workspace") {
		t.Errorf("reason %q does not say the workspace is not trusted", reason)
	}
	b.do("trust…", chromedp.Click(`#mcp-panel .mcp-trust button.trust`))
	b.until("the confirmation", `document.querySelector("#mcp-panel .mcp-trust-confirm") !== null`)
	if text := eval[string](b, `document.querySelector("#mcp-panel .mcp-trust-confirm p").textContent`); !strings.Contains(text, "enables these servers: pj, pk") || !strings.Contains(text, project) {
		t.Errorf("confirmation %q does not name the project and pj", text)
	}
	if data, _ := os.ReadFile(claudeJSON); strings.Contains(string(data), "hasTrustDialogAccepted") {
		t.Fatalf("trust recorded before the confirmation: %s", data)
	}
	b.screenshot("mcp-trust")
	b.do("confirm trust", chromedp.Click(`#mcp-panel .trust-confirm`))
	b.until("trusted", `document.querySelector("#mcp-panel .mcp-message")?.textContent === "Workspace trusted; enabled: pj, pk."`)
	data, _ := os.ReadFile(claudeJSON)
	if gjson.GetBytes(data, "projects."+gjson.Escape(project)+".hasTrustDialogAccepted").Type != gjson.True {
		t.Errorf("~/.claude.json after trust: %s", data)
	}
	b.until("pj and pk connected", chip("pj")+`?.querySelector(".dot").dataset.status === "connected" && `+chip("pk")+`?.querySelector(".dot").dataset.status === "connected"`)
	closePanel()

	// Add → test → save → connected.
	b.until("the add button", `!document.querySelector("#mcp-add").hidden`)
	b.do("open the form", chromedp.Click("#mcp-add"))
	b.do("fill the form",
		chromedp.SendKeys(`#mcp-form input[name="name"]`, "mem"),
		chromedp.SendKeys(`#mcp-form input[name="target"]`, testmcp),
		chromedp.SendKeys(`#mcp-form textarea[name="pairs"]`, "SEC_TOKEN="+secret+"\nMODE=a"),
	)
	b.do("test", chromedp.Click(`#mcp-form button.test`))
	b.until("the test result", `/^connected · \d+ tools/.test(document.querySelector("#mcp-form .mcp-form-result").textContent)`)
	b.do("save", chromedp.Click(`#mcp-form button.save`))
	b.until("the form closed", `!document.querySelector("#mcp-form").open`)
	b.until("mem connected", chip("mem")+`?.querySelector(".dot").dataset.status === "connected"`)

	// The inspector: tools with parameters; call echo.
	open("mem")
	b.until("mem's tools", `document.querySelectorAll('#mcp-panel .mcp-tool').length === `+fmt.Sprint(len(mcptest.ToolNames)))
	// The count in the panel's info says where the tools are, in plain
	// words, in each view (switched in place, the panel open).
	for _, v := range uiViews {
		b.view(v)
		if got := eval[string](b, `[...document.querySelectorAll("#mcp-panel dt")].find(d => d.textContent === "tools")?.nextElementSibling.textContent || ""`); got != fmt.Sprint(len(mcptest.ToolNames))+" (listed under Tools, once it is connected)" {
			t.Errorf("%s: mem's tools row says %q", v.name, got)
		}
		if !eval[bool](b, `(r => r.width > 0 && r.left >= -0.5 && r.right <= innerWidth + 0.5)(document.querySelector("#mcp-panel").getBoundingClientRect())`) {
			t.Errorf("%s: mem's panel is off the screen", v.name)
		}
	}
	b.view(uiViews[0])
	echo := `#mcp-panel .mcp-tool[data-tool="echo"]`
	b.do("open echo", chromedp.Click(echo+` > summary`))
	if rows := eval[[]string](b, `[...document.querySelectorAll('`+echo+` tr[data-path]')].map(r => r.dataset.path)`); strings.Join(rows, " ") != "message mode repeat options options.prefix options.tags options.tags[] numbers numbers[]" {
		t.Errorf("echo's parameter rows %v", rows)
	}
	setField := func(param, value string) {
		js, _ := json.Marshal(value)
		eval[any](b, fmt.Sprintf(`document.querySelector('%s label[data-param=%q] > :is(input,select,textarea)').value = %s; null`, echo, param, js))
	}
	// The form's own checks: a required field, a number out of range.
	setField("repeat", "9")
	b.do("call without a message", chromedp.Click(echo+` button.call`))
	if errs := eval[string](b, `[...document.querySelectorAll('`+echo+` .field-error')].map(e => e.textContent).filter(Boolean).join("|")`); errs != "required|must be ≤ 5" {
		t.Errorf("form errors %q", errs)
	}
	// The proxy's validation, shown by field.
	setField("message", "hi there")
	setField("repeat", "2")
	setField("options", `{"prefix": 5}`)
	b.do("call with a bad prefix", chromedp.Click(echo+` button.call`))
	b.until("the proxy's field error", `document.querySelector('`+echo+` label[data-param="options"] .field-error').textContent.includes("options.prefix")`)
	setField("options", `{"prefix": "> "}`)
	setField("mode", `"upper"`)
	b.do("call echo", chromedp.Click(echo+` button.call`))
	b.until("the result", `document.querySelector('`+echo+` .mcp-call-result').dataset.state === "ok"`)
	if got := eval[string](b, `document.querySelector('`+echo+` .mcp-call-result pre.content').textContent`); !strings.HasPrefix(got, "> HI THERE\n> HI THERE") {
		t.Errorf("echo result %q", got)
	}
	eval[any](b, `document.querySelector('`+echo+`').scrollIntoView(); null`)
	b.screenshot("mcp-inspector")
	// A tool that reports an error: a result, marked as the tool's error.
	isErr := `#mcp-panel .mcp-tool[data-tool="is_error"]`
	b.do("open is_error", chromedp.Click(isErr+` > summary`))
	b.do("call is_error", chromedp.Click(isErr+` button.call`))
	b.until("the tool's error", `document.querySelector('`+isErr+` .mcp-call-result').dataset.state === "tool-error"`)
	if got := eval[string](b, `document.querySelector('`+isErr+` .mcp-call-result').textContent`); !strings.Contains(got, mcptest.IsErrorText) || !strings.HasPrefix(got, "the tool reported an error") {
		t.Errorf("is_error result %q", got)
	}

	// Edit without retyping the secret.
	b.do("edit", chromedp.Click(`#mcp-panel .mcp-actions button.edit`))
	b.until("the edit form", `document.querySelector("#mcp-form").open && document.querySelector("#mcp-form").dataset.mode === "edit"`)
	pairs := eval[string](b, `document.querySelector('#mcp-form textarea[name="pairs"]').value`)
	if pairs != "SEC_TOKEN=***\nMODE=***" && pairs != "SEC_TOKEN=***\nMODE=a" {
		t.Errorf("the edit form's env %q, want the secret masked", pairs)
	}
	if eval[bool](b, `document.documentElement.outerHTML.includes(`+fmt.Sprintf("%q", secret)+`) || [...document.querySelectorAll("input,textarea")].some(e => e.value.includes(`+fmt.Sprintf("%q", secret)+`))`) {
		t.Errorf("the page holds the secret while editing")
	}
	eval[any](b, `(t => { t.value = t.value.replace(/^MODE=.*$/m, "MODE=b"); null })(document.querySelector('#mcp-form textarea[name="pairs"]'))`)
	b.do("test the edit", chromedp.Click(`#mcp-form button.test`))
	b.until("the edit's test result", `/^connected · \d+ tools/.test(document.querySelector("#mcp-form .mcp-form-result").textContent)`)
	b.screenshot("mcp-edit")
	b.do("save the edit", chromedp.Click(`#mcp-form button.save`))
	b.until("the edit saved", `!document.querySelector("#mcp-form").open && document.querySelector("#mcp-panel .mcp-message")?.textContent === "Saved."`)
	data, _ = os.ReadFile(claudeJSON)
	saved := gjson.GetBytes(data, "projects."+gjson.Escape(project)+".mcpServers.mem.env")
	if saved.Get("SEC_TOKEN").String() != secret || saved.Get("MODE").String() != "b" {
		t.Errorf("mem's env after the edit: %s", saved.Raw)
	}
	b.until("mem connected after the edit", chip("mem")+`?.querySelector(".dot").dataset.status === "connected"`)

	// Disable and enable for the project, where the CLI records it.
	disabled := func() []string {
		data, _ := os.ReadFile(claudeJSON)
		var out []string
		for _, v := range gjson.GetBytes(data, "projects."+gjson.Escape(project)+".disabledMcpServers").Array() {
			out = append(out, v.String())
		}
		return out
	}
	b.until("the disable button", `document.querySelector("#mcp-panel .mcp-actions button.disable") !== null`)
	b.do("disable mem", chromedp.Click(`#mcp-panel .mcp-actions button.disable`))
	b.until("mem disabled", chip("mem")+`?.querySelector(".dot").dataset.status === "disabled" && document.querySelector("#mcp-panel .mcp-actions button.enable") !== null`)
	if d := disabled(); len(d) != 1 || d[0] != "mem" {
		t.Errorf("disabledMcpServers after disable: %v", d)
	}
	b.do("enable mem", chromedp.Click(`#mcp-panel .mcp-actions button.enable`))
	b.until("mem connected again", chip("mem")+`?.querySelector(".dot").dataset.status === "connected"`)
	if d := disabled(); len(d) != 0 {
		t.Errorf("disabledMcpServers after enable: %v", d)
	}

	// 400 px: the panel fits.
	b.do("viewport 400", chromedp.EmulateViewport(400, 860))
	b.until("the panel fits", `(r => r.left >= 0 && r.right <= 400)(document.querySelector("#mcp-panel").getBoundingClientRect()) && document.querySelector("#mcp-panel").scrollWidth <= document.querySelector("#mcp-panel").clientWidth`)
	b.screenshot("mcp-inspector-400")
	b.do("edit at 400 px", chromedp.Click(`#mcp-panel .mcp-actions button.edit`))
	b.until("the edit form fits", `document.querySelector("#mcp-form").open && (r => r.left >= 0 && r.right <= 400)(document.querySelector("#mcp-form").getBoundingClientRect()) && document.querySelector("#mcp-form").scrollWidth <= document.querySelector("#mcp-form").clientWidth`)
	b.screenshot("mcp-edit-400")
	b.do("cancel", chromedp.Click(`#mcp-form button.cancel`))

	// Dark, when the stylesheet has a dark theme (prefers-color-scheme).
	hasDark := eval[bool](b, `[...document.styleSheets].some(ss => [...ss.cssRules].some(r => r.media && r.media.mediaText.includes("prefers-color-scheme: dark")))`)
	if hasDark {
		if _, err := chromedp.Call(b.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}}); err != nil {
			t.Fatalf("emulating dark: %v", err)
		}
		b.until("dark", `matchMedia("(prefers-color-scheme: dark)").matches`)
		b.screenshot("mcp-inspector-400-dark")
		b.do("viewport 1280", chromedp.EmulateViewport(1280, 860))
		b.screenshot("mcp-inspector-dark")
	} else {
		t.Log("no dark theme in style.css: no dark screenshots")
	}
	b.noJSDialog()
}
