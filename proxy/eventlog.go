package proxy

// eventLog is a session's replay log: the session/event frames of its most
// recent events, in seq order, bounded by the total size of the frames. The
// frames are immutable once appended and shared with the clients' send
// queues, so fan-out and replay never copy them.
//
// It is not safe for concurrent use; the session's mutex guards it.
type eventLog struct {
	max     int64    // bound on bytes, > 0
	bytes   int64    // sum of len(frames)
	first   int64    // seq of frames[head]; meaningful when n > 0
	last    int64    // newest seq ever appended (0: none)
	ring    [][]byte // circular buffer of frames
	head, n int      // oldest element, element count
}

func newEventLog(maxBytes int64) *eventLog {
	return &eventLog{max: maxBytes, ring: make([][]byte, 64)}
}

// FirstSeq is the oldest seq the log holds, or LastSeq+1 when it is empty.
func (l *eventLog) FirstSeq() int64 {
	if l.n == 0 {
		return l.last + 1
	}
	return l.first
}

// LastSeq is the newest seq assigned so far (0 when none).
func (l *eventLog) LastSeq() int64 { return l.last }

// Append adds the frame of event seq, which must be LastSeq()+1, and drops
// the oldest frames while the log is over its bound (possibly this one, when
// it alone is larger than the bound).
func (l *eventLog) Append(seq int64, frame []byte) {
	if seq != l.last+1 {
		panic("eventLog: seq out of order")
	}
	if l.n == len(l.ring) {
		grown := make([][]byte, 2*len(l.ring))
		for i := 0; i < l.n; i++ {
			grown[i] = l.ring[(l.head+i)%len(l.ring)]
		}
		l.ring, l.head = grown, 0
	}
	if l.n == 0 {
		l.first = seq
	}
	l.ring[(l.head+l.n)%len(l.ring)] = frame
	l.n++
	l.last = seq
	l.bytes += int64(len(frame))
	for l.bytes > l.max && l.n > 0 {
		l.bytes -= int64(len(l.ring[l.head]))
		l.ring[l.head] = nil
		l.head = (l.head + 1) % len(l.ring)
		l.n--
		l.first++
	}
	if l.n == 0 {
		l.first = l.last + 1
	}
	// Shrink a ring that is mostly empty after a burst of small events.
	if len(l.ring) > 1024 && l.n < len(l.ring)/8 {
		shrunk := make([][]byte, len(l.ring)/4)
		for i := 0; i < l.n; i++ {
			shrunk[i] = l.ring[(l.head+i)%len(l.ring)]
		}
		l.ring, l.head = shrunk, 0
	}
}

// Get returns the frame of seq, or nil when the log does not hold it.
func (l *eventLog) Get(seq int64) []byte {
	if l.n == 0 || seq < l.first || seq > l.last {
		return nil
	}
	return l.ring[(l.head+int(seq-l.first))%len(l.ring)]
}
