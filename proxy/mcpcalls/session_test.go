package mcpcalls

import (
	"bytes"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/ccproxy/ccproxy/mcpconfig/calllog"
	"github.com/ccproxy/ccproxy/stream"
)

// syncBuffer is a bytes.Buffer safe for concurrent use (a logger's).
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// mcpEvents normalizes stream-json lines as a session's stdout loop does,
// so that their MCP blocks are annotated and Event.MCP is set.
func mcpEvents(t testing.TB, lines ...string) []stream.Event {
	t.Helper()
	norm := stream.NewNormalizer(stream.Options{})
	var out []stream.Event
	for _, l := range lines {
		ev := norm.Normalize([]byte(l))
		ev.JSON = bytes.Clone(ev.JSON)
		out = append(out, ev)
	}
	return out
}

func toolUseLine(id string) string {
	return `{"type":"assistant","message":{"content":[{"type":"tool_use","id":"` + id + `","name":"mcp__srv__echo","input":{"message":"hi"}}]},"session_id":"x"}`
}

func toolResultLine(id, content string) string {
	return `{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"` + id + `","content":"` + content + `"}]},"session_id":"x"}`
}

// A tool_result of a tool that is not an MCP tool (a Bash result of
// megabytes) is passed over without being parsed: no allocation at all.
func TestMCPCallsSkipNonMCPEvents(t *testing.T) {
	m := newTestCalls(t)
	sc := m.ForSession("s", slog.New(slog.DiscardHandler))
	bash := mcpEvents(t,
		`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"toolu_b","name":"Bash","input":{"command":"cat big"}}]},"session_id":"x"}`,
		toolResultLine("toolu_b", strings.Repeat("x", 1<<20)))
	for _, ev := range bash {
		if ev.MCP {
			t.Fatalf("a Bash event is marked MCP: %.200s", ev.JSON)
		}
	}
	if n := testing.AllocsPerRun(20, func() {
		sc.Observe(&bash[0])
		sc.Observe(&bash[1])
	}); n != 0 {
		t.Errorf("observing a Bash tool_use and its 1 MiB result: %v allocations, want 0 (the events must not be parsed)", n)
	}
	// MCP calls are still paired and logged.
	for _, ev := range mcpEvents(t, toolUseLine("toolu_m"), toolResultLine("toolu_m", "hi")) {
		if !ev.MCP {
			t.Fatalf("an MCP event is not marked: %s", ev.JSON)
		}
		sc.Observe(&ev)
	}
	if es, err := m.clog.Last(10, ""); err != nil || len(es) != 1 || es[0].ToolUseID != "toolu_m" || es[0].DurationMs == nil {
		t.Errorf("call log: %+v, %v; want the MCP call only", es, err)
	}
}

// When a session has more MCP calls awaiting their results than the
// Pairer keeps, the calls it forgets are reported in the log, once each
// time their number grows.
func TestMCPCallsDroppedReported(t *testing.T) {
	m := newTestCalls(t)
	var buf syncBuffer
	sc := m.newSessionCalls("s", calllog.PairerOptions{MaxPending: 2}, slog.New(slog.NewTextHandler(&buf, nil)))
	warnings := func() int { return strings.Count(buf.String(), "level=WARN") }
	growths, last := 0, 0
	for i, ev := range mcpEvents(t, toolUseLine("t1"), toolUseLine("t2"), toolUseLine("t3"),
		toolResultLine("t3", "ok"), toolResultLine("t1", "late"), toolUseLine("t4"), toolUseLine("t5"), toolUseLine("t6")) {
		sc.Observe(&ev)
		if n := sc.p.Dropped(); n > last {
			growths, last = growths+1, n
			if !strings.HasSuffix(strings.TrimSpace(buf.String()), "dropped_total="+strconv.Itoa(n)+" max_pending=2") {
				t.Errorf("event %d: %d calls forgotten, the log says:\n%s", i, n, buf.String())
			}
		}
		if w := warnings(); w != growths {
			t.Fatalf("event %d: %d warnings for %d growths of the forgotten calls:\n%s", i, w, growths, buf.String())
		}
	}
	if growths < 2 {
		t.Errorf("the test forgot calls only %d times", growths)
	}
}

func newTestCalls(t testing.TB) *Calls {
	clog, err := calllog.Open(filepath.Join(t.TempDir(), "calls.jsonl"), calllog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { clog.Close() })
	return &Calls{log: slog.New(slog.DiscardHandler), clog: clog}
}

// The call log's cost on a session's stdout loop: events package stream
// did not mark as MCP (a text, a 5 MB Bash result) are passed over at
// once; a tool_use/tool_result pair costs one Pairer step each and one
// appended line.
func BenchmarkMCPCallsObserve(b *testing.B) {
	text := mcpEvents(b, `{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"`+strings.Repeat("lorem ipsum ", 400)+`"}]},"session_id":"x"}`)[0]
	bash := mcpEvents(b, toolResultLine("toolu_b", strings.Repeat("x", 5<<20)))[0]
	for _, bc := range []struct {
		name string
		ev   stream.Event
	}{{"text", text}, {"bash5MB", bash}} {
		b.Run(bc.name, func(b *testing.B) {
			sc := newTestCalls(b).ForSession("s", slog.New(slog.DiscardHandler))
			b.SetBytes(int64(len(bc.ev.JSON)))
			b.ReportAllocs()
			for b.Loop() {
				sc.Observe(&bc.ev)
			}
		})
	}
	b.Run("pair", func(b *testing.B) {
		m := newTestCalls(b)
		sc := m.ForSession("s", slog.New(slog.DiscardHandler))
		pair := mcpEvents(b, toolUseLine("toolu_1"), toolResultLine("toolu_1", "hi"))
		evUse, evResult := pair[0], pair[1]
		use, result := evUse.JSON, evResult.JSON
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			// A fresh id each time: a repeated result is not logged twice.
			i++
			id := "toolu_" + strconv.Itoa(i)
			evUse.JSON = bytes.Replace(use, []byte("toolu_1"), []byte(id), 1)
			evResult.JSON = bytes.Replace(result, []byte("toolu_1"), []byte(id), 1)
			sc.Observe(&evUse)
			sc.Observe(&evResult)
		}
		if es, err := m.clog.Last(1, "srv"); err != nil || len(es) != 1 || es[0].ToolUseID != "toolu_"+strconv.Itoa(i) || es[0].DurationMs == nil {
			b.Fatalf("the last call is not logged: %+v, %v", es, err)
		}
	})
}
