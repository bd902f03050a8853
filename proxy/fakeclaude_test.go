package proxy

// The test binary doubles as a fake Claude Code CLI: see
// internal/testkit/fakeclaude for what it does, its turn words and its
// FAKE_* environment variables.

import (
	"testing"

	"github.com/ccproxy/ccproxy/internal/testkit/fakeclaude"
)

// fakeClaudePath is the script that runs the fake (set by TestMain);
// oldClaudePath runs a fake reporting a version that is too old.
var fakeClaudePath, oldClaudePath string

func TestMain(m *testing.M) {
	fakeclaude.Run(m, func(s fakeclaude.Scripts) { fakeClaudePath, oldClaudePath = s.Claude, s.Old })
}
