package proxy

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ccproxy/ccproxy/internal/testkit"
	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/proxy/mcphub"
	"github.com/ccproxy/ccproxy/proxy/toolfiles"
)

// historyHome returns a home directory holding the sessions captured
// from the real CLI, moved to project (testkit.HistoryHome).
func historyHome(t testing.TB, project string) string {
	t.Helper()
	home, _ := testkit.HistoryHome(t, project, nil)
	return home
}

// readHistory reads a session page after page (limit events a page) and
// checks every reply against the protocol.
func readHistory(t *testing.T, c *wsClient, data map[string]any) (events []protocol.HistoryEvent, pages []protocol.HistoryReadResult) {
	t.Helper()
	for {
		var r protocol.HistoryReadResult
		mustUnmarshal(t, c.do(protocol.TypeHistoryRead, data), &r)
		if err := r.Validate(); err != nil {
			t.Fatalf("history/read reply: %v", err)
		}
		pages = append(pages, r)
		events = append(events, r.Events...)
		if !r.More {
			return events, pages
		}
		if len(pages) > 1000 {
			t.Fatal("history/read: more than 1000 pages")
		}
		data["cursor"] = r.Next
	}
}

func evField(t *testing.T, ev json.RawMessage, key string) string {
	var m map[string]any
	mustUnmarshal(t, ev, &m)
	s, _ := m[key].(string)
	return s
}

func TestHistoryListAndRead(t *testing.T) {
	project := t.TempDir()
	ts := startServer(t, Options{Project: project, HistoryOptions: HistoryOptions{HistoryHome: historyHome(t, project)}})
	c := ts.dial(t)

	var hello protocol.Hello
	c.waitPush(0, protocol.TypeHello, &hello, nil)
	if !slices.Contains(hello.Capabilities, protocol.CapHistory) {
		t.Errorf("hello capabilities %v lack %q", hello.Capabilities, protocol.CapHistory)
	}

	// The proxy's project by default, newest first.
	var l protocol.HistoryListResult
	mustUnmarshal(t, c.do(protocol.TypeHistoryList, map[string]any{}), &l)
	if err := l.Validate(); err != nil {
		t.Fatal(err)
	}
	if l.Total != 2 || len(l.Sessions) != 2 || l.Next != "" {
		t.Fatalf("history/list: %+v", l)
	}
	for _, s := range l.Sessions {
		if s.Project != project || !strings.HasPrefix(s.Title, "[H-TEXT]") || s.Messages == 0 || s.Size == 0 {
			t.Errorf("session %+v", s)
		}
	}
	if l.Sessions[0].Updated.Before(l.Sessions[1].Updated) {
		t.Errorf("not newest first: %v, %v", l.Sessions[0].Updated, l.Sessions[1].Updated)
	}
	// Paged; all projects; another project has none.
	var p1, p2, all, other protocol.HistoryListResult
	mustUnmarshal(t, c.do(protocol.TypeHistoryList, map[string]any{"limit": 1}), &p1)
	if len(p1.Sessions) != 1 || p1.Next == "" || p1.Total != 2 {
		t.Fatalf("page 1: %+v", p1)
	}
	mustUnmarshal(t, c.do(protocol.TypeHistoryList, map[string]any{"limit": 1, "cursor": p1.Next}), &p2)
	if len(p2.Sessions) != 1 || p2.Next != "" || p2.Sessions[0].ID != l.Sessions[1].ID {
		t.Fatalf("page 2: %+v", p2)
	}
	mustUnmarshal(t, c.do(protocol.TypeHistoryList, map[string]any{"all": true}), &all)
	if all.Total != 2 {
		t.Errorf("all projects: %+v", all)
	}
	mustUnmarshal(t, c.do(protocol.TypeHistoryList, map[string]any{"project": t.TempDir()}), &other)
	if other.Total != 0 || len(other.Sessions) != 0 {
		t.Errorf("another project: %+v", other)
	}
	if e := c.doErr(protocol.TypeHistoryList, map[string]any{"cursor": "nonsense"}); e.Code != protocol.CodeBadRequest {
		t.Errorf("bad cursor: %+v", e)
	}

	for _, s := range l.Sessions {
		events, pages := readHistory(t, c, map[string]any{"id": s.ID, "limit": 7})
		if len(pages) < 2 {
			t.Errorf("%s: %d events in %d pages of 7", s.ID, len(events), len(pages))
		}
		if first := events[0].Event; evField(t, first, "type") != "user" || !bytes.Contains(first, []byte("[H-TEXT]")) {
			t.Errorf("%s: first event %s", s.ID, first)
		}
		var blobURL string
		var nested, toolUses int
		for _, ev := range events {
			if bytes.Contains(ev.Event, []byte("iVBOR")) {
				t.Errorf("base64 left in an event: %.300s", ev.Event)
			}
			var e struct {
				Parent  *string `json:"parent_tool_use_id"`
				Message struct {
					Content json.RawMessage `json:"content"`
				} `json:"message"`
			}
			mustUnmarshal(t, ev.Event, &e)
			if e.Parent != nil && *e.Parent != "" {
				nested++
			}
			var blocks []struct {
				Type        string                `json:"type"`
				Content     json.RawMessage       `json:"content"`
				Attachments []protocol.Attachment `json:"attachments"`
			}
			if json.Unmarshal(e.Message.Content, &blocks) != nil {
				continue
			}
			for _, b := range blocks {
				switch b.Type {
				case "tool_use":
					toolUses++
				case "tool_result":
					if len(b.Content) > 0 && b.Content[0] != '"' {
						t.Errorf("tool_result content not text: %s", b.Content)
					}
					for _, a := range b.Attachments {
						if a.URL != toolfiles.BlobPath+a.SHA256 {
							t.Errorf("attachment not served by /v1/blobs: %+v", a)
						}
						blobURL = a.URL
					}
				}
			}
		}
		if nested == 0 || toolUses == 0 {
			t.Errorf("%s: %d nested subagent events, %d tool uses", s.ID, nested, toolUses)
		}
		if blobURL == "" {
			t.Fatalf("%s: no attachment with a URL", s.ID)
		}
		resp, body := httpGet(t, "GET", ts.url+blobURL, http.Header{"Authorization": {"Bearer " + testToken}})
		sum := sha256.Sum256(body)
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/png" || toolfiles.BlobPath+hex.EncodeToString(sum[:]) != blobURL {
			t.Errorf("GET %s: %s %s, %d bytes", blobURL, resp.Status, resp.Header.Get("Content-Type"), len(body))
		}
	}

	if e := c.doErr(protocol.TypeHistoryRead, map[string]any{"id": "no-such-session"}); e.Code != protocol.CodeNotFound {
		t.Errorf("unknown session: %+v", e)
	}
	if e := c.doErr(protocol.TypeHistoryRead, map[string]any{"id": "--help"}); e.Code != protocol.CodeBadRequest {
		t.Errorf("id like a flag: %+v", e)
	}
}

// A subagent that does not fit in the page leaves a history_more event;
// reading on from it with agent and cursor gives the rest.
func TestHistoryReadMore(t *testing.T) {
	project := t.TempDir()
	ts := startServer(t, Options{Project: project, HistoryOptions: HistoryOptions{HistoryHome: historyHome(t, project)}})
	c := ts.dial(t)
	var l protocol.HistoryListResult
	mustUnmarshal(t, c.do(protocol.TypeHistoryList, map[string]any{}), &l)
	id := l.Sessions[0].ID
	events, _ := readHistory(t, c, map[string]any{"id": id, "limit": 1})
	var more []json.RawMessage
	for _, ev := range events {
		if evField(t, ev.Event, "type") == "ccproxy" && evField(t, ev.Event, "subtype") == "history_more" {
			more = append(more, ev.Event)
		}
	}
	if len(more) != 1 {
		t.Fatalf("%d history_more events with limit 1", len(more))
	}
	agent, cursor, parent := evField(t, more[0], "agent"), evField(t, more[0], "cursor"), evField(t, more[0], "parent_tool_use_id")
	rest, _ := readHistory(t, c, map[string]any{"id": id, "agent": agent, "cursor": cursor})
	if len(rest) == 0 {
		t.Fatal("nothing read on from the history_more event")
	}
	for _, ev := range rest {
		if p := evField(t, ev.Event, "parent_tool_use_id"); p != parent {
			t.Errorf("subagent event with parent %q, want %q: %.200s", p, parent, ev.Event)
		}
	}
}

// A reply over HistoryReplyBytes is cut short at a main-file event; reading
// on from its next loses nothing.
func TestHistoryReadReplyBudget(t *testing.T) {
	project := t.TempDir()
	home := historyHome(t, project)
	whole := startServer(t, Options{Project: project, HistoryOptions: HistoryOptions{HistoryHome: home}}).dial(t)
	small := startServer(t, Options{Project: project, HistoryOptions: HistoryOptions{HistoryHome: home, HistoryReplyBytes: 2000}}).dial(t)
	var l protocol.HistoryListResult
	mustUnmarshal(t, whole.do(protocol.TypeHistoryList, map[string]any{}), &l)
	id := l.Sessions[0].ID
	want, _ := readHistory(t, whole, map[string]any{"id": id})
	got, pages := readHistory(t, small, map[string]any{"id": id})
	// A subagent cut short by the budget says how to read on
	// (history_more): its events go where that event is.
	got = expandMore(t, small, id, got)
	truncated := 0
	for _, p := range pages {
		if p.Truncated {
			truncated++
			if !p.More {
				t.Errorf("truncated page without more")
			}
		}
	}
	if truncated == 0 {
		t.Errorf("no page was truncated with a budget of 2000 bytes (%d pages)", len(pages))
	}
	if len(got) != len(want) {
		t.Fatalf("read in small replies: %d events, want %d", len(got), len(want))
	}
	for i := range want {
		if !bytes.Equal(got[i].Event, want[i].Event) {
			t.Fatalf("event %d differs:\n%.200s\n%.200s", i, got[i].Event, want[i].Event)
		}
	}
}

// expandMore replaces each history_more event by the events of the
// subagent it names, read on from its cursor.
func expandMore(t *testing.T, c *wsClient, id string, events []protocol.HistoryEvent) []protocol.HistoryEvent {
	t.Helper()
	var out []protocol.HistoryEvent
	for _, ev := range events {
		if evField(t, ev.Event, "subtype") != "history_more" {
			out = append(out, ev)
			continue
		}
		more, _ := readHistory(t, c, map[string]any{"id": id, "agent": evField(t, ev.Event, "agent"), "cursor": evField(t, ev.Event, "cursor")})
		out = append(out, expandMore(t, c, id, more)...)
	}
	return out
}

// A corrupt line is skipped and counted, never fatal.
func TestHistoryCorruptLine(t *testing.T) {
	project := t.TempDir()
	home := historyHome(t, project)
	files, _ := filepath.Glob(filepath.Join(home, ".claude", "projects", "*", "*.jsonl"))
	f, err := os.OpenFile(files[0], os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("{\"type\":\"user\",\"mess\x00age garbage\n[1,2]\n")
	f.Close()
	id := strings.TrimSuffix(filepath.Base(files[0]), ".jsonl")
	c := startServer(t, Options{Project: project, HistoryOptions: HistoryOptions{HistoryHome: home}}).dial(t)
	var l protocol.HistoryListResult
	mustUnmarshal(t, c.do(protocol.TypeHistoryList, map[string]any{}), &l)
	for _, s := range l.Sessions {
		if s.ID == id && s.Corrupt != 2 {
			t.Errorf("list: corrupt %d, want 2", s.Corrupt)
		}
	}
	_, pages := readHistory(t, c, map[string]any{"id": id, "limit": 5000})
	if n := pages[len(pages)-1].Corrupt; n != 2 {
		t.Errorf("read: corrupt %d, want 2", n)
	}
}

// HistoryHome "-" turns history off: no capability, unknown_type.
func TestHistoryOff(t *testing.T) {
	c := startServer(t, Options{HistoryOptions: HistoryOptions{HistoryHome: "-"}}).dial(t)
	var hello protocol.Hello
	c.waitPush(0, protocol.TypeHello, &hello, nil)
	if slices.Contains(hello.Capabilities, protocol.CapHistory) {
		t.Errorf("capability history announced with history off")
	}
	if e := c.doErr(protocol.TypeHistoryList, map[string]any{}); e.Code != protocol.CodeUnknownType {
		t.Errorf("history/list with history off: %+v", e)
	}
}

// Many history requests at once, from several connections: every one gets
// exactly one reply, ok (and right) or limit_exceeded, never anything else.
func TestHistoryConcurrent(t *testing.T) {
	project := t.TempDir()
	ts := startServer(t, Options{Project: project, HistoryOptions: HistoryOptions{HistoryHome: historyHome(t, project)}})
	var ids []string
	{
		var l protocol.HistoryListResult
		mustUnmarshal(t, ts.dial(t).do(protocol.TypeHistoryList, map[string]any{}), &l)
		for _, s := range l.Sessions {
			ids = append(ids, s.ID)
		}
	}
	// All requests are sent before any reply is awaited: the server runs
	// them at once (each in a goroutine of its connection).
	const conns, each = 3, 12
	clients := make([]*wsClient, conns)
	sent := make([][]json.RawMessage, conns)
	for i := range clients {
		clients[i] = ts.dial(t)
	}
	for j := 0; j < each; j++ {
		for i, c := range clients {
			if j%3 == 0 {
				sent[i] = append(sent[i], c.send(protocol.TypeHistoryList, map[string]any{"all": true}))
			} else {
				sent[i] = append(sent[i], c.send(protocol.TypeHistoryRead, map[string]any{"id": ids[j%len(ids)], "limit": 5}))
			}
		}
	}
	for i, c := range clients {
		for _, id := range sent[i] {
			f := c.reply(id)
			switch {
			case f.OK != nil && *f.OK:
				if !bytes.Contains(f.Data, []byte(`"sessions":[{`)) && !bytes.Contains(f.Data, []byte(`"events":[{`)) {
					t.Errorf("reply %s: %.200s", id, f.Data)
				}
			case f.Error != nil && f.Error.Code == protocol.CodeLimitExceeded:
			default:
				t.Errorf("reply %s: %s", id, f.raw)
			}
		}
	}
}

// The tool results of a stored session reach clients with the secrets of
// the MCP configuration in force masked, as a live session's do: here a
// server's env value that a stored tool result printed.
func TestHistoryToolResultSecretMasked(t *testing.T) {
	const secret = "hello history" // printed by a tool in the captured session
	ts := startHistoryWithSecret(t, secret)
	c := ts.dial(t)
	var l protocol.HistoryListResult
	mustUnmarshal(t, c.do(protocol.TypeHistoryList, map[string]any{}), &l)
	var masked bool
	for _, s := range l.Sessions {
		events, _ := readHistory(t, c, map[string]any{"id": s.ID})
		for _, ev := range events {
			if !bytes.Contains(ev.Event, []byte(`"tool_result"`)) {
				continue
			}
			if bytes.Contains(ev.Event, []byte(secret)) {
				t.Errorf("a stored tool result holds the configured secret: %.300s", ev.Event)
			}
			masked = masked || bytes.Contains(ev.Event, []byte("Echo: ***"))
		}
	}
	if !masked {
		t.Error(`no stored tool result reads "Echo: ***": the captured echo of the secret was not found`)
	}
}

// startHistoryWithSecret starts a server over the captured history whose
// MCP configuration holds secret (a server's env value).
func startHistoryWithSecret(t *testing.T, secret string) *testServer {
	t.Helper()
	e := newMCPEnv(t)
	e.WriteMCPJSON(t, map[string]any{"srv": map[string]any{"command": "/bin/true", "env": map[string]any{"SRV_KEY": secret}}})
	src, err := mcphub.NewConfigSource(e.Opts, e.FilesDir, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	return startServer(t, Options{Project: e.Project, MCPOptions: MCPOptions{MCP: src}, HistoryOptions: HistoryOptions{HistoryHome: historyHome(t, e.Project)}})
}
