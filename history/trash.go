package history

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// TrashKeep is how long a deleted session can be restored; the trash
// forgets it after (Purge).
const TrashKeep = 30 * 24 * time.Hour

// ErrExists is the error of a restore onto a file or folder that is there
// again.
var ErrExists = errors.New("history: already exists")

// Trash holds deleted sessions for TrashKeep: Delete moves a session's
// files (<id>.jsonl and its <id>/ folder of subagents and tool results)
// out of the projects directory into a folder of its own under the trash
// directory, with a manifest saying where they came from; Restore moves
// them back. Files are renamed, not rewritten, so a restore is
// byte-identical; when the trash directory is on another file system they
// are copied (bytes, modes and modification times), synced, and only then
// removed where they were (trashmove.go).
//
// Layout: <dir>/<deleted, Unix ms>-<id>/manifest.json and files/<name>.
//
// Trash starts no goroutines; mu serializes Delete, Restore, List and
// Purge (the moves and the reading of manifests).
type Trash struct {
	store *Store
	dir   string
	now   func() time.Time
	// rename and renameNoReplace move files (os.Rename and
	// renameNoReplace; tests make them fail as across file systems).
	rename, renameNoReplace func(from, to string) error

	mu sync.Mutex
}

// TrashEntry is one deleted session in the trash.
type TrashEntry struct {
	ID      string    `json:"id"`
	Project string    `json:"project"`
	Folder  string    `json:"folder"`
	Title   string    `json:"title"`
	Deleted time.Time `json:"deleted"`
	Expires time.Time `json:"expires"`
	Size    int64     `json:"size"`
	Files   int       `json:"files"`
}

// manifest is what a trash folder's manifest.json holds.
type manifest struct {
	TrashEntry
	// Moved are the names moved into files/ from the project folder
	// (Paths: where each was, for a person reading the manifest).
	Moved []string `json:"moved"`
	Paths []string `json:"paths"`
}

const manifestName = "manifest.json"

// OpenTrash returns the trash of s's sessions in dir (created private,
// 0700, if missing) and forgets what was deleted more than TrashKeep ago.
func (s *Store) OpenTrash(dir string) (*Trash, error) {
	return s.openTrash(dir, time.Now)
}

func (s *Store) openTrash(dir string, now func() time.Time) (*Trash, error) {
	if !filepath.IsAbs(dir) {
		return nil, fmt.Errorf("history: trash directory %q: want an absolute path", dir)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("history: trash directory: %w", err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return nil, fmt.Errorf("history: trash directory: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("history: trash directory %s is not a directory (a symbolic link is not followed)", dir)
	}
	t := &Trash{store: s, dir: dir, now: now, rename: os.Rename, renameNoReplace: renameNoReplace}
	if _, err := t.Purge(); err != nil {
		return nil, err
	}
	return t, nil
}

// Dir returns the trash directory.
func (t *Trash) Dir() string { return t.dir }

// Delete moves session id's files into the trash and returns its entry.
// The caller makes sure no claude runs the session.
func (t *Trash) Delete(ctx context.Context, id, project string) (TrashEntry, error) {
	if !validID(id) {
		return TrashEntry{}, fmt.Errorf("%w %q: ids are letters, digits, '-' and '_'", ErrBadID, id)
	}
	if err := checkProject(project); err != nil {
		return TrashEntry{}, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.purgeLocked()
	path, err := t.store.find(id, project)
	if err != nil {
		return TrashEntry{}, err
	}
	folderDir := filepath.Dir(path)
	folder := filepath.Base(folderDir)
	info, err := t.store.info(path, folder, id)
	if err != nil {
		return TrashEntry{}, err
	}
	if err := ctx.Err(); err != nil {
		return TrashEntry{}, err
	}
	now := t.now().UTC()
	m := manifest{TrashEntry: TrashEntry{ID: id, Project: info.Project, Folder: folder, Title: info.Title,
		Deleted: now, Expires: now.Add(TrashKeep), Size: info.Size, Files: 1}}
	m.Moved, m.Paths = []string{id + ".jsonl"}, []string{path}
	sub := filepath.Join(folderDir, id)
	if fi, err := os.Lstat(sub); err == nil && fi.IsDir() { // a symbolic link is left where it is
		n, size := countFiles(sub)
		m.Files += n
		m.Size += size
		m.Moved, m.Paths = append(m.Moved, id), append(m.Paths, sub)
	}
	entry := filepath.Join(t.dir, strconv.FormatInt(now.UnixMilli(), 10)+"-"+id)
	files := filepath.Join(entry, "files")
	if err := os.MkdirAll(files, 0o700); err != nil {
		return TrashEntry{}, fmt.Errorf("history: trash: %w", err)
	}
	if err := writeManifest(entry, m); err != nil {
		os.RemoveAll(entry) // ours, empty of the user's files
		return TrashEntry{}, err
	}
	for i, name := range m.Moved {
		if err := t.moveOut(filepath.Join(folderDir, name), filepath.Join(files, name)); err != nil {
			for _, back := range slices.Backward(m.Moved[:i]) { // put back what was moved
				t.moveBack(filepath.Join(files, back), filepath.Join(folderDir, back))
			}
			os.RemoveAll(entry)
			return TrashEntry{}, moveError("moving session "+id+" to the trash", err)
		}
	}
	t.store.forget(path)
	return m.TrashEntry, nil
}

// Restore moves the most recently deleted session id back where it was.
// Nothing is moved when a file or folder is there again (ErrExists).
func (t *Trash) Restore(id string) (TrashEntry, error) {
	if !validID(id) {
		return TrashEntry{}, fmt.Errorf("%w %q: ids are letters, digits, '-' and '_'", ErrBadID, id)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	entries := t.entriesLocked()
	i := slices.IndexFunc(entries, func(e trashed) bool { return e.m.ID == id })
	if i < 0 {
		return TrashEntry{}, fmt.Errorf("%w: session %s is not in the trash (never deleted, restored, or deleted more than %d days ago)", ErrNotFound, id, int(TrashKeep.Hours()/24))
	}
	e := entries[i]
	folderDir := filepath.Join(t.store.root, e.m.Folder)
	if err := os.MkdirAll(folderDir, 0o700); err != nil {
		return TrashEntry{}, fmt.Errorf("history: restoring session %s: %w", id, err)
	}
	if fi, err := os.Lstat(folderDir); err != nil || !fi.IsDir() {
		return TrashEntry{}, fmt.Errorf("%w: restoring session %s: %s is not a directory", ErrNotAllowed, id, folderDir)
	}
	for _, name := range e.m.Moved {
		if _, err := os.Lstat(filepath.Join(folderDir, name)); !errors.Is(err, fs.ErrNotExist) {
			return TrashEntry{}, fmt.Errorf("%w: restoring session %s: %s is there again (move it away first)", ErrExists, id, filepath.Join(folderDir, name))
		}
	}
	files := filepath.Join(e.dir, "files")
	for i, name := range e.m.Moved {
		if err := t.moveBack(filepath.Join(files, name), filepath.Join(folderDir, name)); err != nil {
			for _, back := range slices.Backward(e.m.Moved[:i]) {
				t.moveOut(filepath.Join(folderDir, back), filepath.Join(files, back))
			}
			if errors.Is(err, fs.ErrExist) {
				return TrashEntry{}, fmt.Errorf("%w: restoring session %s: %s is there again (move it away first)", ErrExists, id, filepath.Join(folderDir, name))
			}
			return TrashEntry{}, moveError("restoring session "+id, err)
		}
	}
	// Only the manifest and the empty files/ are left.
	os.Remove(files)
	os.Remove(filepath.Join(e.dir, manifestName))
	if err := os.Remove(e.dir); err != nil {
		t.store.log.Warn("history: a restored session's trash folder could not be removed", "dir", e.dir, "err", err)
	}
	return e.m.TrashEntry, nil
}

// List returns the sessions in the trash, most recently deleted first,
// after forgetting those deleted more than TrashKeep ago.
func (t *Trash) List() []TrashEntry {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.purgeLocked()
	entries := t.entriesLocked()
	out := make([]TrashEntry, len(entries))
	for i, e := range entries {
		out[i] = e.m.TrashEntry
	}
	return out
}

// Purge removes from the trash, for good, what was deleted more than
// TrashKeep ago, and returns how many sessions it removed.
func (t *Trash) Purge() (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.purgeLocked(), nil
}

func (t *Trash) purgeLocked() int {
	n := 0
	cutoff := t.now().Add(-TrashKeep)
	for _, e := range t.entriesLocked() {
		if e.m.Deleted.Before(cutoff) {
			if err := os.RemoveAll(e.dir); err != nil {
				t.store.log.Warn("history: purging the trash", "dir", e.dir, "err", err)
				continue
			}
			n++
		}
	}
	return n
}

// trashed is a trash folder and its manifest.
type trashed struct {
	dir string
	m   manifest
}

// entriesLocked reads the manifests, most recently deleted first. A folder
// without a readable, sensible manifest is skipped (and logged).
func (t *Trash) entriesLocked() []trashed {
	ents, err := os.ReadDir(t.dir)
	if err != nil {
		t.store.log.Warn("history: reading the trash", "dir", t.dir, "err", err)
		return nil
	}
	var out []trashed
	for _, de := range ents {
		if !de.IsDir() {
			continue
		}
		dir := filepath.Join(t.dir, de.Name())
		m, err := readManifest(dir)
		if err != nil {
			t.store.log.Warn("history: skipping a trash folder", "dir", dir, "err", err)
			continue
		}
		out = append(out, trashed{dir, m})
	}
	slices.SortFunc(out, func(a, b trashed) int {
		return cmp.Or(b.m.Deleted.Compare(a.m.Deleted), strings.Compare(b.dir, a.dir))
	})
	return out
}

func writeManifest(dir string, m manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(dir, manifestName), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("history: trash manifest: %w", err)
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("history: trash manifest: %w", err)
	}
	return f.Close()
}

// readManifest reads and checks a manifest: its names must be the
// session's own (<id>.jsonl, <id>) and its folder one name, so that a
// restore can write nowhere else.
func readManifest(dir string) (manifest, error) {
	f, err := openNoFollow(filepath.Join(dir, manifestName))
	if err != nil {
		return manifest{}, err
	}
	defer f.Close()
	var m manifest
	if err := json.NewDecoder(f).Decode(&m); err != nil {
		return manifest{}, fmt.Errorf("manifest: %w", err)
	}
	if !validID(m.ID) || m.Folder == "" || m.Folder == "." || m.Folder == ".." || strings.ContainsAny(m.Folder, `/\`) {
		return manifest{}, fmt.Errorf("manifest: bad id %q or folder %q", m.ID, m.Folder)
	}
	if len(m.Moved) == 0 || len(m.Moved) > 2 {
		return manifest{}, fmt.Errorf("manifest: %d files moved", len(m.Moved))
	}
	for _, name := range m.Moved {
		if name != m.ID+".jsonl" && name != m.ID {
			return manifest{}, fmt.Errorf("manifest: %q is not a file of session %s", name, m.ID)
		}
	}
	return m, nil
}

// countFiles counts the files below dir and their bytes (symbolic links
// are counted, not followed).
func countFiles(dir string) (n int, size int64) {
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		n++
		if fi, err := d.Info(); err == nil && fi.Mode().IsRegular() {
			size += fi.Size()
		}
		return nil
	})
	return n, size
}

// moveError says that a move failed.
func moveError(what string, err error) error {
	return fmt.Errorf("history: %s: %w", what, err)
}

// info returns the listing of one session file, from the index.
func (s *Store) info(path, folder, id string) (Session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, err := s.refresh(path, folder, id)
	if errors.Is(err, fs.ErrNotExist) {
		return Session{}, fmt.Errorf("%w: session %s (deleted meanwhile)", ErrNotFound, id)
	}
	if err != nil {
		return Session{}, fmt.Errorf("history: session %s: %w", id, err)
	}
	return e.info, nil
}

// forget drops a file from the index (it was moved away).
func (s *Store) forget(path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.index, path)
}
