package mcphub

import (
	"testing"
	"time"

	"github.com/ccproxy/ccproxy/proxy/mcphub/mcphubtest"
)

const waitTimeout = 60 * time.Second

// mcpEnv is a home and a project directory for package mcpconfig.
type mcpEnv = mcphubtest.Env

func newMCPEnv(t testing.TB) *mcpEnv { return mcphubtest.NewEnv(t) }

func waitChange(t testing.TB, src Source, pred func(*Config) bool) *Config {
	t.Helper()
	return mcphubtest.WaitChange(t, src, pred, waitTimeout)
}

// resolvedSource is the configuration files of an mcpEnv resolved at once
// (no Watcher, no Spawn): user servers (~/.claude.json) are active unless
// disabled; project servers (.mcp.json, an untrusted workspace) await
// approval.
type resolvedSource struct {
	t   testing.TB
	env *mcpEnv
	cur *Config
}

func newResolvedSource(t testing.TB, user, project map[string]any, disabled ...string) *resolvedSource {
	t.Helper()
	s := &resolvedSource{t: t, env: newMCPEnv(t)}
	s.set(user, project, disabled...)
	return s
}

// set rewrites the configuration files and resolves them.
func (s *resolvedSource) set(user, project map[string]any, disabled ...string) {
	s.t.Helper()
	s.cur = Convert(s.env.Resolve(s.t, user, project, disabled...))
}

func (s *resolvedSource) Current() *Config { return s.cur }
