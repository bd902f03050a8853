package acp

import (
	"encoding/base64"
	"fmt"
	"strings"
	"time"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/tidwall/gjson"

	protocol "github.com/ccproxy/ccproxy/webview-protocol"
)

// closeTimeout bounds the requests sent while winding down (close,
// interrupt, a permission answer).
const closeTimeout = 10 * time.Second

func encodeBase64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

func gjsonParse(b []byte) gjson.Result { return gjson.ParseBytes(b) }

func mcpRef(m *protocol.MCPRef) gjson.Result {
	if m == nil {
		return gjson.Result{}
	}
	return gjson.Parse(fmt.Sprintf(`{"server":%q,"tool":%q}`, m.Server, m.Tool))
}

// turnOf makes one session/send of an ACP prompt: text blocks in order,
// resource links as their URI, embedded text resources as a context block
// naming their URI, images as images. Audio and binary resources are
// refused: the CLI takes none.
func turnOf(session string, blocks []sdk.ContentBlock) (*protocol.SessionSend, error) {
	send := &protocol.SessionSend{Session: session}
	var text []string
	for i, b := range blocks {
		switch {
		case b.Text != nil:
			text = append(text, b.Text.Text)
		case b.Image != nil:
			send.Images = append(send.Images, protocol.Image{MediaType: b.Image.MimeType, Data: b.Image.Data})
		case b.ResourceLink != nil:
			text = append(text, "@"+strings.TrimPrefix(b.ResourceLink.Uri, "file://"))
		case b.Resource != nil && b.Resource.Resource.TextResourceContents != nil:
			r := b.Resource.Resource.TextResourceContents
			text = append(text, fmt.Sprintf("<context ref=%q>\n%s\n</context>", r.Uri, r.Text))
		default:
			return nil, sdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf("prompt[%d]: audio and binary resources are not supported (text, images, resource links and text resources are)", i)})
		}
	}
	send.Text = strings.Join(text, "\n")
	if err := send.Validate(); err != nil {
		return nil, sdk.NewInvalidParams(map[string]any{"error": "prompt: " + err.Error()})
	}
	return send, nil
}
