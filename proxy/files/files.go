package files

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ccproxy/ccproxy/protocol"
)

// Options bound the listings; zero values take the defaults.
type Options struct {
	MaxEntries int           // entries looked at per listing (20,000)
	Timeout    time.Duration // time per listing (2 s)
	MaxWalks   int           // listings at once over all connections (4)
}

// Lister lists session directories for session/files.
type Lister struct {
	opts  Options
	slots chan struct{}
}

// New returns a Lister bounded by o.
func New(o Options) *Lister {
	if o.MaxEntries <= 0 {
		o.MaxEntries = 20000
	}
	if o.Timeout <= 0 {
		o.Timeout = 2 * time.Second
	}
	if o.MaxWalks <= 0 {
		o.MaxWalks = 4
	}
	return &Lister{opts: o, slots: make(chan struct{}, o.MaxWalks)}
}

// List answers session/files d for the session whose working directory
// is root.
func (l *Lister) List(ctx context.Context, root string, d *protocol.SessionFiles) (protocol.Data, error) {
	select {
	case l.slots <- struct{}{}:
		defer func() { <-l.slots }()
	default:
		return nil, protocol.Errorf(protocol.CodeLimitExceeded, "session/files: %d listings are running; try again", cap(l.slots))
	}
	limit := protocol.DefaultSessionFilesLimit
	if d.Limit != nil {
		limit = int(*d.Limit)
	}
	ctx, cancel := context.WithTimeout(ctx, l.opts.Timeout)
	defer cancel()
	w, err := newWalk(root, strings.ToLower(d.Query), l.opts.MaxEntries)
	if err != nil {
		return nil, err
	}
	w.run(ctx)
	slices.SortFunc(w.found, func(a, b match) int {
		if a.rank != b.rank {
			return a.rank - b.rank
		}
		if a.depth != b.depth {
			return a.depth - b.depth
		}
		if len(a.path) != len(b.path) {
			return len(a.path) - len(b.path)
		}
		return strings.Compare(a.path, b.path)
	})
	res := protocol.SessionFilesResult{Files: []protocol.FileEntry{}, Truncated: w.truncated}
	for _, m := range w.found[:min(limit, len(w.found))] {
		res.Files = append(res.Files, protocol.FileEntry{Path: m.path, Dir: m.dir})
	}
	return res, nil
}

// match is one matching entry and how well it matches.
type match struct {
	path  string // relative, "/" separated, a folder's ending in "/"
	dir   bool
	rank  int // 0 name starts with the query, 1 path contains it, 2 characters in order
	depth int
}

// walk is one listing.
type walk struct {
	root, real string // the directory as given, and with its links resolved
	query      string // lower case
	budget     int    // entries left to look at
	found      []match
	truncated  bool
}

// folder is a folder waiting to be read, with the .gitignore rules in
// force above it.
type folder struct {
	rel   string
	rules []rule
}

func newWalk(root string, query string, maxEntries int) (*walk, error) {
	real, err := filepath.EvalSymlinks(root)
	if err == nil {
		var fi os.FileInfo
		if fi, err = os.Stat(real); err == nil && !fi.IsDir() {
			err = errors.New("not a directory")
		}
	}
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, protocol.Errorf(protocol.CodeNotFound, "session/files: the session's directory %s cannot be listed: %v", root, err)
	}
	return &walk{root: root, real: real, query: query, budget: maxEntries}, nil
}

// run reads folders breadth first until there are none left, the budget
// is spent or ctx ends.
func (w *walk) run(ctx context.Context) {
	queue := []folder{{rel: "", rules: parseIgnore(filepath.Join(w.real, ".gitignore"), "")}}
	for len(queue) > 0 {
		f := queue[0]
		queue = queue[1:]
		if ctx.Err() != nil || w.budget <= 0 {
			w.truncated = true
			return
		}
		entries, err := readDir(filepath.Join(w.real, filepath.FromSlash(f.rel)), w.budget)
		if err != nil {
			continue // a folder that cannot be read is left out
		}
		if len(entries) >= w.budget {
			w.truncated = true
		}
		w.budget -= len(entries)
		for _, e := range entries {
			name := e.Name()
			if strings.HasPrefix(name, ".") {
				continue
			}
			rel := name
			if f.rel != "" {
				rel = f.rel + "/" + name
			}
			dir, ok := w.kind(rel, e)
			if !ok || ignored(f.rules, rel, dir) {
				continue
			}
			w.consider(rel, dir)
			if dir && e.Type()&fs.ModeSymlink == 0 {
				rules := f.rules
				if more := parseIgnore(filepath.Join(w.real, filepath.FromSlash(rel), ".gitignore"), rel); len(more) > 0 {
					rules = append(slices.Clip(rules), more...)
				}
				queue = append(queue, folder{rel: rel, rules: rules})
			}
		}
	}
}

// readDir reads at most n entries of dir, in name order.
func readDir(dir string, n int) ([]fs.DirEntry, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	entries, err := f.ReadDir(n)
	if err != nil && len(entries) == 0 {
		return nil, err
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, nil
}

// kind reports whether entry e at rel is a folder, and whether it may be
// listed at all: a link only when it resolves inside the directory.
func (w *walk) kind(rel string, e fs.DirEntry) (dir, ok bool) {
	if e.Type()&fs.ModeSymlink == 0 {
		return e.IsDir(), e.Type().IsRegular() || e.IsDir()
	}
	target, err := filepath.EvalSymlinks(filepath.Join(w.real, filepath.FromSlash(rel)))
	if err != nil {
		return false, false
	}
	in, err := filepath.Rel(w.real, target)
	if err != nil || in == ".." || strings.HasPrefix(in, ".."+string(filepath.Separator)) || filepath.IsAbs(in) {
		return false, false
	}
	fi, err := os.Stat(target)
	if err != nil {
		return false, false
	}
	return fi.IsDir(), fi.Mode().IsRegular() || fi.IsDir()
}

// consider adds rel to the matches when it matches the query.
func (w *walk) consider(rel string, dir bool) {
	lower := strings.ToLower(rel)
	name := lower[strings.LastIndexByte(lower, '/')+1:]
	rank := -1
	switch {
	case w.query == "" || strings.HasPrefix(name, w.query):
		rank = 0
	case strings.Contains(lower, w.query):
		rank = 1
	case inOrder(lower, w.query):
		rank = 2
	}
	if rank < 0 {
		return
	}
	p := rel
	if dir {
		p += "/"
	}
	w.found = append(w.found, match{path: p, dir: dir, rank: rank, depth: strings.Count(rel, "/")})
}

// inOrder reports whether s holds q's characters in order.
func inOrder(s, q string) bool {
	for _, c := range q {
		i := strings.IndexRune(s, c)
		if i < 0 {
			return false
		}
		s = s[i+len(string(c)):]
	}
	return true
}
