package wsconn

import (
	"encoding/json"
	"errors"
	"io"

	"github.com/ccproxy/ccproxy/protocol"
)

// FrameStatus is what ReadFrame saw of a frame besides its bytes.
type FrameStatus struct {
	Size     int64           // bytes the frame had (all of it, also when discarded)
	TooLarge bool            // over max: discarded
	Refused  bool            // the budget refused to grow buf: discarded
	ID       json.RawMessage // of a discarded frame: its id, when its first bytes show it (protocol.PeekID); else nil
}

// FrameHeadBytes bounds the look at a discarded frame's first bytes for its
// id: room for the type and the longest id, escaped, as clients put them
// (type and id before data).
const FrameHeadBytes = 4 << 10

// ReadFrame reads one frame from r into buf, growing it (in doublings,
// from 64 KiB) only as far as take allows and maxBytes permits; a frame that
// does not fit is read to its end and discarded, its id read from its first
// FrameHeadBytes (what buf already holds, or, when it holds less, those
// bytes completed in a small array of that size; never more).
func ReadFrame(r io.Reader, buf []byte, maxBytes int64, take func(grow int64) bool) ([]byte, FrameStatus, error) {
	var st FrameStatus
	for {
		if len(buf) == cap(buf) {
			if int64(len(buf)) > maxBytes {
				st.TooLarge = true
				break
			}
			newCap := min(max(int64(2*cap(buf)), 64<<10), maxBytes+1)
			if !take(newCap - int64(cap(buf))) {
				st.Refused = true
				break
			}
			grown := make([]byte, len(buf), newCap)
			copy(grown, buf)
			buf = grown
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			st.Size = int64(len(buf))
			return buf, st, nil
		}
		if err != nil {
			return buf, st, err
		}
	}
	head, read := buf, int64(len(buf))
	if len(head) < FrameHeadBytes {
		var small [FrameHeadBytes]byte
		n := copy(small[:], head)
		m, err := io.ReadFull(r, small[n:])
		read += int64(m)
		if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
			return buf[:0], st, err
		}
		head = small[:n+m]
	}
	st.ID = protocol.PeekID(head[:min(len(head), FrameHeadBytes)])
	rest, err := io.Copy(io.Discard, r)
	st.Size = read + rest
	return buf[:0], st, err
}
