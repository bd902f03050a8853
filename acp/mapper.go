package acp

import (
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/tidwall/gjson"

	"github.com/ccproxy/ccproxy/protocol"
)

// BlobFetcher returns the bytes of a normalized attachment's url
// (/v1/blobs/<sha256>, relative to the proxy) for image blocks.
type BlobFetcher func(url string) ([]byte, error)

// Result is what a `result` event says about the turn it ends.
type Result struct {
	Stop    sdk.StopReason `json:"stopReason"`
	IsError bool           `json:"isError,omitempty"` // an error that is none of the stop reasons (Text says which)
	Subtype string         `json:"subtype"`           // the CLI's result subtype
	Text    string         `json:"text,omitempty"`    // the result text
	Usage   *sdk.Usage     `json:"usage,omitempty"`   // the turn's tokens (usage.go)
}

// Mapper turns one session's normalized events (SPEC §7) into ACP session
// updates. It keeps what it needs across events: the tool uses seen (for
// tool_call_update titles and kinds) and which messages were streamed
// (their text arrived as stream_event deltas, so the whole assistant
// message is not sent again). It is not safe for concurrent use: one
// goroutine (the session's event reader) owns it.
type Mapper struct {
	Fetch    BlobFetcher
	tools    map[string]toolInfo
	streamed map[string]bool        // message ids whose text/thinking came as deltas
	curMsg   string                 // message id of the stream in progress
	commands string                 // the commands last sent (JSON), to send changes only
	rich     bool                   // commands came with descriptions (commands_changed): init's names do not replace them
	proxy    bool                   // the proxy says the commands (session/commands): the events' lists are not used
	mode     string                 // the mode last sent
	history  bool                   // replaying a stored session: the user's prompts are sent too
	usage    sdk.SessionUsageUpdate // the usage_update last sent (usage.go)
	lastCall int                    // the context the last API call took (usage.go)
}

type toolInfo struct {
	name  string
	input json.RawMessage
}

// NewMapper returns a Mapper; fetch may be nil (images without bytes are
// then described in text).
func NewMapper(fetch BlobFetcher) *Mapper {
	return &Mapper{Fetch: fetch, tools: map[string]toolInfo{}, streamed: map[string]bool{}}
}

// Map returns the updates for one event, and the turn's Result when the
// event is a `result`.
func (m *Mapper) Map(ev []byte) ([]sdk.SessionUpdate, *Result) {
	if !gjson.ValidBytes(ev) {
		return nil, nil
	}
	e := gjson.ParseBytes(ev)
	switch e.Get("type").String() {
	case "stream_event":
		return m.streamEvent(e.Get("event")), nil
	case "assistant":
		if e.Get("parent_tool_use_id").String() != "" {
			return m.assistant(e, true), nil // a subagent's message: its tool uses only
		}
		m.noteCall(e) // usage.go
		return m.assistant(e, false), nil
	case "user":
		return m.user(e), nil
	case "system":
		return m.system(e), nil
	case "result":
		return m.resultUsage(e), resultOf(e) // the usage_update goes before the prompt's answer
	}
	return nil, nil
}

func (m *Mapper) streamEvent(se gjson.Result) []sdk.SessionUpdate {
	switch se.Get("type").String() {
	case "message_start":
		m.curMsg = se.Get("message.id").String()
	case "content_block_delta":
		d := se.Get("delta")
		switch d.Get("type").String() {
		case "text_delta":
			if t := d.Get("text").String(); t != "" {
				m.markStreamed()
				return []sdk.SessionUpdate{sdk.UpdateAgentMessageText(t)}
			}
		case "thinking_delta":
			if t := d.Get("thinking").String(); t != "" {
				m.markStreamed()
				return []sdk.SessionUpdate{sdk.UpdateAgentThoughtText(t)}
			}
		}
	}
	return nil
}

func (m *Mapper) markStreamed() {
	if m.curMsg != "" {
		m.streamed[m.curMsg] = true
	}
}

func (m *Mapper) assistant(e gjson.Result, subagent bool) []sdk.SessionUpdate {
	var out []sdk.SessionUpdate
	streamed := m.streamed[e.Get("message.id").String()]
	for _, b := range e.Get("message.content").Array() {
		switch b.Get("type").String() {
		case "text":
			if !streamed && !subagent && b.Get("text").String() != "" {
				out = append(out, sdk.UpdateAgentMessageText(b.Get("text").String()))
			}
		case "thinking":
			if !streamed && !subagent && b.Get("thinking").String() != "" {
				out = append(out, sdk.UpdateAgentThoughtText(b.Get("thinking").String()))
			}
		case "tool_use":
			out = append(out, m.toolUse(b)...)
		}
	}
	return out
}

func (m *Mapper) toolUse(b gjson.Result) []sdk.SessionUpdate {
	id := b.Get("id").String()
	name := b.Get("name").String()
	input := json.RawMessage(b.Get("input").Raw)
	if len(input) == 0 {
		input = json.RawMessage("{}")
	}
	m.tools[id] = toolInfo{name: name, input: input}
	if name == "TodoWrite" {
		return []sdk.SessionUpdate{planOf(gjson.ParseBytes(input))}
	}
	in := gjson.ParseBytes(input)
	tc := &sdk.SessionUpdateToolCall{
		SessionUpdate: "tool_call",
		ToolCallId:    sdk.ToolCallId(id),
		Title:         toolTitle(name, in, b.Get("mcp")),
		Kind:          toolKind(name),
		Status:        sdk.ToolCallStatusPending,
		Locations:     toolLocations(name, in),
		RawInput:      input,
		Content:       inputDiff(name, in),
	}
	return []sdk.SessionUpdate{{ToolCall: tc}}
}

func (m *Mapper) user(e gjson.Result) []sdk.SessionUpdate {
	var out []sdk.SessionUpdate
	content := e.Get("message.content")
	if !content.IsArray() {
		if m.history && content.String() != "" && e.Get("parent_tool_use_id").String() == "" && !cliNotice(content.String()) {
			return []sdk.SessionUpdate{sdk.UpdateUserMessageText(content.String())}
		}
		return nil // a user turn (replayed): the client sent it
	}
	for _, b := range content.Array() {
		if b.Get("type").String() != "tool_result" {
			if m.history && e.Get("parent_tool_use_id").String() == "" {
				switch b.Get("type").String() {
				case "text":
					if t := b.Get("text").String(); !cliNotice(t) {
						out = append(out, sdk.UpdateUserMessageText(t))
					}
				case "image":
					if d := b.Get("source.data").String(); d != "" {
						out = append(out, sdk.UpdateUserMessage(sdk.ImageBlock(d, b.Get("source.media_type").String())))
					}
				}
			}
			continue
		}
		id := b.Get("tool_use_id").String()
		ti := m.tools[id]
		delete(m.tools, id) // nothing after its result needs the input
		if ti.name == "TodoWrite" {
			continue // shown as the plan
		}
		status := sdk.ToolCallStatusCompleted
		if b.Get("is_error").Bool() {
			status = sdk.ToolCallStatusFailed
		}
		if backgroundLaunch(e.Get("tool_use_result")) {
			// The CLI's words are for claude only; its side copy holds
			// the agent's internal id and output file: neither is sent.
			out = append(out, sdk.SessionUpdate{ToolCallUpdate: &sdk.SessionToolCallUpdate{
				SessionUpdate: "tool_call_update",
				ToolCallId:    sdk.ToolCallId(id),
				Status:        &status,
				Content:       []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(backgroundLaunchText))},
			}})
			continue
		}
		var cont []sdk.ToolCallContent
		if d := patchDiff(ti, e.Get("tool_use_result")); d != nil && status == sdk.ToolCallStatusCompleted {
			cont = append(cont, *d)
		}
		if t := b.Get("content").String(); t != "" && !(len(cont) > 0 && ti.name != "") {
			cont = append(cont, sdk.ToolContent(sdk.TextBlock(t)))
		}
		for _, a := range b.Get("attachments").Array() {
			cont = append(cont, m.attachment(a))
		}
		u := &sdk.SessionToolCallUpdate{
			SessionUpdate: "tool_call_update",
			ToolCallId:    sdk.ToolCallId(id),
			Status:        &status,
			Content:       cont,
		}
		if r := e.Get("tool_use_result"); r.Exists() {
			u.RawOutput = json.RawMessage(r.Raw)
		}
		out = append(out, sdk.SessionUpdate{ToolCallUpdate: u})
	}
	return out
}

// backgroundLaunch reports whether a tool result is the CLI's notice that
// an agent (Task, Agent) was started in the background: its text is meant
// for claude alone ("Async agent launched successfully. (This tool result
// is internal metadata — never quote…", the agent's internal id, its
// output file's path). The CLI's side copy, tool_use_result, marks it
// (status async_launched, isAsync). The web UI's card applies the same
// rule (webui/app/render.js, builtins.Task.result) and says the same
// words, backgroundLaunchText, instead, in live and past sessions alike.
func backgroundLaunch(tur gjson.Result) bool {
	return tur.IsObject() && (tur.Get("status").String() == "async_launched" || tur.Get("isAsync").Type == gjson.True)
}

// backgroundLaunchText is what editors are shown of a background launch.
const backgroundLaunchText = "Started in the background."

// cliNotice reports whether the text of a user message is not the user's
// words but one the CLI wrote in the user's place: its marker of an
// interrupt ("[Request interrupted by user]", "… for tool use]") or the
// notice it feeds claude when a background task ends
// ("<task-notification>…</task-notification>"), or the output of a local
// command such as a model change it echoes
// ("<local-command-stdout>Set model to …</local-command-stdout>"). A stored
// session's replay
// leaves them out: the editor shows the interrupt as the turn's cancelled
// end, and a live session shows neither.
func cliNotice(text string) bool {
	t := strings.TrimSpace(text)
	if strings.HasPrefix(t, "[Request interrupted by user") && strings.HasSuffix(t, "]") && !strings.Contains(t[1:len(t)-1], "]") {
		return true
	}
	for _, tag := range []string{"task-notification", "local-command-stdout"} {
		if strings.HasPrefix(t, "<"+tag+">") && strings.HasSuffix(t, "</"+tag+">") {
			return true
		}
	}
	return false
}

// attachment makes an image block of an image attachment whose bytes can
// be had, and a line of text saying what it is otherwise.
func (m *Mapper) attachment(a gjson.Result) sdk.ToolCallContent {
	kind, mt := a.Get("kind").String(), a.Get("mediaType").String()
	if kind == "image" && mt != "" {
		data := a.Get("data").String()
		if data == "" && a.Get("url").String() != "" && m.Fetch != nil {
			if b, err := m.Fetch(a.Get("url").String()); err == nil {
				data = encodeBase64(b)
			}
		}
		if data != "" {
			return sdk.ToolContent(sdk.ImageBlock(data, mt))
		}
	}
	return sdk.ToolContent(sdk.TextBlock(fmt.Sprintf("[%s %s, %d bytes, sha256 %s]", kind, mt, a.Get("size").Int(), a.Get("sha256").String())))
}

func (m *Mapper) system(e gjson.Result) []sdk.SessionUpdate {
	switch e.Get("subtype").String() {
	case "init":
		var out []sdk.SessionUpdate
		if cmds := e.Get("slash_commands").Array(); len(cmds) > 0 && !m.rich && !m.proxy {
			list := make([]sdk.AvailableCommand, 0, len(cmds))
			for _, c := range cmds {
				list = append(list, sdk.AvailableCommand{Name: c.String(), Description: "/" + c.String()})
			}
			out = append(out, m.commandsUpdate(list)...)
		}
		if pm := e.Get("permissionMode").String(); pm != "" {
			out = append(out, m.ModeUpdate(pm)...)
		}
		return out
	case "commands_changed":
		if m.proxy { // its session/commands follows
			return nil
		}
		cmds := e.Get("commands").Array()
		list := make([]sdk.AvailableCommand, 0, len(cmds))
		for _, c := range cmds {
			ac := sdk.AvailableCommand{Name: c.Get("name").String(), Description: c.Get("description").String()}
			if h := c.Get("argumentHint").String(); h != "" {
				ac.Input = &sdk.AvailableCommandInput{Unstructured: &sdk.UnstructuredCommandInput{Hint: h}}
			}
			list = append(list, ac)
		}
		m.rich = true
		return m.commandsUpdate(list)
	}
	return nil
}

// ProxyCommands is the available_commands_update of the proxy's
// session/commands (claude's commands from its answer to initialize, so
// before the first prompt, then from each commands_changed), when the
// list changed. From the first one on, the lists in the events are not
// used: the proxy's is the same, and comes as well.
func (m *Mapper) ProxyCommands(cmds []protocol.SlashCommand) []sdk.SessionUpdate {
	m.proxy, m.rich = true, true
	list := make([]sdk.AvailableCommand, 0, len(cmds))
	for _, c := range cmds {
		ac := sdk.AvailableCommand{Name: c.Name, Description: c.Description}
		if c.ArgumentHint != "" {
			ac.Input = &sdk.AvailableCommandInput{Unstructured: &sdk.UnstructuredCommandInput{Hint: c.ArgumentHint}}
		}
		list = append(list, ac)
	}
	return m.commandsUpdate(list)
}

// commandsUpdate is an available_commands_update when the list changed.
func (m *Mapper) commandsUpdate(list []sdk.AvailableCommand) []sdk.SessionUpdate {
	b, _ := json.Marshal(list)
	if string(b) == m.commands {
		return nil
	}
	m.commands = string(b)
	return []sdk.SessionUpdate{{AvailableCommandsUpdate: &sdk.SessionAvailableCommandsUpdate{SessionUpdate: "available_commands_update", AvailableCommands: list}}}
}

// ModeUpdate is a current_mode_update when the mode changed.
func (m *Mapper) ModeUpdate(mode string) []sdk.SessionUpdate {
	if mode == m.mode {
		return nil
	}
	m.mode = mode
	return []sdk.SessionUpdate{modeUpdate(mode)}
}

func modeUpdate(mode string) sdk.SessionUpdate {
	return sdk.SessionUpdate{CurrentModeUpdate: &sdk.SessionCurrentModeUpdate{SessionUpdate: "current_mode_update", CurrentModeId: sdk.SessionModeId(mode)}}
}

// resultOf maps the CLI's result to an ACP stop reason.
func resultOf(e gjson.Result) *Result {
	r := &Result{Subtype: e.Get("subtype").String(), Text: e.Get("result").String(), Stop: sdk.StopReasonEndTurn, Usage: turnUsage(e)}
	switch r.Subtype {
	case "success":
		switch e.Get("stop_reason").String() {
		case "max_tokens":
			r.Stop = sdk.StopReasonMaxTokens
		case "refusal":
			r.Stop = sdk.StopReasonRefusal
		}
		r.IsError = e.Get("is_error").Bool() && r.Stop == sdk.StopReasonEndTurn
	case "error_max_turns":
		r.Stop = sdk.StopReasonMaxTurnRequests
	case "error_during_execution":
		r.Stop = sdk.StopReasonCancelled // an interrupt; the agent checks that it asked for one
		r.IsError = true
	default:
		r.IsError = true
	}
	if r.IsError && r.Text == "" {
		r.Text = "the turn ended with " + r.Subtype
	}
	return r
}

func planOf(in gjson.Result) sdk.SessionUpdate {
	entries := []sdk.PlanEntry{}
	for _, t := range in.Get("todos").Array() {
		st := sdk.PlanEntryStatus(t.Get("status").String())
		switch st {
		case sdk.PlanEntryStatusPending, sdk.PlanEntryStatusInProgress, sdk.PlanEntryStatusCompleted:
		default:
			st = sdk.PlanEntryStatusPending
		}
		entries = append(entries, sdk.PlanEntry{Content: t.Get("content").String(), Status: st, Priority: sdk.PlanEntryPriorityMedium})
	}
	return sdk.UpdatePlan(entries...)
}

func toolKind(name string) sdk.ToolKind {
	switch name {
	case "Read", "NotebookRead":
		return sdk.ToolKindRead
	case "Edit", "MultiEdit", "Write", "NotebookEdit":
		return sdk.ToolKindEdit
	case "Bash", "BashOutput", "KillShell", "KillBash":
		return sdk.ToolKindExecute
	case "Grep", "Glob", "LS", "ToolSearch":
		return sdk.ToolKindSearch
	case "WebFetch", "WebSearch":
		return sdk.ToolKindFetch
	case "Task", "Agent", "TodoWrite":
		return sdk.ToolKindThink
	case "ExitPlanMode", "EnterPlanMode":
		return sdk.ToolKindSwitchMode
	}
	return sdk.ToolKindOther
}

func toolTitle(name string, in, mcp gjson.Result) string {
	s := func(k string) string { return in.Get(k).String() }
	switch name {
	case "Bash":
		if d := s("description"); d != "" {
			return d
		}
		return "`" + s("command") + "`"
	case "Read", "Edit", "MultiEdit", "Write":
		return name + " " + s("file_path")
	case "NotebookEdit":
		return name + " " + s("notebook_path")
	case "Grep":
		return "grep " + s("pattern")
	case "Glob":
		return "glob " + s("pattern")
	case "WebFetch":
		return "Fetch " + s("url")
	case "WebSearch":
		return "Search " + s("query")
	case "Task":
		if d := s("description"); d != "" {
			return d
		}
	}
	if mcp.Exists() {
		return mcp.Get("server").String() + " · " + mcp.Get("tool").String()
	}
	if srv, tool, ok := strings.Cut(strings.TrimPrefix(name, "mcp__"), "__"); ok && strings.HasPrefix(name, "mcp__") {
		return srv + " · " + tool
	}
	return name
}

func toolLocations(name string, in gjson.Result) []sdk.ToolCallLocation {
	for _, k := range []string{"file_path", "notebook_path"} {
		if p := in.Get(k).String(); p != "" {
			loc := sdk.ToolCallLocation{Path: p}
			if name == "Read" && in.Get("offset").Int() > 0 {
				line := int(in.Get("offset").Int())
				loc.Line = &line
			}
			return []sdk.ToolCallLocation{loc}
		}
	}
	if name == "Grep" || name == "Glob" || name == "LS" {
		if p := in.Get("path").String(); p != "" {
			return []sdk.ToolCallLocation{{Path: p}}
		}
	}
	return nil
}

// inputDiff shows what an Edit or Write is about to change, from its
// input, so the client can show the diff while asking for permission.
func inputDiff(name string, in gjson.Result) []sdk.ToolCallContent {
	p := in.Get("file_path").String()
	switch {
	case p == "":
	case name == "Edit":
		return []sdk.ToolCallContent{sdk.ToolDiffContent(p, in.Get("new_string").String(), in.Get("old_string").String())}
	case name == "Write":
		return []sdk.ToolCallContent{sdk.ToolDiffContent(p, in.Get("content").String())}
	}
	return nil
}

// patchDiff is the diff an Edit or Write made, from the structuredPatch of
// the CLI's tool_use_result: the old side is the context and removed
// lines of its hunks, the new side the context and added lines.
func patchDiff(ti toolInfo, r gjson.Result) *sdk.ToolCallContent {
	if ti.name != "Edit" && ti.name != "Write" && ti.name != "MultiEdit" {
		return nil
	}
	p := r.Get("filePath").String()
	if p == "" {
		p = gjson.GetBytes(ti.input, "file_path").String()
	}
	hunks := r.Get("structuredPatch").Array()
	if p == "" || !r.Get("structuredPatch").Exists() {
		return nil
	}
	if len(hunks) == 0 && ti.name == "Write" { // a new file
		c := sdk.ToolDiffContent(p, r.Get("content").String())
		return &c
	}
	var oldT, newT strings.Builder
	for i, h := range hunks {
		if i > 0 {
			oldT.WriteString("…\n")
			newT.WriteString("…\n")
		}
		for _, l := range h.Get("lines").Array() {
			s := l.String()
			if s == "" {
				continue
			}
			switch s[0] {
			case ' ':
				oldT.WriteString(s[1:] + "\n")
				newT.WriteString(s[1:] + "\n")
			case '-':
				oldT.WriteString(s[1:] + "\n")
			case '+':
				newT.WriteString(s[1:] + "\n")
			}
		}
	}
	c := sdk.ToolDiffContent(p, newT.String(), oldT.String())
	return &c
}
