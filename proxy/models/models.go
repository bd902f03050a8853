package models

import (
	"log/slog"
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
		if len(out) == protocol.MaxModels || v.Type != gjson.String || !ValidValue(v.Str) {
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

// ValidValue reports whether v is what protocol's ModelValue takes:
// 1 to MaxModelBytes bytes of valid UTF-8 without control characters.
func ValidValue(v string) bool {
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

// State is the model part of a session. It is not safe for concurrent
// use: its owner's lock guards it (proxy's Session.mu).
type State struct {
	current  string       // the model the session runs, as reported in session/state
	chosen   string       // the model value last chosen (session/create, session/setModel): a new process is launched with it
	resolved string       // the model id claude's set_model answer resolved chosen to ("" unknown)
	list     []modelEntry // the models claude's initialize reply offers (at most protocol.MaxModels)
	gen      uint64       // counts the changes of list (the session's state key)
}

// NoteList records the models of claude's initialize reply and reports
// whether they changed.
func (m *State) NoteList(resp []byte, log *slog.Logger) (changed bool) {
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

// NoteInit records the model claude reports in a system/init and reports
// whether the session's model changed: the chosen value stays the
// session's model as long as claude runs what it resolves to; else the
// session's model is the id claude reports. Before anything was chosen,
// "default" stands for the model it resolves to.
func (m *State) NoteInit(ev *stream.Event) (changed bool) {
	if ev.Type != stream.TypeSystem || ev.Subtype != stream.SubtypeInit {
		return false
	}
	got := gjson.GetBytes(ev.JSON, "model")
	if got.Type != gjson.String || !ValidValue(got.Str) {
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
func (m *State) idOf(value string) string {
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

// Start is the state of a new session: model (session/create's, "" for
// claude's default) chosen and current.
func Start(model string) State { return State{current: model, chosen: model} }

// Current is the model the session runs, as session/state reports it.
func (m *State) Current() string { return m.current }

// Chosen is the model value last chosen: a new process is launched with it.
func (m *State) Chosen() string { return m.chosen }

// Gen counts the changes of the models list (the session's state key).
func (m *State) Gen() uint64 { return m.gen }

// set changes the session's model and reports whether it changed.
func (m *State) set(model string) (changed bool) {
	if model == m.current {
		return false
	}
	m.current = model
	return true
}

// Choose records the value chosen (and the id claude resolved it to, ""
// unknown) as the session's model; it reports whether that changed.
func (m *State) Choose(model, resolved string) (changed bool) {
	m.chosen, m.resolved = model, resolved
	return m.set(model)
}

// Infos is the models list of session/state.
func (m *State) Infos() []protocol.ModelInfo {
	if len(m.list) == 0 {
		return nil
	}
	out := make([]protocol.ModelInfo, len(m.list))
	for i, e := range m.list {
		out[i] = e.info
	}
	return out
}

// CutText is cutText for the session's other lists (slash commands):
// valid UTF-8, control characters as spaces, at most max bytes.
func CutText(s string, max int) string { return cutText(s, max) }

// Args is the --model flag of a new claude launched with model (the value
// chosen, "" for claude's default): "--model=V" when V could read as a
// flag of its own.
func Args(model string) []string {
	switch {
	case model == "":
		return nil
	case strings.HasPrefix(model, "-"):
		return []string{"--model=" + model}
	default:
		return []string{"--model", model}
	}
}
