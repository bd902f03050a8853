package toolfiles

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/ccproxy/ccproxy/stream"
)

func TestBlobStoreBounded(t *testing.T) {
	b := NewBlobs(100, nil)
	put := func(data string) (string, error) {
		sum := sha256.Sum256([]byte(data))
		return b.PutAttachment(attachment(hex.EncodeToString(sum[:]), "image/png"), []byte(data))
	}
	sha := func(data string) string { s := sha256.Sum256([]byte(data)); return hex.EncodeToString(s[:]) }
	a, c := strings.Repeat("a", 60), strings.Repeat("c", 60)
	if _, err := put(a); err != nil {
		t.Fatal(err)
	}
	if _, err := put(c); err != nil {
		t.Fatal(err)
	}
	if b.get(sha(a)) != nil || b.get(sha(c)) == nil {
		t.Error("the least recently used blob was not evicted")
	}
	if _, err := put(strings.Repeat("x", 101)); err == nil || !strings.Contains(err.Error(), "larger than the store") {
		t.Errorf("oversized blob: %v", err)
	}
	n, size, evicted := b.stats()
	if n != 1 || size != 60 || evicted != 1 {
		t.Errorf("stats = %d %d %d", n, size, evicted)
	}
	if got := cleanMediaType("text/html; charset=utf-8"); got != "text/html" {
		t.Errorf("cleanMediaType = %q", got)
	}
	if got := cleanMediaType("nonsense"); got != "application/octet-stream" {
		t.Errorf("cleanMediaType = %q", got)
	}
}

func (b *Blobs) stats() (count int, size, evicted int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.lru.Len(), b.size, b.evicted
}

func attachment(sha, mt string) stream.Attachment {
	return stream.Attachment{Kind: "image", MediaType: mt, SHA256: sha}
}
