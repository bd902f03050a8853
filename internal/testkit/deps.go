// Package testkit holds what ccproxy's tests share: locating the real
// dependencies the suite runs against (the Claude Code CLI, the npm MCP
// reference servers, chromium), and failing or skipping correctly when one is
// missing. It also builds the module's commands for tests (BuildCommand:
// once per process) and finds processes a test left behind (GroupMembers by
// process group, MarkedProcesses and WaitGone by a marker in the
// environment, KillGroup). Those read /proc: elsewhere (proc_other.go, for
// the Windows compile check) they list nothing and KillGroup relies on
// childproc alone. Sub-packages hold the fake Anthropic API and the test MCP
// server.
//
// Dependencies are installed by scripts/test.sh into <module root>/.deps (or
// $CCPROXY_DEPS). Outside CI a missing dependency skips the test with a hint;
// with CI=true it fails, because CI must never pass by skipping.
package testkit

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// ClaudeVersion is the Claude Code CLI version the suite is pinned to.
const ClaudeVersion = "2.1.329"

// InCI reports whether the tests run in CI (CI=true), where missing
// dependencies are failures.
func InCI() bool {
	v := strings.ToLower(os.Getenv("CI"))
	return v == "true" || v == "1"
}

// Missing reports a missing real dependency: t.Fatal in CI, t.Skip elsewhere.
func Missing(t testing.TB, what string, err error) {
	t.Helper()
	msg := fmt.Sprintf("%s not available: %v (run ./scripts/test.sh to install it)", what, err)
	if InCI() {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// ModuleRoot returns the directory holding go.mod, found by walking up from
// the working directory.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("go.mod not found above the working directory")
		}
		dir = parent
	}
}

// DepsDir is where scripts/test.sh installs npm packages: $CCPROXY_DEPS, or
// <module root>/.deps.
func DepsDir() (string, error) {
	if d := os.Getenv("CCPROXY_DEPS"); d != "" {
		return d, nil
	}
	root, err := ModuleRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, ".deps"), nil
}

// NodeBinPath returns the path of an executable installed by npm into the
// deps directory (node_modules/.bin/NAME), or an error saying why not.
func NodeBinPath(name string) (string, error) {
	deps, err := DepsDir()
	if err != nil {
		return "", err
	}
	p := filepath.Join(deps, "node_modules", ".bin", name)
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("%s: %w", p, err)
	}
	return p, nil
}

// NodeBin is NodeBinPath for tests: a missing binary fails in CI, skips
// elsewhere.
func NodeBin(t testing.TB, name string) string {
	t.Helper()
	p, err := NodeBinPath(name)
	if err != nil {
		Missing(t, "npm package binary "+name, err)
	}
	return p
}

// ClaudePath finds the pinned Claude Code CLI: $CCPROXY_TEST_CLAUDE, or the
// one scripts/test.sh installed. It checks the version.
func ClaudePath() (string, error) {
	p := os.Getenv("CCPROXY_TEST_CLAUDE")
	if p == "" {
		var err error
		if p, err = NodeBinPath("claude"); err != nil {
			return "", err
		}
	}
	out, err := exec.Command(p, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("%s --version: %w", p, err)
	}
	if !strings.HasPrefix(strings.TrimSpace(string(out)), ClaudeVersion) {
		return "", fmt.Errorf("%s is version %q, the suite needs %s", p, strings.TrimSpace(string(out)), ClaudeVersion)
	}
	return p, nil
}

// Claude is ClaudePath for tests.
func Claude(t testing.TB) string {
	t.Helper()
	p, err := ClaudePath()
	if err != nil {
		Missing(t, "Claude Code CLI "+ClaudeVersion, err)
	}
	return p
}

// Chromium finds Debian's chromium for browser tests.
func Chromium(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	Missing(t, "chromium", fmt.Errorf("not on PATH"))
	return ""
}
