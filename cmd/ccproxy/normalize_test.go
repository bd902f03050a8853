package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

func runCmd(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	code = exitCode(err, &errb) // prints err to errb
	return out.String(), errb.String(), code
}

func TestNormalizeCommand(t *testing.T) {
	transcript, err := os.ReadFile("../../testdata/transcripts/everything_tools.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"inline", "strip"} {
		t.Run(mode, func(t *testing.T) {
			out, errOut, code := runCmd(t, string(transcript), "normalize", "--attachments", mode)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			if want := bytes.Count(bytes.TrimSpace(transcript), []byte("\n")) + 1; len(lines) != want {
				t.Fatalf("%d lines out, %d in", len(lines), want)
			}
			var images int
			for i, l := range lines {
				if !gjson.Valid(l) {
					t.Fatalf("line %d is not JSON", i+1)
				}
				gjson.Get(l, "message.content").ForEach(func(_, b gjson.Result) bool {
					if b.Get("type").Str == "tool_result" && b.Get("content").Type != gjson.String {
						t.Errorf("line %d: tool_result content is not text", i+1)
					}
					b.Get("attachments").ForEach(func(_, a gjson.Result) bool {
						images++
						if hasData := a.Get("data").Exists(); hasData != (mode == "inline") {
							t.Errorf("line %d: attachment data present = %v in %s mode", i+1, hasData, mode)
						}
						return true
					})
					return true
				})
			}
			if images != 2 {
				t.Errorf("%d image attachments, want the 2 of the transcript", images)
			}
		})
	}
}

func TestNormalizeCommandMaxLine(t *testing.T) {
	in := `{"type":"system","subtype":"status"}` + "\n" + `{"type":"user","x":"` + strings.Repeat("a", 500) + `"}` + "\n" + "debug noise\n"
	out, errOut, code := runCmd(t, in, "normalize", "--max-line", "100")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || gjson.Get(lines[1], "subtype").Str != "oversized_line" || gjson.Get(lines[2], "subtype").Str != "noise" {
		t.Fatalf("output:\n%s", out)
	}
	if !strings.Contains(errOut, "1 line(s) over --max-line 100 bytes") {
		t.Errorf("stderr should report the oversized line: %q", errOut)
	}
	if !strings.Contains(errOut, "1 of 3 line(s) were not JSON objects and became noise events") {
		t.Errorf("stderr should count the noise: %q", errOut)
	}
}

// Input that is not stream-json at all (a README) fails with a word on
// stderr, rather than printing only noise events and exiting 0. The noise
// events are still written: nothing of the input is lost.
func TestNormalizeCommandNotStreamJSON(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCmd(t, string(readme), "normalize")
	if code != 1 || !strings.Contains(errOut, "input lines is a JSON object: the input is not claude's stream-json") {
		t.Errorf("exit %d, stderr %q; want exit 1 and what was wrong", code, errOut)
	}
	if n := strings.Count(out, `"subtype":"noise"`); n == 0 || n != strings.Count(out, "\n") {
		t.Errorf("%d noise events in %d lines out", n, strings.Count(out, "\n"))
	}
	out, errOut, code = runCmd(t, "", "normalize") // empty input: nothing wrong
	if code != 0 || out != "" || errOut != "" {
		t.Errorf("empty input: exit %d, %q, %q", code, out, errOut)
	}
}

func TestNormalizeCommandBadFlags(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"normalize", "--attachments", "sink"}, `--attachments must be strip or inline, got "sink"`},
		{[]string{"normalize", "--max-line", "0"}, "--max-line must be a positive number of bytes, got 0"},
		{[]string{"normalize", "--max-line", "lots"}, `invalid argument "lots" for "--max-line" flag`},
		{[]string{"normalize", "file.jsonl"}, `unexpected argument "file.jsonl"`},
		{[]string{"nonsense"}, `unknown command "nonsense"`},
		{nil, "no command given"},
	}
	for _, tt := range tests {
		_, errOut, code := runCmd(t, "", tt.args...)
		if code != 2 || !strings.Contains(errOut, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", tt.args, code, errOut, tt.want)
		}
	}
}
