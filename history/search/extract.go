package search

import (
	"strings"

	"github.com/tidwall/gjson"
)

// Roles of a Doc.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool" // a tool use: its name and input
)

// Doc is the searchable text of one content part of a record.
type Doc struct {
	UUID string // the record's uuid
	Time string // the record's timestamp, as written (RFC 3339)
	Role string // RoleUser, RoleAssistant or RoleTool
	Text string
}

// maxDocText caps the text of one Doc: a file written by a tool is
// searchable by its first 64 KiB.
const maxDocText = 64 << 10

// Extract returns what is searchable in one record (a line of a session
// file): what a user typed, the text of a reply, and each tool use's name
// and input values. Records history/read does not show (isMeta, the CLI's
// bookkeeping), tool results and thinking are not searchable. The strings
// are new (not views of line).
func Extract(line []byte, add func(Doc)) {
	r := gjson.ParseBytes(line)
	typ := r.Get("type").Str
	if typ != "user" && typ != "assistant" || r.Get("isMeta").Bool() {
		return
	}
	d := Doc{UUID: r.Get("uuid").Str, Time: r.Get("timestamp").Str}
	c := r.Get("message.content")
	emit := func(role, text string) {
		text = strings.TrimSpace(text)
		if text == "" {
			return
		}
		if len(text) > maxDocText {
			text = cutUTF8(text, maxDocText)
		}
		d.Role, d.Text = role, strings.Clone(text)
		add(d)
	}
	if c.Type == gjson.String {
		if typ == "user" {
			emit(RoleUser, c.Str)
		}
		return
	}
	c.ForEach(func(_, b gjson.Result) bool {
		switch b.Get("type").Str {
		case "text":
			role := RoleAssistant
			if typ == "user" {
				role = RoleUser
			}
			emit(role, b.Get("text").Str)
		case "tool_use":
			if typ == "assistant" {
				var sb strings.Builder
				sb.WriteString(b.Get("name").Str)
				inputText(&sb, b.Get("input"))
				emit(RoleTool, sb.String())
			}
		}
		return true
	})
}

// inputText appends the string and number values of a tool input, each on
// a line of its own: "file_path: /a/b", nested values by their leaf key.
func inputText(sb *strings.Builder, v gjson.Result) {
	v.ForEach(func(k, x gjson.Result) bool {
		switch {
		case x.IsObject() || x.IsArray():
			inputText(sb, x)
		case x.Type == gjson.String || x.Type == gjson.Number:
			if sb.Len() > maxDocText {
				return false
			}
			sb.WriteByte('\n')
			if k.Str != "" {
				sb.WriteString(k.Str)
				sb.WriteString(": ")
			}
			sb.WriteString(x.String())
		}
		return true
	})
}

// cutUTF8 cuts s to at most n bytes at a rune boundary.
func cutUTF8(s string, n int) string {
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
