package webui_test

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ccproxy/ccproxy/internal/testkit"
	"github.com/ccproxy/ccproxy/protocol"
)

// The web UI's permission dialog for each kind of request: a tool (with
// "Always allow"), AskUserQuestion's questions (options to pick; the
// answers are sent in the CLI's format) and ExitPlanMode's plan (approve);
// each dialog checked in each of uiViews.
func TestWebUIPermissionKinds(t *testing.T) {
	t.Parallel()
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
		case <-time.After(testkit.UIWait):
			t.Fatalf("no permission/respond for %s", id)
		}
		return protocol.PermissionRespond{}
	}
	open := `document.querySelector("#permission").open`
	text := func(sel string) string {
		return eval[string](b, `document.querySelector("#permission `+sel+`").textContent`)
	}
	visible := func(sel string) bool { return eval[bool](b, `!document.querySelector("#permission `+sel+`").hidden`) }

	// Each dialog is checked in each view (switched in place), and
	// answered in the last one (400 px, dark).
	inEveryView := func(check func(view string)) {
		t.Helper()
		for _, v := range uiViews {
			b.view(v)
			b.until(v.name+": the dialog on screen", `(r => r.width > 0 && r.left >= -0.5 && r.right <= innerWidth + 0.5)(document.querySelector("#permission").getBoundingClientRect())`)
			check(v.name)
		}
	}

	b.do("open", chromedp.Navigate(stub.URL+"/"))
	b.until("the tool dialog", open+` && document.querySelector("#permission .perm-tool").textContent === "everything · echo"`)
	inEveryView(func(view string) {
		if !visible(".always") || text(".allow") != "Allow once" {
			t.Errorf("%s: tool dialog: always visible %v, allow %q", view, visible(".always"), text(".allow"))
		}
		// The session by its name, not its internal id (which stays in the title).
		if ps := text(".perm-session"); strings.Contains(ps, "s-") || !strings.HasPrefix(ps, "in ") {
			t.Errorf("%s: the dialog names the session %q: want its name, not its id", view, ps)
		}
	})
	b.do("always allow", chromedp.Click("#permission .always"))
	if a := answer("r-tool"); a.Behavior != "allow" || !a.Always {
		t.Errorf("tool answer %+v", a)
	}

	b.until("the question dialog", open+` && document.querySelectorAll("#permission fieldset").length === 2`)
	inEveryView(func(view string) {
		if visible(".always") || visible(".perm-input") || text(".allow") != "Answer" || !strings.Contains(text(".perm-questions"), "Color: Which color?") || !strings.Contains(text(".perm-questions"), "cold") {
			t.Errorf("%s: question dialog: %q", view, text(".perm-questions"))
		}
	})
	b.do("pick", chromedp.Click(`#permission input[name="q0"][value="Blue"]`), chromedp.Click(`#permission input[name="q1"][value="S"]`),
		chromedp.Click(`#permission input[name="q1"][value="L"]`), chromedp.Click("#permission .allow"))
	if a := answer("r-question"); a.Behavior != "allow" || a.Always || a.Answers["Which color?"] != "Blue" || a.Answers["Which sizes?"] != "S, L" {
		t.Errorf("question answer %+v", a)
	}

	b.until("the plan dialog", open+` && document.querySelector("#permission .allow").textContent === "Approve"`)
	inEveryView(func(view string) {
		if visible(".always") || text(".perm-input") != "1. <b>Read</b> the test\n2. Fix it" || text(".deny") != "Keep planning" {
			t.Errorf("%s: plan dialog: %q", view, text(".perm-input"))
		}
		if n := eval[int](b, `document.querySelectorAll("#permission b").length`); n != 0 {
			t.Errorf("%s: the plan was rendered as HTML", view)
		}
	})
	b.do("approve", chromedp.Click("#permission .allow"))
	if a := answer("r-plan"); a.Behavior != "allow" || a.Always || a.Answers != nil {
		t.Errorf("plan answer %+v", a)
	}
	b.noJSDialog()
}

// TestWebUIPermissionDetails: the dialog says what a built-in tool will
// do — Bash's command and description, a line diff for Edit, MultiEdit and
// Write, the rule "Always allow" adds — as text, within the screen at 1280
// and 400 px, light and dark; and the mode switches (the composer's and the
// dialog's) show the session's permission mode (session/list, then
// session/state) and change it (session/setPermissionMode).
func TestWebUIPermissionDetails(t *testing.T) {
	t.Parallel()
	for _, dark := range []bool{false, true} {
		for _, size := range uiSizes[:2] {
			name := size.name + map[bool]string{false: "-light", true: "-dark"}[dark]
			t.Run(name, func(t *testing.T) { testPermissionDetails(t, name, size.width, size.height, dark) })
		}
	}
}

func testPermissionDetails(t *testing.T, name string, width, height int64, dark bool) {
	b := newBrowser(t)
	b.emulate(width, height, dark)
	const sess = "s-01jd8k3m9r"
	// An edit of 3000 lines by 3000: too big to match lines (9M cells),
	// and more lines than the dialog shows.
	var old, new strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&old, "line %d\n", i)
		fmt.Fprintf(&new, "LINE %d\n", i)
	}
	bigEdit, _ := json.Marshal(map[string]string{"file_path": "/p/big.txt", "old_string": old.String(), "new_string": new.String()})
	reqs := []protocol.PermissionRequest{
		{Session: sess, RequestID: "r-bash", Kind: "tool", ToolName: "Bash", Input: json.RawMessage(`{"command":"npm test -- --watch=false <b>x</b>","description":"Run the tests"}`),
			Suggestions: json.RawMessage(`[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"npm test:*"}],"behavior":"allow","destination":"localSettings"}]`)},
		{Session: sess, RequestID: "r-edit", Kind: "tool", ToolName: "Edit", Input: json.RawMessage(`{"file_path":"/p/notes.txt","old_string":"alpha\nbeta\ngamma","new_string":"alpha\nBETA (edited)\ngamma"}`)},
		{Session: sess, RequestID: "r-multi", Kind: "tool", ToolName: "MultiEdit", Input: json.RawMessage(`{"file_path":"/p/a.go","edits":[{"old_string":"x := 1","new_string":"x := 2"},{"old_string":"// old","new_string":"// new\n// more"}]}`)},
		{Session: sess, RequestID: "r-write", Kind: "tool", ToolName: "Write", Input: json.RawMessage(`{"file_path":"/p/new.txt","content":"one\ntwo\n"}`)},
		{Session: sess, RequestID: "r-big", Kind: "tool", ToolName: "Edit", Input: bigEdit},
		{Session: sess, RequestID: "r-question", Kind: "question", ToolName: "AskUserQuestion", Input: json.RawMessage(`{}`), Questions: []protocol.Question{
			{Question: "Which color?", Options: []protocol.QuestionOption{{Label: "Red"}, {Label: "Blue"}}},
			{Question: "Which sizes?", MultiSelect: true, Options: []protocol.QuestionOption{{Label: "S"}, {Label: "M"}}},
		}},
	}
	modes := make(chan string, 1)
	answers := make(chan protocol.PermissionRespond, len(reqs))
	next := 0
	stub := stubBackend(t, []string{protocol.CapSessions}, func(f *protocol.Frame) (data protocol.Data, pushes []stubPush) {
		if f == nil {
			return nil, nil
		}
		switch f.Type {
		case protocol.TypeSessionList:
			return protocol.SessionListResult{Sessions: []protocol.SessionInfo{{Session: sess, State: "idle", Cwd: "/p", PermissionMode: "plan", CreatedAt: mustTime(t, "2026-11-24T06:00:00Z"), FirstSeq: 1}}}, nil
		case protocol.TypeSessionSubscribe:
			return subscribed(f, "idle"), nil
		case protocol.TypeSessionSetMode:
			var d protocol.SessionSetPermissionMode
			json.Unmarshal(f.Data, &d)
			modes <- d.Mode
			// Claude switched, then (say, a plan approved) changed it itself.
			pushes = append(pushes, stubPush{protocol.TypeSessionState, protocol.SessionState{Session: sess, State: "idle", PermissionMode: "default"}})
			data = protocol.SessionSetPermissionModeResult{Mode: d.Mode}
		case protocol.TypePermissionRespond:
			var d protocol.PermissionRespond
			json.Unmarshal(f.Data, &d)
			answers <- d
			pushes = append(pushes, stubPush{protocol.TypePermissionResolved, protocol.PermissionResolved{Session: sess, RequestID: d.RequestID, Behavior: d.Behavior, Reason: "answered"}})
		}
		if f.Type == protocol.TypePermissionRespond || f.Type == protocol.TypeSessionSetMode && next == 0 {
			if next < len(reqs) {
				pushes = append(pushes, stubPush{protocol.TypePermissionRequest, reqs[next]})
				next++
			}
		}
		return data, pushes
	})
	b.do("open", chromedp.Navigate(stub.URL+"/"))
	b.until("the session", `document.querySelector("#sessions li[aria-current=true]") !== null && !document.querySelector("#perm-mode").disabled`)
	// switchMode picks acceptEdits in the mode switch sel and expects it
	// sent as session/setPermissionMode.
	switchMode := func(sel, what string) {
		t.Helper()
		eval[any](b, `(s => { s.value = "acceptEdits"; s.dispatchEvent(new Event("change")); return null })(document.querySelector(`+strconv.Quote(sel)+`))`)
		select {
		case m := <-modes:
			if m != "acceptEdits" {
				t.Errorf("%s sent session/setPermissionMode %q", what, m)
			}
		case <-time.After(testkit.UIWait):
			t.Fatalf("%s sent no session/setPermissionMode", what)
		}
	}
	if m := eval[string](b, `document.querySelector("#perm-mode").value`); m != "plan" {
		t.Errorf("the mode switch shows %q, want the session's plan", m)
	}
	switchMode("#perm-mode", "the mode switch")
	b.until("the mode claude reported last", `document.querySelector("#perm-mode").value === "default" && !document.querySelector("#perm-mode").disabled`)

	dialog := func(id string) {
		t.Helper()
		b.until(id, `document.querySelector("#permission").open && document.querySelector("#permission .perm-detail").textContent !== ""`)
		if eval[bool](b, `(r => r.left < 0 || r.right > innerWidth || r.bottom > innerHeight)(document.querySelector("#permission").getBoundingClientRect())`) {
			t.Errorf("%s: the dialog does not fit the %dx%d screen", id, width, height)
		}
		if eval[bool](b, `!document.querySelector("#permission .perm-input").hidden`) {
			t.Errorf("%s: raw JSON shown instead of the description", id)
		}
	}
	diff := func() string {
		return eval[string](b, `[...document.querySelectorAll("#permission .perm-diff > span")].map(s => s.className + ":" + s.textContent).join("\n")`)
	}
	detail := func() string { return eval[string](b, `document.querySelector("#permission .perm-detail").innerText`) }
	answer := func(button, id string) protocol.PermissionRespond {
		t.Helper()
		b.do(button, chromedp.Click("#permission ."+button))
		select {
		case a := <-answers:
			if a.RequestID != id {
				t.Errorf("answer to %s, want %s", a.RequestID, id)
			}
			return a
		case <-time.After(testkit.UIWait):
			t.Fatalf("no answer to %s", id)
		}
		return protocol.PermissionRespond{}
	}

	dialog("r-bash")
	if d := detail(); !strings.Contains(d, "Run this command:") || !strings.Contains(d, "Run the tests") || !strings.Contains(d, "npm test -- --watch=false <b>x</b>") {
		t.Errorf("Bash: %q", d)
	}
	if n := eval[int](b, `document.querySelectorAll("#permission b").length`); n != 0 {
		t.Error("the command was rendered as HTML")
	}
	if note := eval[string](b, `document.querySelector("#permission .perm-always-note").textContent`); !strings.Contains(note, "Bash(npm test:*)") {
		t.Errorf("always-allow note %q", note)
	}
	if got := eval[string](b, `[...document.querySelectorAll("#permission menu button")].filter(x => !x.hidden).map(x => x.textContent).join(",")`); got != "Deny,Always allow,Allow once" {
		t.Errorf("buttons %q", got)
	}
	b.screenshot("permission-bash-" + name)
	answer("allow", "r-bash")

	dialog("r-edit")
	if d := detail(); !strings.HasPrefix(d, "Edit /p/notes.txt") {
		t.Errorf("Edit: %q", d)
	}
	if got, want := diff(), "ctx:  alpha\ndel:- beta\nadd:+ BETA (edited)\nctx:  gamma"; got != want {
		t.Errorf("Edit diff:\n%s\nwant\n%s", got, want)
	}
	colors := eval[[]string](b, `["add", "del", "ctx"].map(c => getComputedStyle(document.querySelector("#permission .perm-diff ." + c)).backgroundColor)`)
	if colors[0] == colors[1] || colors[0] == colors[2] {
		t.Errorf("added, removed and unchanged lines look alike: %v", colors)
	}
	for _, p := range eval[[][]string](b, `["add", "del", "ctx"].map(c => { const s = getComputedStyle(document.querySelector("#permission .perm-diff ." + c));
		const bg = s.backgroundColor === "rgba(0, 0, 0, 0)" ? getComputedStyle(document.querySelector("#permission .perm-diff")).backgroundColor : s.backgroundColor; return [c, s.color, bg]; })`) {
		fg, _ := rgb(t, p[1])
		bg, _ := rgb(t, p[2])
		if c := contrast(fg, bg); c < 4.5 {
			t.Errorf("%s: the diff's %s lines: %s on %s has contrast %.2f", name, p[0], p[1], p[2], c)
		}
	}
	b.screenshot("permission-edit-" + name)
	// The dialog's own mode switch: this session's mode, changed from there.
	if m := eval[string](b, `document.querySelector("#permission .perm-mode").value`); m != "default" {
		t.Errorf("the dialog's mode switch shows %q, want the session's default", m)
	}
	switchMode("#permission .perm-mode", "the dialog's mode switch")
	b.until("the dialog still open, with the mode claude reported last", `document.querySelector("#permission").open && document.querySelector("#permission .perm-mode").value === "default"`)
	if f := eval[string](b, `document.activeElement.className`); f != "deny" {
		t.Errorf("the dialog focuses %q, want Deny", f)
	}
	b.do("say why", chromedp.SendKeys("#permission .perm-message", "keep beta lowercase"))
	if a := answer("deny", "r-edit"); a.Behavior != "deny" || a.Message != "keep beta lowercase" {
		t.Errorf("deny with a message sent %+v", a)
	}

	dialog("r-multi")
	if v := eval[string](b, `document.querySelector("#permission .perm-message").value`); v != "" {
		t.Errorf("the message %q stays for the next request", v)
	}
	if d := detail(); !strings.HasPrefix(d, "Edit /p/a.go (2 changes)") {
		t.Errorf("MultiEdit: %q", d)
	}
	if got, want := diff(), "hunk:@@ change 1 of 2 @@\ndel:- x := 1\nadd:+ x := 2\nhunk:@@ change 2 of 2 @@\ndel:- // old\nadd:+ // new\nadd:+ // more"; got != want {
		t.Errorf("MultiEdit diff:\n%s\nwant\n%s", got, want)
	}
	answer("deny", "r-multi")

	dialog("r-write")
	if d := detail(); !strings.HasPrefix(d, "Write /p/new.txt (2 lines") {
		t.Errorf("Write: %q", d)
	}
	if got, want := diff(), "add:+ one\nadd:+ two"; got != want {
		t.Errorf("Write diff:\n%s\nwant\n%s", got, want)
	}
	answer("always", "r-write")

	dialog("r-big")
	if n := eval[int](b, `document.querySelectorAll("#permission .perm-diff > span:not(.hunk)").length`); n != 400 {
		t.Errorf("a 6000-line diff shows %d lines, want the first 400", n)
	}
	if last := eval[string](b, `document.querySelector("#permission .perm-diff > span:last-child").textContent`); last != "… 5600 more lines" {
		t.Errorf("the big diff ends with %q", last)
	}
	answer("deny", "r-big")

	// A question answered in the page's own words: instead of the option
	// (single choice), besides the ticked ones (multiSelect).
	b.until("the question", `document.querySelector("#permission").open && document.querySelectorAll("#permission fieldset").length === 2`)
	b.do("answer freely", chromedp.Click(`#permission input[name="q0"][value="Red"]`), chromedp.SendKeys(`#permission input[name="q0-other"]`, "teal, <i>please</i>"),
		chromedp.Click(`#permission input[name="q1"][value="M"]`), chromedp.SendKeys(`#permission input[name="q1-other"]`, "XXL"))
	if a := answer("allow", "r-question"); a.Answers["Which color?"] != "teal, <i>please</i>" || a.Answers["Which sizes?"] != "M, XXL" {
		t.Errorf("free answers %v", a.Answers)
	}
	b.noJSDialog()
}
