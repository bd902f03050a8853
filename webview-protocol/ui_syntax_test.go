package protocol

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/ccproxy/ccproxy/internal/testkit"
)

// TestUIModulesParse checks that every ES module of the embedded web UI
// parses (node --check), so a broken script is reported by name and line
// here instead of as a browser test timing out while waiting for the page.
func TestUIModulesParse(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		testkit.Missing(t, "node", err)
	}
	mods, err := filepath.Glob(filepath.Join("ui", "*.js"))
	if err != nil || len(mods) == 0 {
		t.Fatalf("no UI modules found: %v", err)
	}
	dir := t.TempDir()
	for _, m := range mods {
		src, err := os.ReadFile(m)
		if err != nil {
			t.Fatal(err)
		}
		// .mjs: node parses it as the browser does, as a module.
		tmp := filepath.Join(dir, filepath.Base(m)+".mjs")
		if err := os.WriteFile(tmp, src, 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(node, "--check", tmp).CombinedOutput(); err != nil {
			t.Errorf("%s does not parse: %v\n%s", m, err, out)
		}
	}
}
