package acp_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/tidwall/gjson"

	"github.com/ccproxy/ccproxy/acp"
	"github.com/ccproxy/ccproxy/proxy"
)

// selectOf returns the select config option id of opts (nil if none).
func selectOf(opts []sdk.SessionConfigOption, id string) *sdk.SessionConfigOptionSelect {
	for _, o := range opts {
		if o.Select != nil && string(o.Select.Id) == id {
			return o.Select
		}
	}
	return nil
}

// values lists a select's option values.
func values(s *sdk.SessionConfigOptionSelect) []string {
	var out []string
	if s != nil && s.Options.Ungrouped != nil {
		for _, o := range *s.Options.Ungrouped {
			out = append(out, string(o.Value))
		}
	}
	return out
}

// configWatch records the config options of the config_option_update
// and current_mode_update notifications the agent writes, as it writes
// them (the SDK client handles notifications behind the responses).
type configWatch struct {
	mu    sync.Mutex
	opts  []sdk.SessionConfigOption // the last config_option_update's
	modes []string                  // every current_mode_update's mode
}

func watchConfig(cl *goClient) *configWatch {
	w := &configWatch{}
	cl.mu.Lock()
	cl.onSend = func(msg []byte) {
		u := gjson.GetBytes(msg, "params.update")
		switch u.Get("sessionUpdate").String() {
		case "config_option_update":
			var c sdk.SessionConfigOptionUpdate
			if json.Unmarshal([]byte(u.Raw), &c) == nil {
				w.mu.Lock()
				w.opts = c.ConfigOptions
				w.mu.Unlock()
			}
		case "current_mode_update":
			w.mu.Lock()
			w.modes = append(w.modes, u.Get("currentModeId").String())
			w.mu.Unlock()
		}
	}
	cl.mu.Unlock()
	return w
}

// options is the editor's view of the config options: the last update's,
// else initial (an answer's).
func (w *configWatch) options(initial []sdk.SessionConfigOption) []sdk.SessionConfigOption {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.opts != nil {
		return w.opts
	}
	return initial
}

// The session's mode and model are ACP config options: session/new
// answers them (the model once claude has said which models it offers,
// else a config_option_update brings them), set_config_option sets
// either, answering all the options, and a model chosen so stays after
// the session is suspended and resumed.
func TestAgentConfigOptions(t *testing.T) {
	argsFile := filepath.Join(t.TempDir(), "args.json")
	opts, clock := idleProxy(proxy.Options{CLIOptions: proxy.CLIOptions{ClaudeEnv: append(os.Environ(), "FAKE_ARGS_FILE="+argsFile)}})
	cl, conn, b, _, stop := fakeAgent(t, opts, slog.New(slog.DiscardHandler), nil)
	defer stop()
	watch := watchConfig(cl)
	bg := context.Background()
	ns, err := conn.NewSession(bg, sdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	mode := selectOf(ns.ConfigOptions, acp.ConfigMode)
	if mode == nil || mode.CurrentValue != "default" || !slices.Equal(values(mode), []string{"default", "acceptEdits", "plan"}) {
		t.Fatalf("session/new's mode option: %+v, want default of default, acceptEdits, plan", mode)
	}
	promptOK(t, conn, ns.SessionId, "hello") // claude has answered initialize by now
	model := selectOf(watch.options(ns.ConfigOptions), acp.ConfigModel)
	if model == nil || !slices.Equal(values(model), []string{"default", "opus", "sonnet", "haiku"}) || model.CurrentValue != "default" {
		t.Fatalf("the model option after the first turn: %+v, want default of the fake's four models", model)
	}

	r, err := conn.SetSessionConfigOption(bg, sdk.SetSessionConfigOptionRequest{ValueId: &sdk.SetSessionConfigOptionValueId{SessionId: ns.SessionId, ConfigId: acp.ConfigModel, Value: "haiku"}})
	if err != nil {
		t.Fatal(err)
	}
	if m := selectOf(r.ConfigOptions, acp.ConfigModel); m == nil || m.CurrentValue != "haiku" || selectOf(r.ConfigOptions, acp.ConfigMode) == nil {
		t.Errorf("set_config_option model haiku answered %+v, want both options, the model haiku", r.ConfigOptions)
	}
	r, err = conn.SetSessionConfigOption(bg, sdk.SetSessionConfigOptionRequest{ValueId: &sdk.SetSessionConfigOptionValueId{SessionId: ns.SessionId, ConfigId: acp.ConfigMode, Value: "plan"}})
	if err != nil {
		t.Fatal(err)
	}
	if m := selectOf(r.ConfigOptions, acp.ConfigMode); m == nil || m.CurrentValue != "plan" {
		t.Errorf("set_config_option mode plan answered %+v, want the mode plan", r.ConfigOptions)
	}
	promptOK(t, conn, ns.SessionId, "again")
	watch.mu.Lock()
	modes := slices.Clone(watch.modes)
	watch.mu.Unlock()
	if !slices.Contains(modes, "plan") {
		t.Error("no current_mode_update to plan after the mode config option was set")
	}

	// Suspended and resumed: the new claude runs the chosen model.
	suspendIdle(t, clock, b, ns.SessionId)
	promptOK(t, conn, ns.SessionId, "after the suspend")
	args := lastArgs(t, argsFile)
	if i := slices.Index(args, "--model"); !resumes(args, "fake-session-1") || i < 0 || i+1 >= len(args) || args[i+1] != "haiku" {
		t.Errorf("the claude of the resumed session: args %q, want --resume and --model haiku", args)
	}

	for _, tc := range []struct {
		req  sdk.SetSessionConfigOptionRequest
		want string
	}{
		{sdk.SetSessionConfigOptionRequest{ValueId: &sdk.SetSessionConfigOptionValueId{SessionId: ns.SessionId, ConfigId: "effort", Value: "high"}}, `session/set_config_option: configId: no config option "effort"`},
		{sdk.SetSessionConfigOptionRequest{ValueId: &sdk.SetSessionConfigOptionValueId{SessionId: ns.SessionId, ConfigId: acp.ConfigModel, Value: "gpt"}}, `session/set_config_option: value: "gpt" is not one of the models of configId "model"`},
		{sdk.SetSessionConfigOptionRequest{ValueId: &sdk.SetSessionConfigOptionValueId{SessionId: ns.SessionId, ConfigId: acp.ConfigMode, Value: "bypassPermissions"}}, `session/set_config_option: value: "bypassPermissions" is not one of the modes of configId "mode"`},
		{sdk.SetSessionConfigOptionRequest{Boolean: &sdk.SetSessionConfigOptionBoolean{SessionId: ns.SessionId, ConfigId: acp.ConfigMode, Value: true}}, "a value id, not a boolean"},
		{sdk.SetSessionConfigOptionRequest{ValueId: &sdk.SetSessionConfigOptionValueId{SessionId: "nope", ConfigId: acp.ConfigMode, Value: "plan"}}, `no session "nope"`},
	} {
		_, err := conn.SetSessionConfigOption(bg, tc.req)
		invalidParams(t, "set_config_option", err, tc.want)
	}
}
