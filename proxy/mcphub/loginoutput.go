package mcphub

import (
	"bufio"
	"errors"
	"io"
	"net/url"
	"regexp"
	"strings"

	"github.com/ccproxy/ccproxy/mcpconfig"
)

// loginOutput reads the stdout of `claude mcp login`: it finds the
// authorization URL and keeps the last line. Lines are cut at
// loginOutputBytes.
type loginOutput struct {
	last string
}

// urlLine matches the line the CLI prints the URL on ("  https://…"),
// once terminal escapes are removed.
var (
	urlLine     = regexp.MustCompile(`^\s*(https?://\S+)\s*$`)
	ansiEscapes = regexp.MustCompile(`\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b\[[0-9;?]*[ -/]*[@-~]`)
)

func (o *loginOutput) read(r io.Reader, urls chan<- string) {
	br := bufio.NewReaderSize(r, loginOutputBytes)
	sent := false
	for {
		line, err := br.ReadSlice('\n')
		// A copy (line is br's buffer); of an overlong line, its start: the
		// rest is skipped.
		text := strings.TrimSpace(ansiEscapes.ReplaceAllString(string(line), ""))
		for errors.Is(err, bufio.ErrBufferFull) {
			_, err = br.ReadSlice('\n')
		}
		if text != "" {
			o.last = text
		}
		if m := urlLine.FindStringSubmatch(text); m != nil && !sent {
			if u, perr := url.Parse(m[1]); perr == nil && u.Host != "" {
				sent = true
				urls <- m[1] // buffered 1; sent once
			}
		}
		if err != nil {
			io.Copy(io.Discard, r)
			return
		}
	}
}

// lastLine is the last non-empty line read (the CLI's final message).
// Read it after read returned.
func (o *loginOutput) lastLine() string { return o.last }

// lastLines returns the last n non-empty lines of text, joined by "; ".
func lastLines(text string, n int) string {
	var lines []string
	for l := range strings.SplitSeq(text, "\n") {
		if l = strings.TrimSpace(ansiEscapes.ReplaceAllString(l, "")); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "; ")
}

var urlInText = regexp.MustCompile(`https?://\S+`)

// scrubCLIText prepares a message of the CLI for a client: the secrets of
// the configuration in force masked (Hub.Scrub), and in every URL the
// user info, query values and fragment (codes, states, tokens).
func (m *Logins) scrubCLIText(text string) string {
	text = urlInText.ReplaceAllStringFunc(text, mcpconfig.RedactURL)
	return m.cfg.Scrub(text)
}
