package fakeclaude

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// The models the fake offers in its initialize reply, shaped like the real
// CLI's (value, resolvedModel, displayName, description, supportsEffort,
// ...). FAKE_MODELS, a JSON array, replaces them.
func fakeModels() []map[string]any {
	if s := os.Getenv("FAKE_MODELS"); s != "" {
		var list []map[string]any
		if err := json.Unmarshal([]byte(s), &list); err == nil {
			return list
		}
		fmt.Fprintln(os.Stderr, "fake: FAKE_MODELS is not a JSON array of objects")
	}
	m := func(value, resolved, name, desc string) map[string]any {
		return map[string]any{"value": value, "resolvedModel": resolved, "displayName": name, "description": desc,
			"supportsEffort": true, "supportedEffortLevels": []any{"low", "medium", "high"}, "supportsAdaptiveThinking": true}
	}
	return []map[string]any{
		m("default", defaultModel, "Default (recommended)", "Use the default model (currently Fake Opus)"),
		m("opus", defaultModel, "Opus", "Fake Opus · for everyday tasks"),
		m("sonnet", "fake-sonnet", "Sonnet", "Fake Sonnet · efficient"),
		m("haiku", "fake-haiku", "Haiku", "Fake Haiku · fastest"),
	}
}

// defaultModel is what "default" (and no --model) resolves to: the model
// system/init reports.
const defaultModel = "fake-model"

// resolveModel returns the model id a set_model or --model value stands
// for: an alias's resolvedModel, "default" or "" the default, anything
// else itself (the real CLI takes names it does not know), and whether it
// was an alias other than default.
func (f *fake) resolveModel(value string) (string, bool) {
	if value == "" || value == "default" {
		return defaultModel, false
	}
	for _, m := range f.models {
		if m["value"] == value {
			if r, _ := m["resolvedModel"].(string); r != "" {
				return r, true
			}
		}
	}
	return value, false
}

// setModel plays set_model as the real CLI 2.1.329 does (docs/CLI-NOTES.md):
// an empty model is refused (error_code catalog_unknown); a missing one is
// the default; any other name is taken, even an unknown one. The CLI then
// replays "<local-command-stdout>Set model to …" as a user event (here with
// FAKE_REPLAY=1, like the turns' echoes) before its answer {model: id}.
// FAKE_REFUSE_MODEL=NAME refuses NAME with the same error.
func (f *fake) setModel(id string, req map[string]any) {
	v, present := req["model"]
	value, _ := v.(string)
	if present && value == "" || value != "" && value == os.Getenv("FAKE_REFUSE_MODEL") {
		name := value
		if name == "" {
			name = "(unrecognized model name)"
		}
		f.mu.Lock()
		cur := f.model
		f.mu.Unlock()
		f.emit(map[string]any{"type": "control_response", "response": map[string]any{"subtype": "error", "request_id": id,
			"error":      fmt.Sprintf("Model %q is not a recognized model id. Run /model to see available models.", name),
			"error_code": "catalog_unknown", "model": cur}})
		return
	}
	resolved, alias := f.resolveModel(value)
	f.mu.Lock()
	f.model = resolved
	f.mu.Unlock()
	if f.replay {
		shown := resolved
		if alias {
			shown = value + " (" + resolved + ")"
		}
		f.emit(map[string]any{"type": "user", "message": map[string]any{"role": "user",
			"content": "<local-command-stdout>Set model to `" + shown + "`</local-command-stdout>"},
			"session_id": f.sessionID, "parent_tool_use_id": nil, "uuid": "u-set-model", "isReplay": true})
	}
	f.success(id, map[string]any{"model": resolved})
}

// modelFlag is the value of --model (or --model=V) in args.
func modelFlag(args []string) string {
	for i, a := range args {
		if a == "--model" && i+1 < len(args) {
			return args[i+1]
		}
		if v, ok := strings.CutPrefix(a, "--model="); ok {
			return v
		}
	}
	return ""
}

// fakeCommands is the initialize reply's commands: FAKE_COMMANDS, a JSON
// array, else none (as the fake always answered).
func fakeCommands() []any {
	if s := os.Getenv("FAKE_COMMANDS"); s != "" {
		var list []any
		if err := json.Unmarshal([]byte(s), &list); err == nil {
			return list
		}
		fmt.Fprintln(os.Stderr, "fake: FAKE_COMMANDS is not a JSON array")
	}
	return []any{}
}

// waitInitGate blocks until a line can be read from FAKE_INIT_GATE (a
// FIFO the test writes to), if set: the fake then answers initialize.
// Like the real CLI, which reads nothing of its stdin until it is ready,
// it reads no other line meanwhile.
func waitInitGate() {
	path := os.Getenv("FAKE_INIT_GATE")
	if path == "" {
		return
	}
	f, err := os.Open(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake: FAKE_INIT_GATE:", err)
		return
	}
	defer f.Close()
	b := make([]byte, 1)
	_, _ = f.Read(b)
}
