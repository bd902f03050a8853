package eventlog

import (
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"github.com/ccproxy/ccproxy/internal/privdir"
)

// Spool is this process's private directory for the replay logs' spill
// files: a privdir.Run under the root (proxy: Options.SpoolDir) (a privdir.Base), locked while the
// process lives. At start, the Run directories of ccproxy processes that
// died (killed before they could clean up) are removed; a live ccproxy's
// directory is never touched. Close (proxy: when Serve returns) removes
// its own directory.
//
// The directory is made on first use; it is safe for concurrent use.
type Spool struct {
	root string
	log  *slog.Logger

	once sync.Once
	run  *privdir.Run // nil when it could not be made
}

// DefaultSpoolDir is where spill files go when Options.SpoolDir is empty:
// os.UserCacheDir()/ccproxy/spool, or a directory under os.TempDir()
// named for the user when there is no cache directory.
func DefaultSpoolDir() string {
	if d, err := os.UserCacheDir(); err == nil && d != "" {
		return filepath.Join(d, "ccproxy", "spool")
	}
	return filepath.Join(privdir.UserTemp("ccproxy"), "spool")
}

func NewSpool(root string, log *slog.Logger) *Spool { return &Spool{root: root, log: log} }

// Dir returns the process's spool directory, making it (and removing the
// stale ones) on first use; "" when it cannot be made (the reason is
// logged once): the logs then keep only their memory tail.
func (sp *Spool) Dir() string {
	sp.once.Do(func() {
		if err := sp.open(); err != nil {
			sp.log.Warn("no spool directory: replay logs keep only their memory part", "dir", sp.root, "err", err)
		}
	})
	if sp.run == nil {
		return ""
	}
	return sp.run.Dir
}

func (sp *Spool) open() error {
	// The spool's root is ccproxy's own (under the user's cache directory
	// by default): made private if it is not, unlike a shared temporary
	// directory, where Base refuses what it did not make itself.
	if err := os.MkdirAll(sp.root, 0o700); err != nil {
		return err
	}
	// Chmod follows a symlink, which Base then refuses: only a directory
	// itself is made private, never what a symlink points to.
	if info, err := os.Lstat(sp.root); err == nil && info.IsDir() {
		if err := os.Chmod(sp.root, 0o700); err != nil {
			return err
		}
	}
	if err := privdir.Base(sp.root); err != nil {
		return err
	}
	sp.removeStale()
	run, err := privdir.NewRun(sp.root)
	if err != nil {
		return err
	}
	sp.run = run
	return nil
}

// removeStale removes the directories of ccproxy processes that are gone:
// those whose lock nobody holds.
func (sp *Spool) removeStale() {
	removed, err := privdir.RemoveStale(sp.root)
	for _, dir := range removed {
		sp.log.Info("removed the spill files of a ccproxy that is gone", "dir", dir)
	}
	if err != nil {
		sp.log.Warn("removing the spill files of stopped ccproxy processes", "err", err)
	}
}

// Close removes the process's directory.
func (sp *Spool) Close() {
	sp.once.Do(func() {}) // never make it now
	if sp.run != nil {
		if err := sp.run.Remove(); err != nil {
			sp.log.Warn("removing the spill files; the next start removes what is left", "dir", sp.run.Dir, "err", err)
		}
	}
}
