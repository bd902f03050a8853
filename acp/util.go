package acp

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/tidwall/gjson"

	"github.com/ccproxy/ccproxy/protocol"
)

// closeTimeout bounds the requests sent while winding down (close,
// interrupt, a permission answer).
const closeTimeout = 10 * time.Second

// createTimeout bounds the wait for a session/create's answer once the
// request is sent (Agent.create), whatever becomes of the request's ctx.
const createTimeout = time.Minute

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
	var imageAt []int // the prompt index of each image
	for i, b := range blocks {
		switch {
		case b.Text != nil:
			text = append(text, b.Text.Text)
		case b.Image != nil:
			send.Images = append(send.Images, protocol.Image{MediaType: b.Image.MimeType, Data: b.Image.Data})
			imageAt = append(imageAt, i)
		case b.ResourceLink != nil:
			text = append(text, mention(b.ResourceLink.Uri))
		case b.Resource != nil && b.Resource.Resource.TextResourceContents != nil:
			r := b.Resource.Resource.TextResourceContents
			// Its text must not close the wrapper early: the rest would read
			// as the user's own words.
			body := strings.ReplaceAll(r.Text, "</context>", "<\\/context>")
			text = append(text, fmt.Sprintf("<context ref=%q>\n%s\n</context>", r.Uri, body))
		default:
			return nil, sdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf("prompt[%d]: audio and binary resources are not supported (text, images, resource links and text resources are)", i)})
		}
	}
	send.Text = strings.Join(text, "\n")
	if err := send.Validate(); err != nil {
		msg := err.Error()
		for k, i := range imageAt { // name the editor's block, not the proxy's field
			if p := fmt.Sprintf("images[%d]", k); strings.Contains(msg, p) {
				msg = strings.Replace(msg, p, fmt.Sprintf("prompt[%d] (image)", i), 1)
				break
			}
		}
		return nil, sdk.NewInvalidParams(map[string]any{"error": "prompt: " + msg})
	}
	return send, nil
}

// mention is how a resource link reaches claude: a file as an @-mention
// of its path, which the CLI expands into the file's content (quoted when
// the path has spaces: @"…", as the CLI reads it; percent-escapes
// decoded), anything else as its URI.
func mention(uri string) string {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" || u.Path == "" {
		return uri
	}
	switch p := u.Path; {
	case strings.ContainsRune(p, '"'):
		return p // cannot be quoted: the path as text
	case strings.ContainsFunc(p, unicode.IsSpace):
		return `@"` + p + `"`
	default:
		return "@" + p
	}
}
