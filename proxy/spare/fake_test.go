package spare

// The test binary doubles as a fake Claude Code CLI (internal/testkit/fakeclaude),
// a spare that answers claim_session as the real one does.

import (
	"testing"

	"github.com/ccproxy/ccproxy/internal/testkit/fakeclaude"
)

var fakeClaudePath string

func TestMain(m *testing.M) {
	fakeclaude.Run(m, func(s fakeclaude.Scripts) { fakeClaudePath = s.Claude })
}
