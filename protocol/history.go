package protocol

import (
	"encoding/json"
	"time"
)

// Bounds of history/list and history/read (SPEC §3). They match package
// history's: a page of at most MaxHistoryListLimit sessions or
// MaxHistoryReadLimit events.
const (
	DefaultHistoryListLimit = 50
	MaxHistoryListLimit     = 1000
	DefaultHistoryReadLimit = 200
	MaxHistoryReadLimit     = 5000
	maxHistoryCursorBytes   = 256
)

// HistoryList is the data of history/list: a page of the sessions the
// Claude Code CLI keeps on disk, newest first. Project selects one project
// directory (default: the proxy's project); All lists every project.
type HistoryList struct {
	Project string `json:"project,omitempty" jsonschema:"An absolute project directory; default: the proxy's project." schema:"ref=ProjectDir"`
	All     bool   `json:"all,omitempty" jsonschema:"List every project; excludes project."`
	Cursor  string `json:"cursor,omitempty" jsonschema:"The next of the previous page." schema:"maxLength=maxHistoryCursorBytes"`
	Limit   *int64 `json:"limit,omitempty" jsonschema:"Default 50." schema:"minimum=1,maximum=MaxHistoryListLimit"`
}

// HistoryListResult is the data of the reply to history/list.
type HistoryListResult struct {
	Sessions []HistorySession `json:"sessions"`
	// Next is the cursor of the next page; "" on the last one.
	Next string `json:"next,omitempty" jsonschema:"The cursor of the next page; absent on the last one."`
	// Total counts the matching sessions over all pages.
	Total int `json:"total" jsonschema:"Matching sessions over all pages." schema:"minimum=0"`
	// Skipped counts files that could not be read (or are another user's,
	// or symlinks).
	Skipped int `json:"skipped,omitempty" jsonschema:"Files that could not be read, belong to another user, or are symlinks." schema:"minimum=0"`
	// Projects, with all, groups the sessions of every page by project.
	Projects []HistoryProject `json:"projects,omitempty" jsonschema:"With all: every project that has sessions, over all pages, the most recently updated first."`
}

// HistorySession describes one session file of the CLI. ID is what
// session/create's resume takes.
type HistorySession struct {
	ID        string    `json:"id" schema:"ref=ClaudeSessionId"`
	Project   string    `json:"project" jsonschema:"The session's working directory (the cwd of its records); empty if none says."`
	Folder    string    `json:"folder" jsonschema:"The CLI's folder for the project under ~/.claude/projects."`
	Title     string    `json:"title" jsonschema:"The CLI's summary, else the first prompt; capped."`
	TitleFrom string    `json:"titleFrom,omitempty" schema:"ref=TitleFrom"`
	Created   time.Time `json:"created" schema:"ref=Timestamp"`
	Updated   time.Time `json:"updated" schema:"ref=Timestamp"`
	Messages  int       `json:"messages" schema:"minimum=0"`
	Size      int64     `json:"size" jsonschema:"Bytes of the session file." schema:"minimum=0"`
	Corrupt   int       `json:"corrupt,omitempty" jsonschema:"Lines that were not JSON objects, skipped." schema:"minimum=0"`
	Oversized int       `json:"oversized,omitempty" jsonschema:"Lines over the line cap, skipped." schema:"minimum=0"`
}

// HistoryRead is the data of history/read: a page of one session's
// conversation (or of one of its subagents).
type HistoryRead struct {
	ID      string `json:"id" schema:"ref=ClaudeSessionId"`
	Project string `json:"project,omitempty" jsonschema:"The session's project directory: look only in its folder. Default: every project." schema:"ref=ProjectDir"`
	Agent   string `json:"agent,omitempty" jsonschema:"Read this subagent instead of the main conversation (from a history_more event)." schema:"ref=ClaudeSessionId"`
	Cursor  string `json:"cursor,omitempty" jsonschema:"The next of the previous page, or a history_more event's cursor." schema:"ref=Offset"`
	Limit   *int64 `json:"limit,omitempty" jsonschema:"Events of the page; default 200." schema:"minimum=1,maximum=MaxHistoryReadLimit"`
}

// HistoryReadResult is the data of the reply to history/read.
type HistoryReadResult struct {
	ID     string         `json:"id" schema:"ref=ClaudeSessionId"`
	Agent  string         `json:"agent,omitempty" schema:"ref=ClaudeSessionId"`
	Events []HistoryEvent `json:"events"`
	// Next is the cursor after the last line read (also when More is
	// false: a session still being written can be read on from it).
	Next string `json:"next" jsonschema:"The cursor after the last line read." schema:"ref=Offset"`
	More bool   `json:"more" jsonschema:"The file has more lines after next."`
	// Skipped counts bookkeeping records, Corrupt lines that were not JSON
	// objects, Oversized lines over the proxy's line cap; all skipped.
	Skipped   int `json:"skipped" schema:"minimum=0"`
	Corrupt   int `json:"corrupt" schema:"minimum=0"`
	Oversized int `json:"oversized" schema:"minimum=0"`
	// Truncated reports that the page was cut short of its limit to stay
	// within the proxy's reply byte budget; More is then true.
	Truncated bool `json:"truncated,omitempty" jsonschema:"The page was cut short of its limit to stay within the reply byte budget."`
}

// HistoryEvent is one event of a past session, normalized exactly as a
// live session/event's event is (SPEC §7), with the byte offset of its line
// in its file.
type HistoryEvent struct {
	Offset int64           `json:"offset" jsonschema:"Where the event's line starts in its file." schema:"minimum=0"`
	Event  json.RawMessage `json:"event" jsonschema:"A stream-json event normalized as in session/event (SPEC \u00a77), or a ccproxy history_more event." schema:"ref=EventObject,type=object"`
}

func (r HistoryListResult) MarshalJSON() ([]byte, error) {
	type plain HistoryListResult
	r.Sessions = orEmpty(r.Sessions)
	return json.Marshal(plain(r))
}

func (r HistoryReadResult) MarshalJSON() ([]byte, error) {
	type plain HistoryReadResult
	r.Events = orEmpty(r.Events)
	return json.Marshal(plain(r))
}
