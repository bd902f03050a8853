package testkit

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fakeClaudeInstall writes a script at <deps>/<prefix>/node_modules/.bin/claude
// that prints "<version> (Claude Code)" for --version, as the real CLI does.
func fakeClaudeInstall(t *testing.T, deps, prefix, version string) string {
	t.Helper()
	bin := filepath.Join(deps, prefix, "node_modules", ".bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(bin, "claude")
	if err := os.WriteFile(p, []byte("#!/bin/sh\necho '"+version+" (Claude Code)'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// The version comes from $CCPROXY_CLAUDE_VERSION, the pinned one otherwise.
func TestWantedClaudeVersion(t *testing.T) {
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	if v := wantedClaudeVersion(getenv); v != PinnedClaudeVersion {
		t.Errorf("unset: %q, want the pinned %s", v, PinnedClaudeVersion)
	}
	env[ClaudeVersionEnv] = " 2.1.330 "
	if v := wantedClaudeVersion(getenv); v != "2.1.330" {
		t.Errorf("set: %q, want 2.1.330", v)
	}
}

// claudePath picks the install of the version asked for: the pinned one in
// <deps>/node_modules, any other in <deps>/claude-<version>; and it says
// clearly when that version is absent, is another version, or is malformed.
func TestClaudePathPicksVersion(t *testing.T) {
	deps := t.TempDir()
	t.Setenv("CCPROXY_DEPS", deps)
	pinned := fakeClaudeInstall(t, deps, "", PinnedClaudeVersion)
	newer := fakeClaudeInstall(t, deps, "claude-2.1.330", "2.1.330")
	fakeClaudeInstall(t, deps, "claude-2.1.331", "2.1.33") // a prefix of the version asked for
	override := fakeClaudeInstall(t, t.TempDir(), "", "2.1.330")

	for _, tc := range []struct {
		version, override, want, err string
	}{
		{PinnedClaudeVersion, "", pinned, ""},
		{"2.1.330", "", newer, ""},
		{"2.1.330", override, override, ""},
		{"2.1.332", "", "", "Claude Code 2.1.332 is not installed"},
		{"2.1.332", "", "", "npm install --prefix " + filepath.Join(deps, "claude-2.1.332") + " @anthropic-ai/claude-code@2.1.332"},
		{"2.1.331", "", "", `is version "2.1.33 (Claude Code)", the tests asked for 2.1.331`},
		{PinnedClaudeVersion, override, "", `is version "2.1.330 (Claude Code)", the tests asked for ` + PinnedClaudeVersion},
		{"latest", "", "", `$CCPROXY_CLAUDE_VERSION="latest" is not a Claude Code release version`},
		{"2.1.330; rm", "", "", "is not a Claude Code release version"},
	} {
		got, err := claudePath(tc.version, tc.override)
		if tc.err == "" {
			if err != nil || got != tc.want {
				t.Errorf("claudePath(%q, %q) = %q, %v; want %q", tc.version, tc.override, got, err, tc.want)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("claudePath(%q, %q) = %q, %v; want an error containing %q", tc.version, tc.override, got, err, tc.err)
		}
	}
}

// TestClaudeHelper is run as a child process by TestClaudeInCI: it calls
// Claude with the environment the parent gave it and prints the path.
func TestClaudeHelper(t *testing.T) {
	if os.Getenv("CCPROXY_TESTKIT_CLAUDE_HELPER") != "1" {
		t.Skip("run by TestClaudeInCI")
	}
	t.Run("sub", func(t *testing.T) {
		t.Logf("claude=%s", Claude(t))
	})
}

// Claude, as a test sees it from the environment test.sh sets: the version
// from $CCPROXY_CLAUDE_VERSION, a failure in CI (a skip elsewhere) when that
// version is not installed, and the test recorded in $CCPROXY_CLAUDE_TESTS_LOG
// under its package directory and top-level name.
func TestClaudeInCI(t *testing.T) {
	deps := t.TempDir()
	fakeClaudeInstall(t, deps, "", PinnedClaudeVersion)
	newer := fakeClaudeInstall(t, deps, "claude-2.1.330", "2.1.330")
	log := filepath.Join(t.TempDir(), "claude-tests")
	run := func(version, ci string) (string, error) {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestClaudeHelper$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), "CCPROXY_TESTKIT_CLAUDE_HELPER=1", "CCPROXY_DEPS="+deps,
			"CI="+ci, ClaudeVersionEnv+"="+version, ClaudeTestsLogEnv+"="+log, "CCPROXY_TEST_CLAUDE=")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return out.String(), err
	}

	out, err := run("2.1.330", "true")
	if err != nil || !strings.Contains(out, "claude="+newer) {
		t.Fatalf("version 2.1.330 installed: %v\n%s", err, out)
	}
	wd, _ := os.Getwd()
	if b, err := os.ReadFile(log); err != nil || string(b) != wd+"\tTestClaudeHelper\n" {
		t.Errorf("tests log = %q, %v; want %q", b, err, wd+"\tTestClaudeHelper\n")
	}

	out, err = run("2.1.331", "true")
	var exit *exec.ExitError
	if !errors.As(err, &exit) || !strings.Contains(out, "--- FAIL: TestClaudeHelper/sub") ||
		!strings.Contains(out, "Claude Code CLI 2.1.331 not available: Claude Code 2.1.331 is not installed") {
		t.Errorf("2.1.331 missing in CI: want the test to fail saying so; got %v\n%s", err, out)
	}
	out, err = run("2.1.331", "")
	if err != nil || !strings.Contains(out, "--- SKIP: TestClaudeHelper/sub") {
		t.Errorf("2.1.331 missing outside CI: want a skip; got %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(log); strings.Count(string(b), "\n") != 1 {
		t.Errorf("a test without the CLI was recorded as using it: %q", b)
	}
}
