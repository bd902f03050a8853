package history_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ccproxy/ccproxy/history"
	"github.com/ccproxy/ccproxy/stream"
)

// line is one session record, as the CLI writes them (the fields that
// matter here).
func line(typ, id string, n int, cwd, text string) string {
	ts := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC).Add(time.Duration(n) * time.Minute).Format(time.RFC3339Nano)
	rec := map[string]any{"type": typ, "uuid": fmt.Sprintf("u-%s-%d", id, n), "sessionId": id, "timestamp": ts, "cwd": cwd, "isSidechain": false}
	switch typ {
	case "user":
		rec["message"] = map[string]any{"role": "user", "content": text}
	case "assistant":
		rec["message"] = map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "text", "text": text}}}
	}
	b, _ := json.Marshal(rec)
	return string(b) + "\n"
}

func writeSession(t testing.TB, root, cwd, id string, lines ...string) string {
	t.Helper()
	dir := filepath.Join(root, history.ProjectFolder(cwd))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, id+".jsonl")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func appendTo(t *testing.T, p string, s string) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

func open(t testing.TB, root string) *history.Store {
	t.Helper()
	st, err := history.Open(history.Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func listAll(t *testing.T, st *history.Store, opts history.ListOptions) history.ListPage {
	t.Helper()
	p, err := st.List(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// A corrupt line in the middle and a truncated one at the end are skipped
// and counted by List and Read; the rest is read.
func TestCorruptAndTruncatedLines(t *testing.T) {
	root := t.TempDir()
	p := writeSession(t, root, "/w/p", "s1",
		line("user", "s1", 1, "/w/p", "first prompt"),
		"{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"te\n", // cut in the middle, then a newline
		"not json at all\n",
		line("assistant", "s1", 2, "/w/p", "an answer"),
		`{"type":"user","message":{"role":"user","content":"unfinish`, // no newline: still being written
	)
	st := open(t, root)
	s := listAll(t, st, history.ListOptions{}).Sessions[0]
	if s.Corrupt != 2 || s.Messages != 2 || s.Title != "first prompt" {
		t.Errorf("listed %+v: want 2 corrupt lines, 2 messages, title from the first prompt", s)
	}
	rp, err := st.Read(context.Background(), history.ReadOptions{ID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rp.Events) != 2 || rp.Corrupt != 2 || rp.More {
		t.Fatalf("read %d events, corrupt %d, more %v; want 2, 2, false", len(rp.Events), rp.Corrupt, rp.More)
	}
	fi, _ := os.Stat(p)
	if rp.Next == fmt.Sprint(fi.Size()) {
		t.Errorf("next %s skips the unfinished last line", rp.Next)
	}
	// The writer finishes the line: reading on from Next gets it, and the
	// listing counts it.
	appendTo(t, p, "ed\"}}\n")
	rp2, err := st.Read(context.Background(), history.ReadOptions{ID: "s1", Cursor: rp.Next})
	if err != nil {
		t.Fatal(err)
	}
	if len(rp2.Events) != 1 || rp2.Corrupt != 0 || !strings.Contains(string(rp2.Events[0].JSON), "unfinished") {
		t.Errorf("reading on: %+v", rp2)
	}
	if s := listAll(t, st, history.ListOptions{}).Sessions[0]; s.Messages != 3 || s.Corrupt != 2 {
		t.Errorf("after the line was finished: %+v, want 3 messages", s)
	}
}

// A line over MaxLine is skipped and counted, never fatal.
func TestOversizedLine(t *testing.T) {
	root := t.TempDir()
	writeSession(t, root, "/w/p", "s1",
		line("user", "s1", 1, "/w/p", strings.Repeat("x", 10000)),
		line("assistant", "s1", 2, "/w/p", "ok"))
	st, err := history.Open(history.Options{Root: root, MaxLine: 4096, MaxTitle: 10})
	if err != nil {
		t.Fatal(err)
	}
	s := listAll(t, st, history.ListOptions{}).Sessions[0]
	if s.Oversized != 1 || s.Messages != 1 {
		t.Errorf("listed %+v: want 1 oversized line, 1 message", s)
	}
	rp, err := st.Read(context.Background(), history.ReadOptions{ID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	if rp.Oversized != 1 || len(rp.Events) != 1 || rp.Events[0].Type != "assistant" {
		t.Errorf("read: oversized %d, %d events", rp.Oversized, len(rp.Events))
	}
}

// The index re-reads only the appended tail of a grown file, nothing of an
// unchanged one, and the whole of a replaced or shrunk one.
func TestIndexRereadsOnlyWhatChanged(t *testing.T) {
	root := t.TempDir()
	var lines []string
	for i := range 200 {
		lines = append(lines, line([]string{"user", "assistant"}[i%2], "s1", i, "/w/p", strings.Repeat("word ", 40)))
	}
	p := writeSession(t, root, "/w/p", "s1", lines...)
	fi, _ := os.Stat(p)
	st := open(t, root)
	if s := listAll(t, st, history.ListOptions{}).Sessions[0]; s.Messages != 200 {
		t.Fatalf("messages %d, want 200", s.Messages)
	}
	if got := st.BytesRead(); got != fi.Size() {
		t.Errorf("first list read %d bytes, the file has %d", got, fi.Size())
	}
	listAll(t, st, history.ListOptions{})
	if got := st.BytesRead(); got != fi.Size() {
		t.Errorf("an unchanged file was read again: %d bytes read in all", got)
	}
	tail := line("user", "s1", 500, "/w/p", "one more")
	appendTo(t, p, tail)
	s := listAll(t, st, history.ListOptions{}).Sessions[0]
	if s.Messages != 201 || !s.Updated.Equal(time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC).Add(500*time.Minute)) {
		t.Errorf("after an append: %d messages, updated %v", s.Messages, s.Updated)
	}
	// The tail, plus the checksum of the first 4 KiB.
	if got := st.BytesRead() - fi.Size(); got > int64(len(tail)) {
		t.Errorf("an append of %d bytes made the index read %d bytes", len(tail), got)
	}
	// Replaced by a shorter file: read again from the start.
	before := st.BytesRead()
	writeSession(t, root, "/w/p", "s1", line("user", "s1", 1, "/w/p", "replaced"), line("assistant", "s1", 2, "/w/p", "yes"))
	s = listAll(t, st, history.ListOptions{}).Sessions[0]
	if s.Messages != 2 || s.Title != "replaced" {
		t.Errorf("after a replace: %+v", s)
	}
	fi, _ = os.Stat(p)
	if got := st.BytesRead() - before; got != fi.Size() {
		t.Errorf("the replaced file: %d bytes read, it has %d", got, fi.Size())
	}
}

// Listing is newest first, paged by cursor, and by project.
func TestListPagingAndProjects(t *testing.T) {
	root := t.TempDir()
	for i := range 23 {
		cwd := "/w/a"
		if i%3 == 0 {
			cwd = "/w/b"
		}
		id := fmt.Sprintf("s%02d", i)
		writeSession(t, root, cwd, id, line("user", id, i, cwd, "prompt "+id), line("assistant", id, i+100, cwd, "answer"))
	}
	// A summary record names the session.
	writeSession(t, root, "/w/c", "sum", line("user", "sum", 1, "/w/c", "the prompt"), `{"type":"summary","summary":"A  summary\nof it","leafUuid":"x"}`+"\n")
	st := open(t, root)
	var got []string
	opts := history.ListOptions{Limit: 5}
	for {
		p := listAll(t, st, opts)
		if p.Total != 24 {
			t.Fatalf("total %d, want 24", p.Total)
		}
		for _, s := range p.Sessions {
			got = append(got, s.ID)
		}
		if p.Next == "" {
			break
		}
		opts.Cursor = p.Next
	}
	if len(got) != 24 || got[0] != "s22" || got[22] != "s00" || got[23] != "sum" {
		t.Errorf("pages gave %v, want s22 … s00, sum (newest first)", got)
	}
	b := listAll(t, st, history.ListOptions{Project: "/w/b", Limit: 100})
	if len(b.Sessions) != 8 {
		t.Errorf("project /w/b: %d sessions, want 8", len(b.Sessions))
	}
	for _, s := range b.Sessions {
		if s.Project != "/w/b" || s.Folder != "-w-b" {
			t.Errorf("project /w/b listed %+v", s)
		}
	}
	c := listAll(t, st, history.ListOptions{Project: "/w/c"}).Sessions[0]
	if c.Title != "A summary of it" || c.TitleFrom != "summary" {
		t.Errorf("title %q from %q, want the summary", c.Title, c.TitleFrom)
	}
	if _, err := st.List(context.Background(), history.ListOptions{Cursor: "garbage!"}); !errors.Is(err, history.ErrBadCursor) {
		t.Errorf("bad cursor: %v", err)
	}
	if _, err := st.List(context.Background(), history.ListOptions{Project: "w/b"}); !errors.Is(err, history.ErrBadProject) {
		t.Errorf("relative project: %v", err)
	}
	if _, err := st.Read(context.Background(), history.ReadOptions{ID: "s01", Cursor: "-5"}); !errors.Is(err, history.ErrBadCursor) {
		t.Errorf("bad read cursor: %v", err)
	}
	if _, err := st.Read(context.Background(), history.ReadOptions{ID: "s01", Cursor: "99999999"}); !errors.Is(err, history.ErrBadCursor) {
		t.Errorf("read cursor past the end: %v", err)
	}
}

// Nothing outside the projects directory is read: symlinked files and
// folders are skipped, ids cannot name paths.
func TestNoSymlinksNoEscapes(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	writeSession(t, root, "/w/p", "inside", line("user", "inside", 1, "/w/p", "ok"))
	secret := writeSession(t, outside, "/x", "secret", line("user", "secret", 1, "/x", "secret"))
	if err := os.Symlink(secret, filepath.Join(root, "-w-p", "linked.jsonl")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Dir(secret), filepath.Join(root, "-x")); err != nil {
		t.Fatal(err)
	}
	st := open(t, root)
	p := listAll(t, st, history.ListOptions{})
	if len(p.Sessions) != 1 || p.Sessions[0].ID != "inside" || p.Skipped != 1 {
		t.Errorf("listed %+v, want only the real file and one skipped", p)
	}
	if p := listAll(t, st, history.ListOptions{Project: "/x"}); len(p.Sessions) != 0 {
		t.Errorf("a symlinked project folder was listed: %+v", p)
	}
	for _, id := range []string{"linked", "secret"} {
		if _, err := st.Read(context.Background(), history.ReadOptions{ID: id}); err == nil {
			t.Errorf("read %s through a symlink", id)
		}
	}
	// A session folder that is a symlink: its subagents are not read.
	sub := filepath.Join(outside, "inside", "subagents")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(sub, "agent-a1.meta.json"), []byte(`{"toolUseId":"t1"}`), 0o644)
	os.WriteFile(filepath.Join(sub, "agent-a1.jsonl"), []byte(line("user", "inside", 1, "/x", "secret")), 0o644)
	if err := os.Symlink(filepath.Join(outside, "inside"), filepath.Join(root, "-w-p", "inside")); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Read(context.Background(), history.ReadOptions{ID: "inside", Agent: "a1"}); !errors.Is(err, history.ErrNotFound) {
		t.Errorf("read a subagent through a symlinked session folder: %v", err)
	}
	if _, err := st.Read(context.Background(), history.ReadOptions{ID: "../../x"}); !errors.Is(err, history.ErrBadID) {
		t.Errorf("a path as id: %v", err)
	}
	if _, err := st.Read(context.Background(), history.ReadOptions{ID: "inside", Agent: "../a"}); !errors.Is(err, history.ErrBadID) {
		t.Errorf("a path as agent id: %v", err)
	}
	if _, err := st.Read(context.Background(), history.ReadOptions{ID: "nope"}); !errors.Is(err, history.ErrNotFound) {
		t.Errorf("unknown id: %v", err)
	}
}

// The first page of a big session reads a small part of it.
func TestFirstPageReadsLittle(t *testing.T) {
	root := t.TempDir()
	var b strings.Builder
	for i := 0; b.Len() < 20<<20; i++ {
		b.WriteString(line([]string{"user", "assistant"}[i%2], "big", i, "/w/p", strings.Repeat("lorem ipsum ", 100)))
	}
	writeSession(t, root, "/w/p", "big", b.String())
	st := open(t, root)
	p, err := st.Read(context.Background(), history.ReadOptions{ID: "big", Project: "/w/p", Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Events) != 100 || !p.More {
		t.Fatalf("%d events, more %v", len(p.Events), p.More)
	}
	if got := st.BytesRead(); got > 1<<20 {
		t.Errorf("the first page of a 20 MB session read %d bytes", got)
	}
}

// List and Read may run at once from many goroutines while the CLI appends.
func TestConcurrentListAndRead(t *testing.T) {
	root := t.TempDir()
	p := writeSession(t, root, "/w/p", "s1", line("user", "s1", 0, "/w/p", "hi"))
	writeSession(t, root, "/w/q", "s2", line("user", "s2", 0, "/w/q", "hello"))
	st := open(t, root)
	ctx := context.Background()
	done := make(chan struct{})
	errs := make(chan error, 4)
	for g := range 4 {
		go func() {
			var err error
			defer func() { errs <- err }()
			for err == nil {
				select {
				case <-done:
					return
				default:
				}
				if g%2 == 0 {
					_, err = st.List(ctx, history.ListOptions{})
				} else {
					_, err = st.Read(ctx, history.ReadOptions{ID: "s1"})
				}
			}
		}()
	}
	for i := 1; i <= 50; i++ {
		appendTo(t, p, line("assistant", "s1", i, "/w/p", "more"))
	}
	close(done)
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	s := listAll(t, st, history.ListOptions{Project: "/w/p"}).Sessions[0]
	if s.Messages != 51 {
		t.Errorf("%d messages after the appends, want 51", s.Messages)
	}
}

// Without a meta file, a subagent is found from its tool's result
// (toolUseResult.agentId) and nested after it.
func TestSubagentFromResult(t *testing.T) {
	root := t.TempDir()
	p := writeSession(t, root, "/w/p", "s1", line("user", "s1", 1, "/w/p", "delegate"), taskUse, taskLaunched, line("assistant", "s1", 3, "/w/p", "done"))
	writeSubagent(t, p, "abc123", line("user", "s1", 2, "/w/p", "go"), line("assistant", "s1", 2, "/w/p", "sub answer"))
	rp, err := open(t, root).Read(context.Background(), history.ReadOptions{ID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	got := nesting(rp.Events)
	want := "user/ assistant/ user/ user/toolu_1 assistant/toolu_1 assistant/"
	if got != want {
		t.Errorf("events %s, want %s", got, want)
	}
}

// System records keep their fields; isMeta records and bookkeeping are
// skipped (and not counted as messages).
func TestSystemAndMetaRecords(t *testing.T) {
	root := t.TempDir()
	writeSession(t, root, "/w/p", "s1",
		`{"type":"user","isMeta":true,"uuid":"m1","sessionId":"s1","message":{"role":"user","content":"Caveat: internal"}}`+"\n",
		line("user", "s1", 1, "/w/p", "real prompt"),
		`{"type":"system","subtype":"compact_boundary","content":"Conversation compacted","level":"info","compactMetadata":{"trigger":"manual","preTokens":1234},"uuid":"c1","sessionId":"s1","cwd":"/w/p","timestamp":"2026-11-01T10:05:00Z"}`+"\n",
		`{"type":"last-prompt","lastPrompt":"real prompt","sessionId":"s1"}`+"\n")
	st := open(t, root)
	if s := listAll(t, st, history.ListOptions{}).Sessions[0]; s.Messages != 1 || s.Title != "real prompt" {
		t.Errorf("listed %+v: want 1 message titled by the real prompt", s)
	}
	p, err := st.Read(context.Background(), history.ReadOptions{ID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Events) != 2 || p.Skipped != 2 {
		t.Fatalf("%d events, %d skipped; want the prompt and the system record, 2 skipped", len(p.Events), p.Skipped)
	}
	sys := p.Events[1]
	var got map[string]any
	if err := json.Unmarshal(sys.JSON, &got); err != nil {
		t.Fatal(err)
	}
	if sys.Type != "system" || sys.Subtype != "compact_boundary" || got["content"] != "Conversation compacted" ||
		got["compactMetadata"] == nil || got["session_id"] != "s1" || got["cwd"] != nil {
		t.Errorf("system event %s", sys.JSON)
	}
}

// The tool use id a result names its subagent by is kept, not left
// pointing into the line buffer that the next line overwrites: a result
// repeated later (laid out differently) does not nest the subagent twice.
func TestSubagentFromResultKeyOutlivesLine(t *testing.T) {
	root := t.TempDir()
	again := `{"type":"user","uuid":"u3-a-longer-uuid","sessionId":"s1","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"completed"}]}]},"toolUseResult":{"agentId":"abc123","status":"completed"}}` + "\n"
	p := writeSession(t, root, "/w/p", "s1", line("user", "s1", 1, "/w/p", "delegate"), taskUse, taskLaunched,
		line("assistant", "s1", 3, "/w/p", strings.Repeat("overwrite the line buffer ", 20)), again)
	writeSubagent(t, p, "abc123", line("user", "s1", 2, "/w/p", "go"), line("assistant", "s1", 2, "/w/p", "sub answer"))
	rp, err := open(t, root).Read(context.Background(), history.ReadOptions{ID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	got := nesting(rp.Events)
	want := "user/ assistant/ user/ user/toolu_1 assistant/toolu_1 assistant/ user/"
	if got != want {
		t.Errorf("events %s, want %s", got, want)
	}
}

// A Task tool use (toolu_1) and its result naming subagent abc123, with no
// meta file for it: its transcript is found from the result.
const (
	taskUse      = `{"type":"assistant","uuid":"a1","sessionId":"s1","message":{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Task","input":{"prompt":"go"}}]}}` + "\n"
	taskLaunched = `{"type":"user","uuid":"u2","sessionId":"s1","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"launched"}]}]},"toolUseResult":{"agentId":"abc123","status":"async_launched"}}` + "\n"
)

// writeSubagent writes the transcript of subagent id of the session file p.
func writeSubagent(t *testing.T, p, id string, lines ...string) {
	t.Helper()
	sub := filepath.Join(strings.TrimSuffix(p, ".jsonl"), "subagents")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sub, "agent-"+id+".jsonl"), []byte(strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
}

// nesting spells each event as type/parent tool use id, space-separated.
func nesting(evs []history.Event) string {
	var got []string
	for _, ev := range evs {
		got = append(got, ev.Type+"/"+ev.ParentToolUseID)
	}
	return strings.Join(got, " ")
}

// countSink counts the attachments put into it.
type countSink struct{ n int }

func (s *countSink) PutAttachment(a stream.Attachment, data []byte) (string, error) {
	s.n++
	return "/blob/" + a.SHA256, nil
}

// A page is bounded in bytes: with a small MaxBytes it ends one event past
// the bound, its cursor resumes exactly there (every event read once, in
// order), and the events past the cut are never normalized (their
// attachments never reach the Sink).
func TestReadMaxBytes(t *testing.T) {
	root := t.TempDir()
	var lines []string
	const events = 12
	img := func(i int) string {
		return base64.StdEncoding.EncodeToString([]byte(strings.Repeat(fmt.Sprint("png", i), 100)))
	}
	for i := range events {
		rec := map[string]any{"type": "user", "uuid": fmt.Sprintf("u%d", i), "sessionId": "s1",
			"message": map[string]any{"role": "user", "content": []any{
				map[string]any{"type": "text", "text": strings.Repeat("x", 10000)},
				map[string]any{"type": "tool_result", "tool_use_id": fmt.Sprint("toolu_", i), "content": []any{
					map[string]any{"type": "image", "source": map[string]any{"type": "base64", "media_type": "image/png", "data": img(i)}}}},
			}}}
		b, _ := json.Marshal(rec)
		lines = append(lines, string(b)+"\n")
	}
	writeSession(t, root, "/w/p", "s1", lines...)
	st := open(t, root)
	const maxBytes = 25000
	var seen []string
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > events {
			t.Fatal("paging does not end")
		}
		sink := &countSink{}
		p, err := st.Read(context.Background(), history.ReadOptions{ID: "s1", Cursor: cursor, MaxBytes: maxBytes,
			Normalize: stream.Options{Attachments: stream.AttachSink, Sink: sink}})
		if err != nil {
			t.Fatal(err)
		}
		var size, last int
		for _, ev := range p.Events {
			seen = append(seen, ev.UUID)
			size += len(ev.JSON)
			last = len(ev.JSON)
		}
		if size-last > maxBytes {
			t.Errorf("page at %q: %d bytes of events before its last one, over MaxBytes %d", cursor, size-last, maxBytes)
		}
		if sink.n != len(p.Events) {
			t.Errorf("page at %q: %d attachments normalized for %d events", cursor, sink.n, len(p.Events))
		}
		if !p.More {
			break
		}
		if !p.Truncated {
			t.Errorf("page at %q ended by MaxBytes is not marked truncated", cursor)
		}
		if len(p.Events) == 0 || len(p.Events) == events {
			t.Fatalf("page at %q: %d events, more %v", cursor, len(p.Events), p.More)
		}
		cursor = p.Next
	}
	var want []string
	for i := range events {
		want = append(want, fmt.Sprintf("u%d", i))
	}
	if strings.Join(seen, " ") != strings.Join(want, " ") {
		t.Errorf("paged through %v, want every event once: %v", seen, want)
	}
}

// A page does not end between a tool use and its result, up to twice
// MaxBytes: a result within that comes in the page; past it the page ends
// anyway (one event past twice the bound, marked truncated), and the next
// page starts exactly there.
func TestReadMaxBytesToolUseHardStop(t *testing.T) {
	const maxBytes = 12000
	use := `{"type":"assistant","uuid":"use","sessionId":"s1","message":{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls"}}]}}` + "\n"
	res := `{"type":"user","uuid":"result","sessionId":"s1","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"done"}]}}` + "\n"
	// between: events of about 5 KB each between the use and its result.
	session := func(between int) []string {
		lines := []string{use}
		for i := range between {
			lines = append(lines, line("user", "s1", i, "/w/p", strings.Repeat("y", 5000)))
		}
		return append(lines, res, line("user", "s1", 99, "/w/p", "after"))
	}
	read := func(t *testing.T, root, cursor string) history.ReadPage {
		t.Helper()
		p, err := open(t, root).Read(context.Background(), history.ReadOptions{ID: "s1", Cursor: cursor, MaxBytes: maxBytes})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	uuids := func(p history.ReadPage) (ids []string, size, last int) {
		for _, ev := range p.Events {
			ids = append(ids, ev.UUID)
			size += len(ev.JSON)
			last = len(ev.JSON)
		}
		return ids, size, last
	}

	t.Run("result within twice the bound", func(t *testing.T) {
		root := t.TempDir()
		writeSession(t, root, "/w/p", "s1", session(3)...) // about 15 KB before the result
		p := read(t, root, "")
		ids, size, _ := uuids(p)
		if size <= maxBytes || !slices.Contains(ids, "result") {
			t.Fatalf("page of %d bytes %v: want it past MaxBytes %d, up to the tool's result", size, ids, maxBytes)
		}
		if ids[len(ids)-1] != "result" || !p.More || !p.Truncated {
			t.Errorf("page %v (more %v, truncated %v): want it to end at the result, truncated", ids, p.More, p.Truncated)
		}
	})

	t.Run("result past twice the bound", func(t *testing.T) {
		root := t.TempDir()
		writeSession(t, root, "/w/p", "s1", session(10)...) // about 50 KB before the result
		p := read(t, root, "")
		ids, size, last := uuids(p)
		if slices.Contains(ids, "result") {
			t.Fatalf("page %v took in a result more than twice MaxBytes away", ids)
		}
		// The hard stop counts each event's JSON and a little more
		// (eventBytes), so the JSON before the last event is under it.
		if size-last >= 2*maxBytes || size < 2*maxBytes-len(p.Events)*64 {
			t.Errorf("page of %d bytes (%d before its last event): want it cut one event past twice MaxBytes (%d)", size, size-last, 2*maxBytes)
		}
		if !p.More || !p.Truncated {
			t.Errorf("page cut by the hard stop: more %v, truncated %v", p.More, p.Truncated)
		}
		next := read(t, root, p.Next)
		nextIDs, _, _ := uuids(next)
		all := append(ids, nextIDs...)
		for next.More {
			next = read(t, root, next.Next)
			more, _, _ := uuids(next)
			all = append(all, more...)
		}
		want := []string{"use"}
		for i := range 10 {
			want = append(want, fmt.Sprintf("u-s1-%d", i))
		}
		want = append(want, "result", "u-s1-99")
		if !slices.Equal(all, want) {
			t.Errorf("paged through %v, want every event once, in order: %v", all, want)
		}
	})
}

// A subagent found through its tool's result (no meta file) can be read
// on by itself, as the history_more event it gets says.
func TestReadAgentWithoutMeta(t *testing.T) {
	root := t.TempDir()
	p := writeSession(t, root, "/w/p", "s1", line("user", "s1", 1, "/w/p", "delegate"), taskUse, taskLaunched)
	var lines []string
	for i := range 5 {
		lines = append(lines, line([]string{"user", "assistant"}[i%2], "s1", i, "/w/p", fmt.Sprint("sub ", i)))
	}
	writeSubagent(t, p, "abc123", lines...)
	st := open(t, root)
	rp, err := st.Read(context.Background(), history.ReadOptions{ID: "s1", Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	var more *history.Event
	for i, ev := range rp.Events {
		if ev.Subtype == "history_more" {
			more = &rp.Events[i]
		}
	}
	if more == nil {
		t.Fatalf("no history_more for a subagent of 5 events read with limit 2: %+v", rp.Events)
	}
	var m map[string]string
	if err := json.Unmarshal(more.JSON, &m); err != nil {
		t.Fatal(err)
	}
	ap, err := st.Read(context.Background(), history.ReadOptions{ID: "s1", Agent: m["agent"], Cursor: m["cursor"]})
	if err != nil {
		t.Fatalf("reading on as history_more says (%s): %v", more.JSON, err)
	}
	if len(ap.Events) != 3 || ap.More || !strings.Contains(string(ap.Events[2].JSON), "sub 4") {
		t.Errorf("read on: %d events, more %v", len(ap.Events), ap.More)
	}
}

// The subagent of a tool result (agentId) is not read through a symlinked
// session or subagents folder, nested or by itself.
func TestAgentFromResultNoSymlinkedFolders(t *testing.T) {
	res := `{"type":"user","uuid":"u2","sessionId":"s1","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"launched"}]}]},"toolUseResult":{"agentId":"a1","status":"async_launched"}}` + "\n"
	for _, linked := range []string{"session folder", "subagents folder"} {
		root, outside := t.TempDir(), t.TempDir()
		p := writeSession(t, root, "/w/p", "s1", line("user", "s1", 1, "/w/p", "delegate"), res)
		sub := filepath.Join(outside, "s1", "subagents")
		if err := os.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(sub, "agent-a1.jsonl"), []byte(line("user", "s1", 1, "/x", "secret")), 0o644)
		dir := strings.TrimSuffix(p, ".jsonl")
		var err error
		if linked == "session folder" {
			err = os.Symlink(filepath.Join(outside, "s1"), dir)
		} else if err = os.Mkdir(dir, 0o755); err == nil {
			err = os.Symlink(sub, filepath.Join(dir, "subagents"))
		}
		if err != nil {
			t.Fatal(err)
		}
		st := open(t, root)
		rp, err := st.Read(context.Background(), history.ReadOptions{ID: "s1"})
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range rp.Events {
			if strings.Contains(string(ev.JSON), "secret") {
				t.Errorf("%s a symlink: the subagent was nested through it", linked)
			}
		}
		if _, err := st.Read(context.Background(), history.ReadOptions{ID: "s1", Agent: "a1"}); !errors.Is(err, history.ErrNotFound) {
			t.Errorf("%s a symlink: read the subagent through it: %v", linked, err)
		}
	}
}

// An over-cap last line without its "\n" may still be being written: it is
// neither counted nor skipped, and cursors stay before it; once it ends it
// is counted once and the next line is read whole.
func TestOversizedLastLineUnfinished(t *testing.T) {
	root := t.TempDir()
	big := line("user", "s1", 2, "/w/p", strings.Repeat("x", 10000))
	p := writeSession(t, root, "/w/p", "s1", line("user", "s1", 1, "/w/p", "first"), big[:8000])
	st, err := history.Open(history.Options{Root: root, MaxLine: 4096})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if s := listAll(t, st, history.ListOptions{}).Sessions[0]; s.Oversized != 0 || s.Messages != 1 {
		t.Errorf("listed %+v: want the unfinished line not counted", s)
	}
	rp, err := st.Read(ctx, history.ReadOptions{ID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	if rp.Oversized != 0 || len(rp.Events) != 1 || rp.Next != fmt.Sprint(len(line("user", "s1", 1, "/w/p", "first"))) {
		t.Errorf("read: oversized %d, %d events, next %s: want the cursor before the unfinished line", rp.Oversized, len(rp.Events), rp.Next)
	}
	appendTo(t, p, big[8000:]+line("assistant", "s1", 3, "/w/p", "after"))
	if s := listAll(t, st, history.ListOptions{}).Sessions[0]; s.Oversized != 1 || s.Corrupt != 0 || s.Messages != 2 {
		t.Errorf("listed after the line ended %+v: want 1 oversized, 0 corrupt, 2 messages", s)
	}
	rp2, err := st.Read(ctx, history.ReadOptions{ID: "s1", Cursor: rp.Next})
	if err != nil {
		t.Fatal(err)
	}
	if rp2.Oversized != 1 || rp2.Corrupt != 0 || len(rp2.Events) != 1 || rp2.Events[0].Type != "assistant" {
		t.Errorf("read on: oversized %d, corrupt %d, %d events", rp2.Oversized, rp2.Corrupt, len(rp2.Events))
	}
}

// Event.Break marks where a page may end: not between a tool use and its
// result, and never at a nested subagent's event.
func TestReadBreaks(t *testing.T) {
	root := t.TempDir()
	p := writeSession(t, root, "/w/p", "s1", line("user", "s1", 1, "/w/p", "delegate"), taskUse,
		line("assistant", "s1", 2, "/w/p", "while the task runs"), taskLaunched, line("assistant", "s1", 3, "/w/p", "done"))
	writeSubagent(t, p, "abc123", line("user", "s1", 2, "/w/p", "go"), line("assistant", "s1", 2, "/w/p", "sub answer"))
	rp, err := open(t, root).Read(context.Background(), history.ReadOptions{ID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ev := range rp.Events {
		got = append(got, fmt.Sprintf("%s/%s:%v", ev.Type, ev.ParentToolUseID, ev.Break))
	}
	want := "user/:true assistant/:true assistant/:false user/:false user/toolu_1:false assistant/toolu_1:false assistant/:true"
	if strings.Join(got, " ") != want {
		t.Errorf("events %v, want %s", got, want)
	}
}
