package mcpconfig

import (
	"fmt"
	"sync"

	"github.com/ccproxy/ccproxy/internal/privdir"
)

// The private --mcp-config files of a ccproxy process live in a
// privdir.Run of its own under <os.TempDir()>/ccproxy-<uid> (a
// privdir.Base): 0700, locked while the process lives, removed by the next
// ccproxy's RemoveStale once the process is gone, even after kill -9.
var privDir struct {
	mu    sync.Mutex
	run   *privdir.Run
	swept bool // RemoveStale ran once in this process
}

// PrivateDir returns this process's private directory for --mcp-config
// files, creating it on first use (and then removing what killed ccproxy
// processes left, see RemoveStale), and again if it was removed meanwhile
// (a cleaner of old files in /tmp). MCPConfigFile("") writes there.
func PrivateDir() (string, error) {
	privDir.mu.Lock()
	defer privDir.mu.Unlock()
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

// RemoveStale removes the private directories (and the --mcp-config files
// in them) of ccproxy processes that are gone, never those of a live one,
// and returns the directories it removed. ccproxy serve calls it at start.
func RemoveStale() ([]string, error) {
	base, err := privateBase()
	if err != nil {
		return nil, err
	}
	return privdir.RemoveStale(base)
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
