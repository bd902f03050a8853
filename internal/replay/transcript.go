package replay

import (
	"bytes"
	"compress/gzip"
	"embed"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/ccproxy/ccproxy/stream"
	"github.com/tidwall/gjson"
)

// The demo transcript is made from the real CLI's capture by gendemo
// (the test server left out, the called server named demo, the models
// people know); never edit it by hand.
//
//go:generate go run ./gendemo
//go:embed transcripts/demo.jsonl
var embedded embed.FS

// DemoName is the name of the embedded demo transcript.
const DemoName = "demo.jsonl"

// Bounds on what a transcript may hold.
const (
	MaxLineBytes       = 64 << 20  // one line
	MaxTranscriptBytes = 512 << 20 // all lines together
)

// kind says how the player treats a line of a turn.
type kind int

const (
	kindPlain      kind = iota // emitted as recorded
	kindInit                   // system/init: the current MCP servers, model and permission mode are set in
	kindEcho                   // the isReplay echo of the user turn: replaced by the echo of the host's message
	kindPrompt                 // a can_use_tool control_request: emitted, then the player waits for the answer
	kindPromptEcho             // the CLI's echo of the answer to a prompt: replaced by the host's own answer
	kindStream                 // a stream_event or system/thinking_tokens (only with partial messages)
	kindToolUse                // an assistant event with tool_use blocks
	kindToolResult             // a user event with tool_result blocks
	kindResult                 // the result that ends the turn
)

// line is one recorded event.
type line struct {
	kind kind
	raw  []byte
	// typ and sub are the event's type and subtype; ev is the event type
	// of a stream_event ("content_block_delta", ...), delta its delta type.
	typ, sub, ev, delta string
	// toolUses are the tool_use ids of an assistant event; toolResults the
	// tool_use ids answered by a user event.
	toolUses, toolResults []string
	// The prompt of a can_use_tool request.
	requestID, toolName, toolUseID string
	toolInput                      []byte
}

// Turn is what the CLI printed for one user message: from system/init up
// to and including the result.
type Turn struct {
	lines []line
}

// Len is the number of recorded events in the turn (with the echo of the
// user message, which is inserted when the recording has none).
func (t *Turn) Len() int { return len(t.lines) }

// Transcript is a recorded stream-json session split into turns, with the
// answers to control requests it recorded.
type Transcript struct {
	// Name says where it came from (a file name).
	Name string
	// Turns in the order they are played.
	Turns []*Turn
	// SessionID is the session id of the recording (of its first init).
	SessionID string

	prelude  [][]byte          // events before the first turn (commands_changed): emitted after initialize
	controls map[string][]byte // recorded control responses by request subtype: initialize, mcp_status
	// Skipped counts events outside any turn that are not replayed
	// (reactions to control requests, such as system/status).
	Skipped int
}

// Recorded returns the recorded response (the "response" object) to a
// control request of the given subtype, if the transcript has one:
// "initialize" and "mcp_status" are recognized by their shape.
func (t *Transcript) Recorded(subtype string) ([]byte, bool) {
	b, ok := t.controls[subtype]
	return b, ok
}

// Demo returns the embedded demo transcript, captured from the real CLI
// (internal/testkit/capture, scenario "demo"), with the capture's
// temporary folders shown as DemoHome (see neutralPaths).
func Demo() (*Transcript, error) {
	b, err := embedded.ReadFile("transcripts/" + DemoName)
	if err != nil {
		return nil, fmt.Errorf("replay: embedded demo: %w", err)
	}
	return Parse(bytes.NewReader(neutralPaths(b)), DemoName)
}

// DemoHome is the home folder the demo shows; its project is
// DemoHome/project.
const DemoHome = "/home/demo"

// neutralPaths replaces in a transcript the temporary folders the capture
// ran in (<tmp>/ccproxy-capture-<scenario>-<n>, holding home/ and
// project/, as system/init's cwd <root>/project says) by DemoHome, so that
// the demo shows "/home/demo/project/…" rather than the capture machine's
// /tmp paths, in the project folder's name under .claude/projects too.
// A transcript whose cwd is not such a folder is returned as it is.
func neutralPaths(b []byte) []byte {
	i := bytes.Index(b, []byte(`"cwd":"`))
	if i < 0 {
		return b
	}
	cwd := b[i+len(`"cwd":"`):]
	if j := bytes.IndexByte(cwd, '"'); j >= 0 {
		cwd = cwd[:j]
	}
	root, ok := bytes.CutSuffix(cwd, []byte("/project"))
	if !ok || !bytes.Contains(root, []byte("/ccproxy-capture-")) {
		return b
	}
	root = bytes.Clone(root)
	// The project's folder under .claude/projects: its path with every
	// "/" (and ".") as "-".
	slug := func(p []byte) []byte {
		return bytes.Map(func(r rune) rune {
			if r == '/' || r == '.' {
				return '-'
			}
			return r
		}, p)
	}
	b = bytes.ReplaceAll(b, slug(append(slices.Clip(root), "/project"...)), slug([]byte(DemoHome+"/project")))
	b = bytes.ReplaceAll(b, append(slices.Clip(root), "/home"...), []byte(DemoHome))
	return bytes.ReplaceAll(b, root, []byte(DemoHome))
}

// Open reads a transcript file: stream-json lines, gzip-compressed when the
// name ends in .gz.
func Open(path string) (*Transcript, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("replay: %s: %w", path, err)
		}
		defer zr.Close()
		r = zr
	}
	return Parse(r, path)
}

// Parse reads stream-json output of the CLI and splits it into turns: a
// turn starts at a system/init and ends at the next result. Control
// responses are kept as answers for later requests (by their shape), the
// events before the first turn as the prelude that follows initialize;
// other events outside turns are skipped. Every line must be a JSON object;
// the transcript must hold at least one complete turn.
func Parse(r io.Reader, name string) (*Transcript, error) {
	t := &Transcript{Name: name, controls: map[string][]byte{}}
	rd := stream.NewReader(r, MaxLineBytes)
	var (
		cur     *Turn
		total   int
		prompts = map[string]bool{} // can_use_tool request ids seen
		startAt int                 // line number where cur started
	)
	fail := func(n int, format string, a ...any) error {
		return fmt.Errorf("replay: %s:%d: %s", name, n, fmt.Sprintf(format, a...))
	}
	for {
		b, err := rd.Next()
		n := rd.Line()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fail(n, "%v", err)
		}
		if rd.Oversized() > 0 {
			return nil, fail(n, "line longer than %d bytes", MaxLineBytes)
		}
		{
			total += len(b)
			if total > MaxTranscriptBytes {
				return nil, fail(n, "transcript larger than %d bytes", MaxTranscriptBytes)
			}
			if b[0] != '{' || !gjson.ValidBytes(b) {
				return nil, fail(n, "not a JSON object: %.80q", b)
			}
			l := classify(bytes.Clone(b))
			switch {
			case l.typ == "control_response":
				id := gjson.GetBytes(l.raw, "response.request_id").String()
				resp := gjson.GetBytes(l.raw, "response.response")
				switch {
				case prompts[id]:
					if cur != nil {
						l.kind = kindPromptEcho
						cur.lines = append(cur.lines, l)
					}
				case resp.Get("commands").Exists():
					t.controls["initialize"] = []byte(resp.Raw)
				case resp.Get("mcpServers").IsArray():
					t.controls["mcp_status"] = []byte(resp.Raw)
				}
			case l.typ == "control_request" && l.kind != kindPrompt,
				l.typ == "control_cancel_request":
				// Other requests of the CLI are not replayed.
				t.Skipped++
			case cur == nil && l.kind == kindInit:
				cur, startAt = &Turn{lines: []line{l}}, n
			case cur == nil:
				if len(t.Turns) == 0 {
					t.prelude = append(t.prelude, l.raw)
				} else {
					t.Skipped++
				}
			default:
				if l.kind == kindPrompt {
					prompts[l.requestID] = true
				}
				cur.lines = append(cur.lines, l)
				if l.kind == kindResult {
					t.Turns = append(t.Turns, finishTurn(cur))
					cur = nil
				}
			}
			if t.SessionID == "" && l.kind == kindInit {
				t.SessionID = gjson.GetBytes(l.raw, "session_id").String()
			}
		}
	}
	if cur != nil {
		return nil, fmt.Errorf("replay: %s: the turn that starts at line %d has no result event", name, startAt)
	}
	if len(t.Turns) == 0 {
		return nil, fmt.Errorf("replay: %s: no complete turn (system/init … result) in the transcript", name)
	}
	return t, nil
}

// finishTurn inserts an echo slot after the init when the recording has
// none, so the echo can be played when the host asks for it.
func finishTurn(t *Turn) *Turn {
	for _, l := range t.lines {
		if l.kind == kindEcho {
			return t
		}
	}
	lines := make([]line, 0, len(t.lines)+1)
	lines = append(lines, t.lines[0], line{kind: kindEcho, typ: "user"})
	t.lines = append(lines, t.lines[1:]...)
	return t
}

// classify reads what the player needs to know about one event.
func classify(raw []byte) line {
	l := line{raw: raw}
	ev := gjson.ParseBytes(raw)
	l.typ, l.sub = ev.Get("type").String(), ev.Get("subtype").String()
	switch l.typ {
	case "system":
		switch l.sub {
		case "init":
			l.kind = kindInit
		case "thinking_tokens":
			l.kind = kindStream
		}
	case "stream_event":
		l.kind = kindStream
		l.ev, l.delta = ev.Get("event.type").String(), ev.Get("event.delta.type").String()
	case "result":
		l.kind = kindResult
	case "control_request":
		req := ev.Get("request")
		if req.Get("subtype").String() == "can_use_tool" {
			l.kind = kindPrompt
			l.requestID = ev.Get("request_id").String()
			l.toolName, l.toolUseID = req.Get("tool_name").String(), req.Get("tool_use_id").String()
			l.toolInput = []byte(req.Get("input").Raw)
		}
	case "assistant":
		ev.Get("message.content").ForEach(func(_, b gjson.Result) bool {
			if b.Get("type").String() == "tool_use" {
				l.toolUses = append(l.toolUses, b.Get("id").String())
			}
			return true
		})
		if len(l.toolUses) > 0 {
			l.kind = kindToolUse
		}
	case "user":
		if ev.Get("isReplay").Bool() {
			l.kind = kindEcho
			break
		}
		ev.Get("message.content").ForEach(func(_, b gjson.Result) bool {
			if b.Get("type").String() == "tool_result" {
				l.toolResults = append(l.toolResults, b.Get("tool_use_id").String())
			}
			return true
		})
		if len(l.toolResults) > 0 {
			l.kind = kindToolResult
		}
	}
	return l
}
