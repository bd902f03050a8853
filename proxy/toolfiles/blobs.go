package toolfiles

import (
	"bytes"
	"container/list"
	"fmt"
	"mime"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/stream"
)

// BlobPath is where attachments are served: BlobPath + sha256.
const BlobPath = "/v1/blobs/"

// WriteError writes an HTTP error reply with a protocol error code (the
// proxy's {"error":{"code","message"}}).
type WriteError func(w http.ResponseWriter, status int, code protocol.Code, msg string)

var sha256Hex = regexp.MustCompile(`^[0-9a-f]{64}$`)

// Blobs holds the attachments normalization takes out of tool results,
// by sha256, bounded by total bytes: when full, the least recently used are
// evicted. It is the stream.Sink of every session and is safe for
// concurrent use.
type Blobs struct {
	writeError WriteError

	mu      sync.Mutex
	max     int64
	size    int64
	byHash  map[string]*list.Element // of *blob
	lru     *list.List               // front: most recently used
	evicted int64                    // blobs dropped to respect max (tests read it)
}

type blob struct {
	sha       string
	mediaType string
	data      []byte
}

// NewBlobs returns a store of at most maxBytes; its handler writes errors
// with writeError.
func NewBlobs(maxBytes int64, writeError WriteError) *Blobs {
	return &Blobs{writeError: writeError, max: maxBytes, byHash: map[string]*list.Element{}, lru: list.New()}
}

// PutAttachment implements stream.Sink: it keeps a copy of data (valid
// only during the call) and returns the URL it is served at, relative to
// the proxy's base URL. a is the store's to keep, and a.SHA256 is the hex
// sha256 of data that package stream computed.
func (b *Blobs) PutAttachment(a stream.Attachment, data []byte) (string, error) {
	sha := a.SHA256
	if int64(len(data)) > b.max {
		return "", fmt.Errorf("blob store: attachment of %s is larger than the store (%s)", stream.FormatSize(len(data)), stream.FormatSize(int(b.max)))
	}
	url := BlobPath + sha
	b.mu.Lock()
	defer b.mu.Unlock()
	if e, ok := b.byHash[sha]; ok {
		b.lru.MoveToFront(e)
		return url, nil
	}
	for b.size+int64(len(data)) > b.max {
		e := b.lru.Back()
		old := e.Value.(*blob)
		b.lru.Remove(e)
		delete(b.byHash, old.sha)
		b.size -= int64(len(old.data))
		b.evicted++
	}
	bl := &blob{sha: sha, mediaType: cleanMediaType(a.MediaType), data: bytes.Clone(data)}
	b.byHash[sha] = b.lru.PushFront(bl)
	b.size += int64(len(data))
	return url, nil
}

// get returns the blob of sha, or nil.
func (b *Blobs) get(sha string) *blob {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.byHash[sha]
	if !ok {
		return nil
	}
	b.lru.MoveToFront(e)
	return e.Value.(*blob)
}

// ServeHTTP serves an attachment (SPEC §9): GET or HEAD of BlobPath +
// sha256.
func (b *Blobs) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		b.writeError(w, http.StatusMethodNotAllowed, protocol.CodeBadRequest, "blobs take GET or HEAD")
		return
	}
	sha := strings.TrimPrefix(r.URL.Path, BlobPath)
	if !sha256Hex.MatchString(sha) {
		b.writeError(w, http.StatusBadRequest, protocol.CodeBadRequest, fmt.Sprintf("blob id %.80q is not 64 lower-case hex digits (a sha256)", sha))
		return
	}
	bl := b.get(sha)
	if bl == nil {
		b.writeError(w, http.StatusNotFound, protocol.CodeNotFound, "no blob "+sha+" (unknown, or evicted from the bounded store)")
		return
	}
	setFileHeaders(w.Header(), bl.mediaType, "private, max-age=31536000, immutable", "attachment")
	w.Header().Set("ETag", `"`+sha+`"`)
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(bl.data))
}

// cleanMediaType returns mt when it is a well-formed type/subtype (with no
// parameters that could smuggle anything), else application/octet-stream.
func cleanMediaType(mt string) string {
	t, _, err := mime.ParseMediaType(mt)
	if err != nil || !strings.Contains(t, "/") || len(t) > 127 {
		return "application/octet-stream"
	}
	return t
}

// setFileHeaders sets the headers of a file served from a tool's output
// (/v1/blobs, /v1/tool-results): its media type, no sniffing, a sandbox
// with nothing allowed, and inline only for images and audio, else
// attachment (the Content-Disposition given).
func setFileHeaders(h http.Header, mediaType, cacheControl, attachment string) {
	h.Set("Content-Type", mediaType)
	h.Set("Cache-Control", cacheControl)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	if strings.HasPrefix(mediaType, "image/") || strings.HasPrefix(mediaType, "audio/") {
		h.Set("Content-Disposition", "inline")
	} else {
		h.Set("Content-Disposition", attachment)
	}
}
