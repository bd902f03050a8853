package stream

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// pngB64 is a base64 payload standing for an image (its bytes are what the
// sha256 is taken of, whatever they are).
var (
	imgBytes = []byte("\x89PNG\r\n\x1a\nnot-really-a-png-but-bytes")
	imgB64   = base64.StdEncoding.EncodeToString(imgBytes)
	imgSHA   = sha(imgBytes)
)

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// engines are the two ways a Normalizer reads a line: directly, and through
// a skeleton (used for long lines; forced here on every line, with every
// string of 4 bytes or more taken out of it).
var engines = []struct {
	name string
	new  func(Options) *Normalizer
}{
	{"direct", NewNormalizer},
	{"skeleton", func(o Options) *Normalizer {
		n := NewNormalizer(o)
		n.skelMin, n.longMin = 0, 4
		return n
	}},
}

// jsonEqual compares two JSON texts semantically.
func jsonEqual(t *testing.T, got, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want is not JSON: %v\n%s", err, want)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("JSON differs\n got: %s\nwant: %s", got, want)
	}
}

func userEvent(blocks string, extra string) string {
	s := `{"type":"user","message":{"role":"user","content":[` + blocks + `]},"parent_tool_use_id":null,"session_id":"s1","uuid":"u1"`
	if extra != "" {
		s += "," + extra
	}
	return s + "}"
}

const initEvent = `{"type":"system","subtype":"init","session_id":"s1","mcp_servers":[{"name":"everything","status":"connected"},{"name":"my_srv","status":"connected"},{"name":"my","status":"connected"},{"name":"web-tools","status":"failed"},{"name":"odd name.v2","status":"connected"}]}`

func assistantToolUse(id, name, meta string) string {
	s := `{"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","id":"` + id + `","name":"` + name + `","input":{}}]},"parent_tool_use_id":null,"session_id":"s1"`
	if meta != "" {
		s += `,"tool_use_meta":` + meta
	}
	return s + "}"
}

func TestNormalizeToolResults(t *testing.T) {
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			img := `{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + imgB64 + `"}}`
			attStrip := `{"kind":"image","mediaType":"image/png","size":` + fmt.Sprint(len(imgBytes)) + `,"sha256":"` + imgSHA + `"}`
			attInline := `{"kind":"image","mediaType":"image/png","size":` + fmt.Sprint(len(imgBytes)) + `,"sha256":"` + imgSHA + `","data":"` + imgB64 + `"}`
			ph := fmt.Sprintf("[image image/png %d B]", len(imgBytes))

			tests := []struct {
				name  string
				mode  AttachmentMode
				in    string
				want  string
				atts  int // distinct attachments reported on the Event
				plain bool
			}{
				{
					name: "all text parts joined in order",
					in:   userEvent(`{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"one"},{"type":"text","text":"two"},{"type":"text","text":"three"}]}`, ""),
					want: userEvent(`{"type":"tool_result","tool_use_id":"t1","content":"one\ntwo\nthree"}`, ""),
				},
				{
					name: "image becomes placeholder and attachment (strip)",
					mode: AttachStrip,
					in:   userEvent(`{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"look:"},`+img+`,{"type":"text","text":"done"}]}`, ""),
					want: userEvent(`{"type":"tool_result","tool_use_id":"t1","content":"look:\n`+ph+`\ndone","attachments":[`+attStrip+`]}`, ""),
					atts: 1,
				},
				{
					name: "image data kept inline",
					mode: AttachInline,
					in:   userEvent(`{"type":"tool_result","tool_use_id":"t1","content":[`+img+`]}`, ""),
					want: userEvent(`{"type":"tool_result","tool_use_id":"t1","content":"`+ph+`","attachments":[`+attInline+`]}`, ""),
					atts: 1,
				},
				{
					name:  "string content stays as is",
					in:    userEvent(`{"type":"tool_result","tool_use_id":"t1","content":"plain","is_error":true}`, ""),
					want:  userEvent(`{"type":"tool_result","tool_use_id":"t1","content":"plain","is_error":true}`, ""),
					plain: true,
				},
				{
					name: "null content becomes empty text",
					in:   userEvent(`{"type":"tool_result","tool_use_id":"t1","content":null}`, ""),
					want: userEvent(`{"type":"tool_result","tool_use_id":"t1","content":""}`, ""),
				},
				{
					name: "missing content becomes empty text",
					in:   userEvent(`{"type":"tool_result","tool_use_id":"t1"}`, ""),
					want: userEvent(`{"type":"tool_result","tool_use_id":"t1","content":""}`, ""),
				},
				{
					name: "empty array becomes empty text",
					in:   userEvent(`{"type":"tool_result","tool_use_id":"t1","content":[]}`, ""),
					want: userEvent(`{"type":"tool_result","tool_use_id":"t1","content":""}`, ""),
				},
				{
					name: "is_error kept",
					in:   userEvent(`{"type":"tool_result","tool_use_id":"t1","is_error":true,"content":[{"type":"text","text":"boom"}]}`, ""),
					want: userEvent(`{"type":"tool_result","tool_use_id":"t1","is_error":true,"content":"boom"}`, ""),
				},
				{
					name: "MCP audio, embedded resources and links",
					mode: AttachStrip,
					in: userEvent(`{"type":"tool_result","tool_use_id":"t1","content":[`+
						`{"type":"audio","data":"`+imgB64+`","mimeType":"audio/wav"},`+
						`{"type":"resource","resource":{"uri":"file:///a.txt","mimeType":"text/plain","text":"inside"}},`+
						`{"type":"resource","resource":{"uri":"file:///b.bin","mimeType":"application/octet-stream","blob":"`+imgB64+`"}},`+
						`{"type":"resource_link","uri":"file:///c","name":"c file"}]}`, ""),
					want: userEvent(`{"type":"tool_result","tool_use_id":"t1","content":"`+
						fmt.Sprintf("[audio audio/wav %d B]", len(imgBytes))+`\ninside\n`+
						fmt.Sprintf("[resource application/octet-stream file:///b.bin %d B]", len(imgBytes))+`\n[resource link: c file] file:///c",`+
						`"attachments":[{"kind":"audio","mediaType":"audio/wav","size":`+fmt.Sprint(len(imgBytes))+`,"sha256":"`+imgSHA+`"},`+
						`{"kind":"resource","mediaType":"application/octet-stream","size":`+fmt.Sprint(len(imgBytes))+`,"sha256":"`+imgSHA+`","uri":"file:///b.bin"}]}`, ""),
					atts: 1, // both parts have the same bytes
				},
				{
					name: "unknown block kept whole as a JSON attachment",
					mode: AttachStrip,
					in:   userEvent(`{"type":"tool_result","tool_use_id":"t1","content":[{"type":"widget","x":1}]}`, ""),
					want: userEvent(`{"type":"tool_result","tool_use_id":"t1","content":"[widget application/json `+fmt.Sprint(len(`{"type":"widget","x":1}`))+` B]","attachments":[{"kind":"widget","mediaType":"application/json","size":`+fmt.Sprint(len(`{"type":"widget","x":1}`))+`,"sha256":"`+sha([]byte(`{"type":"widget","x":1}`))+`"}]}`, ""),
					atts: 1,
				},
				{
					name: "non-block elements are rendered as text",
					in:   userEvent(`{"type":"tool_result","tool_use_id":"t1","content":["a",1,{"type":"text","text":"b"}]}`, ""),
					want: userEvent(`{"type":"tool_result","tool_use_id":"t1","content":"a\n1\nb"}`, ""),
				},
				{
					name: "invalid base64 is reported and kept",
					mode: AttachStrip,
					in:   userEvent(`{"type":"tool_result","tool_use_id":"t1","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"@@@"}}]}`, ""),
					want: userEvent(`{"type":"tool_result","tool_use_id":"t1","content":"[image image/png 3 B]","attachments":[{"kind":"image","mediaType":"image/png","size":3,"sha256":"`+sha([]byte("@@@"))+`","error":"data is not valid base64: illegal base64 data at input byte 0"}]}`, ""),
					atts: 1,
				},
				{
					name: "tool_use_result array becomes an object with text",
					mode: AttachStrip,
					in:   userEvent(`{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"hi"}]}`, `"tool_use_result":[{"type":"text","text":"hi"},`+img+`]`),
					want: userEvent(`{"type":"tool_result","tool_use_id":"t1","content":"hi"}`, `"tool_use_result":{"content":"hi\n`+ph+`","attachments":[`+attStrip+`]}`),
					atts: 1,
				},
				{
					name: "tool_use_result object: content text, structuredContent and resourceLinks kept",
					in: userEvent(`{"type":"tool_result","tool_use_id":"t1","content":"{\"t\":1}"}`,
						`"tool_use_result":{"content":[{"type":"text","text":"{\"t\":1}"}],"structuredContent":{"t":1},"resourceLinks":[{"uri":"x://y","name":"y"}]}`),
					want: userEvent(`{"type":"tool_result","tool_use_id":"t1","content":"{\"t\":1}"}`,
						`"tool_use_result":{"content":"{\"t\":1}","structuredContent":{"t":1},"resourceLinks":[{"uri":"x://y","name":"y"}]}`),
				},
				{
					name:  "tool_use_result string stays",
					in:    userEvent(`{"type":"tool_result","tool_use_id":"t1","content":"Error: x","is_error":true}`, `"tool_use_result":"Error: x"`),
					want:  userEvent(`{"type":"tool_result","tool_use_id":"t1","content":"Error: x","is_error":true}`, `"tool_use_result":"Error: x"`),
					plain: true,
				},
				{
					name:  "built-in tool result objects are not touched",
					in:    userEvent(`{"type":"tool_result","tool_use_id":"t1","content":"ok"}`, `"tool_use_result":{"stdout":"ok","stderr":"","interrupted":false,"items":[1,2]}`),
					want:  userEvent(`{"type":"tool_result","tool_use_id":"t1","content":"ok"}`, `"tool_use_result":{"stdout":"ok","stderr":"","interrupted":false,"items":[1,2]}`),
					plain: true,
				},
				{
					name:  "text blocks of the user are not tool results",
					in:    userEvent(`{"type":"text","text":"hello"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"`+imgB64+`"}}`, ""),
					want:  userEvent(`{"type":"text","text":"hello"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"`+imgB64+`"}}`, ""),
					plain: true,
				},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					n := eng.new(Options{Attachments: tt.mode})
					ev := n.Normalize([]byte(tt.in))
					jsonEqual(t, string(ev.JSON), tt.want)
					if ev.Type != TypeUser || ev.SessionID != "s1" {
						t.Errorf("classified as %q session %q", ev.Type, ev.SessionID)
					}
					if len(ev.Attachments) != tt.atts {
						t.Errorf("event reports %d attachments, want %d", len(ev.Attachments), tt.atts)
					}
					if tt.plain && (ev.Rewritten || string(ev.JSON) != tt.in) {
						t.Errorf("an event needing no rewrite must pass through byte for byte")
					}
					again := eng.new(Options{Attachments: tt.mode}).Normalize(ev.JSON)
					if string(again.JSON) != string(ev.JSON) {
						t.Errorf("not idempotent:\n once: %s\ntwice: %s", ev.JSON, again.JSON)
					}
				})
			}
		})
	}
}

// TestNormalizePreservesOtherBytes: fields that are not rewritten keep their
// exact bytes, including spacing, key order and escapes.
func TestNormalizePreservesOtherBytes(t *testing.T) {
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			in := `{"type":"user",  "message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"x"}]} , {"type":"text","text":"\u00e9\/"}]},"z":[1, 2,  3],"session_id":"s1"}`
			ev := eng.new(Options{}).Normalize([]byte(in))
			want := `{"type":"user",  "message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"x"} , {"type":"text","text":"\u00e9\/"}]},"z":[1, 2,  3],"session_id":"s1"}`
			if string(ev.JSON) != want {
				t.Errorf("\n got %s\nwant %s", ev.JSON, want)
			}
		})
	}
}

func TestNormalizeMCPAnnotations(t *testing.T) {
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			tests := []struct {
				name, toolName, meta string
				init                 bool
				want                 string // "" for no annotation
			}{
				{"from tool_use_meta", "mcp__my_srv__get__thing", `[{"id":"t1","tool_name":"get__thing","server_display_name":"x"}]`, true, `{"server":"my_srv","tool":"get__thing"}`},
				{"longest server of init wins", "mcp__my_srv__read", "", true, `{"server":"my_srv","tool":"read"}`},
				{"shorter server when it is the one", "mcp__my__srv_read", "", true, `{"server":"my","tool":"srv_read"}`},
				{"dashes in names", "mcp__web-tools__fetch-url", "", true, `{"server":"web-tools","tool":"fetch-url"}`},
				{"configured name with other characters", "mcp__odd_name_v2__go", "", true, `{"server":"odd name.v2","tool":"go"}`},
				{"no init: split at the first __", "mcp__srv__do_it", "", false, `{"server":"srv","tool":"do_it"}`},
				{"not an MCP tool", "Bash", "", true, ""},
				{"malformed MCP name", "mcp__", "", true, ""},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					n := eng.new(Options{})
					// One reused buffer, as with Reader: what the
					// Normalizer keeps must not point into it.
					var buf []byte
					norm := func(line string) Event {
						buf = append(buf[:0], line...)
						ev := n.Normalize(buf)
						ev.JSON = bytes.Clone(ev.JSON)
						return ev
					}
					if tt.init {
						norm(initEvent)
						norm(strings.Repeat(" ", len(initEvent)) + "{}")
					}
					a := norm(assistantToolUse("t1", tt.toolName, tt.meta))
					u := norm(userEvent(`{"type":"tool_result","tool_use_id":"t1","content":"ok"}`, ""))
					for what, ev := range map[string]Event{"tool_use": a, "tool_result": u} {
						got := gjson.GetBytes(ev.JSON, "message.content.0.mcp").Raw
						if got != tt.want {
							t.Errorf("%s: mcp = %s, want %s", what, got, tt.want)
						}
						if ev.MCP != (tt.want != "") {
							t.Errorf("%s: Event.MCP = %v", what, ev.MCP)
						}
					}
				})
			}
		})
	}
}

func TestNormalizeAnnotatesStreamAndPermission(t *testing.T) {
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			n := eng.new(Options{})
			// Every line goes through one reused buffer, as with Reader, so state
			// kept from a line must not point into it.
			var buf []byte
			norm := func(line []byte) Event {
				buf = append(buf[:0], line...)
				return n.Normalize(buf)
			}
			norm([]byte(initEvent))
			se := norm([]byte(`{"type":"stream_event","event":{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"t9","name":"mcp__everything__echo","input":{}}},"session_id":"s1"}`))
			if got := gjson.GetBytes(se.JSON, "event.content_block.mcp").Raw; got != `{"server":"everything","tool":"echo"}` {
				t.Errorf("stream_event tool_use start: mcp = %s", got)
			}
			cr := norm([]byte(`{"type":"control_request","request_id":"r1","request":{"subtype":"can_use_tool","tool_name":"mcp__my_srv__x","mcp_server":{"name":"my_srv","source":"dynamic"},"input":{}}}`))
			if got := gjson.GetBytes(cr.JSON, "request.mcp").Raw; got != `{"server":"my_srv","tool":"x"}` {
				t.Errorf("can_use_tool: mcp = %s", got)
			}
			// The full assistant event of the same tool_use follows (the same id
			// is remembered twice); then its tool_result is annotated too.
			norm([]byte(assistantToolUse("t9", "mcp__everything__echo", "")))
			for range 3 { // reuse the caller's buffer, as Reader does
				norm([]byte(`{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}}}`))
			}
			u := norm([]byte(userEvent(`{"type":"tool_result","tool_use_id":"t9","content":"ok"}`, "")))
			if got := gjson.GetBytes(u.JSON, "message.content.0.mcp.tool").Str; got != "echo" {
				t.Errorf("result of streamed tool_use: tool = %q", got)
			}
			delta := `{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}},"session_id":"s1"}`
			if ev := norm([]byte(delta)); ev.Rewritten || string(ev.JSON) != delta {
				t.Errorf("a text delta must pass through untouched")
			}
		})
	}
}

func TestNormalizeToolIDsAreBounded(t *testing.T) {
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			n := eng.new(Options{MaxToolIDs: 3})
			for i := range 5 {
				n.Normalize([]byte(assistantToolUse(fmt.Sprintf("t%d", i), "mcp__s__x", "")))
			}
			if len(n.tools) != 3 {
				t.Fatalf("remembers %d tool ids, want 3", len(n.tools))
			}
			for i, want := range []bool{false, false, true, true, true} {
				ev := n.Normalize([]byte(userEvent(fmt.Sprintf(`{"type":"tool_result","tool_use_id":"t%d","content":"ok"}`, i), "")))
				if got := gjson.GetBytes(ev.JSON, "message.content.0.mcp").Exists(); got != want {
					t.Errorf("result of t%d annotated = %v, want %v", i, got, want)
				}
			}
		})
	}
}

func TestNormalizeClassifies(t *testing.T) {
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			in := `{"type":"assistant","subtype":"x-new","session_id":"abc","uuid":"u-1","parent_tool_use_id":"toolu_9","message":{"content":[]},"future_field":{"a":[1]}}`
			ev := eng.new(Options{}).Normalize([]byte(in))
			want := Event{Type: "assistant", Subtype: "x-new", SessionID: "abc", UUID: "u-1", ParentToolUseID: "toolu_9"}
			if ev.Type != want.Type || ev.Subtype != want.Subtype || ev.SessionID != want.SessionID || ev.UUID != want.UUID || ev.ParentToolUseID != want.ParentToolUseID {
				t.Errorf("classified %+v", ev)
			}
			unknown := `{"type":"brand_new_event","payload":{"deep":[{"content":[{"type":"image"}]}]}}`
			if ev := eng.new(Options{}).Normalize([]byte(unknown)); string(ev.JSON) != unknown || ev.Type != "brand_new_event" {
				t.Errorf("unknown types must pass through unchanged: %s", ev.JSON)
			}
		})
	}
}

// TestNormalizeCarriageReturnNotCarried: a line after one with a raw '\r'
// between tokens is passed through unless it has one too.
func TestNormalizeCarriageReturnNotCarried(t *testing.T) {
	for _, eng := range engines {
		n := eng.new(Options{})
		for i, c := range []struct {
			in      string
			rewrite bool
		}{{"{\"type\":\r\"system\"}", true}, {`{"type":"system"}`, false}, {"[\r1]", true}, {`{"type":"system"}`, false}} {
			ev := n.Normalize([]byte(c.in))
			if ev.Rewritten != c.rewrite || bytes.IndexByte(ev.JSON, '\r') >= 0 {
				t.Errorf("%s, line %d %q: %q, rewritten %v", eng.name, i, c.in, ev.JSON, ev.Rewritten)
			}
		}
	}
}

func TestNormalizeNoiseAndBadInput(t *testing.T) {
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			tests := []struct {
				name, in string
				check    func(t *testing.T, ev Event)
			}{
				{"debug text", "[DEBUG] MCP server started", func(t *testing.T, ev Event) {
					if ev.Subtype != SubtypeNoise || gjson.GetBytes(ev.JSON, "text").Str != "[DEBUG] MCP server started" {
						t.Errorf("%s", ev.JSON)
					}
				}},
				{"array, not object", `[1,2]`, func(t *testing.T, ev Event) {
					if ev.Subtype != SubtypeNoise {
						t.Errorf("%s", ev.JSON)
					}
				}},
				{"truncated JSON", `{"type":"user","message":`, func(t *testing.T, ev Event) {
					if ev.Subtype != SubtypeNoise || gjson.GetBytes(ev.JSON, "text").Str != `{"type":"user","message":` {
						t.Errorf("%s", ev.JSON)
					}
				}},
				{"control characters and ANSI", "\x1b[31mred\x00\x07", func(t *testing.T, ev Event) {
					if gjson.GetBytes(ev.JSON, "text").Str != "\x1b[31mred\x00\x07" {
						t.Errorf("%s", ev.JSON)
					}
				}},
				{"invalid UTF-8 in noise", "bad \xff\xfe bytes", func(t *testing.T, ev Event) {
					if gjson.GetBytes(ev.JSON, "text").Str != "bad \uFFFD bytes" {
						t.Errorf("%q", ev.JSON)
					}
				}},
				{"invalid UTF-8 inside a JSON event", "{\"type\":\"assistant\",\"t\":\"a\xffb\"}", func(t *testing.T, ev Event) {
					if ev.Type != TypeAssistant || gjson.GetBytes(ev.JSON, "t").Str != "a\uFFFDb" || !ev.Rewritten {
						t.Errorf("%q", ev.JSON)
					}
				}},
				{"carriage return between tokens", "{\"type\":\r\"system\",\r\"a\":\r{}}", func(t *testing.T, ev Event) {
					if ev.Type != TypeSystem || bytes.ContainsAny(ev.JSON, "\r\n") || !ev.Rewritten {
						t.Errorf("%q", ev.JSON)
					}
				}},
				{"carriage return between tokens of a long line", "{\"type\":\r\"system\",\"a\":\"" + strings.Repeat("x", 70000) + "\",\r\"b\":[\r1]}", func(t *testing.T, ev Event) {
					if ev.Type != TypeSystem || bytes.ContainsAny(ev.JSON, "\r\n") || !ev.Rewritten || len(gjson.GetBytes(ev.JSON, "a").Str) != 70000 {
						t.Errorf("%.100q", ev.JSON)
					}
				}},
				{"long noise is capped", strings.Repeat("n", 10000), func(t *testing.T, ev Event) {
					if len(gjson.GetBytes(ev.JSON, "text").Str) != noiseTextBytes || gjson.GetBytes(ev.JSON, "bytes").Int() != 10000 || !gjson.GetBytes(ev.JSON, "truncated").Bool() {
						t.Errorf("%.100s", ev.JSON)
					}
				}},
				{"absurd nesting", "{\"a\":" + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + "}", func(t *testing.T, ev Event) {
					if ev.Subtype != SubtypeNoise {
						t.Errorf("deep nesting must become noise, got type %q", ev.Type)
					}
				}},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					ev := eng.new(Options{}).Normalize([]byte(tt.in))
					if !json.Valid(ev.JSON) || ev.JSON[0] != '{' {
						t.Fatalf("output is not a JSON object: %.200q", ev.JSON)
					}
					tt.check(t, ev)
				})
			}
		})
	}
}

// memSink is a Sink that keeps blobs in memory.
type memSink struct {
	blobs map[string][]byte
	fail  bool
	last  Attachment
}

func (s *memSink) PutAttachment(a Attachment, data []byte) (string, error) {
	if s.fail {
		return "", errors.New("store full")
	}
	if sha(data) != a.SHA256 || len(data) != a.Size {
		return "", fmt.Errorf("sink got %d bytes that do not match %+v", len(data), a)
	}
	s.blobs[a.SHA256] = append([]byte(nil), data...)
	s.last = a
	return "/v1/blobs/" + a.SHA256, nil
}

func TestNormalizeSink(t *testing.T) {
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			img := `{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + imgB64 + `"}}`
			in := userEvent(`{"type":"tool_result","tool_use_id":"t1","content":[`+img+`]}`, `"tool_use_result":[`+img+`]`)

			sink := &memSink{blobs: map[string][]byte{}}
			ev := eng.new(Options{Attachments: AttachSink, Sink: sink}).Normalize([]byte(in))
			if string(sink.blobs[imgSHA]) != string(imgBytes) || len(sink.blobs) != 1 {
				t.Fatalf("sink holds %d blobs", len(sink.blobs))
			}
			// What the sink was given stays intact when the caller reuses
			// its line buffer.
			buf := []byte(in)
			keep := &memSink{blobs: map[string][]byte{}}
			eng.new(Options{Attachments: AttachSink, Sink: keep}).Normalize(buf)
			for i := range buf {
				buf[i] = 'x'
			}
			if keep.last.MediaType != "image/png" || keep.last.Kind != "image" {
				t.Fatalf("the sink's attachment changed with the caller's buffer: %+v", keep.last)
			}
			for _, path := range []string{"message.content.0.attachments.0", "tool_use_result.attachments.0"} {
				a := gjson.GetBytes(ev.JSON, path)
				if a.Get("url").Str != "/v1/blobs/"+imgSHA || a.Get("data").Exists() {
					t.Errorf("%s = %s", path, a.Raw)
				}
			}
			if len(ev.Attachments) != 1 || ev.Attachments[0].URL != "/v1/blobs/"+imgSHA {
				t.Errorf("event attachments %+v", ev.Attachments)
			}

			// A failing sink keeps the data inline and says why.
			ev = eng.new(Options{Attachments: AttachSink, Sink: &memSink{fail: true}}).Normalize([]byte(in))
			a := gjson.GetBytes(ev.JSON, "message.content.0.attachments.0")
			if a.Get("data").Str != imgB64 || !strings.Contains(a.Get("error").Str, "store full") {
				t.Errorf("failed sink: %s", a.Raw)
			}
		})
	}
}

func TestFormatSize(t *testing.T) {
	for n, want := range map[int]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 1229: "1.2 KiB", 3 << 20: "3.0 MiB", 5 << 30: "5.0 GiB"} {
		if got := FormatSize(n); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", n, got, want)
		}
	}
}

// countSink fails every call and counts them.
type countSink struct{ calls int }

func (s *countSink) PutAttachment(Attachment, []byte) (string, error) {
	s.calls++
	return "", errors.New("store full")
}

// TestFlattenOncePerEvent: tool_use_result repeats the tool_result content
// byte for byte; it is not flattened again, so its parts are not read (nor
// stored) a second time, and both get the same text and attachments.
func TestFlattenOncePerEvent(t *testing.T) {
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			parts := `[{"type":"text","text":"hits:"},{"type":"x-custom","v":1}]`
			in := userEvent(`{"type":"tool_result","tool_use_id":"t1","content":`+parts+`}`, `"tool_use_result":`+parts)
			sink := &countSink{}
			n := eng.new(Options{Attachments: AttachSink, Sink: sink})
			ev := n.Normalize([]byte(in))
			if sink.calls != 1 {
				t.Errorf("the sink was called %d times for one array printed twice, want 1", sink.calls)
			}
			res := gjson.GetBytes(ev.JSON, "message.content.0")
			tur := gjson.GetBytes(ev.JSON, "tool_use_result")
			if res.Get("content").Raw != tur.Get("content").Raw || res.Get("attachments").Raw != tur.Get("attachments").Raw {
				t.Errorf("tool_result and tool_use_result differ:\n%s\n%s", res.Raw, tur.Raw)
			}
			if !strings.Contains(res.Get("attachments").Raw, "attachment not stored") {
				t.Errorf("attachments: %s", res.Get("attachments").Raw)
			}
		})
	}
}

// normalizeToLines is normalizeLines through NormalizeTo.
func normalizeToLines(t testing.TB, in []byte, n *Normalizer, maxLine int) [][]byte {
	t.Helper()
	return mapLines(t, in, maxLine, func(line []byte) []byte {
		var b bytes.Buffer
		ev, err := n.NormalizeTo(&b, line)
		if err != nil || ev.JSON != nil {
			t.Fatalf("NormalizeTo: %v, JSON %q", err, ev.JSON)
		}
		return b.Bytes()
	})
}

// TestNormalizeToMatchesNormalize: written in pieces, every event of every
// transcript has the bytes Normalize returns, in both engines and modes.
func TestNormalizeToMatchesNormalize(t *testing.T) {
	for _, rel := range transcripts(t) {
		in := readTranscript(t, rel)
		for _, eng := range engines {
			for _, mode := range []AttachmentMode{AttachInline, AttachStrip} {
				opts := Options{Attachments: mode}
				want := normalizeLines(t, in, eng.new(opts), 0)
				got := normalizeToLines(t, in, eng.new(opts), 0)
				if !equalLines(got, want) {
					for i := range min(len(got), len(want)) {
						if !bytes.Equal(got[i], want[i]) {
							t.Fatalf("%s, %s, %v: line %d differs:\nNormalizeTo %.300q\n  Normalize %.300q", rel, eng.name, mode, i+1, got[i], want[i])
						}
					}
					t.Fatalf("%s, %s, %v: %d lines, want %d", rel, eng.name, mode, len(got), len(want))
				}
			}
		}
	}
}

// failWriter fails its second write.
type failWriter struct{ writes int }

func (w *failWriter) Write(p []byte) (int, error) {
	if w.writes++; w.writes == 2 {
		return 0, errors.New("disk full")
	}
	return len(p), nil
}

func TestNormalizeToReportsWriteErrors(t *testing.T) {
	line := imageLine(1 << 10)
	if _, err := NewNormalizer(Options{}).NormalizeTo(&failWriter{}, line); err == nil || err.Error() != "disk full" {
		t.Errorf("err = %v, want the writer's", err)
	}
}

// imageLine is a user event whose tool result carries an image of n random
// bytes, in message.content and again in tool_use_result, as the CLI
// prints it.
func imageLine(n int) []byte {
	data := make([]byte, n)
	for i := range data {
		data[i] = byte(i*7919>>3 ^ i>>11)
	}
	b64 := base64.StdEncoding.EncodeToString(data)
	blocks := `[{"type":"text","text":"Here is the chart:"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + b64 + `"}}]`
	return []byte(`{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_big","type":"tool_result","content":` + blocks +
		`}]},"session_id":"s","tool_use_result":` + blocks + `}`)
}

// TestNormalizeToHugeImageLine: a rewritten image line written in pieces is
// not copied — not into an output buffer, not into its attachments JSON —
// so normalizing it allocates a small fraction of the line.
func TestNormalizeToHugeImageLine(t *testing.T) {
	line := imageLine(15 << 20) // a 40 MB line
	want := bytes.Clone(NewNormalizer(Options{}).Normalize(line).JSON)
	n := NewNormalizer(Options{})
	var out bytes.Buffer
	out.Grow(len(want) + 1)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	ev, err := n.NormalizeTo(&out, line)
	runtime.ReadMemStats(&after)
	if err != nil || !ev.Rewritten || len(ev.Attachments) != 1 {
		t.Fatalf("NormalizeTo: %v, rewritten %v, %d attachments", err, ev.Rewritten, len(ev.Attachments))
	}
	if !bytes.Equal(out.Bytes(), want) {
		t.Fatalf("NormalizeTo wrote %d bytes that differ from Normalize's %d", out.Len(), len(want))
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(len(line)/32) {
		t.Errorf("normalizing a %d MiB image line allocated %d KiB, want at most 1/32 of the line", len(line)>>20, alloc>>10)
	}
}

// TestEventStringsOutliveLine: the ids of an event are copies (short ones
// share blocks), valid after the line's buffer is reused for later lines.
func TestEventStringsOutliveLine(t *testing.T) {
	n := NewNormalizer(Options{})
	type ids struct{ typ, sub, uuid, parent string }
	var got, want []ids
	buf := make([]byte, 0, 512)
	for i := range 2000 {
		w := ids{fmt.Sprintf("kind%d", i%7), fmt.Sprintf("sub\\u00e9%d", i), fmt.Sprintf("%08x-aaaa-bbbb-cccc-%012d", i, i), strings.Repeat("p", i%300)}
		buf = fmt.Appendf(buf[:0], `{"type":%q,"subtype":"%s","uuid":%q,"parent_tool_use_id":%q}`, w.typ, w.sub, w.uuid, w.parent)
		ev := n.Normalize(buf)
		got = append(got, ids{ev.Type, ev.Subtype, ev.UUID, ev.ParentToolUseID})
		w.sub = strings.ReplaceAll(w.sub, `\u00e9`, "é")
		want = append(want, w)
		clear(buf[:cap(buf)])
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("event %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}

// TestEscapedTopLevelKeys: a top-level key spelled with escapes is read
// as its text, as gjson reads it.
func TestEscapedTopLevelKeys(t *testing.T) {
	line := `{"t\u0079pe":"user","session_\u0069d":"s1","message":{"content":[{"type":"tool_result","tool_use_id":"x","content":[{"type":"text","text":"a"}]}]}}`
	for _, eng := range engines {
		ev := eng.new(Options{}).Normalize([]byte(line))
		if ev.Type != TypeUser || ev.SessionID != "s1" || !ev.Rewritten {
			t.Errorf("%s: type %q, session %q, rewritten %v", eng.name, ev.Type, ev.SessionID, ev.Rewritten)
		}
		if got := gjson.GetBytes(ev.JSON, "message.content.0.content").Raw; got != `"a"` {
			t.Errorf("%s: content %s", eng.name, got)
		}
	}
}

// TestStreamEventTypeAnyWhere: the start of a streamed MCP tool_use is
// annotated wherever its type is among the event's members (the CLI sorts
// them: type last), and the first "type" member is the one that counts.
func TestStreamEventTypeAnyWhere(t *testing.T) {
	const cb = `"content_block":{"id":"toolu_1","input":{},"name":"mcp__srv__echo","type":"tool_use"}`
	for _, tc := range []struct {
		event string
		mcp   bool
	}{
		{`{"type":"content_block_start","index":0,` + cb + `}`, true},
		{`{` + cb + `,"index":0,"type":"content_block_start"}`, true},
		{`{` + cb + `,"index":0,"type":"content_block_start","type":"content_block_delta"}`, true},
		{`{` + cb + `,"index":0,"type":"content_block_delta","type":"content_block_start"}`, false},
		{`{` + cb + `,"index":0,"t\u0079pe":"content_block_start"}`, true},
		{`{` + cb + `,"index":0,"type":7}`, false},
		{`{"delta":{"text":"content_block_start","type":"text_delta"},"index":0,"type":"content_block_delta"}`, false},
	} {
		for _, eng := range engines {
			line := `{"type":"stream_event","event":` + tc.event + `,"session_id":"s"}`
			ev := eng.new(Options{}).Normalize([]byte(line))
			if ev.MCP != tc.mcp || tc.mcp && gjson.GetBytes(ev.JSON, "event.content_block.mcp.server").Str != "srv" {
				t.Errorf("%s: %s: MCP %v, want %v: %s", eng.name, tc.event, ev.MCP, tc.mcp, ev.JSON)
			}
		}
	}
}
