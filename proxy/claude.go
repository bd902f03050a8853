package proxy

import "github.com/ccproxy/ccproxy/proxy/claudecli"

// Locating the CLI lives in package claudecli; these names remain for
// callers of package proxy.
const (
	MinClaudeVersion = claudecli.MinClaudeVersion
	ClaudeEnv        = claudecli.ClaudeEnv
)

// Claude is a located Claude Code CLI.
type Claude = claudecli.Claude

// ErrClaudeUnavailable is wrapped by every error of FindClaude.
var ErrClaudeUnavailable = claudecli.ErrClaudeUnavailable

// FindClaude is claudecli.FindClaude.
var FindClaude = claudecli.FindClaude

// findClaude is claudecli.FindClaudePrefixed.
var findClaude = claudecli.FindClaudePrefixed
