package proxy

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
)

// spool is this process's private directory for the replay logs' spill
// files: <SpoolDir>/<pid>, mode 0700, holding a lock file that stays
// locked (flock) while the process lives. At start, subdirectories of
// SpoolDir whose lock is free belong to a ccproxy that died (killed
// before it could clean up) and are removed; a live ccproxy's directory
// is never touched. Serve removes its own directory when it returns.
//
// The directory is made on first use; it is safe for concurrent use.
type spool struct {
	root string
	log  *slog.Logger

	once sync.Once
	dir  string // "" when it could not be made
	lock *os.File
}

// DefaultSpoolDir is where spill files go when Options.SpoolDir is empty:
// os.UserCacheDir()/ccproxy/spool, or a directory under os.TempDir()
// named for the user when there is no cache directory.
func DefaultSpoolDir() string {
	if d, err := os.UserCacheDir(); err == nil && d != "" {
		return filepath.Join(d, "ccproxy", "spool")
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("ccproxy-%d", os.Getuid()), "spool")
}

func newSpool(root string, log *slog.Logger) *spool { return &spool{root: root, log: log} }

// Dir returns the process's spool directory, making it (and removing the
// stale ones) on first use; "" when it cannot be made (the reason is
// logged once): the logs then keep only their memory tail.
func (sp *spool) Dir() string {
	sp.once.Do(func() {
		if err := sp.open(); err != nil {
			sp.log.Warn("no spool directory: replay logs keep only their memory part", "dir", sp.root, "err", err)
		}
	})
	return sp.dir
}

func (sp *spool) open() error {
	if err := os.MkdirAll(sp.root, 0o700); err != nil {
		return err
	}
	if err := os.Chmod(sp.root, 0o700); err != nil {
		return err
	}
	sp.removeStale()
	dir := filepath.Join(sp.root, strconv.Itoa(os.Getpid()))
	// A directory with our pid is a dead process's (pid reuse): its lock
	// was free, removeStale took it. Make ours afresh.
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		return err
	}
	lock, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	if !tryLock(lock) {
		lock.Close()
		return errors.New("cannot lock " + lock.Name())
	}
	sp.dir, sp.lock = dir, lock
	return nil
}

// removeStale removes the directories of ccproxy processes that are gone:
// those whose lock file nobody holds.
func (sp *spool) removeStale() {
	ents, err := os.ReadDir(sp.root)
	if err != nil {
		return
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue // not ours
		}
		dir := filepath.Join(sp.root, e.Name())
		f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_RDWR, 0)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				// Made but not locked yet, or half removed: only remove it
				// when it has no lock file and holds no live process's
				// files; a process locks its directory before writing in it.
				if ents, err := os.ReadDir(dir); err == nil && len(ents) == 0 {
					os.Remove(dir)
				}
			}
			continue
		}
		if tryLock(f) {
			if err := os.RemoveAll(dir); err == nil {
				sp.log.Info("removed the spill files of a ccproxy that is gone", "dir", dir)
			}
		}
		f.Close()
	}
}

// close removes the process's directory.
func (sp *spool) close() {
	sp.once.Do(func() {}) // never make it now
	if sp.dir != "" {
		os.RemoveAll(sp.dir)
		sp.lock.Close()
	}
}
