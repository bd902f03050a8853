package webui_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ccproxy/ccproxy/internal/testkit"
	"github.com/ccproxy/ccproxy/protocol"
)

// TestWebUIMCPLiveButtons: with mcp.live announced, a failed server gets
// a reconnect button, a connected one disable, a disabled one enable; each
// sends its request.
func TestWebUIMCPLiveButtons(t *testing.T) {
	t.Parallel()
	b := newBrowser(t)
	sent := make(chan string, 4)
	statuses := []protocol.MCPServerStatus{
		{Name: "a-connected", Status: "connected", Scope: "user", Approval: "not-needed"},
		{Name: "b-failed", Status: "failed", Scope: "local", Approval: "not-needed", Error: "ENOENT"},
		{Name: "c-disabled", Status: "disabled", Scope: "local", Approval: "not-needed"},
		{Name: "d-pending", Status: "pending", Scope: "user", Approval: "not-needed"},
	}
	stub := stubBackend(t, []string{protocol.CapSessions, protocol.CapMCPStatus, protocol.CapMCPLive}, func(f *protocol.Frame) (protocol.Data, []stubPush) {
		switch {
		case f == nil:
		case f.Type == protocol.TypeMCPToggle, f.Type == protocol.TypeMCPReconnect:
			var d struct {
				Name    string `json:"name"`
				Enabled *bool  `json:"enabled"`
			}
			json.Unmarshal(f.Data, &d)
			what := f.Type + " " + d.Name
			if d.Enabled != nil {
				what += map[bool]string{true: " on", false: " off"}[*d.Enabled]
			}
			sent <- what
			return protocol.MCPLiveResult{Name: d.Name, Sessions: []protocol.MCPLiveOutcome{{Session: "s1", OK: true}}}, nil
		case f.Type == protocol.TypeMCPSubscribe:
			return nil, []stubPush{{protocol.TypeMCPStatus, protocol.MCPStatus{Servers: statuses}}}
		}
		return nil, nil
	})

	b.do("open", chromedp.Navigate(stub.URL+"/"))
	b.until("the dots", `document.querySelectorAll(".mcp-server").length === 4`)
	buttons := eval[[]string](b, `[...document.querySelectorAll(".mcp-server")].map(s => s.dataset.server + ":" + [...s.querySelectorAll("button")].map(x => x.textContent).join(","))`)
	want := []string{"a-connected:disable", "b-failed:reconnect", "c-disabled:enable", "d-pending:"}
	if len(buttons) != len(want) {
		t.Fatalf("buttons %v, want %v", buttons, want)
	}
	for i := range want {
		if buttons[i] != want[i] {
			t.Errorf("buttons %v, want %v", buttons, want)
			break
		}
	}
	for _, c := range []struct{ server, button, want string }{
		{"b-failed", "reconnect", "mcp/reconnect b-failed"},
		{"a-connected", "disable", "mcp/toggle a-connected off"},
		{"c-disabled", "enable", "mcp/toggle c-disabled on"},
	} {
		b.do(c.button, chromedp.Click(`.mcp-server[data-server="`+c.server+`"] button.`+c.button))
		select {
		case got := <-sent:
			if got != c.want {
				t.Errorf("%s sent %q, want %q", c.button, got, c.want)
			}
		case <-time.After(testkit.UIWait):
			t.Fatalf("the %s button sent nothing", c.button)
		}
	}
	b.noJSDialog()
}

// TestWebUIMCPAddForm: with mcp.manage announced, the add form tests a
// definition (mcp/test, result shown), then saves it (mcp/add with the
// same definition); the dialog closes and the new server shows connected
// once mcp/status says so. Env values are masked until "show values".
func TestWebUIMCPAddForm(t *testing.T) {
	t.Parallel()
	b := newBrowser(t)
	type req struct {
		typ  string
		data map[string]any
	}
	got := make(chan req, 4)
	manageResult := protocol.MCPManageResult{Name: "mem", Scope: "project", File: "/p/.mcp.json", Config: protocol.MCPConfig{Servers: []protocol.MCPConfigServer{}}}
	status := func(servers ...protocol.MCPServerStatus) []stubPush {
		if servers == nil {
			servers = []protocol.MCPServerStatus{}
		}
		return []stubPush{{protocol.TypeMCPStatus, protocol.MCPStatus{Servers: servers}}}
	}
	stub := stubBackend(t, []string{protocol.CapSessions, protocol.CapMCPStatus, protocol.CapMCPManage}, func(f *protocol.Frame) (protocol.Data, []stubPush) {
		if f == nil {
			return nil, nil
		}
		switch f.Type {
		case protocol.TypeMCPSubscribe:
			return nil, status()
		case protocol.TypeMCPRemove, protocol.TypeMCPTest, protocol.TypeMCPAdd:
			var d map[string]any
			json.Unmarshal(f.Data, &d)
			got <- req{f.Type, d}
		}
		switch f.Type {
		case protocol.TypeMCPRemove:
			return manageResult, status()
		case protocol.TypeMCPTest:
			return protocol.MCPProbeResult{Results: []protocol.ProbeResult{{Name: "mem", Transport: "stdio", Scope: "extra", OK: true, Status: "connected", ToolCount: 9, LatencyMs: protocol.Latency{Total: 812.4}}}}, nil
		case protocol.TypeMCPAdd:
			return manageResult, status(protocol.MCPServerStatus{Name: "mem", Status: "connected", Scope: "project", Approval: "approved"})
		}
		return nil, nil
	})

	b.do("open", chromedp.Navigate(stub.URL+"/"))
	b.until("the add button", `!document.querySelector("#mcp-add").hidden`)
	b.do("open the form", chromedp.Click("#mcp-add"))
	b.do("fill the form",
		chromedp.SendKeys(`#mcp-form input[name="name"]`, "mem"),
		chromedp.SetValue(`#mcp-form select[name="scope"]`, "project"),
		chromedp.SendKeys(`#mcp-form input[name="target"]`, "/usr/bin/mcp-server-memory"),
		chromedp.SendKeys(`#mcp-form textarea[name="args"]`, "--verbose\n--dir\n/tmp/m"),
		chromedp.SendKeys(`#mcp-form textarea[name="pairs"]`, "MEMORY_TOKEN=${MEM_TOKEN}\nMODE=fast"),
	)
	if masked := eval[string](b, `getComputedStyle(document.querySelector('#mcp-form textarea[name="pairs"]')).webkitTextSecurity`); masked != "disc" {
		t.Errorf("env values are not masked: text-security %q", masked)
	}
	wantDef := map[string]any{"type": "stdio", "command": "/usr/bin/mcp-server-memory", "args": []any{"--verbose", "--dir", "/tmp/m"},
		"env": map[string]any{"MEMORY_TOKEN": "${MEM_TOKEN}", "MODE": "fast"}}
	b.do("test", chromedp.Click(`#mcp-form button.test`))
	r := <-got
	if r.typ != protocol.TypeMCPTest || r.data["name"] != "mem" || !reflect.DeepEqual(r.data["definition"], wantDef) {
		t.Errorf("test sent %s %v", r.typ, r.data)
	}
	b.until("the test result", `document.querySelector("#mcp-form .mcp-form-result").textContent.startsWith("connected · 9 tools · 812 ms")`)
	b.screenshot("mcp-add-form-tested")
	b.do("save", chromedp.Click(`#mcp-form button.save`))
	r = <-got
	if r.typ != protocol.TypeMCPAdd || r.data["name"] != "mem" || r.data["scope"] != "project" || !reflect.DeepEqual(r.data["definition"], wantDef) {
		t.Errorf("save sent %s %v", r.typ, r.data)
	}
	b.until("the dialog closed", `!document.querySelector("#mcp-form").open`)
	b.until("mem connected", `document.querySelector('.mcp-server[data-server="mem"] .dot')?.dataset.status === "connected"`)

	// Remove takes a second click.
	b.do("remove", chromedp.Click(`.mcp-server[data-server="mem"] button.remove`))
	if label := eval[string](b, `document.querySelector('.mcp-server[data-server="mem"] button.remove').textContent`); label != "remove mem from project config?" {
		t.Errorf("after one click: %q", label)
	}
	select {
	case r := <-got:
		t.Errorf("one click sent %s", r.typ)
	default:
	}
	b.do("confirm remove", chromedp.Click(`.mcp-server[data-server="mem"] button.remove`))
	r = <-got
	if r.typ != protocol.TypeMCPRemove || r.data["name"] != "mem" || r.data["scope"] != "project" {
		t.Errorf("remove sent %s %v", r.typ, r.data)
	}
	b.until("mem gone", `!document.querySelector('.mcp-server[data-server="mem"]')`)
	b.noJSDialog()
}

// TestWebUIMCPSignIn: a needs-auth server's panel has a sign-in button
// that sends mcp/login {name}, opens the URL the reply gives (a link too,
// for a blocked tab) and follows the mcp/login pushes to "signed in" (the
// status then says connected); a failure pushed by the proxy is shown
// with its message. (mcp/login comes from the oauth branch: stubbed here
// with its agreed shape {name, state: url|done|failed, url?, error?}.)
func TestWebUIMCPSignIn(t *testing.T) {
	t.Parallel()
	b := newBrowser(t)
	logins := make(chan string, 4)
	const authURL = "https://auth.example.test/authorize?client_id=ccproxy&state=xyz"
	status := func(authy string) []stubPush {
		return []stubPush{{protocol.TypeMCPStatus, protocol.MCPStatus{Servers: []protocol.MCPServerStatus{
			{Name: "authy", Status: authy, Scope: "user", Approval: "not-needed", Transport: "http"},
			{Name: "badurl", Status: "needs-auth", Scope: "user", Approval: "not-needed", Transport: "http"},
			{Name: "nologin", Status: "needs-auth", Scope: "user", Approval: "not-needed", Transport: "sse"},
		}}}}
	}
	n := 0
	stub := stubBackend(t, []string{protocol.CapSessions, protocol.CapMCPStatus}, func(f *protocol.Frame) (protocol.Data, []stubPush) {
		switch {
		case f == nil:
		case f.Type == protocol.TypeMCPSubscribe:
			return nil, status("needs-auth")
		case f.Type == "mcp/login":
			var d struct{ Name string }
			json.Unmarshal(f.Data, &d)
			logins <- d.Name
			if d.Name == "badurl" { // a sign-in URL that is no web address
				return stubRaw(`{"name":"badurl","state":"url","url":"javascript:window.pwned=1"}`), nil
			}
			if d.Name == "nologin" { // answered {}, then a failure pushed
				return nil, []stubPush{{"mcp/login", stubRaw(`{"name":"nologin","state":"failed","error":"the server publishes no OAuth metadata"}`)}}
			}
			n++
			reply := stubRaw(`{"name":"authy","state":"url","url":"` + authURL + `"}`)
			if n == 1 { // the user has not signed in yet
				return reply, nil
			}
			return reply, append([]stubPush{{"mcp/login", stubRaw(`{"name":"authy","state":"done"}`)}}, status("connected")...)
		}
		return nil, nil
	})
	b.do("open", chromedp.Navigate(stub.URL+"/"))
	b.until("the chips", `document.querySelectorAll(".mcp-server").length === 3`)
	// window.open records what it is asked to open.
	eval[bool](b, `(window.opened = [], window.open = (u) => { window.opened.push(u); return null; }, true)`)
	b.do("open authy", chromedp.Click(`.mcp-server[data-server="authy"] > span:last-of-type`))
	b.until("the sign-in button", `document.querySelector("#mcp-panel button.login") !== null`)
	b.do("sign in", chromedp.Click(`#mcp-panel button.login`))
	if got := <-logins; got != "authy" {
		t.Errorf("mcp/login for %q", got)
	}
	b.until("the sign-in link", fmt.Sprintf(`document.querySelector("#mcp-panel .mcp-login[data-state='url'] a.login-url")?.href === %q`, authURL))
	if rel := eval[string](b, `document.querySelector("#mcp-panel a.login-url").rel`); rel != "noopener noreferrer" {
		t.Errorf("link rel %q", rel)
	}
	if opened := eval[[]string](b, `window.opened`); len(opened) != 1 || opened[0] != authURL {
		t.Errorf("window.open was asked for %q, want the sign-in URL", opened)
	}
	b.screenshot("mcp-signin")
	b.do("sign in again", chromedp.Click(`#mcp-panel button.login`))
	<-logins
	b.until("signed in", `document.querySelector("#mcp-panel .mcp-login")?.dataset.state === "done" && document.querySelector("#mcp-panel").dataset.status === "connected"`)
	if gone := eval[bool](b, `document.querySelector("#mcp-panel button.login") === null`); !gone {
		t.Errorf("a connected server still offers sign-in")
	}

	b.do("close", chromedp.Click(`#mcp-panel .mcp-panel-close`))
	b.do("open nologin", chromedp.Click(`.mcp-server[data-server="nologin"] > span:last-of-type`))
	b.until("nologin's panel", `document.querySelector("#mcp-panel").dataset.server === "nologin"`)
	b.do("sign in to nologin", chromedp.Click(`#mcp-panel button.login`))
	<-logins
	b.until("the failure", `document.querySelector("#mcp-panel .mcp-login")?.textContent === "Sign-in failed: the server publishes no OAuth metadata"`)

	// A sign-in URL that is not http(s) is neither opened nor linked.
	b.do("close nologin", chromedp.Click(`#mcp-panel .mcp-panel-close`))
	b.do("open badurl", chromedp.Click(`.mcp-server[data-server="badurl"] > span:last-of-type`))
	b.until("badurl's panel", `document.querySelector("#mcp-panel").dataset.server === "badurl"`)
	b.do("sign in to badurl", chromedp.Click(`#mcp-panel button.login`))
	<-logins
	b.until("badurl's sign-in state", `document.querySelector("#mcp-panel .mcp-login[data-state='url']") !== null`)
	for _, u := range eval[[]string](b, `window.opened`) {
		if u != authURL {
			t.Errorf("window.open was asked for %q", u)
		}
	}
	b.until("the refusal", `document.querySelector("#mcp-panel .mcp-login[data-state='url']").textContent.includes("not an http(s) address")`)
	if linked := eval[bool](b, `document.querySelector("#mcp-panel a.login-url") !== null || window.pwned === 1`); linked {
		t.Errorf("the javascript: sign-in URL was linked or ran")
	}
	b.noJSDialog()
}
