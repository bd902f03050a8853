package capture_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/ccproxy/ccproxy/internal/testkit"
	"github.com/ccproxy/ccproxy/internal/testkit/capture"
	"github.com/ccproxy/ccproxy/internal/testkit/mcptest"
	"github.com/ccproxy/ccproxy/stream"
)

// TestCaptureRealCLI runs every standard scenario against the real CLI into
// a temp dir and checks what came out (capture.Verify), that the process
// group is gone, that the fake API saw the tool results the transcript
// shows, and that the stdin log is in order.
func TestCaptureRealCLI(t *testing.T) {
	t.Parallel()
	cfg := capture.Config{
		Claude:     testkit.Claude(t),
		Everything: testkit.NodeBin(t, "mcp-server-everything"),
		TestMCP:    mcptest.Command(t),
		OutDir:     t.TempDir(),
		Timeout:    3 * time.Minute,
	}
	for _, sc := range capture.Scenarios() {
		t.Run(sc.Name, func(t *testing.T) {
			t.Parallel() // each scenario has its own temp dir, fake API and output files
			res, err := capture.Run(context.Background(), cfg, sc)
			if err != nil {
				t.Fatal(err)
			}
			if left := testkit.GroupMembers(res.PGID); len(left) > 0 {
				t.Errorf("processes of the CLI's group still running: %v", left)
			}
			if len(res.LeftBehind) > 0 {
				t.Logf("the CLI left these running at exit (then killed): %v", res.LeftBehind)
			}
			if _, err := os.Stat(res.TempDir); !os.IsNotExist(err) {
				t.Errorf("temp dir %s not removed: %v", res.TempDir, err)
			}
			tr, err := capture.ReadTranscript(res.StdoutPath)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range capture.Verify(sc, tr, res) {
				t.Error(e)
			}
			if len(tr.Events) != res.Lines {
				t.Errorf("read back %d events, the run counted %d lines", len(tr.Events), res.Lines)
			}
			checkFakeSawResults(t, tr, res)
			checkStdinLog(t, res.StdinPath, sc)
			if sc.Gzip {
				if !strings.HasSuffix(res.StdoutPath, ".jsonl.gz") {
					t.Errorf("gzip scenario wrote %s", res.StdoutPath)
				}
				fi, err := os.Stat(res.StdoutPath)
				if err != nil || fi.Size() >= res.Bytes {
					t.Errorf("compressed file %v is not smaller than %d bytes", fi, res.Bytes)
				}
				if res.MaxLine < 1<<20 {
					t.Errorf("longest line %d bytes; the large image should make it over 1 MiB", res.MaxLine)
				}
			}
		})
	}
}

// checkFakeSawResults: every tool_result in the transcript reached the fake
// API in a later request, answering the tool_use the fake scripted.
func checkFakeSawResults(t *testing.T, tr *capture.Transcript, res *capture.Result) {
	t.Helper()
	seen := map[string]string{}
	for _, r := range res.Requests {
		for _, x := range r.ToolResults() {
			seen[x.ToolUseID] = x.ToolName
		}
	}
	for _, c := range tr.Calls {
		if name, ok := seen[c.ID]; !ok {
			t.Errorf("the fake API never received the result of %s (%s)", c.ID, c.Name)
		} else if name != c.Name {
			t.Errorf("the fake API matched %s to %q, the transcript to %q", c.ID, name, c.Name)
		}
	}
	if res.Dropped != 0 {
		t.Errorf("the fake API dropped %d requests", res.Dropped)
	}
}

var stdinLine = regexp.MustCompile(`^\[(\d+\.\d\d)s\] (\{.*\})$`)

func checkStdinLog(t *testing.T, path string, sc capture.Scenario) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var turns []string
	last := -1.0
	sc2 := bufio.NewScanner(f)
	for sc2.Scan() {
		m := stdinLine.FindStringSubmatch(sc2.Text())
		if m == nil {
			t.Fatalf("stdin log line %q is not [N.NNs] {json}", sc2.Text())
		}
		ts, _ := strconv.ParseFloat(m[1], 64)
		if ts < last {
			t.Errorf("stdin log goes back in time at %q", sc2.Text())
		}
		last = ts
		if gjson.Get(m[2], "type").Str == "user" {
			turns = append(turns, m[2])
		}
	}
	if len(turns) != len(sc.Turns) {
		t.Fatalf("stdin log has %d user turns, want %d", len(turns), len(sc.Turns))
	}
	// What the proxy sends for the turn, up to key order and escaping (the
	// committed logs were written by an older builder).
	for i, turn := range sc.Turns {
		want, err := stream.UserTurn(turn, nil)
		if err != nil {
			t.Fatalf("turn %d: %v", i+1, err)
		}
		var got, wantV any
		if err := json.Unmarshal([]byte(turns[i]), &got); err != nil {
			t.Fatalf("turn %d: %v", i+1, err)
		}
		if err := json.Unmarshal(want, &wantV); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, wantV) {
			t.Errorf("turn %d logged as %s, want %s", i+1, turns[i], want)
		}
	}
}

// The committed captures (testdata/transcripts/captured) still pass their
// scenarios' checks, so a re-capture that lost something is caught.
func TestCommittedCaptures(t *testing.T) {
	root, err := testkit.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range capture.Scenarios() {
		t.Run(sc.Name, func(t *testing.T) {
			path := root + "/testdata/transcripts/captured/" + sc.Name + ".jsonl"
			if sc.Gzip {
				path += ".gz"
			}
			tr, err := capture.ReadTranscript(path)
			if err != nil {
				t.Fatalf("%v (re-make it: go run ./internal/testkit/cmd/capture)", err)
			}
			for _, e := range capture.Verify(sc, tr, nil) {
				t.Error(e)
			}
			checkStdinLog(t, strings.TrimSuffix(strings.TrimSuffix(path, ".gz"), ".jsonl")+".stdin.log", sc)
		})
	}
}
