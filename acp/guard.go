package acp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/tidwall/gjson"
)

// MaxLineBytes bounds one JSON-RPC message from the client, with its
// newline (the SDK's own limit; a longer line would end its connection).
const MaxLineBytes = 10 << 20

// lockedWriter serializes whole-message writes of the SDK and the guard,
// and tells the sessions whose answer it writes that the editor knows
// them (announce.go).
type lockedWriter struct {
	mu      sync.Mutex
	w       io.Writer
	answers map[string]func() // sessions whose session/new or session/fork answer is awaited, by id: their show
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	n, err := l.w.Write(b)
	show := l.answeredLocked(b)
	l.mu.Unlock()
	if show != nil {
		show()
	}
	return n, err
}

// guard reads the client's lines and passes on only well-formed JSON-RPC
// objects; it answers the rest itself with the standard errors, with the
// request's id when it could be read (a string or a number), else id null
// (JSON-RPC 2.0 §5.1): -32700 for a line that is not JSON (or is over
// MaxLineBytes, which is drained, not held), -32600 for JSON that is not a
// request, notification or response object (a batch among them: ACP has
// none, and ids of other types or null, and a jsonrpc other than "2.0").
// A line over MaxLineBytes is answered -32600 with its id when the start
// of the line has one. order, if not nil, sees each message about to be
// passed on, just before the SDK gets it, and may refuse it instead (a
// code and message, answered with its id). It runs in its own goroutine
// until r ends or out is closed, then closes out.
func guard(r io.Reader, out *io.PipeWriter, w io.Writer, log *slog.Logger, order func(line []byte) (int, string)) {
	br := bufio.NewReaderSize(r, 64<<10)
	var err error
	for err == nil {
		var line []byte
		line, err = readLine(br)
		if errors.Is(err, errLineTooLong) {
			// line is the message's start: its id and method come first.
			id, method := idOf(gjson.GetBytes(line, "id")), gjson.GetBytes(line, "method").Str
			log.Warn("a client message over the line limit was dropped", "limit", MaxLineBytes, "method", method)
			reject(w, id, -32600, fmt.Sprintf("Invalid Request: %.60s message over %d bytes (%d MiB): images and embedded resources count towards it; send smaller ones", method, MaxLineBytes, MaxLineBytes>>20))
			err = nil
			continue
		}
		t := bytes.TrimSpace(line)
		if len(t) == 0 {
			continue
		}
		if code, msg, id := check(t); code != 0 {
			reject(w, id, code, msg)
			continue
		}
		if order != nil {
			if code, msg := order(t); code != 0 {
				reject(w, idOf(gjson.GetBytes(t, "id")), code, msg)
				continue
			}
		}
		if _, werr := out.Write(append(t, '\n')); werr != nil {
			return
		}
	}
	out.Close()
}

var errLineTooLong = errors.New("line too long")

// readLine returns the next line (without its newline), at most
// MaxLineBytes; a longer one is drained and reported as errLineTooLong.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) > MaxLineBytes { // with its newline: the SDK's own bound
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
			if err != nil && !errors.Is(err, io.EOF) {
				return nil, err
			}
			return line[:min(len(line), 64<<10)], errLineTooLong
		}
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err == nil {
			return line, nil
		}
		if errors.Is(err, io.EOF) && len(line) > 0 {
			return line, nil
		}
		return line, err
	}
}

// check returns 0 for a message the SDK should get, else the error code
// and message to answer, and the message's id when it has a valid one
// (nil: answer with id null).
func check(line []byte) (int, string, json.RawMessage) {
	if !json.Valid(line) {
		return -32700, "Parse error: not a JSON value", nil
	}
	if line[0] != '{' {
		return -32600, "Invalid Request: a JSON-RPC message is an object (batches are not part of ACP)", nil
	}
	// One pass over the top-level members (a prompt's line can be 10 MiB):
	var method, idv, jsonrpc gjson.Result
	answer := false
	gjson.ParseBytes(line).ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "method":
			method = v
		case "id":
			idv = v
		case "jsonrpc":
			jsonrpc = v
		case "result", "error":
			answer = true
		}
		return true
	})
	id := idOf(idv) // a string or a number: echoed
	if !method.Exists() {
		// A response to one of the agent's requests: its id may be null (an
		// error about a request the editor could not read). Never answered.
		if !answer {
			return -32600, "Invalid Request: neither a method nor a result or error", id
		}
		if idv.Exists() && id == nil && idv.Type != gjson.Null {
			return -32600, "Invalid Request: id must be a string, a number or null", nil
		}
		return 0, "", nil
	}
	if idv.Exists() && id == nil {
		return -32600, "Invalid Request: id must be a string or a number", nil
	}
	if method.Type != gjson.String {
		return -32600, "Invalid Request: method must be a string", id
	}
	if jsonrpc.Type != gjson.String || jsonrpc.Str != "2.0" {
		return -32600, `Invalid Request: jsonrpc must be "2.0"`, id
	}
	if answer { // the SDK would only log it, and a request would never be answered
		return -32600, "Invalid Request: a request or notification has no result or error", id
	}
	if method.Str == "session/prompt" && !idv.Exists() {
		return -32600, "Invalid Request: session/prompt is a request: it needs an id", nil
	}
	return 0, "", nil
}

// idOf returns the raw id of a message if it is a string or a number (what
// an answer may echo), else nil (answered with id null).
func idOf(v gjson.Result) json.RawMessage {
	if v.Type == gjson.String || v.Type == gjson.Number {
		return json.RawMessage(v.Raw)
	}
	return nil
}

// reject answers a message the SDK does not get; id nil is id null.
func reject(w io.Writer, id json.RawMessage, code int, msg string) {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg}})
	w.Write(append(b, '\n'))
}
