package history

import (
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/tidwall/gjson"

	"github.com/ccproxy/ccproxy/internal/claudedirs"
)

// Defaults of Options.
const (
	DefaultMaxLine   = 64 << 20 // stream.DefaultMaxLine: a line over it is skipped and counted
	DefaultMaxTitle  = 200      // bytes of a title, cut at a rune boundary
	DefaultListLimit = 50
	MaxListLimit     = 1000
	headBytes        = 4096 // the start of a file whose checksum tells a grown file from a replaced one
)

// Errors a caller may tell apart (errors.Is); their messages say what and
// where.
var (
	ErrNotFound   = errors.New("history: session not found")
	ErrBadID      = errors.New("history: invalid session id")
	ErrBadCursor  = errors.New("history: invalid cursor")
	ErrNotAllowed = errors.New("history: not allowed")
	ErrBadProject = errors.New("history: invalid project directory")
)

// checkProject accepts "" or an absolute directory.
func checkProject(p string) error {
	if p != "" && !filepath.IsAbs(p) {
		return fmt.Errorf("%w %q: want an absolute path", ErrBadProject, p)
	}
	return nil
}

// Options configure a Store.
type Options struct {
	// Root is the projects directory: default $HOME/.claude/projects. It
	// is resolved once (symlinks included); nothing under it that is a
	// symlink is ever followed, and files owned by another user are
	// skipped.
	Root string
	// MaxLine caps the bytes of one line (default DefaultMaxLine); longer
	// lines are skipped and counted, never held in memory.
	MaxLine int
	// MaxTitle caps a session's title in bytes (default DefaultMaxTitle).
	MaxTitle int
	// Logger gets skipped files and lines; nil discards.
	Logger *slog.Logger
}

// Session describes one session file, as List returns it.
type Session struct {
	// ID is the session id (the file name without .jsonl).
	ID string `json:"id"`
	// Project is the session's working directory, from its records (the
	// "cwd" of the first record that has one); "" if no record has one.
	Project string `json:"project"`
	// Folder is the CLI's folder for the project under the projects
	// directory (the cwd with every "/" turned into "-"), which cannot be
	// turned back into the path.
	Folder string `json:"folder"`
	// Title is the session's name if it was given one (a "custom-title"
	// record, written by a rename: the last one wins), else the CLI's
	// summary of the session if it wrote one (a "summary" record, the
	// last one wins), else the first prompt the user typed; at most
	// MaxTitle bytes. TitleFrom says which: "custom", "summary", "prompt"
	// or "" (no title).
	Title     string `json:"title"`
	TitleFrom string `json:"titleFrom,omitempty"`
	// Created and Updated are the first and last record timestamps (the
	// file's modification time when no record has one).
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
	// Messages counts the user and assistant records of the main file
	// that Read shows (each content block of a reply is a record of its
	// own; isMeta records and subagents' records are not counted).
	Messages int `json:"messages"`
	// Size is the size in bytes of the session file.
	Size int64 `json:"size"`
	// Corrupt counts the lines that were not JSON objects and were
	// skipped; Oversized the lines over MaxLine.
	Corrupt   int `json:"corrupt,omitempty"`
	Oversized int `json:"oversized,omitempty"`
}

// Store lists and reads the session files under one projects directory. It
// keeps an index of the files it has seen, by path, with their size,
// modification time, inode and a checksum of their start: a file that only
// grew is re-read from where the last read stopped, a file that shrank or
// was replaced is re-read whole, an unchanged one is not opened. A Store is
// safe for concurrent use; it starts no goroutines.
type Store struct {
	root     string
	maxLine  int
	maxTitle int
	log      *slog.Logger
	uid      int

	bytesRead atomic.Int64 // bytes read from session files, ever (BytesRead)

	mu    sync.Mutex        // guards index
	index map[string]*entry // path of a session file -> what is known of it

	rewMu    sync.Mutex              // guards rewCache
	rewCache map[string]rewoundEntry // path of a session file -> its rewound records (rewound.go)
}

// entry is the index's knowledge of one session file.
type entry struct {
	info    Session
	modTime time.Time
	ino     uint64
	head    uint32 // crc32 of the first min(size, headBytes) bytes
	headLen int
	off     int64 // bytes read: the end of the last complete line
	first   string
	last    string // first and last record timestamps, unparsed
	prompt  string // the first user prompt, capped
	summary string // the last summary, capped
	custom  string // the last custom-title (a rename), capped
	seen    bool   // found by the current scan
	// lastUUID is the uuid of the last record read; forked is set when a
	// user prompt's parentUuid was not it (a rewind may have left records
	// behind: Read then looks for them, rewound.go).
	lastUUID []byte // reused: no allocation per record
	forked   bool
}

// Open returns a Store over opts.Root (default $HOME/.claude/projects). The
// directory need not exist yet.
func Open(opts Options) (*Store, error) {
	root := opts.Root
	if root == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return nil, fmt.Errorf("history: finding the projects directory: %w", err)
		}
		root = filepath.Join(home, ".claude", "projects")
	}
	root, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("history: projects directory %s: %w", root, err)
	}
	s := &Store{root: root, maxLine: opts.MaxLine, maxTitle: opts.MaxTitle, log: opts.Logger,
		uid: os.Getuid(), index: make(map[string]*entry)}
	if s.maxLine <= 0 {
		s.maxLine = DefaultMaxLine
	}
	if s.maxTitle <= 0 {
		s.maxTitle = DefaultMaxTitle
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	return s, nil
}

// BytesRead returns how many bytes of session files the Store has read so
// far, by List and Read together: what the index saves shows here.
func (s *Store) BytesRead() int64 { return s.bytesRead.Load() }

// Root returns the projects directory the Store reads.
func (s *Store) Root() string { return s.root }

// ProjectFolder is the CLI's folder name under the projects directory for
// a project directory: every character but an ASCII letter or digit
// becomes "-".
func ProjectFolder(dir string) string { return claudedirs.ProjectFolder(dir) }

// ListOptions select a page of sessions.
type ListOptions struct {
	// Project is a project directory: only its sessions are listed
	// (those in its folder whose records name it, or name no cwd). ""
	// lists every project.
	Project string
	// Cursor is the Next of the previous page; "" starts at the newest.
	Cursor string
	// Limit is the page size (default DefaultListLimit, at most
	// MaxListLimit).
	Limit int
}

// ListPage is one page of sessions, newest (by Updated) first.
type ListPage struct {
	Sessions []Session `json:"sessions"`
	// Next is the cursor of the next page; "" when this is the last one.
	Next string `json:"next,omitempty"`
	// Total is how many sessions match, over all pages.
	Total int `json:"total"`
	// Skipped counts files that could not be read (logged with the
	// reason), or that belong to another user, or are symlinks.
	Skipped int `json:"skipped,omitempty"`
	// Projects, when every project is listed (no ListOptions.Project),
	// groups the sessions of all pages by project, the most recently
	// updated first.
	Projects []Project `json:"projects,omitempty"`
}

// Project is one project of a listing of every project.
type Project struct {
	// Project is the cwd its sessions' records name ("" when none
	// does: then Folder tells the project apart).
	Project  string    `json:"project"`
	Folder   string    `json:"folder"`
	Sessions int       `json:"sessions"`
	Updated  time.Time `json:"updated"`
}

// projectsOf groups sessions (newest first) by project and folder.
func projectsOf(all []Session) []Project {
	type key struct{ project, folder string }
	at := map[key]int{}
	var out []Project
	for _, s := range all {
		k := key{s.Project, s.Folder}
		if s.Project != "" {
			k.folder = "" // one project, whatever folder the CLI chose
		}
		i, ok := at[k]
		if !ok {
			i = len(out)
			at[k] = i
			out = append(out, Project{Project: s.Project, Folder: s.Folder, Updated: s.Updated})
		}
		out[i].Sessions++
	}
	return out
}

// List returns a page of sessions, newest first. Only files that are new
// or changed since the last call are read, and of a grown file only what
// was appended.
func (s *Store) List(ctx context.Context, opts ListOptions) (ListPage, error) {
	if err := checkProject(opts.Project); err != nil {
		return ListPage{}, err
	}
	limit := opts.Limit
	if limit <= 0 {
		limit = DefaultListLimit
	}
	limit = min(limit, MaxListLimit)
	var after *listKey
	if opts.Cursor != "" {
		k, err := parseListCursor(opts.Cursor)
		if err != nil {
			return ListPage{}, err
		}
		after = &k
	}
	folders := []string{}
	if opts.Project != "" {
		if f := ProjectFolder(filepath.Clean(opts.Project)); s.isFolder(f) {
			folders = append(folders, f)
		}
	} else {
		ents, err := os.ReadDir(s.root)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return ListPage{}, fmt.Errorf("history: reading %s: %w", s.root, err)
		}
		for _, e := range ents {
			if e.IsDir() && e.Type()&fs.ModeSymlink == 0 {
				folders = append(folders, e.Name())
			}
		}
	}

	var page ListPage
	var all []Session
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.index {
		e.seen = false
	}
	for _, folder := range folders {
		if err := ctx.Err(); err != nil {
			return ListPage{}, err
		}
		dir := filepath.Join(s.root, folder)
		ents, err := os.ReadDir(dir)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				page.Skipped++
				s.log.Warn("history: cannot read a project folder", "dir", dir, "err", err)
			}
			continue
		}
		for _, de := range ents {
			id, ok := strings.CutSuffix(de.Name(), ".jsonl")
			if !ok || !validID(id) {
				continue
			}
			if !de.Type().IsRegular() {
				page.Skipped++ // symlinks and the like are never followed
				continue
			}
			path := filepath.Join(dir, de.Name())
			e, err := s.refresh(path, folder, id)
			if err != nil {
				page.Skipped++
				s.log.Warn("history: skipping a session file", "path", path, "err", err)
				continue
			}
			if opts.Project != "" && e.info.Project != "" && e.info.Project != filepath.Clean(opts.Project) {
				continue
			}
			all = append(all, e.info)
		}
	}
	// Forget files that are gone (only on a full scan; a project scan
	// sees one folder).
	if opts.Project == "" {
		for p, e := range s.index {
			if !e.seen {
				delete(s.index, p)
			}
		}
	}
	slices.SortFunc(all, func(a, b Session) int { return cmpKey(keyOf(b), keyOf(a)) })
	page.Total = len(all)
	if opts.Project == "" {
		page.Projects = projectsOf(all)
	}
	start := 0
	if after != nil {
		start, _ = slices.BinarySearchFunc(all, *after, func(x Session, k listKey) int { return cmpKey(k, keyOf(x)) })
		for start < len(all) && cmpKey(keyOf(all[start]), *after) == 0 {
			start++
		}
	}
	end := min(start+limit, len(all))
	page.Sessions = slices.Clone(all[start:end])
	if end < len(all) {
		page.Next = keyOf(all[end-1]).cursor()
	}
	return page, nil
}

// listKey orders sessions: by Updated, then by ID.
type listKey struct {
	updated int64
	id      string
}

func keyOf(s Session) listKey { return listKey{s.Updated.UnixNano(), s.ID} }

func cmpKey(a, b listKey) int {
	return cmp.Or(cmp.Compare(a.updated, b.updated), strings.Compare(a.id, b.id))
}

func (k listKey) cursor() string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(k.updated, 10) + " " + k.id))
}

func parseListCursor(c string) (listKey, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err == nil {
		if ts, id, ok := strings.Cut(string(b), " "); ok && validID(id) {
			if n, err := strconv.ParseInt(ts, 10, 64); err == nil {
				return listKey{n, id}, nil
			}
		}
	}
	return listKey{}, fmt.Errorf("%w %q: not a cursor from history/list", ErrBadCursor, c)
}

// bstr views b as a string without a copy; what is kept of values parsed
// from it must be cloned.
func bstr(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// isFolder reports whether folder is a directory right under the root,
// not a symlink.
func (s *Store) isFolder(folder string) bool {
	fi, err := os.Lstat(filepath.Join(s.root, folder))
	return err == nil && fi.IsDir()
}

// validID accepts the session and agent ids the CLI makes (uuids, hex):
// letters, digits, "-" and "_", so an id can never name another path.
func validID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// refresh brings the index entry of path up to date and returns it. s.mu
// is held.
func (s *Store) refresh(path, folder, id string) (*entry, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if err := s.allowed(fi); err != nil {
		return nil, err
	}
	ino, _ := fileOwner(fi)
	e := s.index[path]
	if e != nil && e.ino == ino && e.info.Size == fi.Size() && e.modTime.Equal(fi.ModTime()) {
		e.seen = true
		return e, nil
	}
	f, err := openNoFollow(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if e != nil && (e.ino != ino || fi.Size() < e.off || !s.sameHead(f, e)) {
		e = nil // replaced or shrunk: read it all again
	}
	if e == nil {
		e = &entry{info: Session{ID: id, Folder: folder}}
	}
	if err := s.scan(f, fi.Size(), e); err != nil {
		return nil, err
	}
	if e.headLen < headBytes && e.off > int64(e.headLen) {
		e.head, e.headLen, _ = headSum(f, fi.Size())
	}
	e.ino, e.modTime, e.info.Size, e.seen = ino, fi.ModTime(), fi.Size(), true
	s.finish(e)
	s.index[path] = e
	return e, nil
}

// allowed refuses what is not a regular file of the current user.
func (s *Store) allowed(fi fs.FileInfo) error {
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%w: %s is not a regular file", ErrNotAllowed, fi.Name())
	}
	if _, uid := fileOwner(fi); uid >= 0 && s.uid >= 0 && uid != s.uid {
		return fmt.Errorf("%w: %s belongs to uid %d", ErrNotAllowed, fi.Name(), uid)
	}
	return nil
}

func headSum(f *os.File, size int64) (uint32, int, error) {
	n := int(min(size, headBytes))
	b := make([]byte, n)
	if _, err := f.ReadAt(b, 0); err != nil && !errors.Is(err, io.EOF) {
		return 0, 0, err
	}
	return crc32.ChecksumIEEE(b), n, nil
}

// sameHead reports whether the file still starts as it did.
func (s *Store) sameHead(f *os.File, e *entry) bool {
	if e.headLen == 0 {
		return true
	}
	b := make([]byte, e.headLen)
	if _, err := f.ReadAt(b, 0); err != nil {
		return false
	}
	return crc32.ChecksumIEEE(b) == e.head
}

// scan reads the file from e.off to its end and adds what it finds to e.
// A last line without "\n" is left for the next scan unless it is complete
// JSON (an over-cap one always: it is neither counted nor skipped).
func (s *Store) scan(f *os.File, size int64, e *entry) error {
	if _, err := f.Seek(e.off, io.SeekStart); err != nil {
		return err
	}
	lr := newLineReader(f, e.off, size-e.off, s.maxLine, &s.bytesRead)
	over := lr.r.Oversized()
	for {
		line, end, complete, err := lr.next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return err
		}
		if n := lr.r.Oversized(); n != over {
			if !complete {
				break // perhaps still being written: count it when it ends
			}
			over = n
			e.info.Oversized++
			e.off = end
			continue
		}
		if !gjson.ValidBytes(line) || line[0] != '{' {
			if !complete {
				break // perhaps still being written: read it next time
			}
			e.info.Corrupt++
			e.off = end
			continue
		}
		s.record(line, e)
		e.off = end
	}
	return nil
}

// record adds one valid JSON line to e.
func (s *Store) record(line []byte, e *entry) {
	var typ, ts, cwd, summary, custom, uuid, parent string
	var msg gjson.Result
	meta := false
	gjson.Parse(bstr(line)).ForEach(func(k, v gjson.Result) bool { // strings kept are cloned
		switch k.Str {
		case "uuid":
			uuid = v.Str
		case "parentUuid":
			parent = v.Str
		case "type":
			typ = v.Str
		case "timestamp":
			ts = v.Str
		case "cwd":
			if e.info.Project == "" {
				cwd = v.Str
			}
		case "message":
			msg = v
		case "summary":
			summary = v.Str
		case "customTitle":
			custom = v.Str
		case "isMeta":
			meta = v.Bool()
		}
		return true
	})
	if ts != "" {
		if e.first == "" {
			e.first = strings.Clone(ts)
		}
		e.last = strings.Clone(ts)
	}
	if cwd != "" {
		e.info.Project = strings.Clone(cwd)
	}
	if uuid != "" {
		if typ == "user" && !meta && parent != "" && parent != string(e.lastUUID) && isPromptContent(msg.Get("content")) {
			e.forked = true
		}
		e.lastUUID = append(e.lastUUID[:0], uuid...)
	}
	switch typ {
	case "user", "assistant":
		if meta {
			break // the CLI's own (skill text, caveats): Read skips them too
		}
		e.info.Messages++
		if typ == "user" && !meta && e.prompt == "" {
			e.prompt = s.capTitle(promptText(msg))
		}
	case "summary":
		if summary != "" {
			e.summary = s.capTitle(summary)
		}
	case "custom-title":
		if t := s.capTitle(custom); t != "" {
			e.custom = t
		}
	}
}

// promptText is the text a user typed, from a user message: its string
// content or its first text block; "" for tool results and for the
// CLI's own messages (command output, task notifications: they start with
// "<").
func promptText(msg gjson.Result) string {
	c := msg.Get("content")
	text := ""
	switch {
	case c.Type == gjson.String:
		text = c.Str
	case c.IsArray():
		c.ForEach(func(_, b gjson.Result) bool {
			switch b.Get("type").Str {
			case "text":
				text = b.Get("text").Str
				return false
			case "tool_result":
				return false
			}
			return true
		})
	}
	text = strings.TrimSpace(text)
	if strings.HasPrefix(text, "<") {
		return ""
	}
	return text
}

// capTitle makes one line of at most maxTitle bytes.
func (s *Store) capTitle(t string) string {
	t = strings.Join(strings.Fields(t), " ")
	if len(t) <= s.maxTitle {
		return strings.Clone(t)
	}
	cut := s.maxTitle
	for cut > 0 && !utf8.RuneStart(t[cut]) {
		cut--
	}
	return strings.Clone(t[:cut]) + "…"
}

// finish derives the Session fields from what scan found.
func (s *Store) finish(e *entry) {
	e.info.Title, e.info.TitleFrom = "", ""
	switch {
	case e.custom != "":
		e.info.Title, e.info.TitleFrom = e.custom, "custom"
	case e.summary != "":
		e.info.Title, e.info.TitleFrom = e.summary, "summary"
	case e.prompt != "":
		e.info.Title, e.info.TitleFrom = e.prompt, "prompt"
	}
	e.info.Created, e.info.Updated = e.modTime, e.modTime
	if t, err := time.Parse(time.RFC3339Nano, e.first); err == nil {
		e.info.Created = t
	}
	if t, err := time.Parse(time.RFC3339Nano, e.last); err == nil {
		e.info.Updated = t
	}
	if e.info.Updated.Before(e.info.Created) {
		e.info.Updated = e.info.Created
	}
}
