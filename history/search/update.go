package search

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"errors"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/ccproxy/ccproxy/history"
)

// headBytes is the start of a file whose checksum tells a grown file from
// a replaced one (as package history does).
const headBytes = 4096

// fileState is what the index holds of one session file (a row of files).
type fileState struct {
	id      int64
	ino     uint64
	size    int64
	mtime   int64 // UnixNano
	off     int64 // the end of the last complete line indexed
	head    uint32
	headLen int
	seen    bool // listed by the current update

	// What a hit says of its session (history/list's fields, found as
	// the file is read): id, folder, the first cwd, the first prompt and
	// the last summary (capped), the last timestamp.
	session, folder, project, prompt, summary, last string
}

// title is the session's title as history/list makes it: the CLI's
// summary, else the first prompt.
func (f *fileState) title() string { return cmp.Or(f.summary, f.prompt) }

// updated is the last record's time, else the file's.
func (f *fileState) updated() time.Time {
	if t, err := time.Parse(time.RFC3339Nano, f.last); err == nil {
		return t
	}
	return time.Unix(0, f.mtime)
}

func loadFiles(db *sql.DB) (map[string]*fileState, error) {
	rows, err := db.Query(`SELECT id, path, ino, size, mtime, off, head, headlen, session, project, prompt, summary, last FROM files`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	m := map[string]*fileState{}
	for rows.Next() {
		var f fileState
		var path string
		var ino int64
		if err := rows.Scan(&f.id, &path, &ino, &f.size, &f.mtime, &f.off, &f.head, &f.headLen,
			&f.session, &f.project, &f.prompt, &f.summary, &f.last); err != nil {
			return nil, err
		}
		f.ino = uint64(ino)
		f.folder = filepath.Base(filepath.Dir(path))
		m[path] = &f
	}
	return m, rows.Err()
}

// sessionFile is a <folder>/<id>.jsonl found under the root.
type sessionFile struct{ path, folder, id string }

// walk finds the session files under the root as package history does:
// folders and files that are symlinks are skipped, ids are letters,
// digits, "-" and "_".
func (x *Index) walk() ([]sessionFile, error) {
	folders, err := os.ReadDir(x.o.Root)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var out []sessionFile
	for _, d := range folders {
		if !d.IsDir() || d.Type()&fs.ModeSymlink != 0 {
			continue
		}
		dir := filepath.Join(x.o.Root, d.Name())
		ents, err := os.ReadDir(dir)
		if err != nil {
			x.o.Logger.Warn("history search: cannot read a project folder", "dir", dir, "err", err)
			continue
		}
		for _, e := range ents {
			id, ok := strings.CutSuffix(e.Name(), ".jsonl")
			if !ok || !validID(id) || !e.Type().IsRegular() {
				continue
			}
			out = append(out, sessionFile{filepath.Join(dir, e.Name()), d.Name(), id})
		}
	}
	return out, nil
}

func validID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for _, c := range []byte(id) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// update reads what changed since the last update. x.mu is held.
func (x *Index) update(ctx context.Context) error {
	found, err := x.walk()
	if err != nil {
		return err
	}
	st := Stats{}
	for _, f := range x.files {
		f.seen = false
	}
	for _, sf := range found {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := x.updateFile(ctx, sf, &st); err != nil {
			if corrupt(err) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
				return err
			}
			x.o.Logger.Warn("history search: cannot index a session file", "path", sf.path, "err", err)
		}
	}
	for path, f := range x.files {
		if f.seen {
			continue
		}
		if err := x.dropFile(f.id); err != nil {
			return err
		}
		delete(x.files, path)
		delete(x.byID, f.id)
		st.Removed++
	}
	st.Files = len(x.files)
	x.stats = st
	return nil
}

// dropFile removes a file and its documents.
func (x *Index) dropFile(id int64) error {
	tx, err := x.db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.Exec(`DELETE FROM fts WHERE rowid IN (SELECT id FROM docs WHERE file = ?)`, id); err != nil {
		return err
	}
	if _, err := tx.Exec(`DELETE FROM docs WHERE file = ?`, id); err != nil {
		return err
	}
	if _, err := tx.Exec(`DELETE FROM files WHERE id = ?`, id); err != nil {
		return err
	}
	return tx.Commit()
}

// updateFile indexes what is new in one file and returns its state.
func (x *Index) updateFile(ctx context.Context, sf sessionFile, st *Stats) error {
	path := sf.path
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return errors.New("not a regular file")
	}
	ino, uid := history.FileOwner(fi)
	if uid >= 0 && x.uid >= 0 && uid != x.uid {
		return nil // another user's: never read (history skips it too)
	}
	f := x.files[path]
	if f != nil && f.ino == ino && f.size == fi.Size() && f.mtime == fi.ModTime().UnixNano() {
		f.seen = true
		return nil
	}
	file, err := history.OpenNoFollow(path)
	if err != nil {
		return err
	}
	defer file.Close()
	if ofi, err := file.Stat(); err != nil || !os.SameFile(fi, ofi) {
		return errors.New("the file changed while it was opened")
	}
	if f != nil && (f.ino != ino || fi.Size() < f.off || !sameHead(file, f)) {
		if err := x.dropFile(f.id); err != nil { // replaced or shrunk: read it all again
			return err
		}
		delete(x.files, path)
		delete(x.byID, f.id)
		f = nil
	}
	if f == nil {
		res, err := x.db.Exec(`INSERT INTO files(path, ino, size, mtime, off, head, headlen, session, project, prompt, summary, last)
			VALUES(?, ?, 0, 0, 0, 0, 0, ?, '', '', '', '')`, path, int64(ino), sf.id)
		if err != nil {
			return err
		}
		f = &fileState{ino: ino, session: sf.id, folder: sf.folder}
		if f.id, err = res.LastInsertId(); err != nil {
			return err
		}
		x.files[path] = f
		x.byID[f.id] = f
		st.Reindexed++
	} else {
		st.Grown++
	}
	f.seen = true
	f.mtime = fi.ModTime().UnixNano()
	if err := x.index(ctx, file, fi.Size(), f, st); err != nil {
		return err
	}
	if f.headLen < headBytes && f.off > int64(f.headLen) {
		f.head, f.headLen = headSum(file, fi.Size())
	}
	f.ino, f.size, f.mtime = ino, fi.Size(), fi.ModTime().UnixNano()
	_, err = x.db.Exec(`UPDATE files SET ino = ?, size = ?, mtime = ?, off = ?, head = ?, headlen = ? WHERE id = ?`,
		int64(f.ino), f.size, f.mtime, f.off, f.head, f.headLen, f.id)
	return err
}

func headSum(f *os.File, size int64) (uint32, int) {
	b := make([]byte, min(size, headBytes))
	n, _ := f.ReadAt(b, 0)
	return crc32.ChecksumIEEE(b[:n]), n
}

func sameHead(f *os.File, s *fileState) bool {
	if s.headLen == 0 {
		return true
	}
	b := make([]byte, s.headLen)
	if _, err := f.ReadAt(b, 0); err != nil {
		return false
	}
	return crc32.ChecksumIEEE(b) == s.head
}

var (
	userType      = []byte(`"type":"user"`)
	assistantType = []byte(`"type":"assistant"`)
)

// index reads file from f.off to size, a line at a time, and indexes its
// parts, committing every BatchBytes of text (with the offset reached, so
// the files row always says what the docs hold). A last line without
// "\n" is left for the next update.
func (x *Index) index(ctx context.Context, file *os.File, size int64, f *fileState, st *Stats) error {
	if _, err := file.Seek(f.off, io.SeekStart); err != nil {
		return err
	}
	r := bufio.NewReaderSize(io.LimitReader(file, size-f.off), 64<<10)
	var tx *sql.Tx
	var insDoc, insText *sql.Stmt
	defer func() {
		if tx != nil {
			tx.Rollback()
		}
	}()
	begin := func() error {
		var err error
		if tx, err = x.db.Begin(); err != nil {
			return err
		}
		if insDoc, err = tx.Prepare(`INSERT INTO docs(file, ts, role, uuid) VALUES(?, ?, ?, ?)`); err != nil {
			return err
		}
		insText, err = tx.Prepare(`INSERT INTO fts(rowid, text) VALUES(?, ?)`)
		return err
	}
	commit := func() error {
		if _, err := tx.Exec(`UPDATE files SET off = ?, project = ?, prompt = ?, summary = ?, last = ? WHERE id = ?`,
			f.off, f.project, f.prompt, f.summary, f.last, f.id); err != nil {
			return err
		}
		err := tx.Commit()
		tx = nil
		return err
	}
	if err := begin(); err != nil {
		return err
	}
	var batch int
	var line []byte // a line longer than the reader's buffer, gathered
	skipping := false
	off := f.off
	for {
		chunk, err := r.ReadSlice('\n')
		off += int64(len(chunk))
		if errors.Is(err, bufio.ErrBufferFull) {
			if !skipping && len(line)+len(chunk) <= x.o.MaxLine {
				line = append(line, chunk...)
			} else { // over the cap: skip the rest of it, unread
				skipping, line = true, line[:0]
			}
			continue
		}
		if err != nil { // EOF: a last line without "\n" waits for the next update
			break
		}
		if skipping {
			skipping, f.off = false, off
			continue
		}
		if len(line) > 0 {
			line = append(line, chunk...)
			chunk = line
		}
		st.Read += int64(len(chunk))
		x.meta(chunk, f)
		if bytes.Contains(chunk, userType) || bytes.Contains(chunk, assistantType) {
			var ierr error
			Extract(chunk, func(d Doc) {
				if ierr != nil {
					return
				}
				text := x.o.Scrub(d.Text)
				if d.Role == RoleUser && f.prompt == "" && !strings.HasPrefix(d.Text, "<") {
					f.prompt = capTitle(text)
				}
				var res sql.Result
				if res, ierr = insDoc.Exec(f.id, d.Time, d.Role, d.UUID); ierr != nil {
					return
				}
				var id int64
				if id, ierr = res.LastInsertId(); ierr != nil {
					return
				}
				_, ierr = insText.Exec(id, text)
				batch += len(text)
				st.Docs++
			})
			if ierr != nil {
				return ierr
			}
		}
		line = line[:0]
		if cap(line) > 1<<20 {
			line = nil // do not keep a big line's buffer
		}
		f.off = off
		if batch >= x.o.BatchBytes {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := commit(); err != nil {
				return err
			}
			if err := begin(); err != nil {
				return err
			}
			batch = 0
		}
	}
	return commit()
}

var summaryType = []byte(`"type":"summary"`)

// meta takes what a hit says of its session from one line: the last
// timestamp, the first cwd, the last summary.
func (x *Index) meta(line []byte, f *fileState) {
	if ts := gjson.GetBytes(line, "timestamp"); ts.Type == gjson.String && ts.Str != "" {
		f.last = strings.Clone(ts.Str)
	}
	if f.project == "" {
		if cwd := gjson.GetBytes(line, "cwd"); cwd.Type == gjson.String {
			f.project = strings.Clone(cwd.Str)
		}
	}
	if bytes.Contains(line, summaryType) {
		if r := gjson.ParseBytes(line); r.Get("type").Str == "summary" && r.Get("summary").Str != "" {
			f.summary = capTitle(x.o.Scrub(r.Get("summary").Str))
		}
	}
}

// maxTitle is history's DefaultMaxTitle.
const maxTitle = 200

// capTitle makes one line of at most maxTitle bytes, as history does.
func capTitle(t string) string {
	t = strings.Join(strings.Fields(t), " ")
	if len(t) <= maxTitle {
		return strings.Clone(t)
	}
	return strings.Clone(cutUTF8(t, maxTitle)) + "…"
}
