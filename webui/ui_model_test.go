package webui_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ccproxy/ccproxy/internal/testkit"
	"github.com/ccproxy/ccproxy/internal/testkit/fakeapi"
	"github.com/ccproxy/ccproxy/protocol"
)

// At 390 px (a phone), the composer's model picker, beside the permission
// mode switch, lists the real CLI's models by name (the description as
// the option's title) with the session's model selected; picking one
// switches the session (session/setModel): the picker shows it and the
// next turn's API request carries it. The header does not grow, and the
// picker is tall enough to tap. It is off with no live session.
func TestWebUIModelPicker(t *testing.T) {
	t.Parallel()
	bin := testkit.CCProxyBinary(t)
	claude := testkit.Claude(t)
	home, project := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	api := fakeapi.Start(t, fakeapi.First(fakeapi.OnText("HELLO", fakeapi.Say("hi there"))))
	srv := testkit.StartServeEnv(t, bin, api.Env(home), "--project", project, "--claude", claude)
	b := newBrowser(t)
	b.do("a phone", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile, chromedp.EmulateTouch))
	b.do("open", chromedp.Navigate(srv.First.LoginURL))
	b.until("connected", `document.querySelector("#conn").dataset.state === "open"`)
	if !eval[bool](b, `document.querySelector("#model-pick").disabled`) {
		t.Error("the model picker is enabled with no session")
	}
	topBefore := eval[float64](b, `document.querySelector("#top").getBoundingClientRect().height`)

	b.send("HELLO one")
	b.until("the first turn", `document.querySelectorAll(".result-line").length >= 1`)
	b.until("the models, default selected", `(() => { const s = document.querySelector("#model-pick");
		return !s.disabled && s.value === "default" && [...s.options].some(o => o.value === "haiku"); })()`)
	if got := eval[string](b, `document.querySelector('#model-pick option[value="haiku"]').textContent`); got != "Haiku" {
		t.Errorf("haiku's option says %q, want its displayName Haiku", got)
	}
	if got := eval[string](b, `document.querySelector('#model-pick option[value="haiku"]').title`); !strings.Contains(got, "Haiku") {
		t.Errorf("haiku's option title %q, want its description", got)
	}

	// One change event, as a pick makes (chromedp.SetValue dispatches one
	// of its own, so a second one here asked again with whatever the
	// picker showed by then).
	pickModel(b, "haiku")
	// While claude is asked, the picker shows the pick, disabled, whatever
	// session/state says meanwhile.
	if got := eval[string](b, `document.querySelector("#model-pick").value`); got != "haiku" {
		t.Errorf("while the switch is asked the picker shows %q, want haiku", got)
	}
	b.until("haiku in force", `(() => { const s = document.querySelector("#model-pick"); return !s.disabled && s.value === "haiku"; })()`)
	if strings.Contains(eval[string](b, `document.querySelector("#log").textContent`), "model not changed") {
		t.Error("the switch was reported as failed")
	}
	// The CLI's echo of the switch is a notice, not a message of the user.
	b.until("the switch's notice", `[...document.querySelectorAll("#log .notice")].some(n => n.textContent === "Set model to haiku (claude-haiku-5-5)")`)
	if n := eval[int](b, `[...document.querySelectorAll(".msg.user")].filter(m => m.textContent.includes("local-command")).length`); n != 0 {
		t.Errorf("the CLI's echo of set_model is shown as %d user messages", n)
	}
	n := len(api.MessageRequests())
	b.send("HELLO two")
	b.until("the second turn", `document.querySelectorAll(".result-line").length >= 2`)
	reqs := api.MessageRequests()[n:]
	if len(reqs) == 0 || !strings.Contains(reqs[0].Model, "haiku") {
		t.Errorf("the turn after picking haiku asked the API for %+v", reqs)
	}
	if v := eval[string](b, `document.querySelector("#model-pick").value`); v != "haiku" {
		t.Errorf("after the turn the picker shows %q, want haiku", v)
	}

	b.screenshot("phone-model-picker")
	if h := eval[float64](b, `document.querySelector("#top").getBoundingClientRect().height`); h > topBefore {
		t.Errorf("the header grew from %.0f to %.0f px", topBefore, h)
	}
	if h := eval[float64](b, `document.querySelector("#model-pick").getBoundingClientRect().height`); h < 31.5 {
		t.Errorf("the model picker is %.0f px tall at 390 px, want at least 32 to be tapped", h)
	}
	if r := eval[float64](b, `document.querySelector("#model-pick").getBoundingClientRect().right`); r > 390 {
		t.Errorf("the model picker ends at %.0f px, beyond the 390 px screen", r)
	}
}

// The model picker shows claude's refusal in the session's log and keeps
// the model in force; it is off while the connection is down, and when
// the session has ended.
func TestWebUIModelPickerRefusedAndOff(t *testing.T) {
	t.Parallel()
	const sess = "s-01jd8k3m9q"
	models := []protocol.ModelInfo{
		{Value: "default", DisplayName: "Default (recommended)", Description: "the default"},
		{Value: "sonnet", DisplayName: "Sonnet", Description: "efficient"},
		{Value: "opus", DisplayName: "Opus", Description: "capable"},
	}
	var down atomic.Bool
	stub := stubBackend(t, []string{protocol.CapSessions}, func(f *protocol.Frame) (protocol.Data, []stubPush) {
		switch {
		case f == nil:
			return nil, nil
		case f.Type == protocol.TypeSessionList:
			return protocol.SessionListResult{Sessions: []protocol.SessionInfo{{Session: sess, State: protocol.StateIdle, Cwd: "/tmp", CreatedAt: time.Now(), FirstSeq: 1}}}, nil
		case f.Type == protocol.TypeSessionSubscribe:
			return protocol.SessionSubscribeResult{Session: sess, State: protocol.StateIdle, FirstSeq: 1, Model: "sonnet", Models: models}, nil
		case f.Type == protocol.TypeSessionSetModel && strings.Contains(string(f.Data), `"opus"`):
			return stubErr{protocol.Errorf(protocol.CodeCLIError, `session/setModel: claude refused model "opus": no opus today`)}, nil
		case f.Type == protocol.TypeSessionSetModel && strings.Contains(string(f.Data), `"default"`):
			down.Store(true)
			return protocol.SessionSetModelResult{Model: "default"}, []stubPush{{protocol.TypeSessionState, protocol.SessionState{Session: sess, State: protocol.StateIdle, Model: "default", Models: models}}, {typ: stubClose}}
		}
		return nil, nil
	})
	inner := stub.Config.Handler
	stub.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() && r.URL.Path == "/v1/ws" {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		inner.ServeHTTP(w, r)
	})
	b := newBrowser(t)
	b.do("open", chromedp.Navigate(stub.URL+"/"))
	b.until("the session", `document.querySelector("#sessions li") !== null`)
	b.do("show it", chromedp.Click("#sessions li"))
	b.until("sonnet in force", `(() => { const s = document.querySelector("#model-pick"); return !s.disabled && s.value === "sonnet"; })()`)

	pickModel(b, "opus")
	b.until("the refusal shown", `[...document.querySelectorAll("#log .notice.error")].some(n => n.textContent.includes("no opus today"))`)
	b.until("sonnet still shown", `(() => { const s = document.querySelector("#model-pick"); return !s.disabled && s.value === "sonnet"; })()`)

	pickModel(b, "default")
	b.until("the connection down", `document.querySelector("#conn").dataset.state !== "open"`)
	b.until("default shown, and off", `(() => { const s = document.querySelector("#model-pick"); return s.disabled && s.value === "default"; })()`)
}

// pickModel picks value in the model picker as a person does: the value
// and one change event, in one step (chromedp.SetValue dispatches a change
// of its own, and a second dispatch after it asked again with whatever the
// picker showed by then).
func pickModel(b *browser, value string) {
	b.t.Helper()
	eval[any](b, `(() => { const s = document.querySelector("#model-pick"); s.value = `+strconv.Quote(value)+`; s.dispatchEvent(new Event("change")); return null; })()`)
}
