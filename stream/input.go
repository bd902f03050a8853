package stream

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// What goes to the CLI's stdin. One malformed line there kills the process
// (FACTS §6), so every message is built here, from typed values, as exactly
// one JSON object followed by "\n".

// Image is an image attached to a user turn.
type Image struct {
	// MediaType is image/png, image/jpeg, image/gif or image/webp.
	MediaType string `json:"mediaType"`
	// Data is the image, base64-encoded (standard alphabet).
	Data string `json:"data"`
}

// MaxImageBytes is UserTurn's bound on one decoded image in a user turn
// (the API's limit is about 5 MB per image).
const MaxImageBytes = 5 << 20

// ErrImageTooLarge is wrapped by the error of a turn whose image is over
// the limit.
var ErrImageTooLarge = errors.New("image too large")

var imageTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

// UserTurn builds a user message for `--input-format stream-json`: the text,
// then the images, as content blocks. It fails on an empty turn and on an
// image that is not base64 of an accepted type, or over MaxImageBytes.
func UserTurn(text string, images []Image) ([]byte, error) {
	return UserTurnLimit(text, images, MaxImageBytes)
}

// decodedLen is the length of padded standard base64 data once decoded
// (exact for valid data; invalid data fails to decode anyway).
func decodedLen(data string) int {
	n := base64.StdEncoding.DecodedLen(len(data))
	if len(data)%4 == 0 {
		tail := data[len(data)-min(len(data), 2):]
		n -= len(tail) - len(strings.TrimRight(tail, "="))
	}
	return n
}

// imageTooLarge says by how much, in exact bytes: two sizes that differ by
// a few bytes must not read the same ("5.0 MiB, more than 5.0 MiB").
func imageTooLarge(i, n, max int) error {
	return fmt.Errorf("user turn: images[%d]: %s of data, more than the %s allowed: %w", i, exactSize(n), exactSize(max), ErrImageTooLarge)
}

// exactSize is "5242881 bytes (5.0 MiB)", or "900 bytes" under 1 KiB.
func exactSize(n int) string {
	if n < 1024 {
		return strconv.Itoa(n) + " bytes"
	}
	return strconv.Itoa(n) + " bytes (" + FormatSize(n) + ")"
}

// UserTurnLimit is UserTurn with another bound on each decoded image; an
// image over it gives an error wrapping ErrImageTooLarge.
func UserTurnLimit(text string, images []Image, maxImageBytes int) ([]byte, error) {
	if strings.TrimSpace(text) == "" && len(images) == 0 {
		return nil, errors.New("user turn: text is empty and there are no images")
	}
	type source struct {
		Type      string `json:"type"`
		MediaType string `json:"media_type"`
		Data      string `json:"data"`
	}
	type block struct {
		Type   string  `json:"type"`
		Text   string  `json:"text,omitempty"`
		Source *source `json:"source,omitempty"`
	}
	var content any = text
	if len(images) > 0 {
		blocks := make([]block, 0, len(images)+1)
		if text != "" {
			blocks = append(blocks, block{Type: "text", Text: text})
		}
		for i, img := range images {
			if !imageTypes[img.MediaType] {
				return nil, fmt.Errorf("user turn: images[%d]: media type %q is not one of image/png, image/jpeg, image/gif, image/webp", i, img.MediaType)
			}
			if n := decodedLen(img.Data); n > maxImageBytes { // before decoding it
				return nil, imageTooLarge(i, n, maxImageBytes)
			}
			n, err := base64.StdEncoding.DecodeString(img.Data)
			if err != nil {
				return nil, fmt.Errorf("user turn: images[%d]: data is not valid base64: %w", i, err)
			}
			if len(n) > maxImageBytes {
				return nil, imageTooLarge(i, len(n), maxImageBytes)
			}
			if len(n) == 0 {
				return nil, fmt.Errorf("user turn: images[%d]: no data", i)
			}
			blocks = append(blocks, block{Type: "image", Source: &source{Type: "base64", MediaType: img.MediaType, Data: img.Data}})
		}
		content = blocks
	}
	return marshalLine(map[string]any{
		"type":               "user",
		"message":            map[string]any{"role": "user", "content": content},
		"parent_tool_use_id": nil,
		"session_id":         "default",
	})
}

// ControlRequest builds a control request to the CLI:
// {"type":"control_request","request_id":ID,"request":{"subtype":S, ...fields}}.
// fields must encode as a JSON object (or be nil).
func ControlRequest(requestID, subtype string, fields any) ([]byte, error) {
	if requestID == "" || subtype == "" {
		return nil, errors.New("control request: request id and subtype are required")
	}
	req := map[string]any{}
	if fields != nil {
		b, err := json.Marshal(fields)
		if err != nil {
			return nil, fmt.Errorf("control request %s: %w", subtype, err)
		}
		if err := json.Unmarshal(b, &req); err != nil {
			return nil, fmt.Errorf("control request %s: fields must be a JSON object: %w", subtype, err)
		}
	}
	req["subtype"] = subtype
	return marshalLine(map[string]any{"type": "control_request", "request_id": requestID, "request": req})
}

// ControlSuccess builds the reply to a control request of the CLI.
func ControlSuccess(requestID string, response any) ([]byte, error) {
	if response == nil {
		response = map[string]any{}
	}
	return marshalLine(map[string]any{"type": "control_response", "response": map[string]any{
		"subtype": "success", "request_id": requestID, "response": response,
	}})
}

// ControlError builds an error reply to a control request of the CLI.
func ControlError(requestID, message string) []byte {
	b, err := marshalLine(map[string]any{"type": "control_response", "response": map[string]any{
		"subtype": "error", "request_id": requestID, "error": message,
	}})
	if err != nil {
		panic(err) // strings always encode
	}
	return b
}

// marshalLine encodes v as one line of JSON ending in "\n". U+2028 and
// U+2029 are escaped by encoding/json, so the line holds no line break.
func marshalLine(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
