// Package testkit holds what ccproxy's tests share: locating the real
// dependencies the suite runs against (the Claude Code CLI, the npm MCP
// reference servers, chromium), and failing or skipping correctly when one is
// missing. It also builds the module's commands for tests (BuildCommand:
// once per process) and finds processes a test left behind (GroupMembers by
// process group, MarkedProcesses and WaitGone by a marker in the
// environment, KillGroup). Those read /proc: elsewhere (proc_other.go, for
// the Windows compile check) they list nothing and KillGroup relies on
// childproc alone. DieWithTest has a daemon a test starts (ccproxy serve,
// ccproxy acp) killed when the test binary dies, so a test that times out
// or panics before its cleanup leaves none behind (Linux; a no-op
// elsewhere). StartServe (serve.go) runs the ccproxy binary
// (CCProxyBinary) as `serve` on a free port for the tests of cmd/ccproxy and
// the browser tests of webui, reads its first line and stops it, checking
// nothing is left, when the test ends. Sub-packages hold the fake
// Anthropic API (fakeapi), the fake Claude Code CLI of the fast unit tests
// (fakeclaude) and the test MCP server (mcptest).
//
// Dependencies are installed by scripts/test.sh into <module root>/.deps (or
// $CCPROXY_DEPS). Outside CI a missing dependency skips the test with a hint;
// with CI=true it fails, because CI must never pass by skipping.
//
// The Claude Code CLI is found by version (Claude, ClaudePath): the pinned
// one (PinnedClaudeVersion) in <deps>/node_modules, another one asked for
// with $CCPROXY_CLAUDE_VERSION in its own npm prefix <deps>/claude-<version>,
// or $CCPROXY_TEST_CLAUDE, which must be the version asked for. test.sh runs
// the suite against the pinned CLI with $CCPROXY_CLAUDE_TESTS_LOG set, where
// Claude records each test that uses the real CLI, then runs only those
// tests again against the newest CLI.
package testkit

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// PinnedClaudeVersion is the Claude Code CLI version the suite is pinned to;
// scripts/test.sh installs it into <deps>/node_modules.
const PinnedClaudeVersion = "2.1.329"

// ClaudeVersion is the Claude Code CLI version this test process runs
// against: $CCPROXY_CLAUDE_VERSION, or PinnedClaudeVersion when that is unset.
// scripts/test.sh sets it for its second run of the real-CLI tests against
// the newest CLI, installed into <deps>/claude-<version> (ClaudeInstallDir).
// A malformed value is reported by ClaudePath (so by Claude, which fails in
// CI), not here.
var ClaudeVersion = wantedClaudeVersion(os.Getenv)

// ClaudeVersionEnv names the variable that picks the CLI version to test.
const ClaudeVersionEnv = "CCPROXY_CLAUDE_VERSION"

// ClaudeTestsLogEnv names a file Claude appends "<package dir>\t<top-level
// test name>" to, once per call, when set: scripts/test.sh collects in its
// first run which tests use the real CLI and runs only those again against
// the other version.
const ClaudeTestsLogEnv = "CCPROXY_CLAUDE_TESTS_LOG"

func wantedClaudeVersion(getenv func(string) string) string {
	if v := strings.TrimSpace(getenv(ClaudeVersionEnv)); v != "" {
		return v
	}
	return PinnedClaudeVersion
}

// validClaudeVersion reports whether v is a release version such as 2.1.330
// (three dot-separated decimal numbers), the only form test.sh installs.
func validClaudeVersion(v string) bool {
	parts := strings.Split(v, ".")
	if len(parts) != 3 {
		return false
	}
	for _, p := range parts {
		if p == "" || len(p) > 9 || strings.Trim(p, "0123456789") != "" {
			return false
		}
	}
	return true
}

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

// ClaudeInstallDir is the npm prefix scripts/test.sh installs Claude Code
// version into: the deps directory itself for PinnedClaudeVersion (with the
// other npm packages), <deps>/claude-<version> for any other version.
func ClaudeInstallDir(version string) (string, error) {
	deps, err := DepsDir()
	if err != nil {
		return "", err
	}
	if version == PinnedClaudeVersion {
		return deps, nil
	}
	return filepath.Join(deps, "claude-"+version), nil
}

// ClaudePath finds the Claude Code CLI of version ClaudeVersion:
// $CCPROXY_TEST_CLAUDE, or the one scripts/test.sh installed for that
// version (ClaudeInstallDir). It checks that the binary is that version.
func ClaudePath() (string, error) {
	return claudePath(ClaudeVersion, os.Getenv("CCPROXY_TEST_CLAUDE"))
}

func claudePath(version, override string) (string, error) {
	if !validClaudeVersion(version) {
		return "", fmt.Errorf("$%s=%q is not a Claude Code release version such as %s", ClaudeVersionEnv, version, PinnedClaudeVersion)
	}
	p := override
	if p == "" {
		dir, err := ClaudeInstallDir(version)
		if err != nil {
			return "", err
		}
		p = filepath.Join(dir, "node_modules", ".bin", "claude")
		if _, err := os.Stat(p); err != nil {
			hint := ""
			if version != PinnedClaudeVersion {
				hint = fmt.Sprintf(" (install it with: npm install --prefix %s @anthropic-ai/claude-code@%s)", dir, version)
			}
			return "", fmt.Errorf("Claude Code %s is not installed: %w%s", version, err, hint)
		}
	}
	out, err := exec.Command(p, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("%s --version: %w", p, err)
	}
	got := strings.TrimSpace(string(out))
	// "2.1.330 (Claude Code)": the version is the first word, compared
	// whole (2.1.3 must not pass for 2.1.330).
	if f := strings.Fields(got); len(f) == 0 || f[0] != version {
		return "", fmt.Errorf("%s is version %.80q, the tests asked for %s", p, got, version)
	}
	return p, nil
}

// Claude is ClaudePath for tests: a missing or wrong CLI fails in CI, skips
// elsewhere. With $CCPROXY_CLAUDE_TESTS_LOG set it records the test as one
// that uses the real CLI.
func Claude(t testing.TB) string {
	t.Helper()
	p, err := ClaudePath()
	if err != nil {
		Missing(t, "Claude Code CLI "+ClaudeVersion, err)
	}
	if log := os.Getenv(ClaudeTestsLogEnv); log != "" {
		if err := recordClaudeTest(log, t.Name()); err != nil {
			t.Fatalf("recording the real-CLI test for scripts/test.sh: %v", err)
		}
	}
	return p
}

// recordClaudeTest appends "<working dir>\t<top-level test>\n" to log. go
// test runs each package's tests in the package's directory, so the working
// directory names the package. One short write with O_APPEND: lines from
// test binaries running in parallel do not interleave.
func recordClaudeTest(log, name string) error {
	dir, err := os.Getwd()
	if err != nil {
		return err
	}
	top, _, _ := strings.Cut(name, "/")
	f, err := os.OpenFile(log, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, werr := f.WriteString(dir + "\t" + top + "\n")
	if err := f.Close(); werr == nil {
		werr = err
	}
	return werr
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

// Caddy finds Debian's caddy for the reverse-proxy tests.
func Caddy(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("caddy")
	if err != nil {
		Missing(t, "caddy", err)
	}
	return p
}
