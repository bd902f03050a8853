package proxy

import (
	"bytes"
	"container/list"
	"fmt"
	"mime"
	"regexp"
	"strings"
	"sync"

	"github.com/ccproxy/ccproxy/stream"
)

// blobPath is where attachments are served: blobPath + sha256.
const blobPath = "/v1/blobs/"

var sha256Hex = regexp.MustCompile(`^[0-9a-f]{64}$`)

// blobStore holds the attachments normalization takes out of tool results,
// by sha256, bounded by total bytes: when full, the least recently used are
// evicted. It is the stream.Sink of every session and is safe for
// concurrent use.
type blobStore struct {
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

func newBlobStore(maxBytes int64) *blobStore {
	return &blobStore{max: maxBytes, byHash: map[string]*list.Element{}, lru: list.New()}
}

// PutAttachment implements stream.Sink: it keeps a copy of data (valid
// only during the call) and returns the URL it is served at, relative to
// the proxy's base URL. a is the store's to keep, and a.SHA256 is the hex
// sha256 of data that package stream computed.
func (b *blobStore) PutAttachment(a stream.Attachment, data []byte) (string, error) {
	sha := a.SHA256
	if int64(len(data)) > b.max {
		return "", fmt.Errorf("blob store: attachment of %s is larger than the store (%s)", stream.FormatSize(len(data)), stream.FormatSize(int(b.max)))
	}
	url := blobPath + sha
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
func (b *blobStore) get(sha string) *blob {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.byHash[sha]
	if !ok {
		return nil
	}
	b.lru.MoveToFront(e)
	return e.Value.(*blob)
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
