package history_test

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ccproxy/ccproxy/internal/testkit"
	"github.com/ccproxy/ccproxy/internal/testkit/capture"
	"github.com/ccproxy/ccproxy/internal/testkit/mcptest"
)

var (
	update       = flag.Bool("update", false, "keep the capture of TestCaptureHistoryRealCLI in testdata/history/<version>")
	claudeBinary = flag.String("claude", "", "capture with this Claude Code CLI instead of the pinned one (with -update: to add another version)")
)

// TestCaptureHistoryRealCLI makes the session files anew with the real
// CLI (capture.CaptureHistory: HistorySession, then HistoryResume) and
// checks that the package still reads what matters in them. With -update
// it keeps them in testdata/history/<version>; -claude PATH captures another
// CLI version.
func TestCaptureHistoryRealCLI(t *testing.T) {
	claude := *claudeBinary
	if claude == "" {
		claude = testkit.Claude(t)
	}
	cfg := capture.Config{
		Claude:     claude,
		Everything: testkit.NodeBin(t, "mcp-server-everything"),
		TestMCP:    mcptest.Command(t),
		Timeout:    3 * time.Minute,
	}
	dest := t.TempDir()
	if *update {
		dest = filepath.Join("..", "testdata", "history")
	}
	h, err := capture.CaptureHistory(context.Background(), cfg, dest)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("captured %s: session %s, resumed as %s, in %s", h.Version, h.SessionID, h.ResumeID, h.Dir)
	checkCaptured(t, filepath.Join(h.Dir, "projects"), h.Version)
	checkLive(t, h.Dir)
	for _, r := range h.Runs {
		if _, err := os.Stat(r.TempDir); !os.IsNotExist(err) {
			t.Errorf("temp dir %s not removed", r.TempDir)
		}
	}
}
