package privdir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// A Run directory is <base>/run-<pid>-<random>, mode 0700 (owner-only ACL
// on Windows). While its process lives it holds an exclusive lock on
// <dir>/lock; the kernel drops the lock when the process dies, even by
// SIGKILL. RemoveStale removes the directories whose lock is free: what a
// killed process left. A directory is created with its lock already held
// (the lock file is locked under a temporary name, then renamed), so a
// directory without a lock file is one being created, or left by a
// process that died in between: it is removed only when older than
// staleUnlocked.
const (
	runPrefix     = "run-"
	lockName      = "lock"
	staleUnlocked = time.Minute
)

// Base makes dir (and its parents) if missing, and checks that dir is a
// directory, not a symlink, of this user that nobody else may enter (mode
// 0700; on Windows an ACL for this user alone is set). It is where Run
// directories go.
func Base(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("privdir: creating the private directory %s: %w", dir, err)
	}
	if err := checkPrivate(dir); err != nil {
		return err
	}
	if err := OwnerOnly(dir); err != nil {
		return fmt.Errorf("privdir: restricting %s to its owner: %w", dir, err)
	}
	return nil
}

// Run is a directory of this process's own under a Base, locked while the
// process lives.
type Run struct {
	Dir  string
	lock *os.File
}

// NewRun makes a Run directory in base (see Base), with its lock held.
func NewRun(base string) (*Run, error) {
	dir, err := os.MkdirTemp(base, runPrefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return nil, fmt.Errorf("privdir: creating a private directory in %s: %w", base, err)
	}
	if err := os.Chmod(dir, 0o700); err != nil { // MkdirTemp gives 0700; make sure
		os.RemoveAll(dir)
		return nil, fmt.Errorf("privdir: %w", err)
	}
	tmp := filepath.Join(dir, lockName+".tmp")
	f, err := createLockFile(tmp)
	if err == nil {
		err = Lock(f, true)
		if err == nil {
			err = os.Rename(tmp, filepath.Join(dir, lockName))
		}
		if err != nil {
			f.Close()
		}
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("privdir: locking the private directory %s: %w", dir, err)
	}
	return &Run{Dir: dir, lock: f}, nil
}

// Present reports whether the directory is still there with its lock file
// (a cleaner of old files in /tmp may have removed it meanwhile).
func (r *Run) Present() bool {
	_, err := os.Stat(filepath.Join(r.Dir, lockName))
	return err == nil
}

// Remove releases the lock and removes the directory and what it holds.
// The lock goes first: Windows does not delete a file that is open. A
// RemoveStale running meanwhile may remove the directory too, which is as
// well.
func (r *Run) Remove() error {
	r.lock.Close()
	return os.RemoveAll(r.Dir)
}

// Release releases the lock without removing the directory (it is then
// stale: the next RemoveStale in base removes it).
func (r *Run) Release() { r.lock.Close() }

// RemoveIfEmpty removes the directory, as Remove does, when it holds
// nothing but its lock file, and reports whether it did. A directory that
// still holds files is left locked: its owner may still use them. The
// caller must keep files from being created in it meanwhile.
func (r *Run) RemoveIfEmpty() (bool, error) {
	entries, err := os.ReadDir(r.Dir)
	if err != nil {
		return false, fmt.Errorf("privdir: %w", err)
	}
	for _, e := range entries {
		if e.Name() != lockName {
			return false, nil
		}
	}
	if err := r.Remove(); err != nil {
		return false, fmt.Errorf("privdir: removing %s: %w", r.Dir, err)
	}
	return true, nil
}

// RemoveStale removes the Run directories in base whose lock is free (their
// process is gone), never those of a live process, and returns the
// directories it removed.
func RemoveStale(base string) ([]string, error) {
	entries, err := os.ReadDir(base)
	if err != nil {
		return nil, fmt.Errorf("privdir: reading %s: %w", base, err)
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
			errs = append(errs, fmt.Errorf("privdir: %w", err))
			continue
		default:
			if Lock(f, false) != nil { // held: its process lives
				f.Close()
				continue
			}
		}
		// Locked by us (or never locked): its process is gone, and a run
		// directory is never taken again. The lock file is closed first:
		// Windows does not delete a file that is open.
		if f != nil {
			f.Close()
		}
		if err := os.RemoveAll(dir); err != nil {
			errs = append(errs, fmt.Errorf("privdir: removing a stale private directory: %w", err))
		} else {
			removed = append(removed, dir)
		}
	}
	return removed, errors.Join(errs...)
}

// Sweep is RemoveStale for a start that may never make a Run in base:
// nothing is created, a missing base holds nothing to remove, and one that
// is not private (Base's check) is left alone, with an error. Every start
// of a process that keeps Runs in base calls it (or RemoveStale), whether
// or not it makes one, so that what a killed predecessor left goes.
func Sweep(base string) ([]string, error) {
	if _, err := os.Lstat(base); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err := checkPrivate(base); err != nil {
		return nil, err
	}
	return RemoveStale(base)
}

// UserTemp returns <temp dir>/<name>-<uid>: a per-user name under the
// shared temporary directory, for a Base. On Windows, whose temporary
// directory is the user's own and where there are no uids, it is
// <temp dir>/<name>.
func UserTemp(name string) string {
	if uid := os.Getuid(); uid >= 0 {
		name += "-" + strconv.Itoa(uid)
	}
	return filepath.Join(os.TempDir(), name)
}
