package capture

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const sampleTranscript = `{"type":"system","subtype":"init","mcp_servers":[{"name":"everything","status":"connected"},{"name":"testmcp","status":"connected"}]}
{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"mcp__testmcp__text","input":{}},{"type":"tool_use","id":"t2","name":"mcp__testmcp__image","input":{}}]}}
{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"hello from testmcp"}]}]},"tool_use_result":[{"type":"text","text":"hello from testmcp"}]}
{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t2","content":"boom","is_error":true}]},"tool_use_result":"Error: boom"}
{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t9","content":"stray"}]}}
{"type":"result","subtype":"success","is_error":false,"result":"done","num_turns":2}
`

func TestParseTranscript(t *testing.T) {
	tr, err := ParseTranscript(strings.NewReader(sampleTranscript))
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Events) != 6 || len(tr.Calls) != 2 || len(tr.Results) != 1 || tr.Results[0].Result != "done" {
		t.Fatalf("events %d calls %d results %+v", len(tr.Events), len(tr.Calls), tr.Results)
	}
	c := tr.CallsNamed("mcp__testmcp__text")[0]
	if c.Results != 1 || c.IsError || c.Text != "hello from testmcp" || strings.Join(c.ContentTypes, ",") != "text" {
		t.Errorf("text call %+v", c)
	}
	c = tr.CallsNamed("mcp__testmcp__image")[0]
	if !c.IsError || c.Text != "boom" || c.ContentTypes[0] != "string" || string(c.ToolUseResult) != `"Error: boom"` {
		t.Errorf("image call %+v", c)
	}
	if len(tr.Problems) != 1 || !strings.Contains(tr.Problems[0], "t9") {
		t.Errorf("problems %q, want the stray tool_result", tr.Problems)
	}
	if _, err := ParseTranscript(strings.NewReader("{\"type\":\"x\"}\nnot json\n")); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("bad line: err %v, want one naming line 2", err)
	}
}

// Verify must fail captures that miss what the scenario scripts.
func TestVerifyCatchesFailures(t *testing.T) {
	tr, err := ParseTranscript(strings.NewReader(sampleTranscript))
	if err != nil {
		t.Fatal(err)
	}
	sc := Scenario{Name: "sample", Turns: []string{"one", "two"},
		Tools: []string{"mcp__testmcp__text", "mcp__testmcp__image", "mcp__testmcp__audio"},
		Expect: map[string]func(*ToolCall) error{
			"mcp__testmcp__text":  all(ok, textIs("hello from testmcp")),
			"mcp__testmcp__image": all(ok, imageOf("image/png", 1)),
		}}
	errs := Verify(sc, tr, &Result{ExitCode: 1})
	joined := ""
	for _, e := range errs {
		joined += e.Error() + "\n"
	}
	for _, want := range []string{"exited with status 1", "1 result events, want one per turn (2)", "t9",
		"mcp__testmcp__audio was never called", "mcp__testmcp__image (t2): is_error is true", "no image block"} {
		if !strings.Contains(joined, want) {
			t.Errorf("Verify did not report %q; it said:\n%s", want, joined)
		}
	}
	if strings.Contains(joined, "mcp__testmcp__text (") {
		t.Errorf("Verify faulted the good call:\n%s", joined)
	}
}

// lineSink counts lines however the writes split them, stores everything,
// and only inspects lines up to classifyLimit.
func TestLineSink(t *testing.T) {
	dir := t.TempDir()
	big := `{"type":"user","pad":"` + strings.Repeat("x", classifyLimit+10) + `"}`
	input := `{"type":"system"}` + "\n" + big + "\n" + `{"type":"control_response","response":{"request_id":"r1"}}` + "\n" +
		`{"type":"result","subtype":"success"}` + "\n" + `{"type":"result"`
	for _, compress := range []bool{false, true} {
		path := filepath.Join(dir, "out.jsonl")
		if compress {
			path += ".gz"
		}
		s, err := newLineSink(path, compress)
		if err != nil {
			t.Fatal(err)
		}
		for rest := input; len(rest) > 0; {
			n := min(len(rest), 7777)
			if _, err := s.Write([]byte(rest[:n])); err != nil {
				t.Fatal(err)
			}
			rest = rest[n:]
		}
		if s.results() != 1 || !s.sawControlResponse("r1") || s.sawControlResponse("r2") {
			t.Errorf("results %d, control responses %v", s.results(), s.ctlResp)
		}
		if err := s.close(); err != nil {
			t.Fatal(err)
		}
		if s.lines != 5 || s.maxLine != len(big) || s.bytes != int64(len(input)) {
			t.Errorf("lines %d maxLine %d bytes %d", s.lines, s.maxLine, s.bytes)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if compress {
			zr, err := gzip.NewReader(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			if _, err := b.ReadFrom(zr); err != nil {
				t.Fatal(err)
			}
			data = b.Bytes()
		}
		if string(data) != input {
			t.Errorf("stored %d bytes, want the %d written", len(data), len(input))
		}
		if _, err := s.Write([]byte("x")); err == nil {
			t.Error("write after close succeeded")
		}
	}
}
