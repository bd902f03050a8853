package webui_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/ccproxy/ccproxy/internal/testkit"
	"github.com/ccproxy/ccproxy/internal/testkit/fakeapi"
)

// With the real CLI: after three turns (claude writes a.txt, then edits
// a.txt and b.txt) the composer shows the context meter and the tokens. At
// 1280 px, "Rewind to here" on the second message lists the two files
// (the dry run) and changes nothing; "Conversation only" drops the second
// and third messages from the view and leaves the files. At 400 px the
// meter still fits; rewinding to the first message with its files drops
// every message and restores the files (a.txt, which claude created, is
// gone; b.txt is as it was).
func TestWebUIRewindAndMeter(t *testing.T) {
	t.Parallel()
	bin := testkit.CCProxyBinary(t)
	claude := testkit.Claude(t)
	home := t.TempDir()
	project, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for dir, files := range map[string]map[string]string{
		filepath.Join(home, "tmp"):     nil,
		filepath.Join(home, ".claude"): {"settings.json": `{"permissions":{"allow":["Write","Edit","Read"]}}`},
		project:                        {"b.txt": "bee original\n"},
	} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, text := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	a, bf := filepath.Join(project, "a.txt"), filepath.Join(project, "b.txt")
	api := fakeapi.Start(t, fakeapi.First(
		fakeapi.OnText("WRITE", fakeapi.CallTool("Write", map[string]any{"file_path": a, "content": "version one\n"}), fakeapi.Say("wrote")),
		fakeapi.OnText("EDIT", fakeapi.CallTool("Read", map[string]any{"file_path": bf}), fakeapi.CallTools(
			fakeapi.ToolUse("Edit", map[string]any{"file_path": a, "old_string": "one", "new_string": "two"}),
			fakeapi.ToolUse("Edit", map[string]any{"file_path": bf, "old_string": "original", "new_string": "changed"})), fakeapi.Say("edited")),
		fakeapi.OnToolResults(fakeapi.Summarize),
	))
	// --warm 1: the session claims the parked spare, which must run with
	// file checkpoints as a spawned claude does (checked at the end).
	srv := testkit.StartServeEnv(t, bin, api.Env(home), "--project", project, "--claude", claude, "--warm", "1")
	files := func() string {
		t.Helper()
		read := func(p string) string {
			b, err := os.ReadFile(p)
			if os.IsNotExist(err) {
				return "<none>"
			}
			return string(b)
		}
		return read(a) + "|" + read(bf)
	}

	b := newBrowser(t)
	b.do("a desktop", chromedp.EmulateViewport(1280, 900))
	b.do("open", chromedp.Navigate(srv.First.LoginURL))
	b.until("connected", `document.querySelector("#conn").dataset.state === "open"`)
	for i, text := range []string{"WRITE one", "EDIT two", "THIRD hi"} {
		b.send(text)
		b.until(text, `document.querySelectorAll(".result-line").length >= `+string(rune('1'+i)))
	}
	if got := files(); got != "version two\n|bee changed\n" {
		t.Fatalf("files after the turns: %q", got)
	}
	b.until("the meter", `(() => { const m = document.querySelector("#usage-meter");
		return m && !m.hidden && m.querySelector("meter") && m.querySelector("meter").value > 0 && m.textContent.includes("/ 1M") && / in · \d+ out/.test(m.textContent); })()`)
	b.until("three messages, each with its rewind button", `document.querySelectorAll(".msg.user[data-uuid] .rewind-btn").length === 3`)

	// The dry run's files, then the conversation only.
	eval[any](b, `document.querySelectorAll(".msg.user .rewind-btn")[1].click(); null`)
	b.until("the files", `document.querySelectorAll(".rewind-panel .rewind-files li").length === 2`)
	listed := eval[string](b, `document.querySelector(".rewind-panel .rewind-files").textContent`)
	if !strings.Contains(listed, a) || !strings.Contains(listed, bf) {
		t.Errorf("the panel lists %q, want a.txt and b.txt", listed)
	}
	b.screenshot("rewind-panel-1280")
	if got := files(); got != "version two\n|bee changed\n" {
		t.Errorf("files after the dry run: %q", got)
	}
	eval[any](b, `document.querySelector(".rewind-panel .rewind-go").click(); null`)
	b.until("the later messages gone", `document.querySelectorAll(".msg.user").length === 1 && document.querySelector(".msg.user").textContent.includes("WRITE one")
		&& !document.querySelector("#log").textContent.includes("edited") && [...document.querySelectorAll("#log .notice")].some(n => n.textContent.startsWith("Rewound"))`)
	if got := files(); got != "version two\n|bee changed\n" {
		t.Errorf("files after a rewind without files: %q", got)
	}

	// A phone: the meter fits; rewind with the files to the first message.
	b.do("a phone", chromedp.EmulateViewport(400, 800, chromedp.EmulateMobile, chromedp.EmulateTouch))
	b.until("idle again", `document.querySelector(".msg.user .rewind-btn") !== null && document.querySelector('#sessions li[aria-current="true"] .state').textContent === "idle"`)
	if r := eval[float64](b, `document.querySelector("#usage-meter").getBoundingClientRect().right`); r > 400 || eval[bool](b, `document.querySelector("#usage-meter").hidden`) {
		t.Errorf("the meter ends at %.0f px (hidden %v), beyond the 400 px screen", r, eval[bool](b, `document.querySelector("#usage-meter").hidden`))
	}
	eval[any](b, `document.querySelector(".msg.user .rewind-btn").click(); null`)
	b.until("the files", `document.querySelectorAll(".rewind-panel .rewind-files li").length === 2`)
	if r := eval[float64](b, `document.querySelector(".rewind-panel").getBoundingClientRect().right`); r > 400 {
		t.Errorf("the rewind panel ends at %.0f px, beyond the 400 px screen", r)
	}
	b.screenshot("rewind-panel-400")
	eval[any](b, `document.querySelector(".rewind-panel .rewind-files-go").click(); null`)
	b.until("every message gone", `document.querySelectorAll(".msg.user").length === 0 && [...document.querySelectorAll("#log .notice")].some(n => n.textContent.includes("2 files restored"))`)
	if got := files(); got != "<none>|bee original\n" {
		t.Errorf("files after a rewind with files: %q, want a.txt gone and b.txt original", got)
	}
	b.noJSDialog()
	if !strings.Contains(srv.Stderr.String(), `msg="claude taken from the spares"`) {
		t.Error("the session did not run the spare of --warm 1 (no \"claude taken from the spares\" in the log)")
	}
}
