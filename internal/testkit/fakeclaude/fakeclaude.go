package fakeclaude

import (
	"fmt"
	"os"
	"testing"

	"github.com/ccproxy/ccproxy/internal/testkit"
)

// Env is the environment variable that makes a test binary run as the fake:
// Run sees Env=1 and runs Main instead of the tests.
const Env = "CCPROXY_FAKE_CLAUDE"

// Version is what the fake reports for --version (and in system/init)
// unless FAKE_VERSION says otherwise: the pinned CLI version the suite runs
// against. OldVersion is the too-old version the Old script reports.
const (
	Version    = testkit.PinnedClaudeVersion
	OldVersion = "2.0.14"
)

// Scripts are the executables Run makes, each one the test binary running
// as the fake.
type Scripts struct {
	Claude string // a fake claude
	Old    string // a fake claude whose --version is OldVersion
}

// Run is a test package's TestMain. In a process started by one of the
// scripts (Env=1 in its environment) it runs Main with the process's
// arguments and exits with its status. Otherwise it writes the scripts to a
// fresh temporary directory, calls ready with their paths, runs the tests,
// removes the directory and exits with the tests' status. It never returns.
func Run(m *testing.M, ready func(Scripts)) {
	if os.Getenv(Env) == "1" {
		os.Exit(Main(os.Args[1:]))
	}
	dir, err := os.MkdirTemp("", "ccproxy-fakeclaude")
	if err != nil {
		fmt.Fprintln(os.Stderr, "making the fake claude:", err)
		os.Exit(1)
	}
	var s Scripts
	s.Claude, err = testkit.SelfCommand(dir, "claude", Env+"=1")
	if err == nil {
		s.Old, err = testkit.SelfCommand(dir, "claude-old", Env+"=1", "FAKE_VERSION="+OldVersion)
	}
	if err != nil {
		os.RemoveAll(dir)
		fmt.Fprintln(os.Stderr, "making the fake claude:", err)
		os.Exit(1)
	}
	if ready != nil {
		ready(s)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
