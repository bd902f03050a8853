package search_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unicode/utf16"

	"github.com/ccproxy/ccproxy/history/search"
	"github.com/ccproxy/ccproxy/history/search/internal/synth"
)

const capturedID = "23408e81-e87c-4691-bd35-68872aa634f4" // testdata/history/2.1.330

// capturedRoot copies the real captured 2.1.330 session into a new
// projects directory.
func capturedRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	src := filepath.Join("..", "..", "testdata", "history", "2.1.330", "projects", "-tmp-cchist-project", capturedID+".jsonl")
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(root, "-tmp-cchist-project", capturedID+".jsonl"), b)
	return root
}

func write(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func appendTo(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

func open(t testing.TB, root, dir string, o search.Options) *search.Index {
	t.Helper()
	o.Root, o.Dir = root, dir
	x, err := search.Open(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close() })
	return x
}

func find(t testing.TB, x *search.Index, q search.Query) search.Result {
	t.Helper()
	r, err := x.Search(context.Background(), q)
	if err != nil {
		t.Fatalf("search %q: %v", q.Text, err)
	}
	return r
}

// highlighted returns the highlighted parts of a match's snippet.
func highlighted(t testing.TB, m search.Match) []string {
	t.Helper()
	u := utf16.Encode([]rune(m.Snippet))
	var out []string
	for _, s := range m.Highlights {
		if s.Start < 0 || s.End > len(u) || s.Start >= s.End {
			t.Fatalf("span %v out of %q (%d units)", s, m.Snippet, len(u))
		}
		out = append(out, string(utf16.Decode(u[s.Start:s.End])))
	}
	return out
}

func TestSearchCapturedSession(t *testing.T) {
	t.Parallel()
	x := open(t, capturedRoot(t), t.TempDir(), search.Options{})
	for _, c := range []struct {
		query, role, want string
	}{
		{"say hello", search.RoleUser, "Say"},           // what the user typed
		{"first answer", search.RoleAssistant, "first"}, // a reply's text
		{"mcp everything echo", search.RoleTool, "mcp"}, // a tool's name
		{"notes.txt", search.RoleTool, "notes"},         // a tool's input
		{"BETA edited", search.RoleTool, "BETA"},        // an Edit's new_string
		{"seq 10000", search.RoleTool, "seq"},           // a Bash command
		{"delegate subag", search.RoleUser, "Delegate"}, // the last word as a prefix
	} {
		r := find(t, x, search.Query{Text: c.query})
		if len(r.Hits) != 1 || r.Hits[0].ID != capturedID || r.Indexed != 1 {
			t.Fatalf("%q: %+v", c.query, r)
		}
		h := r.Hits[0]
		if h.Project != "/tmp/cchist/project" || h.Title != "[H-TEXT] Say hello, after some thought." || h.Updated.IsZero() {
			t.Errorf("%q: hit %+v", c.query, h)
		}
		ok := false
		for _, m := range h.Matches {
			if m.Role == c.role && m.UUID != "" && m.Time != "" {
				hl := highlighted(t, m)
				if len(hl) > 0 && strings.EqualFold(hl[0], c.want) {
					ok = true
				}
			}
		}
		if !ok {
			t.Errorf("%q: no %s match highlighting %q: %+v", c.query, c.role, c.want, h.Matches)
		}
	}
	// Tool results, thinking and the CLI's bookkeeping are not searched.
	for _, q := range []string{"File created successfully", "greeting short", "Opus 5.5 knowledge cutoff"} {
		if r := find(t, x, search.Query{Text: q}); len(r.Hits) != 0 {
			t.Errorf("%q found %+v", q, r.Hits)
		}
	}
	if _, err := x.Search(context.Background(), search.Query{Text: " .,; "}); err != search.ErrBadQuery {
		t.Errorf("a query with no word: %v", err)
	}
}

// synthRoot writes n synthetic sessions over projects projects.
func synthRoot(t testing.TB, n, projects int, bytes int64) (string, []synth.Session) {
	t.Helper()
	tpl, err := synth.TemplatesIn(filepath.Join("..", "..", "testdata", "history"))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	ss, err := synth.Write(root, synth.Options{Templates: tpl, Sessions: n, Projects: projects, Bytes: bytes, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	return root, ss
}

func TestSearchNewestFirstProjectAndLimit(t *testing.T) {
	t.Parallel()
	root, ss := synthRoot(t, 12, 3, 12<<20)
	x := open(t, root, t.TempDir(), search.Options{})
	// Every session has "zqmarker" words: a prefix finds them all.
	r := find(t, x, search.Query{Text: "zqmarker", Limit: 5})
	if len(r.Hits) != 5 || !r.More || r.Indexed != 12 {
		t.Fatalf("%d hits, more %v, indexed %d", len(r.Hits), r.More, r.Indexed)
	}
	for i, h := range r.Hits { // the synthetic sessions are an hour apart, the last newest
		if want := ss[len(ss)-1-i].ID; h.ID != want {
			t.Errorf("hit %d is %s, want %s", i, h.ID, want)
		}
		if i > 0 && h.Updated.After(r.Hits[i-1].Updated) {
			t.Errorf("hit %d is newer than the one before", i)
		}
	}
	r = find(t, x, search.Query{Text: "zqmarker", Project: synth.Project(1), Limit: 100})
	if len(r.Hits) != 4 || r.More {
		t.Fatalf("project filter: %d hits, more %v", len(r.Hits), r.More)
	}
	for _, h := range r.Hits {
		if h.Project != synth.Project(1) {
			t.Errorf("hit of project %s", h.Project)
		}
	}
	// One session's own word: only it, in its project, not in another.
	if r := find(t, x, search.Query{Text: ss[4].Marker}); len(r.Hits) != 1 || r.Hits[0].ID != ss[4].ID {
		t.Errorf("%s: %+v", ss[4].Marker, r.Hits)
	}
	if r := find(t, x, search.Query{Text: ss[4].Marker, Project: synth.Project(2)}); len(r.Hits) != 0 {
		t.Errorf("%s in another project: %+v", ss[4].Marker, r.Hits)
	}
}

func userLine(uuid, ts, text string) string {
	return fmt.Sprintf(`{"type":"user","message":{"role":"user","content":%q},"uuid":%q,"timestamp":%q,"cwd":"/p"}`+"\n", text, uuid, ts)
}

func TestSearchFollowsTheFiles(t *testing.T) {
	t.Parallel()
	root := capturedRoot(t)
	path := filepath.Join(root, "-tmp-cchist-project", capturedID+".jsonl")
	x := open(t, root, t.TempDir(), search.Options{})
	if r := find(t, x, search.Query{Text: "walrus"}); len(r.Hits) != 0 {
		t.Fatalf("walrus before it was written: %+v", r.Hits)
	}
	size, _ := os.Stat(path)
	// Grown: only what was appended is read; a last line without "\n"
	// waits until it ends.
	appendTo(t, path, userLine("u-1", "2026-11-25T00:00:00Z", "the walrus said")+userLine("u-2", "2026-11-25T00:00:01Z", "half a narwhal")[:30])
	r := find(t, x, search.Query{Text: "walrus"})
	if len(r.Hits) != 1 || r.Hits[0].Matches[0].UUID != "u-1" {
		t.Fatalf("walrus after it was appended: %+v", r.Hits)
	}
	if st := x.LastUpdate(); st.Grown != 1 || st.Reindexed != 0 || st.Read >= size.Size() {
		t.Errorf("an append read %+v (the file had %d bytes)", st, size.Size())
	}
	if r := find(t, x, search.Query{Text: "narwhal"}); len(r.Hits) != 0 {
		t.Errorf("a line still being written was indexed: %+v", r.Hits)
	}
	appendTo(t, path, userLine("u-2", "2026-11-25T00:00:01Z", "half a narwhal")[30:])
	if r := find(t, x, search.Query{Text: "narwhal"}); len(r.Hits) != 1 || r.Hits[0].Matches[0].UUID != "u-2" {
		t.Errorf("narwhal once its line ended: %+v", r.Hits)
	}
	// Unchanged: nothing read.
	find(t, x, search.Query{Text: "walrus"})
	if st := x.LastUpdate(); st.Read != 0 || st.Grown+st.Reindexed != 0 {
		t.Errorf("an unchanged file was read: %+v", st)
	}
	// Replaced (rewritten shorter): read again, the old words gone.
	write(t, path, []byte(userLine("u-3", "2026-11-26T00:00:00Z", "only a puffin now")))
	if r := find(t, x, search.Query{Text: "walrus"}); len(r.Hits) != 0 {
		t.Errorf("walrus after the file was replaced: %+v", r.Hits)
	}
	if r := find(t, x, search.Query{Text: "puffin"}); len(r.Hits) != 1 {
		t.Errorf("puffin: %+v", r.Hits)
	}
	// A new session in a new folder; then the first one deleted.
	other := filepath.Join(root, "-p", "00000000-0000-4000-8000-000000000001.jsonl")
	write(t, other, []byte(userLine("u-4", "2026-11-27T00:00:00Z", "another puffin")))
	if r := find(t, x, search.Query{Text: "puffin"}); len(r.Hits) != 2 || r.Hits[0].ID != "00000000-0000-4000-8000-000000000001" {
		t.Fatalf("two puffins, the newest first: %+v", r.Hits)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	r = find(t, x, search.Query{Text: "puffin"})
	if len(r.Hits) != 1 || r.Hits[0].ID == capturedID || r.Indexed != 1 || x.LastUpdate().Removed != 1 {
		t.Errorf("after the delete: %+v, %+v", r, x.LastUpdate())
	}
	// A symlink where a session file would be is not followed.
	if err := os.Symlink(other, filepath.Join(root, "-p", "00000000-0000-4000-8000-000000000002.jsonl")); err != nil {
		t.Fatal(err)
	}
	if r := find(t, x, search.Query{Text: "puffin"}); len(r.Hits) != 1 || r.Indexed != 1 {
		t.Errorf("with a symlink: %+v", r)
	}
}

func TestSearchIndexPersistsAndRebuildsWhenCorrupt(t *testing.T) {
	t.Parallel()
	root, dir := capturedRoot(t), t.TempDir()
	x := open(t, root, dir, search.Options{})
	if r := find(t, x, search.Query{Text: "hello"}); len(r.Hits) != 1 {
		t.Fatalf("%+v", r)
	}
	x.Close()
	x.Close() // idempotent
	if _, err := x.Search(context.Background(), search.Query{Text: "hello"}); err == nil {
		t.Error("a search after Close")
	}
	fi, err := os.Stat(x.Path())
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("index file %v, %v", fi, err)
	}
	if di, err := os.Stat(dir); err != nil || di.Mode().Perm() != 0o700 {
		t.Fatalf("index directory %v, %v", di, err)
	}
	// Opened again: nothing to read.
	x = open(t, root, dir, search.Options{})
	if r := find(t, x, search.Query{Text: "hello"}); len(r.Hits) != 1 || x.LastUpdate().Read != 0 {
		t.Fatalf("reopened: %+v, %+v", r, x.LastUpdate())
	}
	x.Close()
	// Corrupt: overwritten in the middle, then garbage from the start.
	for _, damage := range []func([]byte) []byte{
		func(b []byte) []byte { return append(b[:len(b)/2], bytes.Repeat([]byte{0x5a}, len(b)-len(b)/2)...) },
		func(b []byte) []byte { return bytes.Repeat([]byte("not a database "), 100) },
	} {
		b, err := os.ReadFile(x.Path())
		if err != nil {
			t.Fatal(err)
		}
		os.Remove(x.Path() + "-wal")
		os.Remove(x.Path() + "-shm")
		if err := os.WriteFile(x.Path(), damage(b), 0o600); err != nil {
			t.Fatal(err)
		}
		var logs bytes.Buffer
		var mu sync.Mutex
		x = open(t, root, dir, search.Options{Logger: slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, nil))})
		if r := find(t, x, search.Query{Text: "hello"}); len(r.Hits) != 1 {
			t.Fatalf("after the damage: %+v", r)
		}
		mu.Lock()
		if !strings.Contains(logs.String(), "making it anew") && !strings.Contains(logs.String(), "rebuilding") {
			t.Errorf("no log line of the rebuild: %q", logs.String())
		}
		mu.Unlock()
		x.Close()
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

func TestSearchNeverShowsASecret(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	const secret = "sk-live-7f3a9c2b"
	lines := userLine("u-1", "2026-11-25T00:00:00Z", "deploy with key "+secret+" to the gateway") +
		`{"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"curl -H 'Authorization: Bearer ` + secret + `' https://gateway"}}]},"uuid":"a-1","timestamp":"2026-11-25T00:00:01Z"}` + "\n" +
		`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"echo ` + secret + ` 7f3a9c2b"}]},"uuid":"u-2","timestamp":"2026-11-25T00:00:02Z"}` + "\n"
	write(t, filepath.Join(root, "-p", "00000000-0000-4000-8000-000000000009.jsonl"), []byte(lines))
	var mu sync.Mutex
	secrets := []string{secret}
	scrub := func(s string) string {
		mu.Lock()
		defer mu.Unlock()
		for _, v := range secrets {
			s = strings.ReplaceAll(s, v, "***")
		}
		return s
	}
	x := open(t, root, t.TempDir(), search.Options{Scrub: scrub})
	for _, q := range []string{"7f3a9c2b", "sk live 7f3a9c2b", "live"} {
		if r := find(t, x, search.Query{Text: q}); len(r.Hits) != 0 {
			t.Errorf("%q found %+v", q, r.Hits)
		}
	}
	r := find(t, x, search.Query{Text: "gateway"})
	if len(r.Hits) != 1 || len(r.Hits[0].Matches) != 2 {
		t.Fatalf("gateway: %+v", r.Hits)
	}
	for _, m := range r.Hits[0].Matches {
		if strings.Contains(m.Snippet, "7f3a9c2b") || !strings.Contains(m.Snippet, "***") {
			t.Errorf("snippet %q", m.Snippet)
		}
	}
	if strings.Contains(r.Hits[0].Title, "7f3a") {
		t.Errorf("title %q", r.Hits[0].Title)
	}
	// A secret the configuration gains after the text was indexed is
	// masked in snippets, and a match only it made is dropped.
	write(t, filepath.Join(root, "-p", "00000000-0000-4000-8000-000000000010.jsonl"),
		[]byte(userLine("u-9", "2026-11-26T00:00:00Z", "the token tok9secret9value opens the gateway")))
	if r := find(t, x, search.Query{Text: "tok9secret9value"}); len(r.Hits) != 1 {
		t.Fatalf("before it was a secret: %+v", r.Hits)
	}
	mu.Lock()
	secrets = append(secrets, "tok9secret9value")
	mu.Unlock()
	if r := find(t, x, search.Query{Text: "tok9secret9value"}); len(r.Hits) != 0 {
		t.Errorf("a new secret found: %+v", r.Hits)
	}
	r = find(t, x, search.Query{Text: "opens gateway"})
	if len(r.Hits) != 1 || strings.Contains(r.Hits[0].Matches[0].Snippet, "tok9") {
		t.Errorf("a new secret shown: %+v", r.Hits)
	}
}

// TestSearchWhileIndexing runs searches from several goroutines while a
// session file grows and another is replaced; run with -race.
func TestSearchWhileIndexing(t *testing.T) {
	t.Parallel()
	root := capturedRoot(t)
	x := open(t, root, t.TempDir(), search.Options{BatchBytes: 256})
	path := filepath.Join(root, "-p", "00000000-0000-4000-8000-000000000003.jsonl")
	write(t, path, nil)
	const rounds = 20
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	done := make(chan struct{})
	for g := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				q := []string{"hello", "kiwi", "kiwi" + fmt.Sprint(g)}[g]
				if _, err := x.Search(context.Background(), search.Query{Text: q}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for i := range rounds {
		appendTo(t, path, userLine(fmt.Sprintf("k-%d", i), fmt.Sprintf("2026-11-25T00:00:%02dZ", i), fmt.Sprintf("kiwi%d kiwi", i)))
		if err := x.Update(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	r := find(t, x, search.Query{Text: "kiwi"})
	if len(r.Hits) != 1 || len(r.Hits[0].Matches) != 3 || r.Hits[0].Matches[0].UUID != fmt.Sprintf("k-%d", rounds-1) {
		t.Errorf("kiwi: %+v", r.Hits)
	}
	for i := range rounds {
		if r := find(t, x, search.Query{Text: fmt.Sprintf("kiwi%d", i)}); len(r.Hits) != 1 {
			t.Errorf("kiwi%d: %+v", i, r.Hits)
		}
	}
}
