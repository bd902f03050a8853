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
