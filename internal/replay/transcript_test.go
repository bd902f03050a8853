package replay

import (
	"bytes"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

const transcriptsDir = "../../testdata/transcripts"

// allTranscripts lists the real-CLI transcripts of testdata.
func allTranscripts(t *testing.T) []string {
	t.Helper()
	var paths []string
	err := filepath.WalkDir(transcriptsDir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".jsonl") || strings.HasSuffix(p, ".jsonl.gz")) {
			paths = append(paths, p)
		}
		return err
	})
	if err != nil || len(paths) == 0 {
		t.Fatalf("no transcripts under %s: %v", transcriptsDir, err)
	}
	return paths
}

func TestDemoTranscript(t *testing.T) {
	tr := demo(t)
	if len(tr.Turns) != 4 {
		t.Fatalf("%d turns, want 4", len(tr.Turns))
	}
	if _, ok := tr.Recorded("initialize"); !ok {
		t.Error("no recorded initialize response")
	}
	st, ok := tr.Recorded("mcp_status")
	if !ok || gjson.GetBytes(st, `mcpServers.#(name=="demo").status`).Str != "connected" {
		t.Errorf("recorded mcp_status %.200s", st)
	}
	if len(tr.prelude) != 1 || gjson.GetBytes(tr.prelude[0], "subtype").Str != "commands_changed" {
		t.Errorf("prelude %d lines", len(tr.prelude))
	}
	prompts := 0
	for i, turn := range tr.Turns {
		for _, l := range turn.lines {
			if l.kind == kindPrompt {
				prompts++
				if i != 2 || l.toolName != "mcp__demo__echo" || l.toolUseID == "" || l.requestID == "" {
					t.Errorf("turn %d: prompt for %s (%s)", i+1, l.toolName, l.toolUseID)
				}
			}
		}
	}
	if prompts != 1 {
		t.Errorf("%d prompts, want 1", prompts)
	}
}

// Every real transcript splits into whole turns.
func TestParseRealTranscripts(t *testing.T) {
	for _, p := range allTranscripts(t) {
		t.Run(filepath.Base(p), func(t *testing.T) {
			tr, err := Open(p)
			if err != nil {
				t.Fatal(err)
			}
			if tr.SessionID == "" {
				t.Error("no session id")
			}
			for i, turn := range tr.Turns {
				first, last := turn.lines[0], turn.lines[turn.Len()-1]
				if first.kind != kindInit || last.kind != kindResult {
					t.Errorf("turn %d runs from %s/%s to %s/%s", i+1, first.typ, first.sub, last.typ, last.sub)
				}
				if n := countKind(turn, kindEcho); n != 1 {
					t.Errorf("turn %d has %d echo slots", i+1, n)
				}
				if countKind(turn, kindPrompt) != countKind(turn, kindPromptEcho) && countKind(turn, kindPromptEcho) != 0 {
					t.Errorf("turn %d: prompts and echoed answers do not pair", i+1)
				}
			}
			t.Logf("%d turns, %d events skipped", len(tr.Turns), tr.Skipped)
		})
	}
}

func countKind(t *Turn, k kind) int {
	n := 0
	for _, l := range t.lines {
		if l.kind == k {
			n++
		}
	}
	return n
}

// --replay FILE: any real transcript plays, turn by turn, with every
// prompt allowed, and every line comes out as a clean event.
func TestReplayAnyTranscript(t *testing.T) {
	for _, p := range allTranscripts(t) {
		t.Run(filepath.Base(p), func(t *testing.T) {
			tr, err := Open(p)
			if err != nil {
				t.Fatal(err)
			}
			h := start(t, tr, proxyOptions())
			h.control("init", "initialize", nil)
			for range tr.Turns {
				h.user("turn")
				for {
					e := h.next()
					if e.typ == "control_request" {
						h.answer(e.norm.Get("request_id").Str, map[string]any{"behavior": "allow", "updatedInput": map[string]any{}})
					}
					if e.typ == "result" {
						break
					}
				}
			}
			if err := h.end(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	init := `{"type":"system","subtype":"init","session_id":"s"}`
	result := `{"type":"result","subtype":"success","session_id":"s"}`
	for _, c := range []struct{ name, in, want string }{
		{"empty", "", "no complete turn"},
		{"no turn", `{"type":"system","subtype":"status"}`, "no complete turn"},
		{"garbage", init + "\nnot json\n" + result, "x.jsonl:2: not a JSON object"},
		{"unfinished", init + "\n" + result + "\n" + init + "\n{\"type\":\"assistant\"}", "the turn that starts at line 3 has no result"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(c.in), "x.jsonl")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Parse: %v, want %q", err, c.want)
			}
		})
	}
	tr, err := Parse(strings.NewReader("\n"+init+"\r\n\n"+result), "ok")
	if err != nil || len(tr.Turns) != 1 || tr.Turns[0].Len() != 3 {
		t.Errorf("blank lines and CRLF: %v", err)
	}
	if _, err := Open("does/not/exist.jsonl"); err == nil {
		t.Error("Open of a missing file succeeded")
	}
}

func TestParseErrorLineNumber(t *testing.T) {
	// Blank lines count: the bad line is line 4 of the file.
	_, err := Parse(strings.NewReader("{}\n\n\nnot json\n"), "t.jsonl")
	if err == nil || !strings.Contains(err.Error(), "t.jsonl:4: not a JSON object") {
		t.Errorf("error %v, want it to name t.jsonl:4", err)
	}
}

// The demo shows /home/demo rather than the capture machine's temporary
// folders, consistently: cwd, the home folder and the project's folder
// under .claude/projects.
func TestDemoNeutralPaths(t *testing.T) {
	raw, err := embedded.ReadFile("transcripts/" + DemoName)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(raw, []byte("/ccproxy-capture-demo-")) {
		t.Fatal("the embedded demo no longer holds capture paths: this test checks nothing")
	}
	tr, err := Demo()
	if err != nil {
		t.Fatal(err)
	}
	var all bytes.Buffer
	for _, turn := range tr.Turns {
		for _, l := range turn.lines {
			all.Write(l.raw)
			all.WriteByte('\n')
		}
	}
	out := all.Bytes()
	if i := bytes.Index(out, []byte("ccproxy-capture-")); i >= 0 {
		t.Errorf("a capture path is left: %s", out[max(0, i-80):min(len(out), i+80)])
	}
	for _, want := range []string{
		`"cwd":"/home/demo/project"`,
		"/home/demo/.claude/projects/-home-demo-project/",
	} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("the demo does not show %s", want)
		}
	}
	// Other transcripts are left as they are.
	if b := []byte(`{"type":"system","subtype":"init","cwd":"/srv/x/project"}`); !bytes.Equal(neutralPaths(b), b) {
		t.Errorf("a cwd that is no capture folder was rewritten: %s", neutralPaths(b))
	}
}

// The demo shows its own MCP server, named demo, everywhere a server
// appears (system/init, the recorded mcp_status, the permission prompt,
// the tools called), never the test suite's, and only the models people
// know (gendemo made it so from the capture).
func TestDemoShowsItsOwnServerAndModels(t *testing.T) {
	tr := demo(t)
	raw, err := embedded.ReadFile("transcripts/" + DemoName)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"testmcp", "mcp__everything__", `"name":"everything"`, "/node_modules/"} {
		if i := bytes.Index(raw, []byte(bad)); i >= 0 {
			t.Errorf("the demo shows %q: %s", bad, raw[max(0, i-80):min(len(raw), i+80)])
		}
	}
	init, _ := tr.Recorded("initialize")
	var models []string
	for _, m := range gjson.GetBytes(init, "models.#.value").Array() {
		models = append(models, m.Str)
	}
	if strings.Join(models, " ") != "default opus sonnet haiku" {
		t.Errorf("the demo's models: %v", models)
	}
	st, _ := tr.Recorded("mcp_status")
	if names := gjson.GetBytes(st, "mcpServers.#.name").Raw; names != `["demo"]` {
		t.Errorf("the recorded mcp_status names %s, want only demo", names)
	}
	inits, prompts := 0, 0
	for _, turn := range tr.Turns {
		for _, l := range turn.lines {
			switch l.kind {
			case kindInit:
				inits++
				if names := gjson.GetBytes(l.raw, "mcp_servers.#.name").Raw; names != `["demo"]` {
					t.Errorf("system/init names the servers %s", names)
				}
			case kindPrompt:
				prompts++
				if l.toolName != "mcp__demo__echo" || gjson.GetBytes(l.raw, "request.mcp_server.name").Str != "demo" {
					t.Errorf("the prompt is for %s", l.toolName)
				}
			}
		}
	}
	if inits != 4 || prompts != 1 {
		t.Errorf("%d system/init and %d prompts, want 4 and 1", inits, prompts)
	}
}
