package history_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/ccproxy/ccproxy/history"
)

// chained is a record of a session file with its parentUuid, as the CLI
// writes them; content is a prompt's text, or, for "result", a tool result.
func chained(typ, uuid, parent, content string) string {
	rec := map[string]any{"type": typ, "uuid": uuid, "sessionId": "rw", "timestamp": "2026-11-28T10:00:00Z", "cwd": "/w/p"}
	if parent != "" {
		rec["parentUuid"] = parent
	} else {
		rec["parentUuid"] = nil
	}
	switch typ {
	case "user":
		rec["message"] = map[string]any{"role": "user", "content": content}
	case "result":
		rec["type"] = "user"
		rec["message"] = map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": content, "content": "ok"}}}
	case "assistant":
		rec["message"] = map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "text", "text": content}}}
	case "tool":
		rec["type"] = "assistant"
		rec["message"] = map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": content, "name": "Read", "input": map[string]any{}}}}
	}
	b, _ := json.Marshal(rec)
	return string(b) + "\n"
}

// A rewind continues from an earlier record: the turns after it stay in
// the file, on a branch Read leaves out; parallel tool uses (results that
// share a parent) are not a rewind; before the rewind's prompt is written
// everything shows.
func TestReadLeavesOutRewoundTurns(t *testing.T) {
	root := t.TempDir()
	recs := []string{
		chained("user", "p1", "", "first"),
		chained("assistant", "a1", "p1", "one"),
		chained("user", "p2", "a1", "second"),
		// Two tool uses in parallel: the second tool use and the first
		// result share the first tool use as parent.
		chained("tool", "t1", "p2", "tu1"),
		chained("tool", "t2", "t1", "tu2"),
		chained("result", "r1", "t1", "tu1"),
		chained("result", "r2", "t2", "tu2"),
		chained("assistant", "a2", "r2", "two"),
		chained("user", "p3", "a2", "third"),
		chained("assistant", "a3", "p3", "three"),
	}
	path := writeSession(t, root, "/w/p", "rw", recs...)
	st := open(t, root)
	read := func() (texts []string) {
		t.Helper()
		p, err := st.Read(context.Background(), history.ReadOptions{ID: "rw", Project: "/w/p"})
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range p.Events {
			texts = append(texts, ev.UUID)
		}
		return texts
	}
	all := []string{"p1", "a1", "p2", "t1", "t2", "r1", "r2", "a2", "p3", "a3"}
	if got := read(); !slices.Equal(got, all) {
		t.Fatalf("before the rewind: %v, want %v", got, all)
	}
	// Rewound to before "second": the new prompt's parent is a1.
	appendTo(t, path, chained("user", "p4", "a1", "fourth")+chained("assistant", "a4", "p4", "four"))
	if got, want := read(), []string{"p1", "a1", "p4", "a4"}; !slices.Equal(got, want) {
		t.Errorf("after the rewind: %v, want %v", got, want)
	}
	if l := listAll(t, st, history.ListOptions{}); l.Total != 1 {
		t.Errorf("listed %+v", l)
	}
	if got, want := read(), []string{"p1", "a1", "p4", "a4"}; !slices.Equal(got, want) {
		t.Errorf("after a list: %v, want %v", got, want)
	}
}
