package proxy

// The models part of a Session: the models claude offers (its initialize
// reply's models), the model it runs (system/init's model, or the value
// chosen by session/create or session/setModel), and session/setModel
// (claude's set_model control request). Both are reported in
// session/state, pushed through Session.pushStateLocked like the
// permission mode (broker.go). Fields (type models): current, chosen,
// resolved, list, gen, guarded by Session.mu (every method but setModel's
// is called with it held); setMu serializes Session.setModel (taken
// before Session.mu, held across the control request). Measured on the
// real CLI 2.1.329: docs/CLI-NOTES.md ("set_model").

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
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

// models is the model part of a session. Its fields are guarded by
// Session.mu (a part of the Session, not a lock of its own); setMu is
// the lock of Session.setModel.
type models struct {
	setMu    sync.Mutex   // serializes Session.setModel (taken before Session.mu)
	current  string       // the model the session runs, as reported in session/state
	chosen   string       // the model value last chosen (session/create, session/setModel): a new process is launched with it
	resolved string       // the model id claude's set_model answer resolved chosen to ("" unknown)
	list     []modelEntry // the models claude's initialize reply offers (at most protocol.MaxModels)
	gen      uint64       // counts the changes of list (Session.stateKeyLocked)
}

// noteList records the models of claude's initialize reply and reports
// whether they changed.
func (m *models) noteList(resp []byte, log *slog.Logger) (changed bool) {
	list, offered := parseModels(resp)
	if offered > len(list) {
		log.Warn("claude offers models ccproxy does not report", "offered", offered, "kept", len(list), "max", protocol.MaxModels)
	}
	if list == nil && offered == 0 {
		return false // an answer without models (an older claude, a failed initialize) keeps what is known
	}
	if slices.Equal(list, m.list) {
		return false
	}
	m.list = list
	m.gen++
	return true
}

// noteInit records the model claude reports in a system/init and reports
// whether the session's model changed: the chosen value stays the
// session's model as long as claude runs what it resolves to; else the
// session's model is the id claude reports. Before anything was chosen,
// "default" stands for the model it resolves to.
func (m *models) noteInit(ev *stream.Event) (changed bool) {
	if ev.Type != stream.TypeSystem || ev.Subtype != stream.SubtypeInit {
		return false
	}
	got := gjson.GetBytes(ev.JSON, "model")
	if got.Type != gjson.String || !validModelValue(got.Str) {
		return false
	}
	chosen := m.chosen
	if chosen == "" && slices.ContainsFunc(m.list, func(e modelEntry) bool { return e.info.Value == "default" }) {
		chosen = "default"
	}
	if chosen != "" && (chosen == got.Str || m.idOf(chosen) == got.Str) {
		return m.set(chosen)
	}
	return m.set(got.Str)
}

// idOf is the model id value stands for: claude's answer to the
// set_model that chose it, else its models list's resolvedModel.
func (m *models) idOf(value string) string {
	if value == m.chosen && m.resolved != "" {
		return m.resolved
	}
	for _, e := range m.list {
		if e.info.Value == value {
			return e.resolved
		}
	}
	return ""
}

// set changes the session's model and reports whether it changed.
func (m *models) set(model string) (changed bool) {
	if model == m.current {
		return false
	}
	m.current = model
	return true
}

// choose records the value chosen (and the id claude resolved it to, ""
// unknown) as the session's model; it reports whether that changed.
func (m *models) choose(model, resolved string) (changed bool) {
	m.chosen, m.resolved = model, resolved
	return m.set(model)
}

// setModel switches the session's model with claude's set_model control
// request, for the next turns. Claude's refusal is a cli_error with its
// message. While the session restarts (or is suspended: it resumes) there
// is no claude to ask: the model is kept for the new process, which is
// launched with it. models.setMu
// serializes the calls, so the session's model is the last one claude
// answered. Subscribers get session/state with the new model.
func (s *Session) setModel(ctx context.Context, model string) (protocol.SessionSetModelResult, error) {
	const what = "session/setModel"
	s.models.setMu.Lock()
	defer s.models.setMu.Unlock()
	s.mu.Lock()
	switch {
	case s.proc.gone():
		s.mu.Unlock()
		return protocol.SessionSetModelResult{}, protocol.Errorf(protocol.CodeSessionExited, "%s: session %s has exited", what, s.id)
	case s.restarts.active:
		defer s.mu.Unlock()
		if s.models.choose(model, "") {
			s.pushStateLocked("")
		}
		s.suspend.wakeLocked() // a suspended session resumes, with model
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
	if s.models.choose(model, resolved) {
		s.pushStateLocked("")
	}
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

// infos is the models list of session/state.
func (m *models) infos() []protocol.ModelInfo {
	if len(m.list) == 0 {
		return nil
	}
	out := make([]protocol.ModelInfo, len(m.list))
	for i, e := range m.list {
		out[i] = e.info
	}
	return out
}
