// Package claudedirs knows how the Claude Code CLI names what it keeps on
// disk, for the packages that read it (history) and the test kit that
// captures it. It has no state and starts no goroutine.
package claudedirs

// ProjectFolder is the CLI's folder name under ~/.claude/projects for a
// project directory: every character but an ASCII letter or digit becomes
// "-" (measured: docs/CLI-NOTES.md, "Session files (history)").
func ProjectFolder(dir string) string {
	b := []byte(dir)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			b[i] = '-'
		}
	}
	return string(b)
}
