package history_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/ccproxy/ccproxy/history"
	"github.com/ccproxy/ccproxy/stream"
)

// versions are the CLI versions whose session files are kept in
// testdata/history.
var versions = []string{"2.1.329", "2.1.330"}

func TestCapturedSessions(t *testing.T) {
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			checkCaptured(t, filepath.Join("..", "testdata", "history", v, "projects"), v)
		})
	}
}

// memSink is a stream.Sink keeping attachments in memory.
type memSink struct {
	mu   sync.Mutex
	data map[string][]byte
}

func (m *memSink) PutAttachment(a stream.Attachment, data []byte) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.data == nil {
		m.data = map[string][]byte{}
	}
	m.data[a.SHA256] = slices.Clone(data)
	return "/v1/blobs/" + a.SHA256, nil
}

// checkCaptured checks what matters in a history capture (the
// HistorySession scenario, then HistoryResume): the listing, and a read of
// the whole conversation in small pages.
func checkCaptured(t *testing.T, root, version string) {
	t.Helper()
	ctx := context.Background()
	st, err := history.Open(history.Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	page, err := st.List(ctx, history.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Sessions) != 1 || page.Total != 1 || page.Next != "" || page.Skipped != 0 {
		t.Fatalf("list: %+v, want the one session", page)
	}
	s := page.Sessions[0]
	fi, err := os.Stat(filepath.Join(root, s.Folder, s.ID+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Project != "/tmp/cchist/project" || s.Folder != "-tmp-cchist-project" {
		t.Errorf("project %q folder %q, want /tmp/cchist/project in -tmp-cchist-project", s.Project, s.Folder)
	}
	if s.Title != "[H-TEXT] Say hello, after some thought." || s.TitleFrom != "prompt" {
		t.Errorf("title %q from %q, want the first prompt", s.Title, s.TitleFrom)
	}
	if s.Size != fi.Size() || s.Messages < 20 || s.Corrupt != 0 || s.Oversized != 0 {
		t.Errorf("size %d (file %d), messages %d, corrupt %d, oversized %d", s.Size, fi.Size(), s.Messages, s.Corrupt, s.Oversized)
	}
	if s.Created.IsZero() || !s.Updated.After(s.Created) {
		t.Errorf("created %v, updated %v: want record times, updated later", s.Created, s.Updated)
	}
	if p2, err := st.List(ctx, history.ListOptions{Project: "/tmp/cchist/project"}); err != nil || len(p2.Sessions) != 1 {
		t.Errorf("list of the project: %+v, %v", p2, err)
	}
	if p2, err := st.List(ctx, history.ListOptions{Project: "/tmp/elsewhere"}); err != nil || len(p2.Sessions) != 0 {
		t.Errorf("list of another project: %+v, %v", p2, err)
	}

	sink := &memSink{}
	opts := history.ReadOptions{ID: s.ID, Limit: 3}
	var evs []history.Event
	pages := 0
	for {
		p, err := st.Read(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		if p.Corrupt != 0 || p.Oversized != 0 {
			t.Errorf("page %d: corrupt %d oversized %d", pages, p.Corrupt, p.Oversized)
		}
		evs = append(evs, p.Events...)
		if open := unanswered(p.Events); len(open) > 0 {
			t.Errorf("page %d ends with tool uses %v unanswered", pages, open)
		}
		if !p.More {
			if p.Next != fmt.Sprint(fi.Size()) {
				t.Errorf("last page ends at %s, the file has %d bytes", p.Next, fi.Size())
			}
			break
		}
		opts.Cursor = p.Next
	}
	whole, err := st.Read(ctx, history.ReadOptions{ID: s.ID, Project: s.Project, Limit: 1000,
		Normalize: stream.Options{Attachments: stream.AttachSink, Sink: sink}})
	if err != nil {
		t.Fatal(err)
	}
	// Pages nest at most Limit events of a subagent (then a history_more
	// event); the main conversation must come out the same either way.
	main := func(evs []history.Event) (out []history.Event) {
		for _, ev := range evs {
			if ev.ParentToolUseID == "" {
				out = append(out, ev)
			}
		}
		return out
	}
	pm, wm := main(evs), main(whole.Events)
	if whole.More || len(pm) != len(wm) {
		t.Fatalf("one big page has %d main events (more %v), %d pages of 3 gave %d", len(wm), whole.More, pages, len(pm))
	}
	for i := range pm {
		if pm[i].UUID != wm[i].UUID || pm[i].Offset != wm[i].Offset {
			t.Fatalf("event %d differs between paged and whole reads: %s@%d vs %s@%d", i, pm[i].UUID, pm[i].Offset, wm[i].UUID, wm[i].Offset)
		}
	}
	more := 0
	for _, ev := range evs {
		if ev.Subtype == "history_more" {
			more++
		}
	}
	if more != 1 {
		t.Errorf("%d history_more events in pages of 3, want 1 (the subagent has more than 3 events)", more)
	}
	evs = whole.Events
	var prompts []string
	var taskID string
	toolNames := map[string]string{}
	seen := map[string]bool{}
	subagent := 0
	for i, ev := range evs {
		j := gjson.ParseBytes(ev.JSON)
		if !gjson.ValidBytes(ev.JSON) {
			t.Fatalf("event %d is not JSON: %s", i, ev.JSON)
		}
		if ev.Type != "user" && ev.Type != "assistant" && ev.Type != "system" {
			t.Errorf("event %d has type %q", i, ev.Type)
		}
		if j.Get("session_id").Str != s.ID || ev.UUID == "" {
			t.Errorf("event %d: session_id %q uuid %q", i, j.Get("session_id").Str, ev.UUID)
		}
		if ev.ParentToolUseID != "" {
			subagent++
			if ev.ParentToolUseID != taskID {
				t.Errorf("event %d nested under %q, the Task tool use is %q", i, ev.ParentToolUseID, taskID)
			}
		}
		if c := j.Get("message.content"); c.Type == gjson.String && ev.Type == "user" && ev.ParentToolUseID == "" {
			prompts = append(prompts, c.Str)
		}
		j.Get("message.content").ForEach(func(_, b gjson.Result) bool {
			switch b.Get("type").Str {
			case "thinking":
				seen["thinking"] = true
			case "tool_use":
				name := b.Get("name").Str
				toolNames[b.Get("id").Str] = name
				if name == "Task" || name == "Agent" {
					taskID = b.Get("id").Str
				}
				if name == "mcp__everything__get-tiny-image" {
					if b.Get("mcp.server").Str != "everything" || b.Get("mcp.tool").Str != "get-tiny-image" {
						t.Errorf("MCP tool_use not annotated: %s", b.Raw)
					}
					seen["mcp tool_use"] = true
				}
			case "tool_result":
				if b.Get("content").Type != gjson.String {
					t.Errorf("tool_result content is not text: %s", clip(b.Raw))
				}
				name := toolNames[b.Get("tool_use_id").Str]
				if name == "mcp__everything__get-tiny-image" {
					a := b.Get("attachments.0")
					if a.Get("kind").Str != "image" || !strings.HasPrefix(a.Get("url").Str, "/v1/blobs/") || a.Get("data").Exists() {
						t.Errorf("image result: attachment %s, want an image served from /v1/blobs", a.Raw)
					}
					if b.Get("mcp.server").Str != "everything" {
						t.Errorf("MCP tool_result not annotated: %s", clip(b.Raw))
					}
					seen["mcp image"] = true
				}
				if strings.Contains(b.Get("content").Str, "tool-results/") {
					seen["saved tool result"] = true
				}
			}
			return true
		})
		if p := j.Get("tool_use_result.structuredPatch"); p.IsArray() && len(p.Array()) > 0 {
			seen["structuredPatch"] = true
		}
		if j.Get("tool_use_result.stdout").Str == "alpha\nBETA (edited)\ngamma" {
			seen["bash"] = true
		}
	}
	for _, want := range []string{"thinking", "mcp tool_use", "mcp image", "structuredPatch", "bash", "saved tool result"} {
		if !seen[want] {
			t.Errorf("no %s among the %d events", want, len(evs))
		}
	}
	if taskID == "" || subagent < 4 {
		t.Errorf("Task tool use %q, %d subagent events nested; want the subagent's prompt, calls and answer", taskID, subagent)
	}
	wantPrompts := []string{"[H-TEXT]", "[H-FILES]", "[H-MCP]", "[H-TASK]", "<task-notification>", "[H-RESUME]"}
	if len(prompts) != len(wantPrompts) {
		t.Fatalf("user prompts %q, want %q", prompts, wantPrompts)
	}
	for i, w := range wantPrompts {
		if !strings.HasPrefix(prompts[i], w) {
			t.Errorf("prompt %d is %q, want it to start with %q", i, clip(prompts[i]), w)
		}
	}
	if len(sink.data) == 0 {
		t.Error("the sink got no attachment")
	}

	// The subagent alone, in pages of 2, ends where the nested read did.
	agentEvents := 0
	aopts := history.ReadOptions{ID: s.ID, Agent: agentID(t, root, s), Limit: 2}
	for {
		p, err := st.Read(ctx, aopts)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range p.Events {
			if ev.ParentToolUseID != taskID {
				t.Errorf("subagent event parent %q, want %q", ev.ParentToolUseID, taskID)
			}
		}
		agentEvents += len(p.Events)
		if !p.More {
			break
		}
		aopts.Cursor = p.Next
	}
	if agentEvents != subagent {
		t.Errorf("reading the subagent gave %d events, nested %d", agentEvents, subagent)
	}
}

// unanswered returns the tool_use ids of the main conversation in evs
// without a tool_result in evs.
func unanswered(evs []history.Event) []string {
	open := map[string]bool{}
	for _, ev := range evs {
		if ev.ParentToolUseID != "" {
			continue
		}
		gjson.GetBytes(ev.JSON, "message.content").ForEach(func(_, b gjson.Result) bool {
			switch b.Get("type").Str {
			case "tool_use":
				open[b.Get("id").Str] = true
			case "tool_result":
				delete(open, b.Get("tool_use_id").Str)
			}
			return true
		})
	}
	var ids []string
	for id := range open {
		ids = append(ids, id)
	}
	return ids
}

func agentID(t *testing.T, root string, s history.Session) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(root, s.Folder, s.ID, "subagents", "agent-*.jsonl"))
	if len(m) != 1 {
		t.Fatalf("subagent files: %v", m)
	}
	return strings.TrimSuffix(strings.TrimPrefix(filepath.Base(m[0]), "agent-"), ".jsonl")
}

func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

// The events Read makes from the session file are those the live stream
// carried (same uuids), and a renderer sees the same in them: type,
// parent_tool_use_id and the subagent fields, the normalized message
// content, tool_use_result. (Not compared: stop_reason and usage, final in
// the file and not yet on the stream; request_id, tool_use_meta and
// tool_result_meta, which the file does not keep.)
func TestHistoryMatchesLiveStream(t *testing.T) {
	for _, v := range versions {
		t.Run(v, func(t *testing.T) { checkLive(t, filepath.Join("..", "testdata", "history", v)) })
	}
}

// checkLive compares the session in dir/projects with the live stream in
// dir/stream (see TestHistoryMatchesLiveStream).
func checkLive(t *testing.T, dir string) {
	t.Helper()
	live := map[string]gjson.Result{}
	norm := stream.NewNormalizer(stream.Options{Attachments: stream.AttachStrip})
	for _, name := range []string{"history-session.jsonl", "history-resume.jsonl"} {
		b, err := os.ReadFile(filepath.Join(dir, "stream", name))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			ev := norm.Normalize([]byte(l))
			if ev.Type == "user" || ev.Type == "assistant" {
				live[ev.UUID] = gjson.ParseBytes(bytes.Clone(ev.JSON))
			}
		}
	}
	st := open(t, filepath.Join(dir, "projects"))
	s := listAll(t, st, history.ListOptions{}).Sessions[0]
	p, err := st.Read(context.Background(), history.ReadOptions{ID: s.ID, Limit: 1000, Normalize: stream.Options{Attachments: stream.AttachStrip}})
	if err != nil {
		t.Fatal(err)
	}
	matched := 0
	for _, ev := range p.Events {
		want, ok := live[ev.UUID]
		if !ok {
			continue // the stream echoes no prompts, nor the subagent's
		}
		matched++
		got := gjson.ParseBytes(ev.JSON)
		for _, path := range []string{"type", "parent_tool_use_id", "agent_id", "subagent_type", "task_description", "message.role", "message.content", "tool_use_result"} {
			if !sameJSON(got.Get(path), want.Get(path)) {
				t.Errorf("%s %s: %s is\n%s\nin the history, live it was\n%s", ev.Type, ev.UUID, path, clip(got.Get(path).Raw), clip(want.Get(path).Raw))
			}
		}
	}
	if matched != len(live) {
		t.Errorf("%d of the %d live user/assistant events are in the history", matched, len(live))
	}
}

// sameJSON compares two JSON values semantically.
func sameJSON(a, b gjson.Result) bool {
	if !a.Exists() || !b.Exists() {
		return a.Exists() == b.Exists()
	}
	var x, y any
	if json.Unmarshal([]byte(a.Raw), &x) != nil || json.Unmarshal([]byte(b.Raw), &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
