package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestParseFrameErrors(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		wantID string // the id the error reply must echo ("" = none could be read)
		want   []string
	}{
		{"empty", ``, "", []string{"bad_request", "not valid JSON", "empty"}},
		{"syntax", `{"type":"session/list","id":1,}`, "", []string{"not valid JSON", "at byte"}},
		{"array", `[1]`, "", []string{"want a JSON object, got an array"}},
		{"null", `null`, "", []string{"want a JSON object, got null"}},
		{"string", `"hi"`, "", []string{"got a string"}},
		{"no type", `{"id":7,"data":{}}`, "7", []string{"type: required"}},
		{"type not string", `{"type":3,"id":"a","data":{}}`, `"a"`, []string{"type: want a string, got a number"}},
		{"empty type", `{"type":"","id":1,"data":{}}`, "1", []string{"type: must not be empty"}},
		{"no data", `{"type":"session/list","id":1}`, "1", []string{"session/list: data: required"}},
		{"data array", `{"type":"session/list","id":1,"data":[]}`, "1", []string{"data: want an object, got an array"}},
		{"float id", `{"type":"session/list","id":1.5,"data":{}}`, "", []string{"id: want a string or an integer", "1.5"}},
		{"huge id", `{"type":"session/list","id":9007199254740992,"data":{}}`, "", []string{"id: want a string or an integer"}},
		{"empty id", `{"type":"session/list","id":"","data":{}}`, "", []string{"id: must not be an empty string"}},
		{"long id", `{"type":"session/list","id":"` + strings.Repeat("x", 129) + `","data":{}}`, "", []string{"id: too long: 129 bytes"}},
		{"object id", `{"type":"session/list","id":{},"data":{}}`, "", []string{"id: want a string or an integer, got an object"}},
		{"null id on request", `{"type":"session/list","id":null,"data":{}}`, "", []string{"id: may be null only in a reply"}},
		{"reply without ok", `{"type":"reply","id":1,"data":{}}`, "1", []string{"ok: required"}},
		{"reply ok string", `{"type":"reply","id":1,"ok":"yes"}`, "1", []string{"ok: want a boolean, got a string"}},
		{"reply without error", `{"type":"reply","id":1,"ok":false}`, "1", []string{"error: required when ok is false"}},
		{"reply bad code", `{"type":"reply","id":1,"ok":false,"error":{"code":"Bad Code","message":"m"}}`, "1", []string{"error.code: must be a lower_snake_case code"}},
		{"reply error wrong kinds", `{"type":"reply","id":1,"ok":false,"error":{"code":1}}`, "1", []string{"error.code: want a string, got a number", "error.message: required"}},
		{"reply without id", `{"type":"reply","ok":true,"data":{}}`, "", []string{"id: required in a reply"}},
		{"several problems", `{"type":"x","id":[],"data":"d"}`, "", []string{"id: want a string or an integer, got an array", "data: want an object, got a string"}},
		// Not UTF-8: refused whole, the id not read, no byte of it echoed.
		{"invalid utf-8 in the id", "{\"type\":\"session/list\",\"id\":\"a\xff\",\"data\":{}}", "", []string{"not valid UTF-8: invalid byte 0xff at byte 30"}},
		{"invalid utf-8 in a field", "{\"type\":\"session/send\",\"id\":1,\"data\":{\"text\":\"\xc3\x28\"}}", "", []string{"not valid UTF-8: invalid byte 0xc3 at byte"}},
		{"invalid utf-8 after the object", "{\"type\":\"session/list\",\"id\":1,\"data\":{}}\xfe", "", []string{"not valid UTF-8: invalid byte 0xfe"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := ParseFrame([]byte(tt.in))
			if err == nil {
				t.Fatalf("ParseFrame(%s) accepted it", tt.in)
			}
			var pe *Error
			if !errors.As(err, &pe) || pe.Code != CodeBadRequest {
				t.Fatalf("error = %#v, want a bad_request *Error", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if string(f.ID) != tt.wantID {
				t.Errorf("frame id = %q, want %q (the error reply echoes it)", f.ID, tt.wantID)
			}
			reply, _ := json.Marshal(NewErrorReply(f.ID, err))
			if tt.wantID == "" && !bytes.Contains(reply, []byte(`"id":null`)) {
				t.Errorf("error reply %s does not carry id null", reply)
			}
		})
	}
}

func TestDecodeRequestErrors(t *testing.T) {
	tests := []struct {
		in       string
		wantCode Code
		want     string
	}{
		{`{"type":"session/fork","id":1,"data":{}}`, CodeUnknownType, `unknown message type "session/fork"`},
		{`{"type":"hello","id":1,"data":{}}`, CodeUnknownType, `"hello" is sent by the proxy, not by clients`},
		{`{"type":"session/list","data":{}}`, CodeBadRequest, "session/list: id: required on requests"},
		{`{"type":"session/send","id":1,"data":{"session":"s","text":"x","images":[{"mediaType":"image/svg+xml","data":"AAAA"}]}}`,
			CodeBadRequest, `session/send: data.images[0].mediaType: must be one of "image/png", "image/jpeg", "image/gif", "image/webp", got "image/svg+xml"`},
		{`{"type":"session/send","id":1,"data":{"session":"s","text":"x","images":[{"mediaType":"image/png"}]}}`,
			CodeBadRequest, "session/send: data.images[0].data: required"},
		{`{"type":"session/send","id":1,"data":{"session":"","text":""}}`,
			CodeBadRequest, "data.session: must not be empty; data.text: must not be empty unless images are sent"},
		{`{"type":"session/subscribe","id":1,"data":{"session":"s","afterSeq":1e3}}`, CodeBadRequest, "data.afterSeq: want an integer, got 1e3"},
		{`{"type":"session/subscribe","id":1,"data":{"session":"s","afterSeq":99999999999999999999}}`, CodeBadRequest, "data.afterSeq: want an integer"},
		{`{"type":"session/subscribe","id":1,"data":{"session":null}}`, CodeBadRequest, "data.session: must not be null"},
		{`{"type":"mcp/log","id":1,"data":{"limit":0}}`, CodeBadRequest, "data.limit: must be between 1 and 1000, got 0"},
		{`{"type":"history/list","id":1,"data":{"project":"rel/dir"}}`, CodeBadRequest, "data.project: must be an absolute path"},
		{`{"type":"history/list","id":1,"data":{"project":"/p","all":true}}`, CodeBadRequest, "data.all: project and all exclude each other"},
		{`{"type":"history/read","id":1,"data":{"id":"-x"}}`, CodeBadRequest, "data.id: "},
		{`{"type":"history/read","id":1,"data":{"id":"abc","cursor":"-1"}}`, CodeBadRequest, "data.cursor: "},
		{`{"type":"history/read","id":1,"data":{"id":"abc","limit":5001}}`, CodeBadRequest, "data.limit: must be between 1 and 5000, got 5001"},
		{`{"type":"permission/respond","id":1,"data":{"session":"s","requestId":"r","behavior":"allow","message":"no"}}`,
			CodeBadRequest, `data.message: only allowed with behavior "deny"`},
		{`{"type":"session/create","id":1,"data":{"cwd":"/a\u0000b"}}`, CodeBadRequest, "data.cwd: must not contain NUL"},
		{`{"type":"permission/respond","id":1,"data":{"session":"s","requestId":"r","behavior":"allow","answers":{"":"x"}}}`,
			CodeBadRequest, `data.answers: key "": must not be empty`},
		{`{"type":"session/subscribe","id":1,"data":{"session":"s","afterSeq":null}}`, CodeBadRequest, "data.afterSeq: must not be null"},
		{`{"type":"history/list","id":1,"data":{"limit":1.5}}`, CodeBadRequest, "data.limit: want an integer, got 1.5"},
		{`{"type":"reply","id":1,"ok":true,"data":{"sessions":[{"session":"s","state":"idle","cwd":"/","createdAt":"2026-13-01T00:00:00Z","firstSeq":1,"lastSeq":0,"subscribers":0,"pendingPermissions":0}]}}`,
			CodeBadRequest, `data.sessions[0].createdAt: want an RFC 3339 time such as 2026-11-21T00:36:12.204Z, got "2026-13-01T00:00:00Z" (month out of range)`},
		{`{"type":"mcp/toggle","id":1,"data":{"name":"a","enabled":true,"session":"s","persist":true}}`, CodeBadRequest, "data.persist: applies to every session: leave session out"},
		{`{"type":"session/create","id":1,"data":{"cwd":"relative","model":"-m"}}`, CodeBadRequest,
			"data.cwd: must be an absolute path; data.model: must be a model name"},
		{`{"type":"session/files","id":1,"data":{"session":"s","limit":201}}`, CodeBadRequest, "data.limit"},
		{`{"type":"session/files","id":1,"data":{"session":"s","query":"` + strings.Repeat("q", 257) + `"}}`, CodeBadRequest, "data.query"},
	}
	for _, tt := range tests {
		f, err := ParseFrame([]byte(tt.in))
		if err != nil {
			t.Fatalf("ParseFrame(%s): %v", tt.in, err)
		}
		if f.IsReply() {
			_, err = DecodeResult(TypeSessionList, f)
		} else {
			_, err = DecodeRequest(f)
		}
		if CodeOf(err) != tt.wantCode || err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("DecodeRequest(%s)\n = %v\nwant %s containing %q", tt.in, err, tt.wantCode, tt.want)
		}
	}
}

func TestDecodeRequestTyped(t *testing.T) {
	f, err := ParseFrame([]byte(`{"type":"session/subscribe","id":"sub-1","data":{"session":"s-1","afterSeq":41,"future":true}}`))
	if err != nil {
		t.Fatal(err)
	}
	d, err := DecodeRequest(f)
	if err != nil {
		t.Fatal(err)
	}
	sub, ok := d.(*SessionSubscribe)
	if !ok {
		t.Fatalf("DecodeRequest gave %T, want *SessionSubscribe", d)
	}
	if sub.Session != "s-1" || sub.AfterSeq == nil || *sub.AfterSeq != 41 {
		t.Errorf("decoded %+v", sub)
	}
	if string(f.ID) != `"sub-1"` {
		t.Errorf("id = %s", f.ID)
	}
}

func TestDecodeResult(t *testing.T) {
	f, err := ParseFrame([]byte(`{"type":"reply","id":4,"ok":false,"error":{"code":"unknown_session","message":"no session \"x\""}}`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = DecodeResult(TypeSessionSubscribe, f)
	if CodeOf(err) != CodeUnknownSession {
		t.Errorf("DecodeResult of an error reply = %v, want unknown_session", err)
	}
	f, err = ParseFrame([]byte(`{"type":"reply","id":4,"ok":true,"data":{"session":"x","state":"idle","firstSeq":5,"lastSeq":3}}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := DecodeResult(TypeSessionSubscribe, f); err == nil || !strings.Contains(err.Error(), "firstSeq: must be at most lastSeq+1 (4), got 5") {
		t.Errorf("DecodeResult accepted firstSeq > lastSeq+1: %v", err)
	}
}

func TestNewErrorReplyHidesUnexpectedErrors(t *testing.T) {
	secret := errors.New("open /home/dev/.claude.json: token sk-ant-secret")
	f := NewErrorReply(IntID(3), secret)
	b, _ := json.Marshal(f)
	if bytes.Contains(b, []byte("sk-ant")) || f.Error.Code != CodeInternal {
		t.Errorf("NewErrorReply leaked or mislabelled a plain error: %s", b)
	}
	wrapped := fmt.Errorf("subscribe: %w", Errorf(CodeUnknownSession, "no session %q", "s-9"))
	f = NewErrorReply(nil, wrapped)
	b, _ = json.Marshal(f)
	if want := `{"type":"reply","id":null,"ok":false,"error":{"code":"unknown_session","message":"no session \"s-9\""}}`; string(b) != want {
		t.Errorf("NewErrorReply(wrapped *Error) = %s\nwant %s", b, want)
	}
}

func TestBuildersCheckTypeAndData(t *testing.T) {
	if _, err := NewPush(TypeSessionGap, SessionState{Session: "s", State: StateIdle}); CodeOf(err) != CodeInternal || !strings.Contains(err.Error(), "want protocol.SessionGap") {
		t.Errorf("NewPush with the wrong data type: %v", err)
	}
	if _, err := NewPush(TypeSessionGap, SessionGap{Session: "s", FirstSeq: 0}); CodeOf(err) != CodeBadRequest || !strings.Contains(err.Error(), "session/gap: data.firstSeq: must be at least 1") {
		t.Errorf("NewPush with invalid data: %v", err)
	}
	dup := MCPStatus{Servers: []MCPServerStatus{
		{Name: "b", Status: MCPConnected, Scope: ScopeUser, Approval: ApprovalNotNeeded},
		{Name: "a", Status: MCPConnected, Scope: ScopeUser, Approval: ApprovalNotNeeded},
	}}
	if _, err := NewPush(TypeMCPStatus, dup); err == nil || !strings.Contains(err.Error(), `mcp/status: data.servers[1].name: servers must be sorted by name, one entry per name: "a" follows "b"`) {
		t.Errorf("NewPush with unsorted servers: %v", err)
	}
	if _, err := NewPush(TypeSessionExited, SessionExited{Session: "s"}); err == nil || err.Error() != "bad_request: session/exited: data: code or signal must be set" {
		t.Errorf("NewPush of session/exited without code or signal: %v", err)
	}
	if _, err := NewPush(TypeSessionCreate, &SessionCreate{}); CodeOf(err) != CodeUnknownType {
		t.Errorf("NewPush of a request type: %v", err)
	}
	if _, err := NewRequest(nil, TypeSessionList, SessionList{}); err == nil || !strings.Contains(err.Error(), "id: required") {
		t.Errorf("NewRequest without id: %v", err)
	}
	f, err := NewReply(StringID("a"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(f); string(b) != `{"type":"reply","id":"a","ok":true,"data":{}}` {
		t.Errorf("NewReply(nil) = %s", b)
	}
	// Required lists are [] when nil, so what the proxy sends matches the schema.
	f, err = NewPush(TypeMCPStatus, MCPStatus{})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(f); string(b) != `{"type":"mcp/status","data":{"servers":[]}}` {
		t.Errorf("NewPush(empty MCPStatus) = %s", b)
	}
	for _, v := range []any{Hello{}, SessionListResult{}, MCPProbeResult{}, MCPToolsResult{}, Tool{}, MCPLogResult{}, MCPConfig{}} {
		b, _ := json.Marshal(v)
		if bytes.Contains(b, []byte("null")) && !bytes.Contains(b, []byte(`"inputSchema":null`)) {
			t.Errorf("%T with nil lists encodes as %s", v, b)
		}
	}
}

func TestAppendSessionEvent(t *testing.T) {
	// The event bytes must come out exactly as they went in: spacing, key
	// order, escapes and all.
	event := []byte(`{"type":"assistant", "message":{"content":[{"type":"text","text":"a\u2028<b>&\"c\""}]},"n":1.50}`)
	session := "s-\"1\"\n\x01\u2028\xff"
	got := AppendSessionEvent([]byte("prefix"), session, 42, event)
	if !bytes.HasPrefix(got, []byte("prefix")) {
		t.Fatalf("dst prefix lost: %s", got)
	}
	got = got[len("prefix"):]
	if !bytes.Contains(got, event) {
		t.Errorf("event bytes were changed:\n%s", got)
	}
	f, err := ParseFrame(got)
	if err != nil {
		t.Fatalf("AppendSessionEvent made an invalid frame %s: %v", got, err)
	}
	d, err := DecodePush(f)
	if err != nil {
		t.Fatal(err)
	}
	ev := d.(*SessionEvent)
	if ev.Session != strings.ToValidUTF8(session, "\uFFFD") || ev.Seq != 42 || !bytes.Equal(ev.Event, event) {
		t.Errorf("decoded session %q seq %d event %s", ev.Session, ev.Seq, ev.Event)
	}
	if bytes.ContainsRune(got, '\u2028') {
		t.Errorf("U+2028 in the session id was not escaped: %q", got)
	}
}

func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "plain", "\"\\/\b\f\n\r\t", "\x00\x1f\x7f", "\u2028\u2029", "\xff\xfe", "é漢字🙂", "a\xc3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := AppendJSONString(nil, s)
		var back string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatalf("AppendJSONString(%q) = %s: not a JSON string: %v", s, got, err)
		}
		std, _ := json.Marshal(s)
		var want string
		_ = json.Unmarshal(std, &want)
		if back != want {
			t.Fatalf("AppendJSONString(%q) decodes to %q, encoding/json gives %q", s, back, want)
		}
	})
}

// FuzzParseFrame: no input makes the decoder panic, and every rejection is
// an *Error with a code.
func FuzzParseFrame(f *testing.F) {
	for _, dir := range []string{"examples", filepath.Join("examples", "invalid")} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		for _, file := range files {
			if b, err := os.ReadFile(file); err == nil {
				f.Add(b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fr, err := ParseFrame(b)
		if err != nil {
			if CodeOf(err) != CodeBadRequest {
				t.Fatalf("ParseFrame error %v is not bad_request", err)
			}
			return
		}
		var derr error
		switch {
		case fr.IsReply():
			for _, rt := range requestTypes {
				_, derr = DecodeResult(rt, fr)
			}
		case requestData[fr.Type] != nil:
			_, derr = DecodeRequest(fr)
		default:
			_, derr = DecodePush(fr)
		}
		var pe *Error
		if derr != nil && !errors.As(derr, &pe) {
			t.Fatalf("decode error %T %v is not an *Error", derr, derr)
		}
	})
}

func BenchmarkAppendSessionEvent(b *testing.B) {
	raw, err := os.ReadFile(filepath.Join("examples", "session.event--tool-result-image.json"))
	if err != nil {
		b.Fatal(err)
	}
	var frame struct {
		Data struct {
			Event json.RawMessage `json:"event"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &frame); err != nil {
		b.Fatal(err)
	}
	var compact bytes.Buffer
	_ = json.Compact(&compact, frame.Data.Event)
	event := compact.Bytes()
	b.Run("append", func(b *testing.B) {
		b.SetBytes(int64(len(event)))
		b.ReportAllocs()
		buf := make([]byte, 0, 4096)
		for b.Loop() {
			buf = AppendSessionEvent(buf[:0], "s-01jd8k3m9q", 22, event)
		}
	})
	b.Run("json.Marshal", func(b *testing.B) { // the baseline: RawMessage is re-scanned and compacted
		b.SetBytes(int64(len(event)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(Frame{Type: TypeSessionEvent, Data: mustMarshal(SessionEvent{Session: "s-01jd8k3m9q", Seq: 22, Event: event})}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func mustMarshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func TestCodeOf(t *testing.T) {
	if CodeOf(nil) != "" || CodeOf(errors.New("x")) != CodeInternal || CodeOf(fmt.Errorf("w: %w", Errorf(CodeTimeout, "t"))) != CodeTimeout {
		t.Error("CodeOf misclassifies")
	}
}

// Example shows the proxy side of one request: parse, decode, answer.
func Example() {
	frame, err := ParseFrame([]byte(`{"type":"session/subscribe","id":7,"data":{"session":"s-1","afterSeq":-1}}`))
	if err == nil {
		_, err = DecodeRequest(frame)
	}
	reply, _ := json.Marshal(NewErrorReply(frame.ID, err))
	fmt.Println(string(reply))

	frame, _ = ParseFrame([]byte(`{"type":"session/subscribe","id":8,"data":{"session":"s-1","afterSeq":41}}`))
	data, _ := DecodeRequest(frame)
	sub := data.(*SessionSubscribe)
	ok, _ := NewReply(frame.ID, &SessionSubscribeResult{Session: sub.Session, State: StateRunning, FirstSeq: 1, LastSeq: 57})
	reply, _ = json.Marshal(ok)
	fmt.Println(string(reply))
	// Output:
	// {"type":"reply","id":7,"ok":false,"error":{"code":"bad_request","message":"session/subscribe: data.afterSeq: must be at least 0, got -1","details":{"fields":[{"path":"data.afterSeq","message":"must be at least 0, got -1"}]}}}
	// {"type":"reply","id":8,"ok":true,"data":{"session":"s-1","state":"running","firstSeq":1,"lastSeq":57}}
}

// ExampleAppendSessionEvent builds the hot-path frame without re-encoding
// the event.
func ExampleAppendSessionEvent() {
	event := []byte(`{"type":"ccproxy","subtype":"noise","text":"[DEBUG] hello"}`)
	fmt.Println(string(AppendSessionEvent(nil, "s-1", 46, event)))
	// Output:
	// {"type":"session/event","data":{"session":"s-1","seq":46,"event":{"type":"ccproxy","subtype":"noise","text":"[DEBUG] hello"}}}
}

// TestBase64Patterns: the two patterns of the Base64 definition accept
// exactly what the one standard base64 pattern accepts.
func TestBase64Patterns(t *testing.T) {
	std := regexp.MustCompile(`^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$`)
	chars, length := regexp.MustCompile(base64CharsPattern), regexp.MustCompile(base64LengthPattern)
	const alphabet = "AZaz09+/=\n-_ é"
	var all func(prefix string, n int)
	all = func(prefix string, n int) { // every string of up to 5 runes of alphabet
		if got, want := chars.MatchString(prefix) && length.MatchString(prefix), std.MatchString(prefix); got != want {
			t.Fatalf("%q: the two patterns say %v, the standard pattern %v", prefix, got, want)
		}
		if n == 0 {
			return
		}
		for _, r := range alphabet {
			all(prefix+string(r), n-1)
		}
	}
	all("", 5)
}

// TestConcurrentFirstUse: the schemas are compiled on first use; goroutines
// that decode and validate at once all get them, without a race (run with
// -race; the first run in a process is the one that compiles).
func TestConcurrentFirstUse(t *testing.T) {
	frames := []string{
		`{"type":"session/send","id":1,"data":{"session":"s","text":"hi"}}`,
		`{"type":"session/send","id":2,"data":{"session":"s","text":""}}`,
		`{"type":"mcp/log","id":3,"data":{"limit":0}}`,
		`{"type":"history/read","id":4,"data":{"id":"abc","cursor":"12"}}`,
	}
	start := make(chan struct{})
	errs := make(chan error, 16)
	for i := range 16 {
		go func() {
			<-start
			f, err := ParseFrame([]byte(frames[i%len(frames)]))
			if err == nil {
				_, err = DecodeRequest(f)
			}
			if err == nil {
				err = (MCPStatus{Servers: []MCPServerStatus{{Name: "a", Status: MCPConnected, Scope: ScopeUser, Approval: ApprovalNotNeeded}}}).Validate()
			}
			errs <- err
		}()
	}
	close(start)
	bad := 0
	for range 16 {
		if err := <-errs; err != nil {
			if CodeOf(err) != CodeBadRequest {
				t.Errorf("unexpected error %v", err)
			}
			bad++
		}
	}
	if bad != 8 { // frames 1 and 2 of each four are invalid
		t.Errorf("%d of 16 decodes failed, want 8", bad)
	}
}

// TestExplainAnyOfOfTheValuesKind: a value that fails an anyOf is explained
// by the form of its own kind (message content that is an array is
// explained as blocks, not as "want a string"), down to the member to fix.
func TestExplainAnyOfOfTheValuesKind(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{"session.event--attachment-bad-sha256.json", "data.event.message.content[0].attachments[0].sha256: must be 64 lower-case hex digits"},
		{"session.event--tool-result-not-normalized.json", "data.event.message.content[0].content: want a string, got an array"},
	} {
		raw, err := os.ReadFile(filepath.Join("examples", "invalid", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		f, err := ParseFrame(raw)
		if err == nil {
			_, err = DecodePush(f)
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v\nwant an error with %q", tc.file, err, tc.want)
		}
	}
}

// TestPeekID: the id of a frame known only by its first bytes (one too large
// or refused, whose reply must still name the request) is read when all of
// it is there, and never guessed.
func TestPeekID(t *testing.T) {
	pad := strings.Repeat("y", 5000)
	tests := []struct {
		name, head, want string // want "" = nil
	}{
		{"id first", `{"id":7,"type":"session/send","data":{"text":"` + pad, "7"},
		{"as the TS client sends", `{"type":"session/send","id":42,"data":{"session":"s-1","text":"` + pad, "42"},
		{"string id", `{"type":"x","id":"req-\u00e9 1","data":{`, `"req-\u00e9 1"`},
		{"after a nested member", `{"data":{"a":[1,{"b":"}"}]},"id":"late","type":"x"}`, `"late"`},
		{"escaped key", `{"\u0069d":3,"data":{`, "3"},
		{"whole small frame", `{"type":"session/list","id":5,"data":{}}`, "5"},
		{"id after the cut", `{"type":"session/send","data":{"text":"` + pad, ""},
		{"number cut at the end", `{"type":"x","id":12`, ""},
		{"string cut", `{"type":"x","id":"abc`, ""},
		{"null id", `{"type":"x","id":null,"data":{`, ""},
		{"float id", `{"type":"x","id":1.5,"data":{`, ""},
		{"long id", `{"id":"` + strings.Repeat("x", 129) + `","data":{`, ""},
		{"object id", `{"id":{"a":1},"data":{`, ""},
		{"invalid UTF-8 in the id", "{\"id\":\"a\xff\",\"data\":{", ""},
		{"not an object", `["id",1]`, ""},
		{"not JSON", `id=1`, ""},
		{"empty", ``, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := PeekID([]byte(tt.head))
			if tt.want == "" {
				if got != nil {
					t.Fatalf("PeekID(%.80q) = %s, want nil", tt.head, got)
				}
				return
			}
			if string(got) != tt.want {
				t.Fatalf("PeekID(%.80q) = %s, want %s", tt.head, got, tt.want)
			}
		})
	}
}
