package proxy

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/proxy/mcphub"
)

func searchHistory(t *testing.T, c *wsClient, data map[string]any) protocol.HistorySearchResult {
	t.Helper()
	var r protocol.HistorySearchResult
	mustUnmarshal(t, c.do(protocol.TypeHistorySearch, data), &r)
	if err := r.Validate(); err != nil {
		t.Fatalf("history/search reply: %v", err)
	}
	return r
}

// history/search over the sessions captured from the real CLI: user text,
// a tool's input, the project filter, highlights, a bad query.
func TestHistorySearch(t *testing.T) {
	t.Parallel()
	project := t.TempDir()
	ts := startServer(t, Options{Project: project, HistoryOptions: HistoryOptions{HistoryHome: historyHome(t, project), HistoryIndexDir: t.TempDir()}})
	c := ts.dial(t)
	var hello protocol.Hello
	c.waitPush(0, protocol.TypeHello, &hello, nil)
	if !slices.Contains(hello.Capabilities, protocol.CapHistorySearch) {
		t.Errorf("hello capabilities %v lack %q", hello.Capabilities, protocol.CapHistorySearch)
	}
	r := searchHistory(t, c, map[string]any{"query": "say HELLO"})
	if len(r.Hits) != 2 || r.Indexed != 2 || r.More || r.Hits[0].Updated.Before(r.Hits[1].Updated) {
		t.Fatalf("say hello: %+v", r)
	}
	for _, h := range r.Hits {
		m := h.Matches[0]
		u := utf16.Encode([]rune(m.Snippet))
		if h.Project != project || !strings.HasPrefix(h.Title, "[H-TEXT]") || m.Role != protocol.SearchRoleUser || m.UUID == "" ||
			len(m.Highlights) != 2 || string(utf16.Decode(u[m.Highlights[1].Start:m.Highlights[1].End])) != "hello" {
			t.Errorf("hit %+v", h)
		}
	}
	if r := searchHistory(t, c, map[string]any{"query": "notes.txt", "limit": 1}); len(r.Hits) != 1 || !r.More || r.Hits[0].Matches[0].Role != protocol.SearchRoleTool {
		t.Errorf("notes.txt, limit 1: %+v", r)
	}
	if r := searchHistory(t, c, map[string]any{"query": "hello", "project": t.TempDir()}); len(r.Hits) != 0 {
		t.Errorf("another project: %+v", r)
	}
	e := c.doErr(protocol.TypeHistorySearch, map[string]any{"query": "?!"})
	if e.Code != protocol.CodeBadRequest || e.Details == nil || len(e.Details.Fields) != 1 || !strings.Contains(e.Details.Fields[0].Path, "query") {
		t.Errorf("a query with no word: %+v", e)
	}
	if e := c.doErr(protocol.TypeHistorySearch, map[string]any{"query": ""}); e.Code != protocol.CodeBadRequest {
		t.Errorf("an empty query: %+v", e)
	}
}

// A secret of the MCP configuration in force that a stored tool input
// holds (the captured session's echo of "hello history") is neither found
// nor shown by history/search, though history/read shows tool inputs as
// written.
func TestHistorySearchSecretMasked(t *testing.T) {
	t.Parallel()
	e := newMCPEnv(t)
	const secret = "hello history"
	e.WriteMCPJSON(t, map[string]any{"srv": map[string]any{"command": "/bin/true", "env": map[string]any{"SRV_KEY": secret}}})
	src, err := mcphub.NewConfigSource(e.Opts, e.FilesDir, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	ts := startServer(t, Options{Project: e.Project, MCPOptions: MCPOptions{MCP: src},
		HistoryOptions: HistoryOptions{HistoryHome: historyHome(t, e.Project), HistoryIndexDir: t.TempDir()}})
	c := ts.dial(t)
	if r := searchHistory(t, c, map[string]any{"query": "hello history"}); len(r.Hits) != 0 {
		t.Errorf("the secret was found: %+v", r.Hits)
	}
	r := searchHistory(t, c, map[string]any{"query": "everything echo"})
	if len(r.Hits) == 0 {
		t.Fatal("the echo tool use was not found")
	}
	for _, h := range r.Hits {
		for _, m := range h.Matches {
			if strings.Contains(m.Snippet, secret) || m.Role == protocol.SearchRoleTool && !strings.Contains(m.Snippet, "***") {
				t.Errorf("snippet %q", m.Snippet)
			}
		}
	}
}
