// Package claudedirs knows how the Claude Code CLI names what it keeps on
// disk, for the packages that read it (history) and the test kit that
// captures it. It has no state and starts no goroutine.
package claudedirs

import "strings"

// ProjectFolder is the CLI's folder name under ~/.claude/projects for a
// project directory: every character but an ASCII letter or digit becomes
// "-", counted as the CLI (JavaScript) counts them, in UTF-16 code units:
// "é" becomes "-", a character beyond the Basic Multilingual Plane (an
// emoji) "--". Measured with 2.1.329 (docs/CLI-NOTES.md, "Session files
// (history)").
func ProjectFolder(dir string) string {
	var b strings.Builder
	b.Grow(len(dir))
	for _, r := range dir {
		switch {
		case r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		case r > 0xFFFF:
			b.WriteString("--")
		default:
			b.WriteByte('-')
		}
	}
	return b.String()
}
