// Command gendemo makes the demo transcript that `ccproxy serve --demo`
// replays (internal/replay/transcripts/demo.jsonl) from the real CLI's
// capture of the demo scenario (testdata/transcripts/captured/demo.jsonl,
// made by `go run ./internal/testkit/cmd/capture -only demo`). The capture
// ran with the test suite's MCP servers and shows the CLI's whole model
// list; the demo shows only its own server and the models people know:
//
//   - the test suite's server (testmcp) is left out: its entries in
//     system/init's tools and mcp_servers and in the mcp_status answer;
//   - the reference server the demo calls (everything) is named demo
//     wherever its name appears: tool names (mcp__demo__echo), server
//     lists, the permission prompt, its prompts (demo:simple-prompt), the
//     text and thinking that name it, its tool-result file;
//   - the capture machine's path of its command is cut to the command's
//     name (mcp-server-demo);
//   - the model list of the initialize answer keeps default, opus, sonnet
//     and haiku (the CLI also listed fable).
//
// Every other byte stays as the CLI wrote it: a JSON value is written anew
// only when one of these rules changed it. Run it with `go generate
// ./internal/replay` after a new capture; TestCommittedDemo (in this
// directory) fails when the committed transcript is not what it makes.
//
//	go run ./internal/replay/gendemo [-in capture.jsonl] [-out demo.jsonl]
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"
)

// The defaults, relative to internal/replay (where go generate runs it).
const (
	defaultIn  = "../../testdata/transcripts/captured/demo.jsonl"
	defaultOut = "transcripts/demo.jsonl"
)

// What the rules change.
const (
	testServer = "testmcp"    // left out
	callServer = "everything" // named demo
	demoServer = "demo"
)

// models are the models the demo lists (the initialize answer's values).
var models = []string{"default", "opus", "sonnet", "haiku"}

func main() {
	in := flag.String("in", defaultIn, "the capture `FILE` of the demo scenario")
	out := flag.String("out", defaultOut, "where the demo transcript goes (`FILE`)")
	flag.Parse()
	if err := run(*in, *out); err != nil {
		fmt.Fprintln(os.Stderr, "gendemo:", err)
		os.Exit(1)
	}
}

func run(in, out string) error {
	b, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	demo, err := rewrite(b)
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	return os.WriteFile(out, demo, 0o644)
}

// rewrite applies the rules to each line of a capture (JSON lines).
func rewrite(capture []byte) ([]byte, error) {
	lines := bytes.SplitAfter(capture, []byte("\n"))
	var out bytes.Buffer
	out.Grow(len(capture))
	for i, l := range lines {
		body := bytes.TrimRight(l, "\n")
		if len(bytes.TrimSpace(body)) == 0 {
			out.Write(l)
			continue
		}
		v, _, err := edit(body)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", i+1, err)
		}
		out.Write(v)
		out.Write(l[len(body):])
	}
	return out.Bytes(), nil
}

// edit applies the rules to one JSON value and reports whether an array
// holding it should leave it out. An unchanged value is returned as is.
func edit(raw []byte) (out []byte, drop bool, err error) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 {
		return nil, false, errors.New("an empty value")
	}
	switch t[0] {
	case '{':
		return editObject(raw)
	case '[':
		return editArray(raw)
	case '"':
		var s string
		if err := json.Unmarshal(t, &s); err != nil {
			return nil, false, err
		}
		if strings.HasPrefix(s, "mcp__"+testServer+"__") {
			return raw, true, nil
		}
		n := renameString(s)
		if n == s {
			return raw, false, nil
		}
		b, err := marshal(n)
		return b, false, err
	}
	return raw, false, nil
}

type member struct {
	key   string
	value json.RawMessage
}

// editObject edits an object's values; an array leaves out the test
// server's entries (named testmcp) and the models not in models (an
// entry with value and resolvedModel).
func editObject(raw []byte) ([]byte, bool, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		return nil, false, err
	}
	var members []member
	var name, value string
	model := false
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false, err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false, fmt.Errorf("%q: %w", key, err)
		}
		switch key {
		case "name":
			_ = json.Unmarshal(v, &name)
		case "value":
			_ = json.Unmarshal(v, &value)
		case "resolvedModel":
			model = true
		}
		members = append(members, member{key, v})
	}
	if name == testServer || (model && !slices.Contains(models, value)) {
		return raw, true, nil
	}
	changed := false
	for i, m := range members {
		v, _, err := edit(m.value)
		if err != nil {
			return nil, false, fmt.Errorf("%q: %w", m.key, err)
		}
		if !bytes.Equal(v, m.value) {
			members[i].value, changed = v, true
		}
	}
	if !changed {
		return raw, false, nil
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range members {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := marshal(m.key)
		if err != nil {
			return nil, false, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(m.value)
	}
	b.WriteByte('}')
	return b.Bytes(), false, nil
}

// editArray edits an array's elements and leaves out those edit says to.
func editArray(raw []byte) ([]byte, bool, error) {
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		return nil, false, err
	}
	changed := false
	kept := elems[:0]
	for _, e := range elems {
		v, drop, err := edit(e)
		if err != nil {
			return nil, false, err
		}
		if drop {
			changed = true
			continue
		}
		if !bytes.Equal(v, e) {
			changed = true
		}
		kept = append(kept, v)
	}
	if !changed {
		return raw, false, nil
	}
	var b bytes.Buffer
	b.WriteByte('[')
	for i, e := range kept {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(e)
	}
	b.WriteByte(']')
	return b.Bytes(), false, nil
}

// renameString names the called server demo in s: the word "everything"
// where no letter touches it (mcp__everything__echo, "the everything
// server", everything:simple-prompt, mcp-servers/everything), its title,
// and the command's path cut to its name.
func renameString(s string) string {
	if i := strings.Index(s, "/node_modules/.bin/"); i >= 0 && strings.HasPrefix(s, "/") && !strings.ContainsAny(s, " \n") {
		s = path.Base(s)
	}
	s = strings.ReplaceAll(s, "Everything Reference Server", "Demo Server")
	var b strings.Builder
	for {
		i := strings.Index(s, callServer)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		end := i + len(callServer)
		if (i > 0 && isLetter(s[i-1])) || (end < len(s) && isLetter(s[end])) {
			b.WriteString(s[:end])
		} else {
			b.WriteString(s[:i])
			b.WriteString(demoServer)
		}
		s = s[end:]
	}
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// marshal writes s as JSON without HTML escapes, as the CLI does.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}
