package proxy

// The session's model: the models claude offers (its initialize reply's
// models), the model it runs (system/init's model, or the value chosen by
// session/create or session/setModel), and session/setModel (claude's
// set_model control request). Both are reported in session/state, pushed
// through pushStateLocked like the permission mode (broker.go). Measured
// on the real CLI 2.1.329: docs/CLI-NOTES.md ("set_model").

import (
	"context"
	"errors"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/stream"
)

// modelEntry is one model claude offers: what clients see, and the model
// id claude resolves its value to (resolvedModel; not sent to clients).
type modelEntry struct {
	info     protocol.ModelInfo
	resolved string
}

// parseModels reads the models of claude's initialize reply: at most
// protocol.MaxModels entries, the texts cut at their bounds. An entry
// whose value is not a valid model value (empty, too long, with control
// characters) is left out: a cut value would name another model. It
// returns how many entries claude offered.
func parseModels(resp []byte) ([]modelEntry, int) {
	list := gjson.GetBytes(resp, "models")
	if !list.IsArray() {
		return nil, 0
	}
	var out []modelEntry
	offered := 0
	list.ForEach(func(_, m gjson.Result) bool {
		offered++
		v := m.Get("value")
		if len(out) == protocol.MaxModels || v.Type != gjson.String || !validModelValue(v.Str) {
			return true
		}
		out = append(out, modelEntry{
			info: protocol.ModelInfo{
				Value:       v.Str,
				DisplayName: cutText(m.Get("displayName").String(), protocol.MaxModelDisplayNameBytes),
				Description: cutText(m.Get("description").String(), protocol.MaxModelDescriptionBytes),
			},
			resolved: m.Get("resolvedModel").String(),
		})
		return true
	})
	return out, offered
}

// validModelValue reports whether v is what protocol's ModelValue takes:
// 1 to MaxModelBytes bytes of valid UTF-8 without control characters.
func validModelValue(v string) bool {
	if v == "" || len(v) > protocol.MaxModelBytes || !utf8.ValidString(v) {
		return false
	}
	return !strings.ContainsFunc(v, isControl)
}

func isControl(r rune) bool { return r < 0x20 || r >= 0x7f && r <= 0x9f }

// cutText makes s valid UTF-8 without control characters (each becomes a
// space) of at most max bytes, cut at a rune boundary.
func cutText(s string, max int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if isControl(r) {
			return ' '
		}
		return r
	}, s)
	if len(s) <= max {
		return s
	}
	i := max
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i]
}

// noteModelsLocked records the models of claude's initialize reply and
// tells the subscribers when they changed.
func (s *Session) noteModelsLocked(resp []byte) {
	models, offered := parseModels(resp)
	if offered > len(models) {
		s.log.Warn("claude offers models ccproxy does not report", "offered", offered, "kept", len(models), "max", protocol.MaxModels)
	}
	if models == nil && offered == 0 {
		return // an answer without models (an older claude, a failed initialize) keeps what is known
	}
	if slices.Equal(models, s.models) {
		return
	}
	s.models = models
	s.modelsGen++
	s.pushStateLocked("")
}

// noteModelLocked records the model claude reports in a system/init: the
// chosen value stays the session's model as long as claude runs what it
// resolves to; else the session's model is the id claude reports. Before
// anything was chosen, "default" stands for the model it resolves to.
func (s *Session) noteModelLocked(ev *stream.Event) {
	if ev.Type != stream.TypeSystem || ev.Subtype != stream.SubtypeInit {
		return
	}
	m := gjson.GetBytes(ev.JSON, "model")
	if m.Type != gjson.String || !validModelValue(m.Str) {
		return
	}
	chosen := s.modelChosen
	if chosen == "" && slices.ContainsFunc(s.models, func(e modelEntry) bool { return e.info.Value == "default" }) {
		chosen = "default"
	}
	if chosen != "" && (chosen == m.Str || s.modelIDLocked(chosen) == m.Str) {
		s.setModelLocked(chosen)
		return
	}
	s.setModelLocked(m.Str)
}

// modelIDLocked is the model id value stands for: claude's answer to the
// set_model that chose it, else its models list's resolvedModel.
func (s *Session) modelIDLocked(value string) string {
	if value == s.modelChosen && s.modelResolved != "" {
		return s.modelResolved
	}
	for _, e := range s.models {
		if e.info.Value == value {
			return e.resolved
		}
	}
	return ""
}

// setModelLocked changes the session's model and tells the subscribers.
func (s *Session) setModelLocked(model string) {
	if model == s.model {
		return
	}
	s.model = model
	s.pushStateLocked("")
}

// chosenModel is the model a new process of the session is launched with
// (--model): the value last chosen, "" for claude's default.
func (s *Session) chosenModel() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.modelChosen
}

// setModel switches the session's model with claude's set_model control
// request, for the next turns. Claude's refusal is a cli_error with its
// message. While the session restarts there is no claude to ask: the
// model is kept for the new process, which is launched with it. modelMu
// serializes the calls, so the session's model is the last one claude
// answered. Subscribers get session/state with the new model.
func (s *Session) setModel(ctx context.Context, model string) (protocol.SessionSetModelResult, error) {
	const what = "session/setModel"
	s.modelMu.Lock()
	defer s.modelMu.Unlock()
	s.mu.Lock()
	switch {
	case s.exited || s.closing != "":
		s.mu.Unlock()
		return protocol.SessionSetModelResult{}, protocol.Errorf(protocol.CodeSessionExited, "%s: session %s has exited", what, s.id)
	case s.restarting:
		defer s.mu.Unlock()
		s.modelChosen, s.modelResolved = model, ""
		s.setModelLocked(model)
		return protocol.SessionSetModelResult{Model: model}, nil
	}
	s.mu.Unlock()
	resp, err := s.controlWait(ctx, "set_model", map[string]any{"model": model})
	if err != nil {
		var ce *cliError
		if errors.As(err, &ce) {
			return protocol.SessionSetModelResult{}, protocol.Errorf(protocol.CodeCLIError, "%s: claude refused model %q: %s", what, model, truncate(ce.Msg, 500))
		}
		return protocol.SessionSetModelResult{}, controlError(what, err)
	}
	resolved := gjson.GetBytes(resp, "model").String()
	if !validModelValue(resolved) {
		resolved = ""
	}
	s.mu.Lock()
	s.modelChosen, s.modelResolved = model, resolved
	s.setModelLocked(model)
	s.mu.Unlock()
	s.log.Info("model set", "model", model, "resolved", resolved)
	return protocol.SessionSetModelResult{Model: model, ResolvedModel: resolved}, nil
}

// modelArgs is the --model flag of a new process: "--model=V" when V
// could read as a flag of its own.
func modelArgs(model string) []string {
	switch {
	case model == "":
		return nil
	case strings.HasPrefix(model, "-"):
		return []string{"--model=" + model}
	default:
		return []string{"--model", model}
	}
}

// modelInfosLocked is the models list of session/state.
func (s *Session) modelInfosLocked() []protocol.ModelInfo {
	if len(s.models) == 0 {
		return nil
	}
	out := make([]protocol.ModelInfo, len(s.models))
	for i, e := range s.models {
		out[i] = e.info
	}
	return out
}
