package history

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/ccproxy/ccproxy/stream"
)

// Export formats.
const (
	ExportMarkdown = "markdown"
	ExportJSONL    = "jsonl"
)

// Bounds of a Markdown export.
const (
	exportInputChars  = 200  // of a tool call's input
	exportResultChars = 1000 // of a tool result
	// DefaultExportBytes is ExportOptions.MaxBytes when it is not set.
	DefaultExportBytes = 8 << 20
)

// ExportOptions select a session and how to export it.
type ExportOptions struct {
	ID, Project string
	// Format is ExportMarkdown or ExportJSONL.
	Format string
	// MaxBytes bounds the text (default DefaultExportBytes): it is cut
	// at a line past it, and Truncated set.
	MaxBytes int64
	// Normalize configures the normalizer of a Markdown export's events,
	// as for Read: attachments to the proxy's blob store become links.
	Normalize stream.Options
	// Scrub masks secrets in a JSON value: every line of a JSONL export,
	// the events holding tool results of a Markdown export (as the proxy
	// masks history/read). nil: nothing is masked.
	Scrub func([]byte) []byte
}

// Exported is a session as a file.
type Exported struct {
	Text      string
	Filename  string
	Truncated bool
}

// Export returns session id as Markdown a person can read, or as the
// lines of its file (each one masked by Scrub).
func (s *Store) Export(ctx context.Context, o ExportOptions) (Exported, error) {
	if !validID(o.ID) {
		return Exported{}, fmt.Errorf("%w %q: ids are letters, digits, '-' and '_'", ErrBadID, o.ID)
	}
	if err := checkProject(o.Project); err != nil {
		return Exported{}, err
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultExportBytes
	}
	if o.Scrub == nil {
		o.Scrub = func(b []byte) []byte { return b }
	}
	path, err := s.find(o.ID, o.Project)
	if err != nil {
		return Exported{}, err
	}
	info, err := s.info(path, filepath.Base(filepath.Dir(path)), o.ID)
	if err != nil {
		return Exported{}, err
	}
	out := &capped{max: o.MaxBytes}
	switch o.Format {
	case ExportJSONL:
		err = s.exportJSONL(ctx, path, o, out)
	case ExportMarkdown:
		err = s.exportMarkdown(ctx, info, o, out)
	default:
		return Exported{}, fmt.Errorf("%w %q: want %q or %q", ErrBadFormat, o.Format, ExportMarkdown, ExportJSONL)
	}
	if err != nil && !errors.Is(err, errFull) {
		return Exported{}, err
	}
	ext := ".md"
	if o.Format == ExportJSONL {
		ext = ".jsonl"
	}
	return Exported{Text: out.b.String(), Filename: exportName(info.Title, o.ID) + ext, Truncated: out.full}, nil
}

// ErrBadFormat is the error of an export format that is not one.
var ErrBadFormat = errors.New("history: invalid export format")

// errFull ends an export that reached its bound.
var errFull = errors.New("history: export bound reached")

// capped collects an export's text up to max bytes, whole lines only.
type capped struct {
	b    strings.Builder
	max  int64
	full bool
}

// add appends text (whole lines) unless that would pass the bound; then
// it cuts at the last line that fits and returns errFull.
func (c *capped) add(text string) error {
	if c.full {
		return errFull
	}
	if int64(c.b.Len()+len(text)) <= c.max {
		c.b.WriteString(text)
		return nil
	}
	room := int(c.max) - c.b.Len()
	if i := strings.LastIndexByte(text[:max(room, 0)], '\n'); i >= 0 {
		c.b.WriteString(text[:i+1])
	}
	c.full = true
	return errFull
}

func (s *Store) exportJSONL(ctx context.Context, path string, o ExportOptions, out *capped) error {
	f, err := openNoFollow(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	lr := newLineReader(f, 0, fi.Size(), s.maxLine, &s.bytesRead)
	over := lr.r.Oversized()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		line, _, complete, err := lr.next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if n := lr.r.Oversized(); n != over || !complete {
			over = n
			continue // over the line cap, or still being written
		}
		masked := o.Scrub(line)
		if err := out.add(string(masked) + "\n"); err != nil {
			return err
		}
	}
}

func (s *Store) exportMarkdown(ctx context.Context, info Session, o ExportOptions, out *capped) error {
	title := info.Title
	if title == "" {
		title = "Session " + info.ID
	}
	head := "# " + mdLine(title) + "\n\n- Session: `" + info.ID + "`\n"
	if info.Project != "" {
		head += "- Project: `" + mdLine(info.Project) + "`\n"
	}
	head += "- Created: " + info.Created.UTC().Format("2006-01-02 15:04 MST") + "\n- Updated: " + info.Updated.UTC().Format("2006-01-02 15:04 MST") + "\n"
	if err := out.add(head); err != nil {
		return err
	}
	r := &mdRenderer{tools: map[string]string{}}
	cursor := ""
	for {
		page, err := s.Read(ctx, ReadOptions{ID: o.ID, Project: o.Project, Cursor: cursor, Limit: MaxReadLimit, Normalize: o.Normalize})
		if err != nil {
			return err
		}
		for _, ev := range page.Events {
			js := []byte(ev.JSON)
			if strings.Contains(string(js), `"tool_result"`) {
				js = o.Scrub(js)
			}
			if err := out.add(r.event(js)); err != nil {
				return err
			}
		}
		if !page.More || page.Next == cursor {
			return nil
		}
		cursor = page.Next
	}
}

// mdRenderer turns normalized events into Markdown, remembering the tool
// uses (for their results' names) and who spoke last (for the headings).
type mdRenderer struct {
	tools map[string]string // tool use id -> tool name
	role  string            // "user" or "assistant": the last heading
	agent string            // the subagent whose events are being written
}

func (r *mdRenderer) event(js []byte) string {
	ev := gjson.ParseBytes(js)
	typ := ev.Get("type").Str
	if typ == "ccproxy" && ev.Get("subtype").Str == "history_more" {
		return "\n> *(the rest of this subagent's conversation is not in the export)*\n"
	}
	if typ != "user" && typ != "assistant" {
		return "" // system records: the CLI's own notices
	}
	var b strings.Builder
	agent := ev.Get("agent_id").Str
	if agent != r.agent {
		r.agent, r.role = agent, ""
		if agent != "" {
			desc := strings.TrimSpace(ev.Get("subagent_type").Str + ": " + ev.Get("task_description").Str)
			b.WriteString("\n> **Subagent** " + mdLine(strings.Trim(desc, ": ")) + "\n")
		}
	}
	content := ev.Get("message.content")
	var body strings.Builder
	heading := func(role string) {
		if r.role != role {
			r.role = role
			name := "User"
			if role == "assistant" {
				name = "Claude"
			}
			body.WriteString("\n## " + name + "\n")
		}
	}
	if content.Type == gjson.String {
		if t := userText(content.Str); t != "" {
			heading("user")
			body.WriteString("\n" + t + "\n")
		}
	}
	content.ForEach(func(_, blk gjson.Result) bool {
		switch blk.Get("type").Str {
		case "text":
			t := blk.Get("text").Str
			if typ == "user" {
				t = userText(t)
			}
			if strings.TrimSpace(t) != "" {
				heading(typ)
				body.WriteString("\n" + strings.TrimRight(t, "\n") + "\n")
			}
		case "image":
			heading(typ)
			body.WriteString("\n*[image " + blk.Get("source.media_type").Str + "]*\n")
		case "tool_use":
			heading("assistant")
			name := blk.Get("name").Str
			r.tools[blk.Get("id").Str] = name
			body.WriteString("\n**Tool call:** " + mdLine(name) + " " + inlineCode(cutChars(toolInput(name, blk.Get("input")), exportInputChars)) + "\n")
		case "tool_result":
			heading("assistant")
			name := cmpOr(r.tools[blk.Get("tool_use_id").Str], "tool")
			what := "result"
			if blk.Get("is_error").Bool() {
				what = "error"
			}
			body.WriteString("\n**" + mdLine(name) + " " + what + ":**\n")
			if t := strings.TrimRight(blk.Get("content").String(), "\n"); t != "" {
				body.WriteString(fence(cutChars(t, exportResultChars)))
			}
			blk.Get("attachments").ForEach(func(_, a gjson.Result) bool {
				body.WriteString(attachmentLink(a))
				return true
			})
		}
		return true
	})
	text := body.String()
	if agent != "" && text != "" {
		text = quote(text)
	}
	b.WriteString(text)
	return b.String()
}

// userText is what a person typed, or "" for the CLI's own user records
// (command output, task notifications, reminders: they start with "<").
func userText(t string) string {
	if strings.HasPrefix(strings.TrimSpace(t), "<") {
		return ""
	}
	return strings.TrimRight(t, "\n")
}

// toolInput is the one thing worth showing of a tool call's input: its
// command, path, pattern… or else the input as JSON.
func toolInput(name string, in gjson.Result) string {
	for _, k := range []string{"command", "file_path", "notebook_path", "pattern", "url", "query", "description", "prompt"} {
		if v := in.Get(k); v.Type == gjson.String && v.Str != "" {
			return v.Str
		}
	}
	return in.Raw
}

func attachmentLink(a gjson.Result) string {
	kind := cmpOr(a.Get("kind").Str, "attachment")
	label := strings.TrimSpace(kind + " " + a.Get("mediaType").Str)
	url := a.Get("url").Str
	switch {
	case url == "":
		return "\n*[" + mdLine(label) + ", not stored]*\n"
	case kind == "image":
		return "\n![" + mdLine(label) + "](" + url + ")\n"
	default:
		return "\n[" + mdLine(label) + "](" + url + ")\n"
	}
}

// mdLine makes s one line.
func mdLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// inlineCode writes s as one line of inline code, whatever backticks it
// holds.
func inlineCode(s string) string {
	s = mdLine(s)
	if s == "" {
		return ""
	}
	ticks := "`"
	for strings.Contains(s, ticks) {
		ticks += "`"
	}
	return ticks + " " + s + " " + ticks
}

// fence writes s as a fenced block, the fence longer than any run of
// backticks in s.
func fence(s string) string {
	f := "```"
	for strings.Contains(s, f) {
		f += "`"
	}
	return "\n" + f + "\n" + s + "\n" + f + "\n"
}

func quote(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		if l == "" {
			lines[i] = ">"
		} else {
			lines[i] = "> " + l
		}
	}
	return strings.Join(lines, "\n") + "\n"
}

// cutChars cuts s to n characters, saying how many were left out.
func cutChars(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i, k := 0, 0
	for i = range s {
		if k == n {
			break
		}
		k++
	}
	return s[:i] + "… (" + strconv.Itoa(utf8.RuneCountInString(s[i:])) + " more characters)"
}

// exportName is a file name (without extension) from a title: its
// letters and digits, lower case, joined by "-"; the id when none.
func exportName(title, id string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(title) {
		ok := r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
		if !ok {
			dash = b.Len() > 0
			continue
		}
		if dash {
			b.WriteByte('-')
			dash = false
		}
		b.WriteRune(r)
		if b.Len() >= 60 {
			break
		}
	}
	if b.Len() == 0 {
		return id
	}
	return b.String()
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
