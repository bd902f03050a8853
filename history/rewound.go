package history

import (
	"errors"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/tidwall/gjson"
)

// Records a rewind left behind. A rewind (ccproxy's session/rewind, the
// CLI's --resume-session-at, the terminal's /rewind) continues a
// conversation from an earlier record: the next prompt's parentUuid is that
// record, and the records after it stay in the file, on a branch no turn
// continues (docs/CLI-NOTES.md, "Rewind"). Read leaves them out, as the CLI's
// own resume does: a record is rewound when an earlier sibling of a later
// user prompt (the same parentUuid) heads its branch, and that branch does
// not lead to the file's last conversation record. Only prompts fork: the
// tool results of parallel tool uses share a parent without forking, and
// whatever the file's last record descends from is always kept.

// maxRewoundCache bounds the rewound sets kept (one per session file read;
// a set is small: the uuids of rewound records).
const maxRewoundCache = 256

type rewoundEntry struct {
	size    int64
	modTime time.Time
	ino     uint64
	set     map[string]bool
}

// maxUnlistedScan is the largest session file whose rewound records Read
// looks for before history/list has seen it: the index learns of forks
// (entry.forked) as it reads a file, which for a file it does not know
// means reading it whole; a bigger one is read as it is until listed, so
// that its first page stays quick.
const maxUnlistedScan = 8 << 20

// rewound returns the uuids of the records a rewind left behind in the
// session file at path (nil when none). Only a file the index saw fork is
// read for them (once per size, modification time and inode); the index
// entry is brought up to date first, which reads only what was appended
// since the last list or read.
func (s *Store) rewound(path string, fi fs.FileInfo) (map[string]bool, error) {
	s.mu.Lock()
	e := s.index[path]
	if e != nil || fi.Size() <= maxUnlistedScan {
		var err error
		e, err = s.refresh(path, e.folderOr(path), e.idOr(path))
		if err != nil {
			s.mu.Unlock()
			return nil, err
		}
	}
	forked := e != nil && e.forked
	s.mu.Unlock()
	if !forked {
		return nil, nil
	}
	ino, _ := fileOwner(fi)
	s.rewMu.Lock()
	if e, ok := s.rewCache[path]; ok && e.size == fi.Size() && e.modTime.Equal(fi.ModTime()) && e.ino == ino {
		s.rewMu.Unlock()
		return e.set, nil
	}
	s.rewMu.Unlock()
	set, err := s.scanRewound(path)
	if err != nil {
		return nil, err
	}
	s.rewMu.Lock()
	if s.rewCache == nil || len(s.rewCache) >= maxRewoundCache {
		s.rewCache = make(map[string]rewoundEntry)
	}
	s.rewCache[path] = rewoundEntry{size: fi.Size(), modTime: fi.ModTime(), ino: ino, set: set}
	s.rewMu.Unlock()
	return set, nil
}

// scanRewound reads the file's record tree: uuid, parentUuid (or
// logicalParentUuid across a compaction), and whether a record is a user
// prompt.
func (s *Store) scanRewound(path string) (map[string]bool, error) {
	f, err := openNoFollow(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	lr := newLineReader(f, 0, fi.Size(), s.maxLine, &s.bytesRead)
	parent := map[string]string{}
	children := map[string][]string{}
	prompt := map[string]bool{}
	last := ""
	for {
		line, _, _, err := lr.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		var uuid, par, logical, typ, content gjson.Result
		meta := false
		gjson.Parse(bstr(line)).ForEach(func(k, v gjson.Result) bool {
			switch k.Str {
			case "uuid":
				uuid = v
			case "parentUuid":
				par = v
			case "logicalParentUuid":
				logical = v
			case "type":
				typ = v
			case "isMeta":
				meta = v.Bool()
			case "message":
				content = v.Get("content")
			}
			return true
		})
		if uuid.Str == "" {
			continue
		}
		id := strings.Clone(uuid.Str)
		p := par.Str
		if p == "" {
			p = logical.Str
		}
		p = strings.Clone(p)
		if _, dup := parent[id]; dup {
			continue
		}
		parent[id] = p
		children[p] = append(children[p], id)
		if typ.Str == "user" && !meta && isPromptContent(content) {
			prompt[id] = true
		}
		if conversation[typ.Str] {
			last = id
		}
	}
	kept := map[string]bool{} // the last record and what it descends from
	for id := last; id != "" && !kept[id]; id = parent[id] {
		kept[id] = true
	}
	var set map[string]bool
	for p, kids := range children {
		if p == "" {
			continue // records without a parent (the first; files not written by the CLI) do not fork
		}
		for j := len(kids) - 1; j > 0; j-- {
			if !prompt[kids[j]] {
				continue
			}
			for _, old := range kids[:j] {
				if !kept[old] {
					if set == nil {
						set = map[string]bool{}
					}
					markTree(old, children, set)
				}
			}
			break // the earlier siblings are all handled
		}
	}
	return set, nil
}

// isPromptContent reports whether a user record's message.content is what
// a person wrote (text or images), not tool results.
func isPromptContent(c gjson.Result) bool {
	if c.Type == gjson.String {
		return true
	}
	if !c.IsArray() {
		return false
	}
	first := c.Get("0.type").Str
	return first == "text" || first == "image"
}

func markTree(root string, children map[string][]string, set map[string]bool) {
	stack := []string{root}
	for len(stack) > 0 {
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if set[id] {
			continue
		}
		set[id] = true
		stack = append(stack, children[id]...)
	}
}

// folderOr and idOr are the folder and id of the entry, or, for a file not
// indexed yet, as its path gives them.
func (e *entry) folderOr(path string) string {
	if e != nil {
		return e.info.Folder
	}
	return filepath.Base(filepath.Dir(path))
}

func (e *entry) idOr(path string) string {
	if e != nil {
		return e.info.ID
	}
	return strings.TrimSuffix(filepath.Base(path), ".jsonl")
}
