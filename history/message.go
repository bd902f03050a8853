package history

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/tidwall/gjson"
)

// Message is one conversation record of a session file, as Store.Message
// finds it: what a rewind needs to know of it.
type Message struct {
	UUID string
	// Type is the record's type: user, assistant or system.
	Type string
	// Parent is the uuid of the record before it in its conversation
	// (parentUuid), "" for the first.
	Parent string
	// Prompt reports a user message a person (or a client) wrote: a user
	// record that is not a tool result nor one the CLI made itself (isMeta,
	// a compact summary).
	Prompt bool
}

// ErrNoMessage is the error of Store.Message when the session has no
// record of that uuid.
var ErrNoMessage = errors.New("history: no such message")

// Message finds the record uuid in the main file of session id (in the
// folder of project when it is set). It reads the file from the start, one
// bounded line at a time, and stops at the record.
func (s *Store) Message(ctx context.Context, id, project, uuid string) (Message, error) {
	if !validID(id) {
		return Message{}, fmt.Errorf("%w %q: ids are letters, digits, '-' and '_'", ErrBadID, id)
	}
	if err := checkProject(project); err != nil {
		return Message{}, err
	}
	path, err := s.find(id, project)
	if err != nil {
		return Message{}, err
	}
	f, err := openNoFollow(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Message{}, fmt.Errorf("%w: %s", ErrNotFound, path)
		}
		return Message{}, fmt.Errorf("history: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Message{}, fmt.Errorf("history: %w", err)
	}
	if err := s.allowed(fi); err != nil {
		return Message{}, fmt.Errorf("history: %s: %w", path, err)
	}
	lr := newLineReader(f, 0, fi.Size(), s.maxLine, &s.bytesRead)
	for {
		if err := ctx.Err(); err != nil {
			return Message{}, err
		}
		line, _, _, err := lr.next()
		if errors.Is(err, io.EOF) {
			return Message{}, fmt.Errorf("%w %s in session %s", ErrNoMessage, uuid, id)
		}
		if err != nil {
			return Message{}, fmt.Errorf("history: %s: %w", path, err)
		}
		if gjson.GetBytes(line, "uuid").String() != uuid {
			continue
		}
		rec := gjson.ParseBytes(line)
		m := Message{UUID: uuid, Type: rec.Get("type").String(), Parent: rec.Get("parentUuid").String()}
		m.Prompt = m.Type == "user" && !rec.Get("isMeta").Bool() && !rec.Get("isCompactSummary").Bool() && !hasToolResult(rec.Get("message.content"))
		return m, nil
	}
}

// hasToolResult reports whether a message's content holds a tool_result
// block.
func hasToolResult(content gjson.Result) bool {
	found := false
	content.ForEach(func(_, b gjson.Result) bool {
		found = b.Get("type").String() == "tool_result"
		return !found
	})
	return found
}
