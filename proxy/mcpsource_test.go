package proxy

import (
	"testing"

	"github.com/ccproxy/ccproxy/proxy/mcphub"
	"github.com/ccproxy/ccproxy/proxy/mcphub/mcphubtest"
)

// mcpEnv is a home and a project directory for package mcpconfig.
type mcpEnv = mcphubtest.Env

func newMCPEnv(t testing.TB) *mcpEnv { return mcphubtest.NewEnv(t) }

func waitChange(t testing.TB, src mcphub.Source, pred func(*mcphub.Config) bool) *mcphub.Config {
	t.Helper()
	return mcphubtest.WaitChange(t, src, pred, waitTimeout)
}
