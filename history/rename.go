package history

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"unicode/utf8"
)

// MaxTitleChars is the most characters of a title Rename writes: what the
// CLI keeps of one (its rename_session cuts a longer title to 200).
const MaxTitleChars = 200

// ErrBadTitle is the error of a title Rename cannot write.
var ErrBadTitle = errors.New("history: invalid title")

// CleanTitle returns title without the spaces around it, or an error
// saying what is wrong with it: empty (or only spaces), longer than
// MaxTitleChars characters, not UTF-8, or holding a newline or another
// control character (the CLI shows a title on one line).
func CleanTitle(title string) (string, error) {
	t := strings.TrimSpace(title)
	switch {
	case !utf8.ValidString(t):
		return "", fmt.Errorf("%w: not valid UTF-8", ErrBadTitle)
	case t == "":
		return "", fmt.Errorf("%w: empty", ErrBadTitle)
	case utf8.RuneCountInString(t) > MaxTitleChars:
		return "", fmt.Errorf("%w: %d characters, at most %d", ErrBadTitle, utf8.RuneCountInString(t), MaxTitleChars)
	case strings.ContainsFunc(t, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return "", fmt.Errorf("%w: a newline or another control character", ErrBadTitle)
	}
	return t, nil
}

// customTitle is the CLI's record of a session's name, as its
// rename_session writes it (measured on 2.1.329 and 2.1.332:
// docs/CLI-NOTES.md).
type customTitle struct {
	Type        string `json:"type"`
	CustomTitle string `json:"customTitle"`
	SessionID   string `json:"sessionId"`
}

// Rename gives session id the title the CLI shows for it: it appends the
// CLI's own custom-title record to the session file (the last one wins,
// for the CLI and for List). The file is opened without following a
// symbolic link, must be the user's own regular file, and is written with
// one append; when its last line lacks its "\n", one is written first.
// Rename is for a session no claude is running: a live claude keeps its
// own title and writes it again, so rename it with its rename_session.
func (s *Store) Rename(ctx context.Context, id, project, title string) (string, error) {
	if !validID(id) {
		return "", fmt.Errorf("%w %q: ids are letters, digits, '-' and '_'", ErrBadID, id)
	}
	if err := checkProject(project); err != nil {
		return "", err
	}
	t, err := CleanTitle(title)
	if err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	path, err := s.find(id, project)
	if err != nil {
		return "", err
	}
	f, err := openAppendNoFollow(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%w: session %s (deleted meanwhile)", ErrNotFound, id)
	}
	if err != nil {
		return "", fmt.Errorf("history: session %s: %w", id, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	if err := s.allowed(fi); err != nil {
		return "", fmt.Errorf("history: session %s: %w", id, err)
	}
	var line bytes.Buffer
	if fi.Size() > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, fi.Size()-1); err != nil {
			return "", fmt.Errorf("history: session %s: %w", id, err)
		}
		if last[0] != '\n' {
			line.WriteByte('\n')
		}
	}
	enc := json.NewEncoder(&line) // one line, "\n" ended
	enc.SetEscapeHTML(false)
	if err := enc.Encode(customTitle{"custom-title", t, id}); err != nil {
		return "", err
	}
	if _, err := f.Write(line.Bytes()); err != nil {
		return "", fmt.Errorf("history: renaming session %s: %w", id, err)
	}
	return t, f.Close()
}

// renameChecked renames from to to unless to exists (fs.ErrExist).
func renameChecked(from, to string) error {
	if _, err := os.Lstat(to); !errors.Is(err, fs.ErrNotExist) {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: fs.ErrExist}
	}
	return os.Rename(from, to)
}
