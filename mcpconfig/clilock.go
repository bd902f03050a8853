package mcpconfig

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"
)

// The Claude Code CLI's lock of ~/.claude.json (2.1.329 and 2.1.332,
// measured with strace, docs/CLI-NOTES.md): every save of the file after
// the first is mkdir("<file>.lock"), read the file, write a temporary file,
// rename it over the file, rmdir("<file>.lock") — the lock of the npm
// package proper-lockfile, with its defaults: a lock folder whose mtime is
// more than 10 s old is stale and may be taken over (a live holder touches
// it every 5 s). The very first save, when there is no file, is not locked:
// it creates the file with link(2), which fails when the file exists, and
// the CLI then saves again, locked, onto it.
//
// A claude re-reads the file under that lock, so a write it does not see
// is lost only when it lands between that read and the rename. ccproxy's
// writes of ~/.claude.json take the same lock (lockCLIConfig), inside its
// own (settingsMu, lockFile), so they land before the CLI's read or after
// its rename. Nothing ccproxy does holds it for more than one
// read-modify-write: never around a control request (a claude answering
// mcp_toggle takes it itself).

const (
	// cliLockStale is proper-lockfile's default stale time, which the CLI
	// keeps for ~/.claude.json: a lock folder not touched for that long
	// belongs to a dead holder.
	cliLockStale = 10 * time.Second
	// cliLockWait is how long a write waits for a held lock (the CLI holds
	// it for milliseconds; a live holder keeps it fresh, so a lock held
	// longer than this is a claude that is stuck).
	cliLockWait = 30 * time.Second
	// cliLockPoll is the interval between attempts while it is held.
	cliLockPoll = 10 * time.Millisecond
)

// cliLockHeld, when set (tests), is called once per lockCLIConfig call
// that finds the lock held by someone else, before it waits.
var cliLockHeld func(lockDir string)

// cliLockPath is the CLI's lock folder for path: "<path>.lock".
func cliLockPath(path string) string { return path + ".lock" }

// lockCLIConfig takes the CLI's lock of path (~/.claude.json) as
// proper-lockfile does: it creates the folder "<path>.lock", waiting while
// another process holds it, taking over one left stale (untouched for
// cliLockStale), and failing after cliLockWait with an error naming the
// lock. release removes the folder.
func lockCLIConfig(path string) (release func(), err error) {
	dir := cliLockPath(path)
	deadline := time.Now().Add(cliLockWait)
	told := false
	for {
		err := os.Mkdir(dir, 0o777)
		if err == nil {
			return func() { _ = os.Remove(dir) }, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("lock %s (the Claude Code CLI's lock): %w", path, err)
		}
		st, serr := os.Stat(dir)
		switch {
		case errors.Is(serr, fs.ErrNotExist):
			continue // released meanwhile
		case serr != nil:
			return nil, fmt.Errorf("lock %s (the Claude Code CLI's lock): %w", path, serr)
		case time.Since(st.ModTime()) > cliLockStale:
			// Stale: its holder died without removing it. Take it over as
			// proper-lockfile does (remove, then create again).
			if rerr := os.Remove(dir); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
				return nil, fmt.Errorf("lock %s: remove the stale lock %s: %w", path, dir, rerr)
			}
			continue
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("lock %s: %s has been held by another process (a claude saving the file) for more than %s; try again, or remove that folder if no claude is running", path, dir, cliLockWait)
		}
		if !told && cliLockHeld != nil {
			told = true
			cliLockHeld(dir)
		}
		time.Sleep(cliLockPoll)
	}
}
