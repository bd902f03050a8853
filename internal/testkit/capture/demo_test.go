package capture_test

import (
	"context"
	"testing"
	"time"

	"github.com/ccproxy/ccproxy/internal/testkit"
	"github.com/ccproxy/ccproxy/internal/testkit/capture"
	"github.com/ccproxy/ccproxy/internal/testkit/mcptest"
)

// The demo scenario against the real CLI: it passes its checks, which
// include a permission prompt answered by the capture.
func TestCaptureDemoRealCLI(t *testing.T) {
	t.Parallel()
	cfg := capture.Config{
		Claude:     testkit.Claude(t),
		Everything: testkit.NodeBin(t, "mcp-server-everything"),
		TestMCP:    mcptest.Command(t),
		OutDir:     t.TempDir(),
		Timeout:    3 * time.Minute,
	}
	sc := capture.Demo()
	res, err := capture.Run(context.Background(), cfg, sc)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := capture.ReadTranscript(res.StdoutPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range capture.Verify(sc, tr, res) {
		t.Error(e)
	}
	checkFakeSawResults(t, tr, res)
	checkStdinLog(t, res.StdinPath, sc)
}

// The committed demo capture still passes the scenario's checks
// (internal/replay/gendemo makes the demo internal/replay embeds of it, and
// its test checks that the two agree).
func TestCommittedDemo(t *testing.T) {
	root, err := testkit.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	sc, ok := capture.ScenarioNamed("demo")
	if !ok {
		t.Fatal(`ScenarioNamed("demo") found nothing`)
	}
	path := root + "/testdata/transcripts/captured/demo.jsonl"
	tr, err := capture.ReadTranscript(path)
	if err != nil {
		t.Fatalf("%v (re-make it: go run ./internal/testkit/cmd/capture -only demo)", err)
	}
	for _, e := range capture.Verify(sc, tr, nil) {
		t.Error(e)
	}
	checkStdinLog(t, root+"/testdata/transcripts/captured/demo.stdin.log", sc)
}
