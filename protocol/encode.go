package protocol

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"

	"github.com/tidwall/gjson"
)

// Null is the id of a reply to a frame whose id could not be read.
var Null = json.RawMessage("null")

// StringID returns s as a request id.
func StringID(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

// IntID returns n as a request id.
func IntID(n int64) json.RawMessage { return strconv.AppendInt(nil, n, 10) }

// NewRequest builds a client request frame, for Go clients and tests. data
// must be the data struct of typ (or a pointer to it) and valid.
func NewRequest(id json.RawMessage, typ string, data Data) (Frame, error) {
	if len(id) == 0 || string(id) == "null" {
		return Frame{}, badRequest("%s: id: required", typ)
	}
	if msg := checkID(id); msg != "" {
		return Frame{}, badRequest("%s: id: %s", typ, msg)
	}
	raw, err := encodeData(requestData, typ, data)
	if err != nil {
		return Frame{}, err
	}
	return Frame{Type: typ, ID: id, Data: raw}, nil
}

// NewPush builds a proxy → client frame other than reply. data must be the
// data struct of typ (or a pointer to it) and valid: the proxy never sends a
// frame its own schema would reject. For session/event on the hot path use
// AppendSessionEvent, which does not re-encode the event.
func NewPush(typ string, data Data) (Frame, error) {
	raw, err := encodeData(pushData, typ, data)
	if err != nil {
		return Frame{}, err
	}
	return Frame{Type: typ, Data: raw}, nil
}

// EncodePush builds the push frame of typ with data (as NewPush) and encodes
// it: the bytes a connection sends. The data is encoded once (AppendFrame
// does not scan it again).
func EncodePush(typ string, data Data) ([]byte, error) {
	f, err := NewPush(typ, data)
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", typ, err)
	}
	b, err := AppendFrame(make([]byte, 0, len(f.Data)+len(typ)+24), f)
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", typ, err)
	}
	return b, nil
}

// NewReply builds a success reply echoing id (Null when nil). data is the
// request type's result struct, or nil for {}; it must be valid.
func NewReply(id json.RawMessage, data Data) (Frame, error) {
	if data == nil {
		data = Empty{}
	}
	raw, err := encodeValid(data)
	if err != nil {
		return Frame{}, withPrefix(err, "reply", "data")
	}
	return Frame{Type: TypeReply, ID: replyID(id), OK: Ptr(true), Data: raw}, nil
}

// NewErrorReply builds an error reply echoing id (Null when nil). An *Error
// in err's chain is sent as is; any other error becomes internal with a
// generic message, because its text may hold paths or secrets: log it, and
// wrap what a client may see in an *Error.
func NewErrorReply(id json.RawMessage, err error) Frame {
	var pe *Error
	if !errors.As(err, &pe) || pe == nil {
		pe = Errorf(CodeInternal, "internal error")
	}
	return Frame{Type: TypeReply, ID: replyID(id), OK: Ptr(false), Error: pe}
}

func replyID(id json.RawMessage) json.RawMessage {
	if len(id) == 0 {
		return Null
	}
	return id
}

func encodeData(reg map[string]func() Data, typ string, data Data) (json.RawMessage, error) {
	mk, ok := reg[typ]
	if !ok {
		return nil, Errorf(CodeUnknownType, "unknown message type %q", typ)
	}
	if data == nil {
		return nil, Errorf(CodeInternal, "%s: no data given", typ)
	}
	want := reflect.TypeOf(mk()).Elem()
	got := reflect.TypeOf(data)
	if got.Kind() == reflect.Pointer {
		got = got.Elem()
	}
	if got != want {
		return nil, Errorf(CodeInternal, "%s: data is %v, want protocol.%s", typ, got, want.Name())
	}
	raw, err := encodeValid(data)
	if err != nil {
		return nil, withPrefix(err, typ, "data")
	}
	return raw, nil
}

// encodeValid validates data and returns its encoding, encoding it once.
// A Data type of another package is validated by its own Validate.
func encodeValid(data Data) (json.RawMessage, error) {
	t := reflect.TypeOf(data)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if schemas().byType[t] != nil {
		return validateEncode(data)
	}
	if err := data.Validate(); err != nil {
		return nil, err
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return nil, Errorf(CodeInternal, "encoding %T: %v", data, err)
	}
	return raw, nil
}

// AppendSessionEvent appends the session/event frame
//
//	{"type":"session/event","data":{"session":S,"seq":N,"event":EVENT}}
//
// to dst. event is copied byte for byte, never decoded or re-encoded; it
// must be one JSON object (package stream guarantees this for what it
// emits). This is the hot path of the proxy's fan-out.
func AppendSessionEvent(dst []byte, session string, seq int64, event []byte) []byte {
	dst = append(dst, `{"type":"session/event","data":{"session":`...)
	dst = AppendJSONString(dst, session)
	dst = append(dst, `,"seq":`...)
	dst = strconv.AppendInt(dst, seq, 10)
	dst = append(dst, `,"event":`...)
	dst = append(dst, event...)
	return append(dst, "}}"...)
}

// AppendFrame appends the encoding of f to dst: the members json.Marshal(f)
// would write, with f.ID and f.Data copied byte for byte instead of being
// scanned again. They must each be empty or one valid JSON value, as
// NewPush, NewReply, NewErrorReply and ParseFrame make them. The error is
// that of encoding f.Error.
func AppendFrame(dst []byte, f Frame) ([]byte, error) {
	var errJSON []byte
	if f.Error != nil {
		var err error
		if errJSON, err = json.Marshal(f.Error); err != nil {
			return dst, err
		}
	}
	dst = append(dst, `{"type":`...)
	dst = AppendJSONString(dst, f.Type)
	if len(f.ID) > 0 {
		dst = append(append(dst, `,"id":`...), f.ID...)
	}
	if f.OK != nil {
		dst = strconv.AppendBool(append(dst, `,"ok":`...), *f.OK)
	}
	if len(f.Data) > 0 {
		dst = append(append(dst, `,"data":`...), f.Data...)
	}
	if errJSON != nil {
		dst = append(append(dst, `,"error":`...), errJSON...)
	}
	return append(dst, '}'), nil
}

// AppendJSONString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD;
// U+2028 and U+2029 are escaped so the output is also valid JavaScript.
func AppendJSONString(dst []byte, s string) []byte {
	return gjson.AppendJSONString(dst, s)
}
