package acp_test

// The test binary doubles as a fake Claude Code CLI (see
// internal/testkit/fakeclaude) for the tests that need claude to misbehave.

import (
	"testing"

	"github.com/ccproxy/ccproxy/internal/testkit/fakeclaude"
)

// fakeClaudePath is the script that runs the fake (set by TestMain).
var fakeClaudePath string

func TestMain(m *testing.M) {
	fakeclaude.Run(m, func(s fakeclaude.Scripts) { fakeClaudePath = s.Claude })
}
