package proxy

import (
	"encoding/json"
	"fmt"

	"github.com/ccproxy/ccproxy/protocol"
)

// outFrame is one frame queued for a client. sub, when set, is the
// subscription it belongs to: the frame is dropped if that subscription
// ended before the frame was written.
type outFrame struct {
	data []byte
	sub  *subscription
}

// encodeReply encodes a success reply (data nil means {}).
func encodeReply(id json.RawMessage, data protocol.Data) ([]byte, error) {
	f, err := protocol.NewReply(id, data)
	if err != nil {
		return nil, fmt.Errorf("encoding reply: %w", err)
	}
	b, err := protocol.AppendFrame(make([]byte, 0, len(f.Data)+len(f.ID)+40), f)
	if err != nil {
		return nil, fmt.Errorf("encoding reply: %w", err)
	}
	return b, nil
}

// encodeError encodes an error reply. Errors that are not *protocol.Error
// become "internal" with a generic message (their text may hold secrets).
func encodeError(id json.RawMessage, err error) []byte {
	b, mErr := protocol.AppendFrame(nil, protocol.NewErrorReply(id, err))
	if mErr != nil {
		b, _ = protocol.AppendFrame(nil, protocol.NewErrorReply(id, protocol.Errorf(protocol.CodeInternal, "internal error")))
	}
	return b
}
