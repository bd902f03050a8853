package webui_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ccproxy/ccproxy/internal/testkit"
)

// TestUIModulesParse checks that every ES module of the embedded web UI
// parses (node --check), so a broken script is reported by name and line
// here instead of as a browser test timing out while waiting for the page.
func TestUIModulesParse(t *testing.T) {
	t.Parallel()
	node, err := exec.LookPath("node")
	if err != nil {
		testkit.Missing(t, "node", err)
	}
	mods, err := filepath.Glob(filepath.Join("app", "*.js"))
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

// TestUIHelpersFromDom checks that the DOM helpers $ and el live only in
// app/dom.js: every other module imports them from there instead of keeping
// a copy (el's contract — text through textContent, never HTML — is kept
// in one place).
func TestUIHelpersFromDom(t *testing.T) {
	mods, err := filepath.Glob(filepath.Join("app", "*.js"))
	if err != nil || len(mods) == 0 {
		t.Fatalf("no UI modules found: %v", err)
	}
	def := regexp.MustCompile(`(?m)^\s*(?:export\s+)?(?:const|let|var|function)\s+(\$|el)\s*[=(]`)
	use := regexp.MustCompile(`(?:^|[^\w$.])(\$|el)\(`)
	imp := regexp.MustCompile(`(?m)^import\s*\{([^}]*)\}\s*from\s*"\./dom\.js";`)
	for _, m := range mods {
		if filepath.Base(m) == "dom.js" {
			continue
		}
		b, err := os.ReadFile(m)
		if err != nil {
			t.Fatal(err)
		}
		src := string(b)
		for _, d := range def.FindAllStringSubmatch(src, -1) {
			t.Errorf("%s defines its own %s: import it from ./dom.js", m, d[1])
		}
		imported := map[string]bool{}
		for _, i := range imp.FindAllStringSubmatch(src, -1) {
			for n := range strings.SplitSeq(i[1], ",") {
				imported[strings.TrimSpace(n)] = true
			}
		}
		for _, u := range use.FindAllStringSubmatch(src, -1) {
			if !imported[u[1]] {
				t.Errorf("%s calls %s( without importing it from ./dom.js", m, u[1])
				imported[u[1]] = true // once per name
			}
		}
	}
}
