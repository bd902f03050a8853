package eventlog

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
)

// Log is a session's replay log: the session/event frames of its
// events, in seq order. The newest frames are kept in memory (at most
// memMax bytes, and less when the server's global budget asks for it);
// older ones are spilled to append-only segment files in the spool
// directory, with an in-memory offset index (4 bytes per event), and read
// back with ReadAt (the page cache does the caching). Segments are dropped,
// oldest first, when the frames on disk exceed diskMax bytes: only then
// are events lost (a subscriber behind them gets session/gap) — or when a
// spill fails (a full disk, no spool directory): the frames on disk are
// then given up, the error kept for the owner to log once (TakeDiskErr) and
// the failure counted (TakeDiskFails; in proxy,
// ccproxy_replay_log_spill_failures_total). Spill files are made by create (CreateSpillFile; tests put in one that fails).
//
// Frames are immutable once appended and shared with the clients' send
// queues, so fan-out and in-memory replay never copy them.
//
// It is not safe for concurrent use: one lock of its owner guards it (in
// proxy, hub.mu), and every method but Chunk.Read is called with it held. Disk reads
// happen without that lock: Collect pins the segments it refers to
// (segment.refs, guarded by the same mutex) so that a segment dropped
// meanwhile stays open until its readers are done.
type Log struct {
	memMax  int64         // bound on memory bytes, > 0
	diskMax int64         // bound on disk bytes; 0: no disk
	segMax  int64         // size at which a new segment is started
	dir     func() string // the directory for segments ("" when unavailable)
	create  func(path string) (SpillFile, error)
	name    string        // file name prefix (the session id)
	global  *atomic.Int64 // every log's memory bytes, for the server's budget; may be nil

	last int64 // newest seq ever appended (0: none)

	// Memory: a circular buffer of the frames memFirst..last.
	ring     []memFrame
	head, n  int
	memFirst int64
	memBytes int64

	// Disk: segments holding diskFirst..memFirst-1, oldest first.
	segs      []*segment
	segNo     int
	diskBytes int64
	diskFirst int64
	diskErr   error  // the last write error, for the hub to log once
	diskFails int    // spills that failed since the hub last took the count (TakeDiskFails)
	wbuf      []byte // frames of the newest segment not written yet (from its flushed to size)
}

type memFrame struct {
	data  []byte
	stamp int64 // when it was appended (logClock), for the global budget
}

// logClock orders appends across all logs: the global budget evicts the
// frames with the smallest stamps first.
var logClock atomic.Int64

// segment is one spill file: frames first..first+len(offs)-1 at offs,
// each ending where the next starts (the last at size).
type segment struct {
	f       SpillFile
	path    string
	first   int64
	offs    []uint32
	size    int64
	flushed int64 // bytes written to the file; the rest (to size) is in Log.wbuf
	refs    int   // readers between Collect and Chunk.Release
	dropped bool  // removed from the log: discard when refs reaches 0
}

// discard closes a dropped segment's file, then removes it: in that order,
// because Windows cannot remove a file that is open.
func (g *segment) discard() {
	g.f.Close()
	os.Remove(g.path)
}

func (g *segment) end(i int) int64 {
	if i+1 < len(g.offs) {
		return int64(g.offs[i+1])
	}
	return g.size
}

const maxSegBytes = 64 << 20

// SpillFile is an open spill file: an *os.File (CreateSpillFile), or a
// test's stand-in that fails like a full disk.
type SpillFile interface {
	io.ReaderAt
	io.WriterAt
	io.Closer
}

// CreateSpillFile creates the spill file at path, which must not exist,
// readable and writable by the owner only.
func CreateSpillFile(path string) (SpillFile, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
}

// New is an empty log of at most memMax bytes in memory and diskMax on disk
// (0: none), spilling to segment files named name.N.log in dir() ("" when
// there is none: then it keeps only its memory tail). global, when not
// nil, follows the memory bytes of the log (Budget.Used).
func New(memMax, diskMax int64, dir func() string, name string, global *atomic.Int64) *Log {
	seg := min(max(diskMax/8, 1), maxSegBytes)
	return &Log{memMax: memMax, diskMax: diskMax, segMax: seg, dir: dir, create: CreateSpillFile, name: name, global: global,
		ring: make([]memFrame, 64), memFirst: 1, diskFirst: 1}
}

// FirstSeq is the oldest seq the log holds, or LastSeq+1 when it is empty.
func (l *Log) FirstSeq() int64 {
	if len(l.segs) > 0 {
		return l.diskFirst
	}
	return l.memFirst
}

// LastSeq is the newest seq assigned so far (0 when none).
func (l *Log) LastSeq() int64 { return l.last }

// MemBytes is the size of the frames held in memory.
func (l *Log) MemBytes() int64 { return l.memBytes }

// DiskBytes is the size of the frames held on disk.
func (l *Log) DiskBytes() int64 { return l.diskBytes }

// OldestStamp is the stamp of the oldest frame in memory (0: none).
func (l *Log) OldestStamp() int64 {
	if l.n == 0 {
		return 0
	}
	return l.ring[l.head].stamp
}

// Append adds the frame of event seq, which must be LastSeq()+1, then
// spills the oldest frames to disk while memory is over its bound.
func (l *Log) Append(seq int64, frame []byte) {
	if seq != l.last+1 {
		panic("Log: seq out of order")
	}
	if l.n == len(l.ring) {
		l.resize(2 * len(l.ring))
	}
	if l.n == 0 {
		l.memFirst = seq
	}
	l.ring[(l.head+l.n)%len(l.ring)] = memFrame{data: frame, stamp: logClock.Add(1)}
	l.n++
	l.last = seq
	l.addMem(int64(len(frame)))
	l.TrimMem(l.memMax)
}

func (l *Log) addMem(d int64) {
	l.memBytes += d
	if l.global != nil {
		l.global.Add(d)
	}
}

func (l *Log) resize(size int) {
	grown := make([]memFrame, size)
	for i := 0; i < l.n; i++ {
		grown[i] = l.ring[(l.head+i)%len(l.ring)]
	}
	l.ring, l.head = grown, 0
}

// TrimMem spills the oldest frames until memory holds at most max bytes.
func (l *Log) TrimMem(max int64) {
	for l.memBytes > max && l.n > 0 {
		f := l.ring[l.head]
		l.ring[l.head] = memFrame{}
		l.head = (l.head + 1) % len(l.ring)
		l.n--
		l.addMem(-int64(len(f.data)))
		l.spill(l.memFirst, f.data)
		l.memFirst++
	}
	if l.n == 0 {
		l.memFirst = l.last + 1
	}
	// Shrink a ring that is mostly empty after a burst of small events.
	if len(l.ring) > 1024 && l.n < len(l.ring)/8 {
		l.resize(len(l.ring) / 4)
	}
}

// spill appends the frame of seq (== memFirst) to the newest segment. When
// it cannot (no disk, a write error) the frames on disk are given up: the
// log then starts in memory.
func (l *Log) spill(seq int64, frame []byte) {
	if l.diskMax <= 0 || int64(len(frame)) > l.diskMax {
		l.dropDisk(seq + 1)
		return
	}
	var g *segment
	if k := len(l.segs); k > 0 && l.segs[k-1].size+int64(len(frame)) <= max(l.segMax, int64(len(frame))) && l.segs[k-1].size+int64(len(frame)) < 1<<32 {
		g = l.segs[k-1]
	}
	if g == nil {
		if err := l.flush(); err != nil {
			l.spillFailed(err, seq+1)
			return
		}
		var err error
		if g, err = l.newSegment(seq); err != nil {
			l.spillFailed(err, seq+1)
			return
		}
	}
	// Small frames are gathered in wbuf (the newest segment's unwritten
	// tail) and written together: one write per wbufBytes, not per event.
	if len(l.wbuf)+len(frame) > wbufBytes {
		if err := l.flushTo(g); err != nil {
			l.spillFailed(err, seq+1)
			return
		}
	}
	if len(frame) >= wbufBytes {
		if _, err := g.f.WriteAt(frame, g.size); err != nil {
			l.spillFailed(fmt.Errorf("writing %s: %w", g.path, err), seq+1)
			return
		}
		g.flushed = g.size + int64(len(frame))
	} else {
		if l.wbuf == nil {
			l.wbuf = make([]byte, 0, wbufBytes)
		}
		l.wbuf = append(l.wbuf, frame...)
	}
	if len(l.segs) == 0 {
		l.diskFirst = seq
	}
	if g != lastSeg(l.segs) {
		l.segs = append(l.segs, g)
	}
	g.offs = append(g.offs, uint32(g.size))
	g.size += int64(len(frame))
	l.diskBytes += int64(len(frame))
	for l.diskBytes > l.diskMax && len(l.segs) > 0 {
		l.dropSegment()
	}
}

// spillFailed records a failed spill (err, for the hub to log, and one
// more for the count it takes) and gives up the frames on disk: the log
// starts at next, and a subscriber behind it gets session/gap.
func (l *Log) spillFailed(err error, next int64) {
	l.diskErr = err
	l.diskFails++
	l.dropDisk(next)
}

// TakeDiskFails returns the spills that failed since it was last called.
func (l *Log) TakeDiskFails() int {
	n := l.diskFails
	l.diskFails = 0
	return n
}

// wbufBytes is the size of the write buffer of the newest segment.
const wbufBytes = 256 << 10

// flush writes the buffered tail of the newest segment.
func (l *Log) flush() error { return l.flushTo(lastSeg(l.segs)) }

func (l *Log) flushTo(g *segment) error {
	if len(l.wbuf) == 0 || g == nil {
		l.wbuf = l.wbuf[:0]
		return nil
	}
	if _, err := g.f.WriteAt(l.wbuf, g.flushed); err != nil {
		l.wbuf = l.wbuf[:0]
		return fmt.Errorf("writing %s: %w", g.path, err)
	}
	g.flushed += int64(len(l.wbuf))
	l.wbuf = l.wbuf[:0]
	return nil
}

func lastSeg(segs []*segment) *segment {
	if len(segs) == 0 {
		return nil
	}
	return segs[len(segs)-1]
}

func (l *Log) newSegment(first int64) (*segment, error) {
	dir := ""
	if l.dir != nil {
		dir = l.dir()
	}
	if dir == "" {
		return nil, fmt.Errorf("no spool directory")
	}
	l.segNo++
	path := filepath.Join(dir, fmt.Sprintf("%s.%d.log", l.name, l.segNo))
	f, err := l.create(path)
	if err != nil {
		return nil, fmt.Errorf("creating a spill file: %w", err)
	}
	return &segment{f: f, path: path, first: first}, nil
}

// dropSegment removes the oldest segment; its events are lost.
func (l *Log) dropSegment() {
	g := l.segs[0]
	l.segs[0] = nil
	l.segs = l.segs[1:]
	l.diskBytes -= g.size
	if len(l.segs) > 0 {
		l.diskFirst = l.segs[0].first
	} else {
		l.diskFirst = g.first + int64(len(g.offs))
	}
	if len(l.segs) == 0 {
		l.wbuf = l.wbuf[:0] // it was the newest: its buffered tail goes too
	}
	g.dropped = true
	if g.refs == 0 {
		g.discard()
	} // else the last reader's Chunk.Release does

}

// dropDisk gives up every frame on disk; the log starts at next.
func (l *Log) dropDisk(next int64) {
	for len(l.segs) > 0 {
		l.dropSegment()
	}
	l.diskFirst = next
}

// Release frees everything: memory, segments and their files.
func (l *Log) Release() {
	l.trimMemNoSpill()
	l.dropDisk(l.last + 1)
}

func (l *Log) trimMemNoSpill() {
	for l.n > 0 {
		l.addMem(-int64(len(l.ring[l.head].data)))
		l.ring[l.head] = memFrame{}
		l.head = (l.head + 1) % len(l.ring)
		l.n--
	}
	l.memFirst = l.last + 1
	l.ring = make([]memFrame, 64)
	l.head = 0
}

// Chunk is what Collect found: frames in memory, or places on disk to
// read without the lock.
type Chunk struct {
	items []chunkItem
	size  int
}

type chunkItem struct {
	data     []byte   // in memory
	seg      *segment // or on disk: seg.f[off:off+n] (pinned)
	off, end int64
}

// Collect returns the frames from seq on, at most maxFrames and about
// maxBytes (always at least one frame when seq is held). seq must be
// within [FirstSeq, LastSeq]. Segments it refers to are pinned until
// Release.
func (l *Log) Collect(seq int64, maxFrames, maxBytes int) Chunk {
	var c Chunk
	for seq <= l.last && len(c.items) < maxFrames && c.size < maxBytes {
		if seq >= l.memFirst {
			f := l.ring[(l.head+int(seq-l.memFirst))%len(l.ring)].data
			c.items = append(c.items, chunkItem{data: f})
			c.size += len(f)
			seq++
			continue
		}
		g := l.segFor(seq)
		if g == nil {
			break
		}
		i := int(seq - g.first)
		off, end := int64(g.offs[i]), g.end(i)
		if end > g.flushed {
			if err := l.flush(); err != nil {
				l.spillFailed(err, l.memFirst)
				c.Release()
				return Chunk{}
			}
		}
		if k := len(c.items); k > 0 && c.items[k-1].seg == g && c.items[k-1].end == off {
			// Contiguous with the previous item: one read.
			c.items = append(c.items, chunkItem{seg: g, off: off, end: end})
		} else {
			g.refs++
			c.items = append(c.items, chunkItem{seg: g, off: off, end: end})
		}
		c.size += int(end - off)
		seq++
	}
	return c
}

func (l *Log) segFor(seq int64) *segment {
	for _, g := range l.segs { // a handful at most (diskMax / segMax)
		if seq >= g.first && seq < g.first+int64(len(g.offs)) {
			return g
		}
	}
	return nil
}

// Read fills in the frames of c that are on disk. It runs without the
// lock: the regions read were written before Collect and never change.
func (c *Chunk) Read() ([][]byte, error) {
	frames := make([][]byte, len(c.items))
	for i := 0; i < len(c.items); {
		it := c.items[i]
		if it.seg == nil {
			frames[i] = it.data
			i++
			continue
		}
		j := i + 1
		for j < len(c.items) && c.items[j].seg == it.seg && c.items[j].off == c.items[j-1].end {
			j++
		}
		buf := make([]byte, c.items[j-1].end-it.off)
		if _, err := it.seg.f.ReadAt(buf, it.off); err != nil {
			return nil, fmt.Errorf("reading %s: %w", it.seg.path, err)
		}
		for k := i; k < j; k++ {
			frames[k] = buf[c.items[k].off-it.off : c.items[k].end-it.off : c.items[k].end-it.off]
		}
		i = j
	}
	return frames, nil
}

// Release unpins the segments of c, under the lock that guards the log.
func (c *Chunk) Release() {
	var prev *segment
	var prevEnd int64
	for _, it := range c.items {
		if it.seg == nil {
			prev = nil
			continue
		}
		if it.seg != prev || it.off != prevEnd {
			it.seg.refs--
			if it.seg.dropped && it.seg.refs == 0 {
				it.seg.discard()
			}
		}
		prev, prevEnd = it.seg, it.end
	}
}

// MemMax is the log's bound on memory bytes.
func (l *Log) MemMax() int64 { return l.memMax }

// SetCreate replaces how spill files are created (CreateSpillFile); tests
// put in one that fails like a full disk.
func (l *Log) SetCreate(create func(path string) (SpillFile, error)) { l.create = create }

// TakeDiskErr returns the last spill error and forgets it (nil: none since
// the last call), for the owner to log.
func (l *Log) TakeDiskErr() error {
	err := l.diskErr
	l.diskErr = nil
	return err
}

// Len is the number of frames in c.
func (c *Chunk) Len() int { return len(c.items) }
