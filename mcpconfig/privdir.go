package mcpconfig

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The private --mcp-config files of a ccproxy process live in a directory
// of its own, <base>/run-<pid>-<random>, mode 0700, where <base> is
// <os.TempDir()>/ccproxy-<uid> (0700, owned by the user; anything else
// there is refused). While the process lives it holds an exclusive lock
// (flock) on <dir>/lock; the kernel drops it when the process dies, even
// by SIGKILL. RemoveStale removes the directories whose lock is free: what
// a killed ccproxy left. A directory is created with its lock already
// held (the lock file is locked under a temporary name, then renamed), so
// a directory without a lock file is one being created, or left by a
// process that died in between: it is removed only when older than
// staleUnlocked.
const (
	runPrefix     = "run-"
	lockName      = "lock"
	staleUnlocked = time.Minute
)

var privDir struct {
	mu    sync.Mutex
	dir   string
	lock  *os.File // held while dir is ours
	swept bool     // RemoveStale ran once in this process
}

// PrivateDir returns this process's private directory for --mcp-config
// files, creating it on first use (and then removing what killed ccproxy
// processes left, see RemoveStale), and again if it was removed meanwhile
// (a cleaner of old files in /tmp). MCPConfigFile("") writes there.
func PrivateDir() (string, error) {
	privDir.mu.Lock()
	defer privDir.mu.Unlock()
	if privDir.dir != "" {
		if _, err := os.Stat(filepath.Join(privDir.dir, lockName)); err == nil {
			return privDir.dir, nil
		}
		privDir.lock.Close()
		privDir.dir, privDir.lock = "", nil
	}
	base, err := privateBase()
	if err != nil {
		return "", err
	}
	if !privDir.swept {
		privDir.swept = true
		_, _ = removeStale(base)
	}
	dir, lock, err := makeRunDir(base)
	if err != nil {
		return "", err
	}
	privDir.dir, privDir.lock = dir, lock
	return dir, nil
}

// RemoveStale removes the private directories (and the --mcp-config files
// in them) of ccproxy processes that are gone, never those of a live one,
// and returns the directories it removed. ccproxy serve calls it at start.
func RemoveStale() ([]string, error) {
	base, err := privateBase()
	if err != nil {
		return nil, err
	}
	return removeStale(base)
}

// privateBase returns <os.TempDir()>/ccproxy-<uid>, created 0700 if
// missing, after checking that it is a directory (not a symlink) of this
// user that nobody else may enter.
func privateBase() (string, error) {
	base := filepath.Join(os.TempDir(), "ccproxy-"+strconv.Itoa(os.Getuid()))
	if err := os.Mkdir(base, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("mcpconfig: creating the private directory %s: %w", base, err)
	}
	if err := checkPrivate(base); err != nil {
		return "", err
	}
	if err := ownerOnly(base); err != nil { // Windows: an ACL for this user alone (0700 elsewhere)
		return "", fmt.Errorf("mcpconfig: restricting %s to its owner: %w", base, err)
	}
	return base, nil
}

func makeRunDir(base string) (string, *os.File, error) {
	dir, err := os.MkdirTemp(base, runPrefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return "", nil, fmt.Errorf("mcpconfig: creating a private directory in %s: %w", base, err)
	}
	if err := os.Chmod(dir, 0o700); err != nil { // MkdirTemp gives 0700; make sure
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("mcpconfig: %w", err)
	}
	tmp := filepath.Join(dir, lockName+".tmp")
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		err = lockFile(f, true)
		if err == nil {
			err = os.Rename(tmp, filepath.Join(dir, lockName))
		}
		if err != nil {
			f.Close()
		}
	}
	if err != nil {
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("mcpconfig: locking the private directory %s: %w", dir, err)
	}
	return dir, f, nil
}

// removeStale removes the run directories in base whose lock is free.
func removeStale(base string) ([]string, error) {
	entries, err := os.ReadDir(base)
	if err != nil {
		return nil, fmt.Errorf("mcpconfig: reading %s: %w", base, err)
	}
	var removed []string
	var errs []error
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), runPrefix) {
			continue
		}
		dir := filepath.Join(base, e.Name())
		f, err := os.OpenFile(filepath.Join(dir, lockName), os.O_RDWR, 0)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			info, err := e.Info()
			if err != nil || time.Since(info.ModTime()) < staleUnlocked {
				continue // being created
			}
		case err != nil:
			errs = append(errs, fmt.Errorf("mcpconfig: %w", err))
			continue
		default:
			if lockFile(f, false) != nil { // held: its process lives
				f.Close()
				continue
			}
		}
		// Locked by us now (or never locked): nobody else uses it.
		if err := os.RemoveAll(dir); err != nil {
			errs = append(errs, fmt.Errorf("mcpconfig: removing a stale private directory: %w", err))
		} else {
			removed = append(removed, dir)
		}
		if f != nil {
			f.Close()
		}
	}
	return removed, errors.Join(errs...)
}
