package mcpconfig

import (
	"fmt"
	"os"
	"sync"

	"github.com/ccproxy/ccproxy/internal/privdir"
)

// The private --mcp-config files of a ccproxy process live in a
// privdir.Run of its own under <os.TempDir()>/ccproxy-<uid> (a
// privdir.Base): 0700, locked while the process lives, removed by the next
// ccproxy's RemoveStale once the process is gone, even after kill -9, and
// by ReleasePrivateDir at a clean shutdown once it holds no file.
var privDir struct {
	mu    sync.Mutex // guards run and swept; held while a file is created in run
	run   *privdir.Run
	swept bool // RemoveStale ran once in this process
}

// PrivateDir returns this process's private directory for --mcp-config
// files, creating it on first use (and then removing what killed ccproxy
// processes left, see RemoveStale), and again if it was removed meanwhile
// (a cleaner of old files in /tmp, or ReleasePrivateDir).
// MCPConfigFile("") writes there (with createPrivate).
func PrivateDir() (string, error) {
	privDir.mu.Lock()
	defer privDir.mu.Unlock()
	return privateDirLocked()
}

func privateDirLocked() (string, error) {
	if privDir.run != nil {
		if privDir.run.Present() {
			return privDir.run.Dir, nil
		}
		privDir.run.Release()
		privDir.run = nil
	}
	base, err := privateBase()
	if err != nil {
		return "", err
	}
	if !privDir.swept {
		privDir.swept = true
		_, _ = privdir.RemoveStale(base)
	}
	run, err := privdir.NewRun(base)
	if err != nil {
		return "", fmt.Errorf("mcpconfig: %w", err)
	}
	privDir.run = run
	return run.Dir, nil
}

// createPrivate creates a new file in this process's private directory,
// as os.CreateTemp does with pattern. The directory's lock is held
// meanwhile, so that ReleasePrivateDir never removes it between the
// directory being found and the file being made.
func createPrivate(pattern string) (*os.File, error) {
	privDir.mu.Lock()
	defer privDir.mu.Unlock()
	dir, err := privateDirLocked()
	if err != nil {
		return nil, err
	}
	return os.CreateTemp(dir, pattern)
}

// RemoveStale removes the private directories (and the --mcp-config files
// in them) of ccproxy processes that are gone, never those of a live one,
// and returns the directories it removed. Every start of ccproxy serve and
// acp calls it, with --demo too: it makes no directory (privdir.Sweep).
func RemoveStale() ([]string, error) {
	removed, err := privdir.Sweep(privdir.UserTemp("ccproxy"))
	if err != nil {
		return removed, fmt.Errorf("mcpconfig: %w", err)
	}
	return removed, nil
}

// ReleasePrivateDir removes this process's private directory if it holds
// no file any more, and reports whether it did; a later PrivateDir makes a
// new one. ccproxy serve and acp call it at a clean shutdown, after the
// MCP configuration source is closed (its files removed), so that no empty
// directory is left behind. A directory that still holds files is kept,
// locked: whoever made them may still use them.
func ReleasePrivateDir() (bool, error) {
	privDir.mu.Lock()
	defer privDir.mu.Unlock()
	if privDir.run == nil {
		return false, nil
	}
	removed, err := privDir.run.RemoveIfEmpty()
	if removed {
		privDir.run = nil
	}
	if err != nil {
		return false, fmt.Errorf("mcpconfig: %w", err)
	}
	return removed, nil
}

// privateBase returns <os.TempDir()>/ccproxy-<uid>, made private if
// missing, after checking that it is a directory (not a symlink) of this
// user that nobody else may enter.
func privateBase() (string, error) {
	base := privdir.UserTemp("ccproxy")
	if err := privdir.Base(base); err != nil {
		return "", fmt.Errorf("mcpconfig: %w", err)
	}
	return base, nil
}
