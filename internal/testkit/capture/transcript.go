package capture

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ccproxy/ccproxy/stream"
	"github.com/tidwall/gjson"
)

// MaxTranscriptLine bounds one line when reading a transcript back.
const MaxTranscriptLine = 256 << 20

// Event is one stdout line of the CLI.
type Event struct {
	Type    string
	Subtype string
	Raw     json.RawMessage
}

// ToolCall is a tool_use of an assistant event paired with the tool_result
// that answered it.
type ToolCall struct {
	ID    string
	Name  string // e.g. mcp__testmcp__image
	Input json.RawMessage

	Results       int             // tool_result blocks that answered it (1 when all is well)
	IsError       bool            // the tool_result's is_error
	Content       json.RawMessage // the tool_result's content: a string or an array of blocks
	ContentTypes  []string        // the types of its blocks, or ["string"]
	Text          string          // its text blocks joined with "\n", or the string
	ToolUseResult json.RawMessage // the user event's tool_use_result, if any
}

// Blocks decodes the content blocks (nil when the content is a string).
func (c *ToolCall) Blocks() []map[string]any {
	var blocks []map[string]any
	if json.Unmarshal(c.Content, &blocks) != nil {
		return nil
	}
	return blocks
}

// ResultEvent is a result event's main fields.
type ResultEvent struct {
	Subtype string `json:"subtype"`
	IsError bool   `json:"is_error"`
	Result  string `json:"result"`
	NumTurn int    `json:"num_turns"`
}

// Transcript is a captured stdout, parsed.
type Transcript struct {
	Events   []Event
	Calls    []*ToolCall // in tool_use order
	Results  []ResultEvent
	Problems []string // tool_results without a tool_use, and the like
	byID     map[string]*ToolCall
}

// CallsNamed returns the calls of the tool name.
func (t *Transcript) CallsNamed(name string) []*ToolCall {
	var out []*ToolCall
	for _, c := range t.Calls {
		if c.Name == name {
			out = append(out, c)
		}
	}
	return out
}

// Count counts the events of a type (and subtype, if not "").
func (t *Transcript) Count(typ, subtype string) int {
	n := 0
	for _, e := range t.Events {
		if e.Type == typ && (subtype == "" || e.Subtype == subtype) {
			n++
		}
	}
	return n
}

// ReadTranscript reads a captured stdout file (gzip-compressed when its
// name ends in .gz).
func ReadTranscript(path string) (*Transcript, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		gz, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		defer gz.Close()
		r = gz
	}
	t, err := ParseTranscript(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// ParseTranscript parses stream-json lines. Every non-blank line must be a
// JSON object, at most MaxTranscriptLine bytes.
func ParseTranscript(r io.Reader) (*Transcript, error) {
	t := &Transcript{byID: map[string]*ToolCall{}}
	rd := stream.NewReader(r, MaxTranscriptLine)
	for {
		line, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", rd.Line(), err)
		}
		if rd.Oversized() > 0 {
			return nil, fmt.Errorf("line %d: longer than %d bytes", rd.Line(), MaxTranscriptLine)
		}
		if perr := t.add(bytes.Clone(line)); perr != nil { // the reader reuses line
			return nil, fmt.Errorf("line %d: %w", rd.Line(), perr)
		}
	}
	for _, c := range t.Calls {
		if c.Results != 1 {
			t.Problems = append(t.Problems, fmt.Sprintf("tool_use %s (%s) has %d tool_result(s), want 1", c.ID, c.Name, c.Results))
		}
	}
	return t, nil
}

type contentBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

func (t *Transcript) add(line []byte) error {
	var ev struct {
		Type    string `json:"type"`
		Subtype string `json:"subtype"`
		Message *struct {
			Content json.RawMessage `json:"content"`
		} `json:"message"`
		ToolUseResult json.RawMessage `json:"tool_use_result"`
	}
	if err := json.Unmarshal(line, &ev); err != nil {
		return fmt.Errorf("not a JSON object: %w", err)
	}
	t.Events = append(t.Events, Event{Type: ev.Type, Subtype: ev.Subtype, Raw: json.RawMessage(line)})
	switch ev.Type {
	case "result":
		var r ResultEvent
		if err := json.Unmarshal(line, &r); err != nil {
			return fmt.Errorf("result event: %w", err)
		}
		t.Results = append(t.Results, r)
	case "assistant", "user":
		if ev.Message == nil {
			return nil
		}
		var blocks []contentBlock
		if json.Unmarshal(ev.Message.Content, &blocks) != nil {
			return nil // string content: a plain user turn
		}
		for _, b := range blocks {
			switch {
			case ev.Type == "assistant" && b.Type == "tool_use":
				if _, dup := t.byID[b.ID]; dup {
					t.Problems = append(t.Problems, fmt.Sprintf("tool_use id %s appears twice", b.ID))
					continue
				}
				c := &ToolCall{ID: b.ID, Name: b.Name, Input: b.Input}
				t.byID[b.ID] = c
				t.Calls = append(t.Calls, c)
			case ev.Type == "user" && b.Type == "tool_result":
				c := t.byID[b.ToolUseID]
				if c == nil {
					t.Problems = append(t.Problems, fmt.Sprintf("tool_result for %s, which no tool_use announced", b.ToolUseID))
					continue
				}
				c.Results++
				c.IsError, c.Content, c.ToolUseResult = b.IsError, b.Content, ev.ToolUseResult
				c.ContentTypes, c.Text = describeContent(b.Content)
			}
		}
	}
	return nil
}

func describeContent(raw json.RawMessage) ([]string, string) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []string{"string"}, s
	}
	var blocks []contentBlock
	if json.Unmarshal(raw, &blocks) != nil {
		return nil, ""
	}
	var types, texts []string
	for _, b := range blocks {
		types = append(types, b.Type)
		if b.Type == "text" {
			texts = append(texts, b.Text)
		}
	}
	return types, strings.Join(texts, "\n")
}

// Verify checks a capture against its scenario: the CLI exited 0; there is
// one successful result per turn; every tool_use got exactly one tool_result
// and every tool_result answers a tool_use; every tool the scenario scripts
// was called; each call meets the scenario's expectations; and the scenario's
// own Check passes. res may be nil (a capture read back from disk).
func Verify(sc Scenario, t *Transcript, res *Result) []error {
	var errs []error
	add := func(format string, a ...any) { errs = append(errs, fmt.Errorf(sc.Name+": "+format, a...)) }
	if res != nil && res.ExitCode != 0 {
		add("claude exited with status %d", res.ExitCode)
	}
	if len(t.Results) != len(sc.Turns) {
		add("%d result events, want one per turn (%d)", len(t.Results), len(sc.Turns))
	}
	for i, r := range t.Results {
		if r.Subtype != "success" || r.IsError {
			add("result %d: subtype %q is_error %v (%q)", i+1, r.Subtype, r.IsError, r.Result)
		}
	}
	for _, p := range t.Problems {
		add("%s", p)
	}
	if inits := t.Count("system", "init"); inits == 0 {
		add("no system/init event")
	}
	for _, e := range t.Events {
		if e.Type != "system" || e.Subtype != "init" {
			continue
		}
		for _, name := range []string{"everything", "testmcp"} {
			if st := gjson.GetBytes(e.Raw, `mcp_servers.#(name=="`+name+`").status`).String(); st != "connected" {
				add("system/init: MCP server %s is %q, want connected", name, st)
			}
		}
		break
	}
	for _, name := range sc.Tools {
		calls := t.CallsNamed(name)
		if len(calls) == 0 {
			add("tool %s was never called", name)
			continue
		}
		check := sc.Expect[name]
		for _, c := range calls {
			if c.Results == 0 {
				continue // already a problem
			}
			if check != nil {
				if err := check(c); err != nil {
					add("tool %s (%s): %v", name, c.ID, err)
				}
			}
		}
	}
	if sc.Check != nil {
		if err := sc.Check(t); err != nil {
			add("%v", err)
		}
	}
	return errs
}
