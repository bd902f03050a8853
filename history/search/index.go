package search

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/ccproxy/ccproxy/internal/privdir"
)

// schemaVersion is the index's PRAGMA user_version: an index of another
// version is rebuilt.
const schemaVersion = 1

const schemaSQL = `
CREATE TABLE files(
	id INTEGER PRIMARY KEY,
	path TEXT NOT NULL UNIQUE,
	ino INTEGER NOT NULL, size INTEGER NOT NULL, mtime INTEGER NOT NULL,
	off INTEGER NOT NULL, head INTEGER NOT NULL, headlen INTEGER NOT NULL,
	session TEXT NOT NULL, project TEXT NOT NULL, prompt TEXT NOT NULL, summary TEXT NOT NULL,
	last TEXT NOT NULL);
CREATE TABLE docs(
	id INTEGER PRIMARY KEY,
	file INTEGER NOT NULL,
	ts TEXT NOT NULL, role TEXT NOT NULL, uuid TEXT NOT NULL);
CREATE INDEX docs_file ON docs(file);
CREATE VIRTUAL TABLE fts USING fts5(text, tokenize = 'unicode61 remove_diacritics 2');
PRAGMA user_version = 1;
`

// Defaults of Options.
const (
	DefaultBatchBytes = 4 << 20  // text bytes indexed per transaction
	DefaultMaxLine    = 16 << 20 // a longer line (an image, a request blob) is skipped unread
)

// ErrBadQuery is returned for a query with no word in it.
var ErrBadQuery = errors.New("search: the query has no word (letters or digits)")

// Options configure Open.
type Options struct {
	// Root is the projects directory (history.Store's Root): its
	// <folder>/<id>.jsonl files are indexed, with history's rules (no
	// symlink followed, other users' files skipped).
	Root string
	// Dir is where the index file goes (made, private: 0700, not through
	// a symlink). One file per projects directory:
	// history-<hash of the root>.db (and SQLite's -wal, -shm).
	Dir string
	// Scrub masks secrets in text before it is indexed, and again in a
	// snippet before it is returned; nil masks nothing.
	Scrub func(string) string
	// BatchBytes bounds the text of one transaction (DefaultBatchBytes);
	// MaxLine the bytes of a line read (DefaultMaxLine).
	BatchBytes int
	MaxLine    int
	Logger     *slog.Logger
}

// Index is the full-text index of one projects directory's sessions. Its
// methods are safe for concurrent use: one mutex serializes them (a search
// first brings the index up to date, then queries it).
type Index struct {
	o    Options
	path string

	mu    sync.Mutex
	db    *sql.DB               // nil after Close
	files map[string]*fileState // session file path -> what is indexed of it
	byID  map[int64]*fileState  // the same by file id
	uid   int                   // this process's user: others' files are skipped
	stats Stats
}

// Stats say what the last update did.
type Stats struct {
	Files     int   // session files in the index
	Read      int64 // bytes read by the last update
	Reindexed int   // files read from their start by the last update
	Grown     int   // files read from where the last read stopped
	Removed   int   // files dropped by the last update
	Docs      int64 // parts indexed by the last update
}

// Open opens (or makes) the index of o.Store's projects directory in o.Dir.
// An index that cannot be read, or of another version, is made anew (with
// a log line).
func Open(o Options) (*Index, error) {
	if o.Root == "" || o.Dir == "" {
		return nil, errors.New("search: Open needs a Root and a Dir")
	}
	if o.BatchBytes <= 0 {
		o.BatchBytes = DefaultBatchBytes
	}
	if o.MaxLine <= 0 {
		o.MaxLine = DefaultMaxLine
	}
	if o.Scrub == nil {
		o.Scrub = func(s string) string { return s }
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	// The directory is ccproxy's own (in its cache directory): made
	// private if it is not; a symlink is refused by Base, never followed.
	if fi, err := os.Lstat(o.Dir); err == nil && fi.IsDir() {
		if err := os.Chmod(o.Dir, 0o700); err != nil {
			return nil, fmt.Errorf("search: index directory: %w", err)
		}
	}
	if err := privdir.Base(o.Dir); err != nil {
		return nil, fmt.Errorf("search: index directory: %w", err)
	}
	sum := sha256.Sum256([]byte(o.Root))
	x := &Index{o: o, uid: os.Getuid(), path: filepath.Join(o.Dir, "history-"+hex.EncodeToString(sum[:8])+".db")}
	if err := x.open(); err != nil {
		x.o.Logger.Warn("the history search index cannot be read: making it anew", "path", x.path, "err", err)
		if err := x.recreate(); err != nil {
			return nil, err
		}
	}
	return x, nil
}

// Path returns the index file's path.
func (x *Index) Path() string { return x.path }

// open opens x.path, checks it and loads the files table; x.db is set
// only when all is well.
func (x *Index) open() error {
	if fi, err := os.Lstat(x.path); err == nil && !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", x.path)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	db, err := sql.Open("sqlite", "file:"+filepath.ToSlash(x.path)+
		"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=cache_size(-8000)&_pragma=secure_delete(ON)")
	if err != nil {
		return err
	}
	db.SetMaxOpenConns(1) // one at a time anyway (Index.mu); bounds the page cache
	if err := x.check(db); err != nil {
		db.Close()
		return err
	}
	files, err := loadFiles(db)
	if err != nil {
		db.Close()
		return err
	}
	if err := os.Chmod(x.path, 0o600); err != nil {
		db.Close()
		return err
	}
	x.db, x.files, x.byID = db, files, map[int64]*fileState{}
	for _, f := range files {
		x.byID[f.id] = f
	}
	return nil
}

// check makes the schema in a new file, or checks an existing one.
func (x *Index) check(db *sql.DB) error {
	var v int
	if err := db.QueryRow(`PRAGMA user_version`).Scan(&v); err != nil {
		return err
	}
	if v == 0 {
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM sqlite_master`).Scan(&n); err != nil {
			return err
		}
		if n != 0 {
			return errors.New("not an index of this program")
		}
		_, err := db.Exec(schemaSQL)
		return err
	}
	if v != schemaVersion {
		return fmt.Errorf("index version %d, want %d", v, schemaVersion)
	}
	var ok string
	if err := db.QueryRow(`PRAGMA quick_check`).Scan(&ok); err != nil {
		return err
	}
	if ok != "ok" {
		return fmt.Errorf("quick_check: %s", ok)
	}
	return nil
}

// recreate removes the index file and makes it anew. x.mu is held (or x
// is not yet shared).
func (x *Index) recreate() error {
	if x.db != nil {
		x.db.Close()
		x.db = nil
	}
	for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
		if err := os.Remove(x.path + suffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("search: removing the unreadable index: %w", err)
		}
	}
	if err := x.open(); err != nil {
		return fmt.Errorf("search: making the index %s: %w", x.path, err)
	}
	return nil
}

// corrupt reports whether err says the database file is damaged.
func corrupt(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
			return true
		}
	}
	return false
}

// Close closes the index file. It may be called more than once.
func (x *Index) Close() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.db == nil {
		return nil
	}
	err := x.db.Close()
	x.db = nil
	return err
}

// LastUpdate returns what the last update did.
func (x *Index) LastUpdate() Stats {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.stats
}

var errClosed = errors.New("search: the index is closed")

// Update brings the index up to date with the session files (as Search
// does first).
func (x *Index) Update(ctx context.Context) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.updateLocked(ctx)
}

func (x *Index) updateLocked(ctx context.Context) error {
	if x.db == nil {
		return errClosed
	}
	err := x.update(ctx)
	if corrupt(err) {
		x.o.Logger.Warn("the history search index is corrupt: rebuilding it", "path", x.path, "err", err)
		if err := x.recreate(); err != nil {
			return err
		}
		err = x.update(ctx)
	}
	return err
}

// queryWords splits a query into its words (runs of letters and digits),
// lower case.
func queryWords(q string) []string {
	return strings.FieldsFunc(strings.ToLower(q), func(r rune) bool { return !isWordRune(r) })
}
