package claudedirs

import "testing"

// The expected names are the CLI's: measured with Claude Code 2.1.329 run
// in each directory (docs/CLI-NOTES.md).
func TestProjectFolder(t *testing.T) {
	for dir, want := range map[string]string{
		"/home/u/my proj.v2": "-home-u-my-proj-v2",
		`C:\Users\u\app`:     "C--Users-u-app",
		"/tmp/é_x😀y":         "-tmp---x--y", // measured: "é" one "-", the emoji two
	} {
		if got := ProjectFolder(dir); got != want {
			t.Errorf("ProjectFolder(%q) = %q, want %q", dir, got, want)
		}
	}
}
