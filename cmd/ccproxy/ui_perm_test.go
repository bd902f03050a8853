package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	protocol "github.com/ccproxy/ccproxy/webview-protocol"
)

// The web UI's permission dialog for each kind of request: a tool (with
// "Always allow"), AskUserQuestion's questions (options to pick; the
// answers are sent in the CLI's format) and ExitPlanMode's plan (approve).
func TestWebUIPermissionKinds(t *testing.T) {
	b := newBrowser(t)
	const sess = "s-01jd8k3m9q"
	reqs := []protocol.PermissionRequest{
		{Session: sess, RequestID: "r-tool", Kind: "tool", ToolName: "mcp__everything__echo", Input: json.RawMessage(`{"message":"hi"}`),
			MCP: &protocol.MCPRef{Server: "everything", Tool: "echo"}},
		{Session: sess, RequestID: "r-question", Kind: "question", ToolName: "AskUserQuestion", Input: json.RawMessage(`{}`),
			Questions: []protocol.Question{
				{Question: "Which color?", Header: "Color", Options: []protocol.QuestionOption{{Label: "Red", Description: "warm"}, {Label: "Blue", Description: "cold"}}},
				{Question: "Which sizes?", MultiSelect: true, Options: []protocol.QuestionOption{{Label: "S"}, {Label: "M"}, {Label: "L"}}},
			}},
		{Session: sess, RequestID: "r-plan", Kind: "plan", ToolName: "ExitPlanMode", Input: json.RawMessage(`{}`), Plan: "1. <b>Read</b> the test\n2. Fix it"},
	}
	answers := make(chan protocol.PermissionRespond, len(reqs))
	next := 0 // the next request to push; the stub serves one connection at a time
	stub := stubBackend(t, nil, func(f *protocol.Frame) (protocol.Data, []stubPush) {
		if f == nil {
			return nil, nil
		}
		var pushes []stubPush
		if f.Type == protocol.TypePermissionRespond {
			d, err := protocol.DecodeRequest(*f)
			if err != nil {
				t.Errorf("permission/respond: %v", err)
				return nil, nil
			}
			a := d.(*protocol.PermissionRespond)
			answers <- *a
			pushes = append(pushes, stubPush{protocol.TypePermissionResolved, protocol.PermissionResolved{Session: sess, RequestID: a.RequestID, Behavior: a.Behavior, Reason: "answered"}})
		}
		if (f.Type == protocol.TypeSessionList || f.Type == protocol.TypePermissionRespond) && next < len(reqs) {
			pushes = append(pushes, stubPush{protocol.TypePermissionRequest, reqs[next]})
			next++
		}
		return nil, pushes
	})
	answer := func(id string) protocol.PermissionRespond {
		t.Helper()
		select {
		case a := <-answers:
			if a.RequestID != id {
				t.Errorf("answer to %s, want %s", a.RequestID, id)
			}
			return a
		case <-time.After(uiWait):
			t.Fatalf("no permission/respond for %s", id)
		}
		return protocol.PermissionRespond{}
	}
	open := `document.querySelector("#permission").open`
	text := func(sel string) string {
		return eval[string](b, `document.querySelector("#permission `+sel+`").textContent`)
	}
	visible := func(sel string) bool { return eval[bool](b, `!document.querySelector("#permission `+sel+`").hidden`) }

	b.do("open", chromedp.Navigate(stub.URL+"/"))
	b.until("the tool dialog", open+` && document.querySelector("#permission .perm-tool").textContent === "everything · echo"`)
	if !visible(".always") || text(".allow") != "Allow once" {
		t.Errorf("tool dialog: always visible %v, allow %q", visible(".always"), text(".allow"))
	}
	b.do("always allow", chromedp.Click("#permission .always"))
	if a := answer("r-tool"); a.Behavior != "allow" || !a.Always {
		t.Errorf("tool answer %+v", a)
	}

	b.until("the question dialog", open+` && document.querySelectorAll("#permission fieldset").length === 2`)
	if visible(".always") || visible(".perm-input") || text(".allow") != "Answer" || !strings.Contains(text(".perm-questions"), "Color: Which color?") || !strings.Contains(text(".perm-questions"), "cold") {
		t.Errorf("question dialog: %q", text(".perm-questions"))
	}
	b.do("pick", chromedp.Click(`#permission input[name="q0"][value="Blue"]`), chromedp.Click(`#permission input[name="q1"][value="S"]`),
		chromedp.Click(`#permission input[name="q1"][value="L"]`), chromedp.Click("#permission .allow"))
	if a := answer("r-question"); a.Behavior != "allow" || a.Always || a.Answers["Which color?"] != "Blue" || a.Answers["Which sizes?"] != "S, L" {
		t.Errorf("question answer %+v", a)
	}

	b.until("the plan dialog", open+` && document.querySelector("#permission .allow").textContent === "Approve"`)
	if visible(".always") || text(".perm-input") != "1. <b>Read</b> the test\n2. Fix it" || text(".deny") != "Keep planning" {
		t.Errorf("plan dialog: %q", text(".perm-input"))
	}
	if n := eval[int](b, `document.querySelectorAll("#permission b").length`); n != 0 {
		t.Error("the plan was rendered as HTML")
	}
	b.do("approve", chromedp.Click("#permission .allow"))
	if a := answer("r-plan"); a.Behavior != "allow" || a.Always || a.Answers != nil {
		t.Errorf("plan answer %+v", a)
	}
	b.noJSDialog()
}
