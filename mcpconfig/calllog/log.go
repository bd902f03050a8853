package calllog

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/ccproxy/ccproxy/mcpconfig/probe"
	"github.com/ccproxy/ccproxy/stream"
	"github.com/tidwall/gjson"
)

// Defaults of Options.
const (
	DefaultMaxBytes   = 8 << 20
	DefaultKeep       = 3
	DefaultMaxIOBytes = 64 << 10
	// maxLine bounds a line read back; longer lines (not written by this
	// package) are skipped.
	maxLine = 4 << 20
)

// Options configure a Log. The zero value is usable.
type Options struct {
	// MaxBytes is the size a file may reach before it is rotated (an entry
	// that would make it larger goes to a fresh file). Default
	// DefaultMaxBytes.
	MaxBytes int64
	// Keep is how many rotated files are kept (FILE.1 is the newest).
	// Default DefaultKeep; negative keeps none.
	Keep int
	// StoreIO keeps tool inputs and outputs in the entries; without it
	// Append drops them.
	StoreIO bool
	// MaxIOBytes caps a stored input or output: a longer output is cut
	// (with a note), a longer input is replaced by a JSON string holding
	// its beginning. Default DefaultMaxIOBytes.
	MaxIOBytes int
	// Logger receives warnings (unreadable lines, failed rotations).
	// Default: discard.
	Logger *slog.Logger
}

// Log is an append-only, size-rotated JSON-lines file of MCP calls.
type Log struct {
	path string
	opts Options
	log  *slog.Logger

	mu     sync.Mutex
	f      *os.File
	size   int64
	closed bool
}

// ErrClosed is returned by a Log used after Close.
var ErrClosed = errors.New("calllog: the log is closed")

// DefaultDir is where ccproxy keeps call logs: $XDG_STATE_HOME/ccproxy/mcp-calls,
// or ~/.local/state/ccproxy/mcp-calls.
func DefaultDir() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "ccproxy", "mcp-calls"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("calllog: no state directory: %w", err)
	}
	return filepath.Join(home, ".local", "state", "ccproxy", "mcp-calls"), nil
}

// ProjectFile is the log file of a project inside dir: the project
// directory's base name and a hash of its full path, e.g.
// "myproj-3fa2c1d09b7e.jsonl".
func ProjectFile(dir, projectDir string) string {
	sum := sha256.Sum256([]byte(filepath.Clean(projectDir)))
	base := strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return '_'
	}, filepath.Base(filepath.Clean(projectDir)))
	if len(base) > 40 {
		base = base[:40]
	}
	return filepath.Join(dir, base+"-"+hex.EncodeToString(sum[:6])+".jsonl")
}

// Open opens (creating it and its directory when missing) the log at path.
func Open(path string, opts Options) (*Log, error) {
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	if opts.Keep == 0 {
		opts.Keep = DefaultKeep
	}
	if opts.MaxIOBytes <= 0 {
		opts.MaxIOBytes = DefaultMaxIOBytes
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("calllog: %w", err)
	}
	l := &Log{path: path, opts: opts, log: opts.Logger}
	if err := l.openFile(); err != nil {
		return nil, err
	}
	return l, nil
}

func (l *Log) openFile() error {
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("calllog: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("calllog: %w", err)
	}
	l.f, l.size = f, fi.Size()
	return nil
}

// StoresIO reports whether inputs and outputs are kept (give it to
// PairerOptions.KeepIO, so a Pairer does not hold what will be dropped).
func (l *Log) StoresIO() bool { return l.opts.StoreIO }

// Append writes one entry. Time defaults to now; Input and Output are
// dropped unless Options.StoreIO, and capped otherwise. The entry must
// have a kind (session or direct), a server and a tool; a session entry a
// session.
func (l *Log) Append(e Entry) error {
	switch {
	case e.Kind != KindSession && e.Kind != KindDirect:
		return fmt.Errorf("calllog: entry kind %q is neither %q nor %q", e.Kind, KindSession, KindDirect)
	case e.Server == "" || e.Tool == "":
		return errors.New("calllog: an entry needs a server and a tool")
	case e.Kind == KindSession && e.Session == "":
		return errors.New("calllog: a session entry needs its session")
	case e.ResultBytes < 0:
		return errors.New("calllog: resultBytes is negative")
	}
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	e.Time = e.Time.UTC()
	if l.opts.StoreIO {
		e.Input = capInput(e.Input, l.opts.MaxIOBytes)
		e.Output = capOutput(e.Output, l.opts.MaxIOBytes)
	} else {
		e.Input, e.Output = nil, nil
	}
	line, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("calllog: encoding an entry: %w", err)
	}
	line = append(line, '\n')

	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	if l.size > 0 && l.size+int64(len(line)) > l.opts.MaxBytes {
		if err := l.rotate(); err != nil {
			return err
		}
	}
	n, err := l.f.Write(line)
	l.size += int64(n)
	if err != nil {
		return fmt.Errorf("calllog: %w", err)
	}
	return nil
}

// rotate moves FILE to FILE.1 (FILE.1 to FILE.2, …, dropping the oldest)
// and starts a new FILE. l.mu is held.
func (l *Log) rotate() error {
	if err := l.f.Close(); err != nil {
		l.log.Warn("calllog: closing before rotation", "file", l.path, "error", err)
	}
	keep := max(l.opts.Keep, 0)
	if keep == 0 {
		if err := os.Remove(l.path); err != nil && !errors.Is(err, os.ErrNotExist) {
			l.log.Warn("calllog: removing the full file", "file", l.path, "error", err)
		}
	} else {
		_ = os.Remove(l.rotated(keep))
		for i := keep - 1; i >= 1; i-- {
			if err := os.Rename(l.rotated(i), l.rotated(i+1)); err != nil && !errors.Is(err, os.ErrNotExist) {
				l.log.Warn("calllog: rotating", "file", l.rotated(i), "error", err)
			}
		}
		if err := os.Rename(l.path, l.rotated(1)); err != nil {
			l.log.Warn("calllog: rotating", "file", l.path, "error", err)
		}
	}
	if err := l.openFile(); err != nil {
		l.closed = true // nothing to write to any more
		return err
	}
	return nil
}

func (l *Log) rotated(i int) string { return l.path + "." + strconv.Itoa(i) }

// Last returns the last n entries (of server, when not empty), oldest
// first, reading the current file and then the rotated ones. Lines that
// cannot be read are skipped and logged.
//
// The lock is held only to open the files (and note how much of the current
// one is written), not while reading them, so a reader never holds up the
// sessions appending to the log; a rotation meanwhile does not disturb the
// open files.
func (l *Log) Last(n int, server string) ([]Entry, error) {
	if n <= 0 {
		return []Entry{}, nil
	}
	files, err := l.openForReading()
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	var chunks [][]Entry // newest file first
	total := 0
	for _, f := range files {
		entries, err := l.readFile(f, server, n-total)
		if err != nil {
			return nil, err
		}
		chunks = append(chunks, entries)
		if total += len(entries); total >= n {
			break
		}
	}
	out := make([]Entry, 0, total)
	for i := len(chunks) - 1; i >= 0; i-- {
		out = append(out, chunks[i]...)
	}
	return out, nil
}

// limitedFile is an open log file and how much of it to read.
type limitedFile struct {
	*os.File
	size int64
}

// openForReading opens the current file and the rotated ones, newest first,
// under the lock.
func (l *Log) openForReading() ([]limitedFile, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, ErrClosed
	}
	names := []string{l.path}
	for i := 1; i <= max(l.opts.Keep, 0); i++ {
		names = append(names, l.rotated(i))
	}
	var files []limitedFile
	for _, name := range names {
		f, err := os.Open(name)
		if errors.Is(err, os.ErrNotExist) {
			break
		}
		if err == nil {
			var st os.FileInfo
			if st, err = f.Stat(); err == nil {
				files = append(files, limitedFile{f, st.Size()})
				continue
			}
			f.Close()
		}
		for _, f := range files {
			f.Close()
		}
		return nil, fmt.Errorf("calllog: opening %s: %w", name, err)
	}
	return files, nil
}

// readFile returns the last want entries of server in one file, oldest
// first. Only the lines kept are decoded.
func (l *Log) readFile(f limitedFile, server string, want int) ([]Entry, error) {
	ring := make([][]byte, 0, min(want, 1024))
	start := 0 // ring[start] is the oldest once the ring is full
	r := stream.NewReader(io.LimitReader(f, f.size), maxLine)
	bad := 0
	for {
		line, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("calllog: reading %s: %w", f.Name(), err)
		}
		srv := gjson.GetBytes(line, "server")
		if srv.Type != gjson.String || srv.Str == "" {
			bad++ // not an entry, or an oversized_line from the reader
			continue
		}
		if server != "" && srv.Str != server {
			continue
		}
		if len(ring) < want {
			ring = append(ring, bytes.Clone(line))
		} else {
			ring[start] = append(ring[start][:0], line...)
			start = (start + 1) % want
		}
	}
	out := make([]Entry, 0, len(ring))
	for _, line := range append(ring[start:], ring[:start]...) {
		var e Entry
		if json.Unmarshal(line, &e) != nil {
			bad++
			continue
		}
		out = append(out, e)
	}
	if bad > 0 {
		l.log.Warn("calllog: skipped unreadable lines", "file", f.Name(), "lines", bad)
	}
	return out, nil
}

// Close closes the file. It is idempotent.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	return l.f.Close()
}

// capInput keeps an input of at most max bytes; a longer one becomes a
// JSON string holding its beginning and a note.
func capInput(in json.RawMessage, max int) json.RawMessage {
	if len(in) == 0 || len(in) <= max {
		return in
	}
	s := string(in[:cutUTF8(in, max)]) + fmt.Sprintf("… (input cut, %d bytes)", len(in))
	b, _ := json.Marshal(s)
	return b
}

func capOutput(out *string, max int) *string {
	if out == nil || len(*out) <= max {
		return out
	}
	s := (*out)[:cutUTF8([]byte(*out), max)] + fmt.Sprintf("… (output cut, %d bytes)", len(*out))
	return &s
}

// cutUTF8 is the largest n <= max that does not split a character.
func cutUTF8(b []byte, max int) int {
	n := max
	for n > 0 && !utf8.RuneStart(b[n]) {
		n--
	}
	return n
}

// DirectEntry is the log entry of an mcp/call: its result, the arguments
// sent and the time it ended.
func DirectEntry(res probe.CallResult, args json.RawMessage, at time.Time) Entry {
	d := res.DurationMs
	out := res.Content
	return Entry{
		Time: at.UTC(), Kind: KindDirect, Server: res.Server, Tool: res.Tool,
		IsError: res.IsError, DurationMs: &d, ResultBytes: resultBytes(res.Content, res.Attachments),
		Input: args, Output: &out,
	}
}

// resultBytes is the size of a result: its text plus its attachments.
func resultBytes(text string, atts []probe.Attachment) int64 {
	n := int64(len(text))
	for _, a := range atts {
		n += a.Size
	}
	return n
}
