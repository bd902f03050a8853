package mcpconfig

import "testing"

// For the external tests (package mcpconfig_test): the setups of
// testdata/mcpconfig/setups, copied into a temporary directory.

type Fixture = fixture

func NewFixture(t testing.TB, name string) *Fixture { return newFixture(t, name) }

func (f *fixture) Root() string                            { return f.root }
func (f *fixture) Opts() Options                           { return f.opts }
func (f *fixture) Env() map[string]string                  { return f.env }
func (f *fixture) Path(rel string) string                  { return f.path(rel) }
func (f *fixture) Write(t testing.TB, rel, content string) { f.write(t, rel, content) }

// Active returns the servers ccproxy loads, sorted by name.
func (c *Config) Active() []Server {
	var out []Server
	for _, s := range c.Servers {
		if s.Active {
			out = append(out, s)
		}
	}
	return out
}

// CLISource is the "source" the CLI reports for this server in system/init
// and mcp_status ("dynamic" for ccproxy's extra files).
func (s CLIServer) CLISource() string {
	if s.Scope == ScopeExtra {
		return "dynamic"
	}
	return string(s.Scope)
}

// SetCLILockHeld has f called when a write finds the CLI's lock of
// ~/.claude.json held (lockCLIConfig); restore puts the previous hook back.
func SetCLILockHeld(f func(lockDir string)) (restore func()) {
	old := cliLockHeld
	cliLockHeld = f
	return func() { cliLockHeld = old }
}
