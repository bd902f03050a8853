package eventlog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ccproxy/ccproxy/internal/privdir"
)

type atomicInt64 struct{ v atomic.Int64 }

func testDiscardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func testFrame(seq int64, size int) []byte {
	return []byte(fmt.Sprintf("%d:%s", seq, strings.Repeat("x", size)))
}

// readAll reads the log from seq on as a client's pull does.
func readAll(t *testing.T, l *Log, from int64) [][]byte {
	t.Helper()
	var out [][]byte
	for from <= l.LastSeq() {
		ch := l.Collect(from, 7, 3000)
		got, err := ch.Read()
		ch.Release()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, got...)
		from += int64(len(got))
	}
	return out
}

// The log keeps its newest frames in memory within its bound, the older
// ones on disk within the disk budget, reads both back byte for byte, and
// only drops frames (oldest segments first) beyond the disk budget.
// Release removes the files.
func TestEventLogSpillsToDisk(t *testing.T) {
	dir := t.TempDir()
	var global atomicInt64
	l := New(1000, 8000, func() string { return dir }, "s-test", &global.v)
	for seq := int64(1); seq <= 40; seq++ {
		l.Append(seq, testFrame(seq, 95)) // 98-99 bytes each
	}
	if l.MemBytes() > 1000 || global.v.Load() != l.MemBytes() {
		t.Fatalf("memory %d bytes (global %d), bound 1000", l.MemBytes(), global.v.Load())
	}
	if l.FirstSeq() != 1 || l.DiskBytes() == 0 {
		t.Fatalf("first %d, disk %d: want everything kept, part on disk", l.FirstSeq(), l.DiskBytes())
	}
	got := readAll(t, l, 1)
	if len(got) != 40 {
		t.Fatalf("read %d frames, want 40", len(got))
	}
	for i, f := range got {
		if !bytes.Equal(f, testFrame(int64(i+1), 95)) {
			t.Fatalf("frame %d = %.20q", i+1, f)
		}
	}

	// Over the disk budget: the oldest segments go, nothing else.
	for seq := int64(41); seq <= 200; seq++ {
		l.Append(seq, testFrame(seq, 95))
	}
	if l.DiskBytes() > 8000 || l.FirstSeq() <= 1 {
		t.Fatalf("disk %d bytes, first %d", l.DiskBytes(), l.FirstSeq())
	}
	first := l.FirstSeq()
	got = readAll(t, l, first)
	if int64(len(got)) != 200-first+1 || !bytes.Equal(got[0], testFrame(first, 95)) || !bytes.Equal(got[len(got)-1], testFrame(200, 95)) {
		t.Fatalf("read %d frames from %d", len(got), first)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "s-test.*.log"))
	if len(files) == 0 || len(files) > 9 {
		t.Fatalf("%d segment files", len(files))
	}

	// A reader holding a dropped segment still reads it.
	ch := l.Collect(first, 1, 1)
	for seq := int64(201); seq <= 400; seq++ {
		l.Append(seq, testFrame(seq, 95))
	}
	if l.FirstSeq() <= first {
		t.Fatal("the pinned segment was not dropped")
	}
	if got, err := ch.Read(); err != nil || !bytes.Equal(got[0], testFrame(first, 95)) {
		t.Fatalf("reading a dropped, pinned segment: %v", err)
	}
	// Its file is closed and removed once the reader lets go, not before
	// (Windows cannot remove an open file).
	pinned := ch.items[0].seg.path
	if _, err := os.Stat(pinned); err != nil {
		t.Fatalf("the pinned segment's file was removed while open: %v", err)
	}
	ch.Release()
	if _, err := os.Stat(pinned); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the dropped segment's file is still there after its reader let go: %v", err)
	}

	l.Release()
	if files, _ := filepath.Glob(filepath.Join(dir, "*.log")); len(files) != 0 || global.v.Load() != 0 {
		t.Fatalf("after Release: files %v, memory %d", files, global.v.Load())
	}
}

// Without a spool directory the log keeps only its memory tail.
func TestEventLogWithoutDisk(t *testing.T) {
	l := New(1000, 8000, func() string { return "" }, "s-test", nil)
	for seq := int64(1); seq <= 40; seq++ {
		l.Append(seq, testFrame(seq, 95))
	}
	if l.FirstSeq() < 30 || l.DiskBytes() != 0 {
		t.Fatalf("first %d, disk %d", l.FirstSeq(), l.DiskBytes())
	}
	if l.diskErr == nil || l.TakeDiskFails() == 0 {
		t.Error("no error reported, or no failure counted")
	}
	if got := readAll(t, l, l.FirstSeq()); !bytes.Equal(got[len(got)-1], testFrame(40, 95)) {
		t.Fatal("last frame differs")
	}
}

// At start, the spool directories of ccproxy processes that are gone
// (their lock is free) are removed; a live one's (locked) is kept.
func TestStaleSpoolRemoved(t *testing.T) {
	root := t.TempDir()
	mk := func(name string) string {
		dir := filepath.Join(root, name)
		os.MkdirAll(dir, 0o700)
		os.WriteFile(filepath.Join(dir, "lock"), nil, 0o600)
		os.WriteFile(filepath.Join(dir, "s-x.1.log"), []byte("frame"), 0o600)
		return dir
	}
	dead := mk("run-999999-dead")
	live := mk("run-" + strconv.Itoa(os.Getpid()+1) + "-live")
	f, err := os.OpenFile(filepath.Join(live, "lock"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := privdir.Lock(f, false); err != nil { // as a live ccproxy holds its own
		t.Fatal(err)
	}
	other := filepath.Join(root, "not-ours")
	os.MkdirAll(other, 0o700)

	sp := NewSpool(root, testDiscardLogger())
	dir := sp.Dir()
	if dir == "" {
		t.Fatal("no spool directory")
	}
	if st, err := os.Stat(dir); err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("own directory: %v %v", st, err)
	}
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("the dead process's directory is still there (%v)", err)
	}
	for _, d := range []string{live, other} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s was removed: %v", d, err)
		}
	}
	// Our own directory is locked: another ccproxy starting now keeps it.
	NewSpool(root, testDiscardLogger()).removeStale()
	if _, err := os.Stat(live); err != nil {
		t.Errorf("a live process's directory was removed: %v", err)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Errorf("a live process's directory was removed: %v", err)
	}
	sp.Close()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("own directory left after close (%v)", err)
	}
}
