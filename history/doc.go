// Package history reads the session files the Claude Code CLI keeps under
// ~/.claude/projects.
package history
