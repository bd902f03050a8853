package calllog

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/ccproxy/ccproxy/mcpconfig/probe"
	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/stream"
)

var t0 = time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)

func entry(server, tool string, i int) Entry {
	d := float64(i)
	return Entry{Time: t0.Add(time.Duration(i) * time.Second), Kind: KindSession, Session: "s1",
		Server: server, Tool: tool, ToolUseID: fmt.Sprintf("toolu_%d", i), DurationMs: &d, ResultBytes: int64(i),
		Input: json.RawMessage(`{"i":` + fmt.Sprint(i) + `}`), Output: ptr(fmt.Sprintf("output %d", i))}
}

func ptr(s string) *string { return &s }

func checkLogShape(t testing.TB, entries []Entry) {
	t.Helper()
	if err := (protocol.MCPLogResult{Entries: Wire.LogEntries(entries)}).Validate(); err != nil {
		t.Errorf("entries break the protocol: %v", err)
	}
}

func TestLogAppendLast(t *testing.T) {
	l, err := Open(filepath.Join(t.TempDir(), "sub", "log.jsonl"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for i := 1; i <= 10; i++ {
		server := "a"
		if i%3 == 0 {
			server = "b"
		}
		if err := l.Append(entry(server, "t", i)); err != nil {
			t.Fatal(err)
		}
	}
	got, err := l.Last(4, "")
	if err != nil {
		t.Fatal(err)
	}
	checkLogShape(t, got)
	if ids := toolUseIDs(got); ids != "7 8 9 10" {
		t.Errorf("last 4: %s", ids)
	}
	got, _ = l.Last(100, "b")
	if ids := toolUseIDs(got); ids != "3 6 9" {
		t.Errorf("last of b: %s", ids)
	}
	if got[0].Input != nil || got[0].Output != nil {
		t.Errorf("input/output stored without StoreIO: %+v", got[0])
	}
	if got[0].DurationMs == nil || *got[0].DurationMs != 3 || got[0].ResultBytes != 3 || !got[0].Time.Equal(t0.Add(3*time.Second)) {
		t.Errorf("entry read back: %+v", got[0])
	}
	if got, _ := l.Last(5, "nobody"); len(got) != 0 || got == nil {
		t.Errorf("unknown server: %#v", got)
	}
	info, err := os.Stat(l.Path())
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("file mode %v, %v", info.Mode(), err)
	}
}

func toolUseIDs(es []Entry) string {
	var ids []string
	for _, e := range es {
		ids = append(ids, strings.TrimPrefix(e.ToolUseID, "toolu_"))
	}
	return strings.Join(ids, " ")
}

func TestLogRotation(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "log.jsonl")
	line, _ := json.Marshal(entry("a", "t", 10))
	// Room for 3 entries per file, 2 rotated files.
	l, err := Open(path, Options{MaxBytes: int64(3*(len(line)+1) + 5), Keep: 2})
	if err != nil {
		t.Fatal(err)
	}
	for i := 10; i < 30; i++ {
		if err := l.Append(entry("a", "t", i)); err != nil {
			t.Fatal(err)
		}
	}
	files, _ := filepath.Glob(path + "*")
	if len(files) != 3 {
		t.Errorf("files %v, want the log and 2 rotated", files)
	}
	got, err := l.Last(1000, "")
	if err != nil {
		t.Fatal(err)
	}
	// 20 entries, 3 per file, 3 files: the last 9 (or fewer, at a boundary) survive, in order.
	if ids := toolUseIDs(got); !strings.HasSuffix(ids, "27 28 29") || len(got) < 7 || len(got) > 9 {
		t.Errorf("after rotation: %s", ids)
	}
	for i := 1; i < len(got); i++ {
		if !got[i].Time.After(got[i-1].Time) {
			t.Errorf("not oldest first: %s", toolUseIDs(got))
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// Reopened: appends continue, history is read back.
	l, err = Open(path, Options{MaxBytes: int64(3*(len(line)+1) + 5), Keep: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.Append(entry("a", "t", 30)); err != nil {
		t.Fatal(err)
	}
	got, _ = l.Last(2, "")
	if ids := toolUseIDs(got); ids != "29 30" {
		t.Errorf("after reopening: %s", ids)
	}
}

func TestLogStoreIO(t *testing.T) {
	l, err := Open(filepath.Join(t.TempDir(), "log.jsonl"), Options{StoreIO: true, MaxIOBytes: 32})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if !l.StoresIO() {
		t.Fatal("StoresIO is false")
	}
	e := entry("a", "t", 1)
	long := `{"text":"` + strings.Repeat("é", 40) + `"}`
	e.Input = json.RawMessage(long)
	e.Output = ptr(strings.Repeat("x", 100))
	if err := l.Append(e); err != nil {
		t.Fatal(err)
	}
	if err := l.Append(entry("a", "t", 2)); err != nil {
		t.Fatal(err)
	}
	got, _ := l.Last(2, "")
	var in string
	if err := json.Unmarshal(got[0].Input, &in); err != nil || !strings.HasSuffix(in, fmt.Sprintf("… (input cut, %d bytes)", len(long))) {
		t.Errorf("long input stored as %s (%v)", got[0].Input, err)
	}
	if got[0].Output == nil || !strings.HasPrefix(*got[0].Output, strings.Repeat("x", 32)+"… (output cut, 100 bytes)") {
		t.Errorf("long output stored as %v", got[0].Output)
	}
	if string(got[1].Input) != `{"i":2}` || *got[1].Output != "output 2" {
		t.Errorf("short input/output: %s %v", got[1].Input, *got[1].Output)
	}
}

func TestLogRejectsAndSkips(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.jsonl")
	l, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []Entry{
		{Kind: "other", Server: "a", Tool: "t"},
		{Kind: KindDirect, Tool: "t"},
		{Kind: KindSession, Server: "a", Tool: "t"},
	} {
		if err := l.Append(bad); err == nil {
			t.Errorf("Append(%+v) succeeded", bad)
		}
	}
	if err := l.Append(entry("a", "t", 1)); err != nil {
		t.Fatal(err)
	}
	// Lines another hand broke, and a huge one, are skipped.
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("not json\n{\"kind\":\"direct\"}\n" + strings.Repeat("y", maxLine+10) + "\n")
	f.Close()
	if err := l.Append(entry("a", "t", 2)); err != nil {
		t.Fatal(err)
	}
	got, err := l.Last(10, "")
	if err != nil || toolUseIDs(got) != "1 2" {
		t.Errorf("Last = %s, %v", toolUseIDs(got), err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := l.Append(entry("a", "t", 3)); !errors.Is(err, ErrClosed) {
		t.Errorf("Append after Close: %v", err)
	}
}

func TestLogConcurrent(t *testing.T) {
	line, _ := json.Marshal(entry("a", "t", 10))
	l, err := Open(filepath.Join(t.TempDir(), "log.jsonl"), Options{MaxBytes: int64(50 * len(line)), Keep: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				if err := l.Append(entry(fmt.Sprintf("s%d", g), "t", 100+i)); err != nil {
					t.Error(err)
				}
				if i%10 == 0 {
					if _, err := l.Last(20, ""); err != nil {
						t.Error(err)
					}
				}
			}
		})
	}
	wg.Wait()
	got, _ := l.Last(1000, "")
	if len(got) != 400 {
		t.Errorf("%d entries, want 400", len(got))
	}
	got, _ = l.Last(1000, "s3")
	if len(got) != 50 {
		t.Errorf("%d entries of s3, want 50", len(got))
	}
}

func TestProjectFile(t *testing.T) {
	a := ProjectFile("/state", "/home/u/my proj")
	b := ProjectFile("/state", "/home/v/my proj")
	if filepath.Dir(a) != "/state" || !strings.HasPrefix(filepath.Base(a), "my_proj-") || !strings.HasSuffix(a, ".jsonl") || a == b {
		t.Errorf("ProjectFile: %s %s", a, b)
	}
	if ProjectFile("/state", "/home/u/my proj/") != a {
		t.Errorf("a trailing slash changes the file")
	}
}

func TestDirectEntry(t *testing.T) {
	res := probe.CallResult{Server: "srv", Tool: "img", Content: "[image image/png 1 KiB]", DurationMs: 12.5,
		Attachments: []probe.Attachment{{Kind: "image", Size: 1024, SHA256: strings.Repeat("a", 64)}}}
	e := DirectEntry(res, json.RawMessage(`{"a":1}`), t0)
	checkLogShape(t, []Entry{e})
	if e.Kind != KindDirect || e.ResultBytes != int64(len(res.Content))+1024 || *e.DurationMs != 12.5 || string(e.Input) != `{"a":1}` {
		t.Errorf("entry %+v", e)
	}
}

// normalizedEvents reads a real transcript through package stream.
func normalizedEvents(t testing.TB, name string) []stream.Event {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "testdata", "transcripts", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := stream.NewReader(f, 0)
	n := stream.NewNormalizer(stream.Options{Attachments: stream.AttachStrip})
	var out []stream.Event
	for {
		line, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		ev := n.Normalize(line)
		ev.JSON = append([]byte(nil), ev.JSON...)
		out = append(out, ev)
	}
}

// TestPairerTranscript pairs the tool calls of a real session of the CLI
// with the everything server.
func TestPairerTranscript(t *testing.T) {
	p := NewPairer("sess-1", PairerOptions{})
	var got []Entry
	for i, ev := range normalizedEvents(t, "everything_tools.jsonl") {
		got = append(got, p.Observe(ev, t0.Add(time.Duration(i)*10*time.Millisecond))...)
	}
	checkLogShape(t, got)
	wantTools := []string{"echo", "get-tiny-image", "get-resource-links", "get-resource-reference", "get-structured-content",
		"get-annotated-message", "gzip-file-as-resource", "gzip-file-as-resource", "get-sum", "gzip-file-as-resource",
		"nonexistent-tool", "trigger-long-running-operation"}
	if len(got) != len(wantTools) {
		t.Fatalf("%d entries, want %d: %+v", len(got), len(wantTools), got)
	}
	errorsSeen := 0
	for i, e := range got {
		if e.Server != "everything" || e.Tool != wantTools[i] || e.Session != "sess-1" || e.Kind != KindSession {
			t.Errorf("entry %d: %+v", i, e)
		}
		if e.DurationMs == nil || *e.DurationMs <= 0 || e.ResultBytes <= 0 || e.Input != nil || e.Output != nil {
			t.Errorf("entry %d (%s): duration %v, result %d bytes, io %s %v", i, e.Tool, e.DurationMs, e.ResultBytes, e.Input, e.Output)
		}
		if e.IsError {
			errorsSeen++
		}
	}
	if errorsSeen != 3 {
		t.Errorf("%d failed calls, want 3", errorsSeen)
	}
	// The image's decoded bytes count in the result size.
	if img := got[1]; img.ResultBytes < 100 {
		t.Errorf("get-tiny-image result is %d bytes", img.ResultBytes)
	}
	if p.Pending() != 0 || p.Dropped() != 0 {
		t.Errorf("pending %d, dropped %d", p.Pending(), p.Dropped())
	}
}

func assistant(blocks ...string) stream.Event {
	return stream.Event{Type: stream.TypeAssistant, JSON: []byte(`{"type":"assistant","message":{"role":"assistant","content":[` + strings.Join(blocks, ",") + `]}}`)}
}

func user(blocks ...string) stream.Event {
	return stream.Event{Type: stream.TypeUser, JSON: []byte(`{"type":"user","message":{"role":"user","content":[` + strings.Join(blocks, ",") + `]}}`)}
}

func use(id, server, tool string) string {
	return fmt.Sprintf(`{"type":"tool_use","id":%q,"name":"mcp__%s__%s","input":{"q":%q},"mcp":{"server":%q,"tool":%q}}`, id, server, tool, id, server, tool)
}

func result(id, content string, isErr bool, mcp string) string {
	s := fmt.Sprintf(`{"type":"tool_result","tool_use_id":%q,"content":%q,"is_error":%v`, id, content, isErr)
	if mcp != "" {
		s += `,"mcp":` + mcp
	}
	return s + "}"
}

func TestPairerEdges(t *testing.T) {
	p := NewPairer("s", PairerOptions{MaxPending: 2, KeepIO: true, MaxIOBytes: 10})
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	// Three parallel calls with room for two: the first is forgotten.
	p.Observe(assistant(use("a", "srv", "t1"), use("b", "srv", "t2")), at(0))
	p.Observe(assistant(use("c", "srv", "t3"), `{"type":"tool_use","id":"bash","name":"Bash","input":{}}`), at(5))
	if p.Pending() != 2 || p.Dropped() != 1 {
		t.Fatalf("pending %d dropped %d", p.Pending(), p.Dropped())
	}
	got := p.Observe(user(
		result("a", "forgotten", false, `{"server":"srv","tool":"t1"}`),
		result("b", "a long output here", true, ""),
		result("bash", "not mcp", false, ""),
	), at(30))
	if len(got) != 2 {
		t.Fatalf("entries %+v", got)
	}
	if got[0].ToolUseID != "a" || got[0].DurationMs != nil || got[0].Tool != "t1" {
		t.Errorf("forgotten call: %+v", got[0])
	}
	if got[1].ToolUseID != "b" || got[1].DurationMs == nil || *got[1].DurationMs != 30 || !got[1].IsError || got[1].ResultBytes != 18 {
		t.Errorf("second call: %+v", got[1])
	}
	if string(got[1].Input) != `{"q":"b"}` || got[1].Output == nil || !strings.HasPrefix(*got[1].Output, "a long out… (output cut, 18 bytes)") {
		t.Errorf("kept io: %s %v", got[1].Input, *got[1].Output)
	}
	// The same result again is not logged twice; an unseen one without
	// the annotation is not an MCP call.
	if again := p.Observe(user(result("b", "x", false, ""), result("zzz", "x", false, "")), at(40)); len(again) != 0 {
		t.Errorf("repeated result logged: %+v", again)
	}
	got = p.Observe(user(result("c", "done", false, "")), at(45))
	if len(got) != 1 || *got[0].DurationMs != 40 || p.Pending() != 0 {
		t.Errorf("last: %+v, pending %d", got, p.Pending())
	}
	// Memory stays bounded over many calls.
	for i := range 10000 {
		id := fmt.Sprint("x", i)
		p.Observe(assistant(use(id, "srv", "t")), at(i))
		p.Observe(user(result(id, "ok", false, "")), at(i+1))
	}
	if len(p.order) > 4 || len(p.done) > 2 || len(p.doneQ) > 2 {
		t.Errorf("state grows: order %d done %d", len(p.order), len(p.done))
	}
}

// TestPairerToLog: entries of a Pairer go through a Log and come back as
// mcp/log data.
func TestPairerToLog(t *testing.T) {
	l, err := Open(filepath.Join(t.TempDir(), "log.jsonl"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	p := NewPairer("sess", PairerOptions{KeepIO: l.StoresIO()})
	for i, ev := range normalizedEvents(t, "everything_tools.jsonl") {
		for _, e := range p.Observe(ev, t0.Add(time.Duration(i)*time.Second)) {
			if err := l.Append(e); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := l.Append(DirectEntry(probe.CallResult{Server: "everything", Tool: "echo", Content: "hi", DurationMs: 3}, nil, t0.Add(time.Hour))); err != nil {
		t.Fatal(err)
	}
	got, err := l.Last(3, "everything")
	if err != nil {
		t.Fatal(err)
	}
	checkLogShape(t, got)
	b, _ := json.Marshal(protocol.MCPLogResult{Entries: Wire.LogEntries(got)})
	if n := gjson.GetBytes(b, "entries.#").Int(); n != 3 || gjson.GetBytes(b, "entries.2.kind").String() != "direct" ||
		gjson.GetBytes(b, "entries.1.tool").String() != "trigger-long-running-operation" {
		t.Errorf("mcp/log data: %s", b)
	}
}
