package mcpconfig

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
)

// The Claude Code CLI prints `claude mcp list` and `claude mcp get NAME` as
// text only. These parsers read the format of 2.1.329 (samples in
// testdata/mcpconfig/cli).

// MaxCLIOutput bounds the text ParseList and ParseGet read.
const MaxCLIOutput = 16 << 20

// ErrCLIOutputTooLarge is wrapped by the error of ParseList and ParseGet
// when the text is larger than MaxCLIOutput; they stop reading there.
var ErrCLIOutputTooLarge = fmt.Errorf("output is larger than %d MiB", MaxCLIOutput>>20)

// CLIStatus is a server status as `claude mcp list` / `get` print it.
type CLIStatus string

// Statuses, from their markers: ✔ Connected, ✘ Failed to connect — reason,
// ⏸ Pending approval, ! Needs authentication, ⊘ Disabled for this project,
// ✘ Rejected (get only; list hides rejected servers).
const (
	StatusConnected       CLIStatus = "connected"
	StatusFailed          CLIStatus = "failed"
	StatusPendingApproval CLIStatus = "pending-approval"
	StatusNeedsAuth       CLIStatus = "needs-auth"
	StatusDisabled        CLIStatus = "disabled"
	StatusRejected        CLIStatus = "rejected"
	StatusUnknown         CLIStatus = "unknown"
)

// parseStatus reads a status such as "✘ Failed to connect — ECONNREFUSED".
func parseStatus(s string) (st CLIStatus, text, detail string) {
	s = strings.TrimSpace(s)
	marker, rest, _ := strings.Cut(s, " ")
	text = strings.TrimSpace(rest)
	switch marker {
	case "✔":
		st = StatusConnected
	case "✘":
		st = StatusFailed
		if strings.HasPrefix(text, "Rejected") {
			st = StatusRejected
		}
	case "⏸":
		st = StatusPendingApproval
	case "!":
		st = StatusNeedsAuth
	case "⊘":
		st = StatusDisabled
	default:
		return StatusUnknown, s, ""
	}
	if t, d, ok := strings.Cut(text, " — "); ok {
		text, detail = t, d
	}
	return st, text, detail
}

var statusMarkers = []string{"✔", "✘", "⏸", "!", "⊘"}

// ListEntry is one server line of `claude mcp list`:
// "name: <command args | url (HTTP|SSE|WS)> - <status>".
type ListEntry struct {
	Line       int       `json:"line"`
	Name       string    `json:"name"`
	Target     string    `json:"target"` // the command line or the URL, as printed
	Transport  Transport `json:"transport"`
	Status     CLIStatus `json:"status"`
	StatusText string    `json:"statusText"`       // as printed, without the marker and the reason
	Detail     string    `json:"detail,omitempty"` // the reason of a failure
}

// RedactedTarget is Target with URL and argument secrets masked (header
// values included: the CLI prints arguments joined by spaces), and the
// values of sec (may be nil) where they are a URL path segment or an
// argument. The CLI prints the target as configured (2.1.329: literal
// values in clear, ${VAR}s not expanded), so pass the secrets of the
// configuration it read (Config.Secrets) and of the environment.
func (e ListEntry) RedactedTarget(sec *Secrets) string {
	if e.Transport != TransportStdio {
		return sec.RedactURL(e.Target)
	}
	return strings.Join(sec.RedactArgs(strings.Split(e.Target, " ")), " ")
}

// Diagnostic is one item of the "MCP config diagnostics" section.
type Diagnostic struct {
	Section string `json:"section"`          // e.g. "Has warnings" or "Conflicting scopes"
	Level   string `json:"level,omitempty"`  // e.g. "Warning"
	Server  string `json:"server,omitempty"` // the server it is about, when named
	Message string `json:"message"`
}

// UnparsedLine is a line the parser did not understand (a newer CLI?).
type UnparsedLine struct {
	Line int    `json:"line"`
	Text string `json:"text"` // with URL and argument secrets masked
}

// ListOutput is parsed `claude mcp list` output.
type ListOutput struct {
	Servers     []ListEntry    `json:"servers"`
	NoServers   bool           `json:"noServers"` // "No MCP servers configured."
	Diagnostics []Diagnostic   `json:"diagnostics"`
	Unparsed    []UnparsedLine `json:"unparsed"`
}

func readBounded(r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxCLIOutput+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxCLIOutput {
		return nil, ErrCLIOutputTooLarge
	}
	return data, nil
}

// ParseList parses the standard output of `claude mcp list`. Lines it does
// not understand are kept in Unparsed; the error is for unreadable or empty
// input only.
func ParseList(r io.Reader) (*ListOutput, error) {
	data, err := readBounded(r)
	if err != nil {
		return nil, fmt.Errorf("mcpconfig: read `claude mcp list` output: %w", err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("mcpconfig: `claude mcp list` printed nothing")
	}
	out := &ListOutput{Servers: []ListEntry{}, Diagnostics: []Diagnostic{}, Unparsed: []UnparsedLine{}}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), MaxCLIOutput)
	inDiag := false
	section := ""
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimRight(sc.Text(), " \r")
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "":
			continue
		case strings.HasPrefix(trimmed, "MCP config diagnostics"):
			inDiag = true
			continue
		case inDiag:
			section = parseDiagnosticLine(trimmed, section, out)
			continue
		case strings.HasPrefix(trimmed, "Checking MCP server health"):
			continue
		case strings.HasPrefix(trimmed, "No MCP servers configured"):
			out.NoServers = true
			continue
		}
		if e, ok := parseListLine(line); ok {
			e.Line = n
			out.Servers = append(out.Servers, e)
		} else {
			out.Unparsed = append(out.Unparsed, UnparsedLine{n, strings.Join(RedactArgs(strings.Split(line, " ")), " ")})
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("mcpconfig: read `claude mcp list` output: %w", err)
	}
	return out, nil
}

func parseListLine(line string) (ListEntry, bool) {
	name, rest, ok := strings.Cut(line, ": ")
	if !ok || name == "" || strings.HasPrefix(name, " ") {
		return ListEntry{}, false
	}
	// The status follows the first " - " that is followed by a marker.
	idx := -1
	for off := 0; idx < 0; {
		i := strings.Index(rest[off:], " - ")
		if i < 0 {
			break
		}
		i += off
		for _, m := range statusMarkers {
			if strings.HasPrefix(rest[i+3:], m) {
				idx = i
				break
			}
		}
		off = i + 1
	}
	if idx < 0 {
		return ListEntry{}, false
	}
	e := ListEntry{Name: name, Target: strings.TrimSpace(rest[:idx]), Transport: TransportStdio}
	for suffix, tr := range map[string]Transport{" (HTTP)": TransportHTTP, " (SSE)": TransportSSE, " (WS)": TransportWS} {
		if t, ok := strings.CutSuffix(e.Target, suffix); ok {
			e.Target, e.Transport = t, tr
		}
	}
	e.Status, e.StatusText, e.Detail = parseStatus(rest[idx+3:])
	return e, true
}

// parseDiagnosticLine reads one line of the diagnostics section: a heading
// "[Has warnings] User config (…)", "Location: …", or a tree item
// "├ [Warning] [name] message" / "└ message".
func parseDiagnosticLine(line, section string, out *ListOutput) string {
	item, isItem := strings.CutPrefix(line, "├")
	if !isItem {
		item, isItem = strings.CutPrefix(line, "└")
	}
	if !isItem {
		if strings.HasPrefix(line, "[") {
			if end := strings.IndexByte(line, ']'); end > 0 {
				return line[1:end]
			}
		}
		return section // "For help…", "Location: …"
	}
	d := Diagnostic{Section: section}
	item = strings.TrimSpace(item)
	if strings.HasPrefix(item, "[") {
		if end := strings.IndexByte(item, ']'); end > 0 {
			d.Level, item = item[1:end], strings.TrimSpace(item[end+1:])
			if strings.HasPrefix(item, "[") {
				if end := strings.IndexByte(item, ']'); end > 0 {
					d.Server, item = item[1:end], strings.TrimSpace(item[end+1:])
				}
			}
		}
	}
	d.Message = item
	out.Diagnostics = append(out.Diagnostics, d)
	return section
}

// KeyValue is one environment variable or header of `claude mcp get`.
type KeyValue struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// GetOutput is parsed `claude mcp get NAME` output. It can hold secrets
// (env and header values are printed in clear); use Redacted to show it.
type GetOutput struct {
	Name       string     `json:"name"`
	Scope      Scope      `json:"scope,omitempty"` // "" when not recognized
	ScopeText  string     `json:"scopeText"`
	Status     CLIStatus  `json:"status"`
	StatusText string     `json:"statusText"`
	Issue      string     `json:"issue,omitempty"` // the reason of a failure
	Type       Transport  `json:"type"`
	Command    string     `json:"command,omitempty"`
	Args       string     `json:"args,omitempty"` // as printed: joined by spaces
	URL        string     `json:"url,omitempty"`
	Env        []KeyValue `json:"env,omitempty"`
	Headers    []KeyValue `json:"headers,omitempty"`
	RemoveHint string     `json:"removeHint,omitempty"` // "claude mcp remove NAME -s SCOPE"
}

// Redacted returns a copy with env and header values, URL and argument
// secrets masked.
func (g GetOutput) Redacted() GetOutput {
	g.URL = RedactURL(g.URL)
	if g.Args != "" {
		g.Args = strings.Join(RedactArgs(strings.Split(g.Args, " ")), " ")
	}
	mask := func(kvs []KeyValue) []KeyValue {
		out := make([]KeyValue, len(kvs))
		for i, kv := range kvs {
			out[i] = KeyValue{kv.Key, MaskValue(kv.Value)}
		}
		return out
	}
	g.Env, g.Headers = mask(g.Env), mask(g.Headers)
	return g
}

// NotFoundError is `claude mcp get` of an unknown name (it exits 1).
type NotFoundError struct {
	Name       string
	Configured []string // the names the CLI listed, if any
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("claude knows no MCP server named %q", e.Name)
}

func scopeFromText(s string) Scope {
	switch first, _, _ := strings.Cut(strings.ToLower(s), " "); first {
	case "user":
		return ScopeUser
	case "local":
		return ScopeLocal
	case "project":
		return ScopeProject
	case "dynamic":
		return ScopeExtra
	case "enterprise", "managed":
		return ScopeManaged
	}
	return ""
}

// ParseGet parses the output of `claude mcp get NAME` (standard output, or
// standard error for an unknown name, which gives a *NotFoundError).
func ParseGet(r io.Reader) (*GetOutput, error) {
	data, err := readBounded(r)
	if err != nil {
		return nil, fmt.Errorf("mcpconfig: read `claude mcp get` output: %w", err)
	}
	lines := strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
	i := 0
	for i < len(lines) && strings.TrimSpace(lines[i]) == "" {
		i++
	}
	if i == len(lines) {
		return nil, errors.New("mcpconfig: `claude mcp get` printed nothing")
	}
	if rest, ok := strings.CutPrefix(lines[i], `No MCP server named "`); ok {
		name, tail, _ := strings.Cut(rest, `"`)
		nf := &NotFoundError{Name: name}
		if _, list, ok := strings.Cut(tail, "Configured servers: "); ok {
			list, _, _ = strings.Cut(list, " (")
			for _, n := range strings.Split(strings.TrimSuffix(strings.TrimSpace(list), "."), ", ") {
				if n != "" {
					nf.Configured = append(nf.Configured, n)
				}
			}
		}
		return nil, nf
	}
	head := strings.TrimRight(lines[i], " ")
	if !strings.HasSuffix(head, ":") || strings.HasPrefix(head, " ") {
		return nil, fmt.Errorf("mcpconfig: line %d is not the `name:` header of `claude mcp get` output", i+1)
	}
	g := &GetOutput{Name: strings.TrimSuffix(head, ":"), Type: TransportStdio, Status: StatusUnknown}
	var list *[]KeyValue
	for n := i + 1; n < len(lines); n++ {
		line := strings.TrimRight(lines[n], " \r")
		if line == "" {
			list = nil
			continue
		}
		if strings.HasPrefix(line, "    ") && list != nil {
			item := strings.TrimSpace(line)
			var kv KeyValue
			if list == &g.Env {
				kv.Key, kv.Value, _ = strings.Cut(item, "=")
			} else {
				kv.Key, kv.Value, _ = strings.Cut(item, ": ")
			}
			*list = append(*list, kv)
			continue
		}
		if hint, ok := strings.CutPrefix(line, "To remove this server, run: "); ok {
			g.RemoveHint = hint
			if g.Scope == "" {
				if _, s, ok := strings.Cut(hint, " -s "); ok {
					g.Scope = scopeFromText(s)
				}
			}
			continue
		}
		key, val, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || !strings.HasPrefix(line, "  ") {
			return nil, fmt.Errorf("mcpconfig: line %d of `claude mcp get` output is not a field", n+1)
		}
		val = strings.TrimSpace(val)
		list = nil
		switch key {
		case "Scope":
			g.ScopeText, g.Scope = val, scopeFromText(val)
		case "Status":
			g.Status, g.StatusText, _ = parseStatus(val)
		case "Issue":
			g.Issue = val
		case "Type":
			g.Type = Transport(val)
		case "Command":
			g.Command = val
		case "Args":
			g.Args = val
		case "URL":
			g.URL = val
		case "Environment":
			list = &g.Env
		case "Headers":
			list = &g.Headers
		default:
			// a field this parser does not know (a newer CLI): ignored
		}
	}
	return g, nil
}
