package mcpconfig

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Links. A project's files (.mcp.json, .claude/settings.json,
// .claude/settings.local.json) come with a repository someone cloned, and
// a repository can hold symbolic links: .claude/settings.local.json → ~/.bashrc
// would have an approval rewrite the user's shell start-up file. So the
// one write of a project file (updateJSONFile with fileStyle.within)
// resolves every link between the project directory and the file once
// (confine), refuses the write when one resolves outside the project
// directory (*LinkError, nothing written, no lock or temporary file
// created), and then works on the resolved path only: the lock file is
// opened without following a link, the temporary file is created
// exclusively, and the rename replaces whatever is at the resolved path
// rather than following it. Links that stay inside the project are
// followed. Files of the user's own scope (~/.claude.json,
// ~/.claude/settings.json) are followed wherever they point: dotfile
// managers link them.
//
// Reading follows links in every scope, as the CLI does: reading is what
// the CLI itself does with the same files, and a file that is not JSON is
// reported by position only, never with its content.

// maxLinks bounds the links followed while resolving one path (a loop of
// links is an error).
const maxLinks = 40

// LinkError is the refusal to write a project file through a symbolic
// link that resolves outside the project directory: Link is the link (the
// file itself or a folder on the way), Target where it resolves.
type LinkError struct {
	Link    string
	Target  string
	Project string
}

func (e *LinkError) Error() string {
	return fmt.Sprintf("not writing through %s: it is a link to %s, outside the project directory %s (a project's files may link only inside the project)", e.Link, e.Target, e.Project)
}

// confine returns path, a file under the project directory root, with
// every link between root and it resolved, or a *LinkError when one of
// them (a folder on the way or the file itself) resolves outside root.
// Missing folders and a missing file are fine: the result is where they
// will be created. A link whose target does not exist is resolved as far
// as its target exists.
func confine(root, path string) (string, error) {
	realRoot, err := resolveLinks(root, maxLinks) // it may not exist yet
	if err != nil {
		return "", fmt.Errorf("resolve the project directory %s: %w", root, err)
	}
	rel, err := filepath.Rel(root, path)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s is not a file of the project directory %s", path, root)
	}
	parts := strings.Split(rel, string(filepath.Separator))
	cur := realRoot
	for i, part := range parts {
		next := filepath.Join(cur, part)
		fi, err := os.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) {
			return filepath.Join(append([]string{next}, parts[i+1:]...)...), nil
		}
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		link := filepath.Join(append([]string{root}, parts[:i+1]...)...)
		resolved, err := resolveLinks(next, maxLinks)
		if err != nil {
			return "", fmt.Errorf("resolve the link %s: %w", link, err)
		}
		if !within(realRoot, resolved) {
			return "", &LinkError{Link: link, Target: resolved, Project: root}
		}
		cur = resolved
	}
	return cur, nil
}

// within reports whether path is dir or inside it (both cleaned, links
// resolved).
func within(dir, path string) bool {
	if path == dir {
		return true
	}
	if !strings.HasSuffix(dir, string(filepath.Separator)) {
		dir += string(filepath.Separator)
	}
	return strings.HasPrefix(path, dir)
}

// resolveLinks is filepath.EvalSymlinks that also resolves a path whose
// end does not exist (a link to a file not created yet): the existing
// part is resolved, the rest appended.
func resolveLinks(p string, hops int) (string, error) {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r, nil
	}
	fi, err := os.Lstat(p)
	switch {
	case err == nil && fi.Mode()&fs.ModeSymlink != 0: // its target is missing, or a loop
		if hops == 0 {
			return "", errors.New("too many links")
		}
		t, err := os.Readlink(p)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(t) {
			t = filepath.Join(filepath.Dir(p), t)
		}
		return resolveLinks(t, hops-1)
	case err == nil:
		_, err = filepath.EvalSymlinks(p)
		return "", err
	case errors.Is(err, fs.ErrNotExist):
		parent := filepath.Dir(p)
		if parent == p {
			return p, nil
		}
		rp, err := resolveLinks(parent, hops)
		if err != nil {
			return "", err
		}
		return filepath.Join(rp, filepath.Base(p)), nil
	}
	return "", err
}
