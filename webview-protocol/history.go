package protocol

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
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

// readCursorPattern: a history/read cursor is a byte offset in decimal.
var readCursorPattern = regexp.MustCompile(`^[0-9]{1,19}$`)

// HistoryList is the data of history/list: a page of the sessions the
// Claude Code CLI keeps on disk, newest first. Project selects one project
// directory (default: the proxy's project); All lists every project.
type HistoryList struct {
	Project string `json:"project,omitempty"`
	All     bool   `json:"all,omitempty"`
	Cursor  string `json:"cursor,omitempty"`
	Limit   *int64 `json:"limit,omitempty"`
}

// HistoryListResult is the data of the reply to history/list.
type HistoryListResult struct {
	Sessions []HistorySession `json:"sessions"`
	// Next is the cursor of the next page; "" on the last one.
	Next string `json:"next,omitempty"`
	// Total counts the matching sessions over all pages.
	Total int `json:"total"`
	// Skipped counts files that could not be read (or are another user's,
	// or symlinks).
	Skipped int `json:"skipped,omitempty"`
}

// HistorySession describes one session file of the CLI. ID is what
// session/create's resume takes.
type HistorySession struct {
	ID        string    `json:"id"`
	Project   string    `json:"project"`
	Folder    string    `json:"folder"`
	Title     string    `json:"title"`
	TitleFrom string    `json:"titleFrom,omitempty"`
	Created   time.Time `json:"created"`
	Updated   time.Time `json:"updated"`
	Messages  int       `json:"messages"`
	Size      int64     `json:"size"`
	Corrupt   int       `json:"corrupt,omitempty"`
	Oversized int       `json:"oversized,omitempty"`
}

// HistoryRead is the data of history/read: a page of one session's
// conversation (or of one of its subagents).
type HistoryRead struct {
	ID      string `json:"id"`
	Project string `json:"project,omitempty"`
	Agent   string `json:"agent,omitempty"`
	Cursor  string `json:"cursor,omitempty"`
	Limit   *int64 `json:"limit,omitempty"`
}

// HistoryReadResult is the data of the reply to history/read.
type HistoryReadResult struct {
	ID     string         `json:"id"`
	Agent  string         `json:"agent,omitempty"`
	Events []HistoryEvent `json:"events"`
	// Next is the cursor after the last line read (also when More is
	// false: a session still being written can be read on from it).
	Next string `json:"next"`
	More bool   `json:"more"`
	// Skipped counts bookkeeping records, Corrupt lines that were not JSON
	// objects, Oversized lines over the proxy's line cap; all skipped.
	Skipped   int `json:"skipped"`
	Corrupt   int `json:"corrupt"`
	Oversized int `json:"oversized"`
	// Truncated reports that the page was cut short of its limit to stay
	// within the proxy's reply byte budget; More is then true.
	Truncated bool `json:"truncated,omitempty"`
}

// HistoryEvent is one event of a past session, normalized exactly as a
// live session/event's event is (SPEC §7), with the byte offset of its line
// in its file.
type HistoryEvent struct {
	Offset int64           `json:"offset"`
	Event  json.RawMessage `json:"event"`
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

func (c *check) absDir(path, v string) {
	if v == "" {
		return
	}
	if !filepath.IsAbs(v) && !strings.HasPrefix(v, "/") {
		c.add(path, "must be an absolute path, got %q", truncate(v, 80))
	}
	if strings.ContainsRune(v, 0) {
		c.add(path, "must not contain NUL")
	}
	c.maxLen(path, v, 4096)
}

func (c *check) limit(path string, v *int64, max int64) {
	if v != nil && (*v < 1 || *v > max) {
		c.add(path, "must be between 1 and %d, got %d", max, *v)
	}
}

func (d HistoryList) Validate() error {
	var c check
	c.absDir("project", d.Project)
	if d.All && d.Project != "" {
		c.add("all", "project and all exclude each other")
	}
	c.maxLen("cursor", d.Cursor, maxHistoryCursorBytes)
	c.limit("limit", d.Limit, MaxHistoryListLimit)
	return c.err()
}

func (d HistoryListResult) Validate() error {
	var c check
	c.min("total", int64(d.Total), 0)
	for i, s := range d.Sessions {
		p := fmt.Sprintf("sessions[%d]", i)
		c.pattern(p+".id", s.ID, resumePattern, "a Claude session id (letters, digits, _ -)")
		c.min(p+".messages", int64(s.Messages), 0)
		c.min(p+".size", s.Size, 0)
		c.optEnum(p+".titleFrom", s.TitleFrom, []string{"summary", "prompt"})
	}
	return c.err()
}

func (d HistoryRead) Validate() error {
	var c check
	c.pattern("id", d.ID, resumePattern, "a Claude session id (letters, digits, _ -)")
	c.absDir("project", d.Project)
	if d.Agent != "" {
		c.pattern("agent", d.Agent, resumePattern, "a subagent id (letters, digits, _ -)")
	}
	if d.Cursor != "" {
		c.pattern("cursor", d.Cursor, readCursorPattern, "the next of a previous page (a byte offset)")
	}
	c.limit("limit", d.Limit, MaxHistoryReadLimit)
	return c.err()
}

func (d HistoryReadResult) Validate() error {
	var c check
	c.pattern("id", d.ID, resumePattern, "a Claude session id (letters, digits, _ -)")
	c.pattern("next", d.Next, readCursorPattern, "a byte offset")
	for i, e := range d.Events {
		p := fmt.Sprintf("events[%d]", i)
		c.min(p+".offset", e.Offset, 0)
		if k := jsonKind(e.Event); k != "object" {
			c.add(p+".event", "want an object, got %s", article(k))
		}
	}
	return c.err()
}
