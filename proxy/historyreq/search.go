package historyreq

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"

	"github.com/ccproxy/ccproxy/history/search"
	"github.com/ccproxy/ccproxy/internal/privdir"
	"github.com/ccproxy/ccproxy/protocol"
)

// DefaultIndexDir is where the search index goes when Options.IndexDir is
// empty: os.UserCacheDir()/ccproxy/search, or a directory of the user's
// under os.TempDir().
func DefaultIndexDir() string {
	if d, err := os.UserCacheDir(); err == nil && d != "" {
		return filepath.Join(d, "ccproxy", "search")
	}
	return filepath.Join(privdir.UserTemp("ccproxy"), "search")
}

// searcher opens the index on the first history/search and keeps it
// until Close.
type searcher struct {
	opts search.Options

	mu     sync.Mutex // guards x and closed
	x      *search.Index
	closed bool
}

func (s *searcher) index() (*search.Index, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, protocol.Errorf(protocol.CodeShuttingDown, "history/search: the proxy is shutting down")
	}
	if s.x == nil {
		x, err := search.Open(s.opts)
		if err != nil {
			return nil, err
		}
		s.x = x
	}
	return s.x, nil
}

// close closes the index; it may be called more than once.
func (s *searcher) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	if s.x == nil {
		return nil
	}
	err := s.x.Close()
	s.x = nil
	return err
}

// Search serves history/search (under the runner).
func (h *Requests) Search(ctx context.Context, d *protocol.HistorySearch) (protocol.Data, error) {
	x, err := h.search.index()
	if err != nil {
		return nil, err
	}
	q := search.Query{Text: d.Query, Project: d.Project, Limit: protocol.DefaultHistorySearchLimit, Matches: protocol.MaxHistorySearchMatches}
	if d.Limit != nil {
		q.Limit = int(*d.Limit)
	}
	r, err := x.Search(ctx, q)
	if errors.Is(err, search.ErrBadQuery) {
		return nil, protocol.FieldErrorf(protocol.TypeHistorySearch, "/query", "%v", err)
	}
	if err != nil {
		return nil, err
	}
	out := protocol.HistorySearchResult{Hits: make([]protocol.HistorySearchHit, 0, len(r.Hits)), More: r.More, Indexed: r.Indexed}
	for _, hit := range r.Hits {
		ph := protocol.HistorySearchHit{ID: hit.ID, Project: hit.Project, Title: hit.Title, Updated: hit.Updated,
			Matches: make([]protocol.HistorySearchMatch, 0, len(hit.Matches))}
		for _, m := range hit.Matches {
			pm := protocol.HistorySearchMatch{UUID: m.UUID, Role: m.Role, Time: m.Time, Snippet: m.Snippet,
				Highlights: make([]protocol.HistorySearchSpan, 0, len(m.Highlights))}
			for _, sp := range m.Highlights {
				pm.Highlights = append(pm.Highlights, protocol.HistorySearchSpan(sp))
			}
			ph.Matches = append(ph.Matches, pm)
		}
		out.Hits = append(out.Hits, ph)
	}
	return out, nil
}
