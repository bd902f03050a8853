//go:build unix

package probe

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ccproxy/ccproxy/internal/testkit/mcptest"
	"github.com/ccproxy/ccproxy/mcpconfig"
	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/stream"
)

// TestToolsRealServers lists the tools of the real servers: the schemas
// must be the stored ones (run with -update to store new ones after a
// server upgrade) and the trees the golden ones.
func TestToolsRealServers(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	cfg := probeConfig(t, map[string]any{
		"everything": stdio(nodeBin(t, "mcp-server-everything")),
		"filesystem": stdio(nodeBin(t, "mcp-server-filesystem"), work),
		"memory": map[string]any{"command": nodeBin(t, "mcp-server-memory"), "args": []string{},
			"env": map[string]string{"MEMORY_FILE_PATH": filepath.Join(work, "memory.jsonl")}},
		"testmcp": stdio(mcptest.Command(t)),
		"http":    map[string]any{"type": "http", "url": mcptest.ServeHTTP(t).URL},
		"sse":     map[string]any{"type": "sse", "url": sseServer(t).URL},
	}, nil)
	p := testProber(t, nil)
	started := track(p)
	type listing struct {
		tools []Tool
		err   error
	}
	names := append(append([]string(nil), realServers...), "http", "sse")
	got := make([]listing, len(names))
	done := make(chan int)
	for i, name := range names {
		go func() {
			got[i].tools, got[i].err = p.Tools(context.Background(), cfg, name)
			done <- i
		}()
	}
	for range names {
		<-done
	}
	started.assertGone(t, 4)
	for i, name := range names {
		tools, err := got[i].tools, got[i].err
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if err := (protocol.MCPToolsResult{Server: name, Tools: Wire.Tools(tools)}).Validate(); err != nil {
			t.Errorf("%s: the reply breaks the protocol: %v", name, err)
		}
		stored := name
		if name == "http" || name == "sse" {
			stored = "testmcp" // the same server over HTTP keeps the same schemas, in the same key order
		}
		var live []storedTool
		for _, tool := range tools {
			live = append(live, storedTool{Name: tool.Name, InputSchema: tool.InputSchema})
		}
		file := filepath.Join(paramsDir, stored+".tools.json")
		if *update && name == stored {
			writeIndented(t, file, live)
			continue
		}
		want := readStoredTools(t, stored)
		if len(want) != len(live) {
			t.Errorf("%s: %d tools, %s has %d (run with -update after a server upgrade)", name, len(live), file, len(want))
			continue
		}
		goldenTrees := paramsFor(t, want)
		for j := range live {
			// Byte for byte (after re-indenting): the key order is the server's.
			if live[j].Name != want[j].Name || compactJSON(t, live[j].InputSchema) != compactJSON(t, want[j].InputSchema) {
				t.Errorf("%s: tool %d is %s %s, stored %s %s", name, j, live[j].Name, live[j].InputSchema, want[j].Name, want[j].InputSchema)
				continue
			}
			g, _ := json.Marshal(tools[j].Parameters)
			w, _ := json.Marshal(goldenTrees[j].Parameters)
			if string(g) != string(w) {
				t.Errorf("%s: %s: parameters %s, want %s", name, live[j].Name, g, w)
			}
		}
	}
}

func compactJSON(t testing.TB, raw json.RawMessage) string {
	t.Helper()
	var b strings.Builder
	enc := json.NewEncoder(&b)
	var v json.RawMessage
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// TestCallTestServer calls the go-sdk test server's tools directly, over
// stdio and streamable HTTP.
func TestCallTestServer(t *testing.T) {
	t.Parallel()
	cfg := probeConfig(t, map[string]any{
		"stdio": stdio(mcptest.Command(t)),
		"http":  map[string]any{"type": "http", "url": mcptest.ServeHTTP(t).URL},
	}, nil)
	png := mcptest.SmallPNG()
	cases := []struct {
		name, tool, args string
		isError          bool
		content          string // the whole text, unless contains is set
		contains         bool
		atts             []Attachment
		structured       string
	}{
		{"text without arguments", mcptest.ToolText, ``, false, mcptest.OneText, false, nil, ""},
		{"texts joined", mcptest.ToolTexts, `{"count":2}`, false, "\n", true, nil, ""},
		{"echo", mcptest.ToolEcho, `{"message":"héllo","mode":"upper","repeat":2,"options":{"prefix":"> ","tags":["a","b"]}}`, false, "HÉLLO", true, nil, ""},
		{"image", mcptest.ToolImage, `{}`, false, "[image image/png ", true,
			[]Attachment{{Kind: "image", MediaType: "image/png", Size: int64(len(png)), SHA256: sha256Hex(png), Data: base64.StdEncoding.EncodeToString(png)}}, ""},
		{"embedded text resource", mcptest.ToolResourceText, `{}`, false, strings.TrimSuffix(mcptest.ResourceTextBody, ""), false, nil, ""},
		{"is_error", mcptest.ToolIsError, `{}`, true, mcptest.IsErrorText, true, nil, ""},
		{"empty", mcptest.ToolEmpty, `{}`, false, "", false, nil, ""},
		{"structured", mcptest.ToolStructured, `{"city":"Oslo"}`, false, "Oslo", true, nil, `"city":"Oslo"`},
		{"a JSON-RPC error is a tool error", mcptest.ToolFail, `{"mode":"protocol"}`, true, "MCP error -32603: " + mcptest.FailProtocolText, false, nil, ""},
		{"a tool failure", mcptest.ToolFail, `{"mode":"tool"}`, true, mcptest.FailToolText, true, nil, ""},
	}
	p := testProber(t, nil)
	started := track(p)
	for _, server := range []string{"stdio", "http"} {
		for _, c := range cases {
			t.Run(server+"/"+c.name, func(t *testing.T) {
				res, err := p.Call(context.Background(), cfg, server, c.tool, json.RawMessage(c.args))
				if err != nil {
					t.Fatal(err)
				}
				if err := Wire.CallResult(res).Validate(); err != nil {
					t.Errorf("the reply breaks the protocol: %v", err)
				}
				if res.Server != server || res.Tool != c.tool || res.IsError != c.isError || res.DurationMs <= 0 {
					t.Errorf("result %+v", res)
				}
				if c.contains && !strings.Contains(res.Content, c.content) || !c.contains && res.Content != c.content {
					t.Errorf("content %q, want %q (contains=%v)", res.Content, c.content, c.contains)
				}
				if c.atts != nil {
					if len(res.Attachments) != 1 || res.Attachments[0] != c.atts[0] {
						t.Errorf("attachments %+v, want %+v", res.Attachments, c.atts)
					}
				}
				if c.structured != "" && !strings.Contains(string(res.StructuredContent), c.structured) {
					t.Errorf("structuredContent %s lacks %s", res.StructuredContent, c.structured)
				}
			})
		}
	}
	started.assertGone(t, len(cases))
}

// TestCallHidesSecretsInRPCErrors: a JSON-RPC error answer to tools/call
// becomes the result's content with the server's secrets masked, as every
// failure message is.
func TestCallHidesSecretsInRPCErrors(t *testing.T) {
	const secret = "sk-live-0123456789abcdef"
	cfg := probeConfig(t, map[string]any{"s": fake(t, fakeTools, map[string]string{"FAKE_SECRET": secret})}, nil)
	p := testProber(t, nil)
	res, err := p.Call(context.Background(), cfg, "s", "leak", nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := "MCP error -32603: upstream refused token " + mcpconfig.Mask; !res.IsError || res.Content != want {
		t.Errorf("isError=%v content %q, want %q", res.IsError, res.Content, want)
	}
}

// TestListToolsNotes: ListTools gives each tool the notes of its schema
// (parsed once, for the tree and the notes), and Call checks arguments
// against the same schema.
func TestListToolsNotes(t *testing.T) {
	t.Parallel()
	cfg := probeConfig(t, map[string]any{"s": fake(t, fakeTools, nil)}, nil)
	p := testProber(t, nil)
	tools, err := p.ListTools(context.Background(), cfg, "s")
	if err != nil {
		t.Fatal(err)
	}
	schema, err := ParseToolSchema(json.RawMessage(notedSchema))
	if err != nil {
		t.Fatal(err)
	}
	var noted *ListedTool
	for i := range tools {
		if tools[i].Name == "noted" {
			noted = &tools[i]
		} else if len(tools[i].Notes) != 0 {
			t.Errorf("%s: notes %q", tools[i].Name, tools[i].Notes)
		}
	}
	if noted == nil {
		t.Fatalf("no tool noted in %+v", tools)
	}
	if !slices.Equal(noted.Notes, schema.Notes()) || len(noted.Notes) != 1 || !strings.Contains(noted.Notes[0], "minProperties 1") {
		t.Errorf("notes %q, want %q", noted.Notes, schema.Notes())
	}
	if g, w := paramsJSON(t, noted.Parameters), paramsJSON(t, schema.Parameters()); g != w {
		t.Errorf("parameters %s, want %s", g, w)
	}
	plain, err := p.Tools(context.Background(), cfg, "s")
	if err != nil || len(plain) != len(tools) || plain[1].Name != tools[1].Name || string(plain[1].InputSchema) != string(tools[1].InputSchema) {
		t.Errorf("Tools: %v %+v", err, plain)
	}
	_, err = p.Call(context.Background(), cfg, "s", "noted", json.RawMessage(`{}`))
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeInvalidArguments || len(e.Fields) != 1 || !strings.Contains(e.Fields[0].Message, "at least 1 properties") {
		t.Errorf("call with {}: %v", err)
	}
	if res, err := p.Call(context.Background(), cfg, "s", "noted", json.RawMessage(`{"a":"x"}`)); err != nil || res.Content != "noted" {
		t.Errorf("call: %v %+v", err, res)
	}
}

// TestCallNormalizesLikeSessions: the text of a direct call is what a
// session tool_result with the same content normalizes to.
func TestCallNormalizesLikeSessions(t *testing.T) {
	t.Parallel()
	cfg := probeConfig(t, map[string]any{"s": stdio(mcptest.Command(t))}, nil)
	p := testProber(t, func(o *ProberOptions) { o.Attachments = stream.Options{Attachments: stream.AttachStrip} })
	for _, tool := range []string{mcptest.ToolResourceBlob, mcptest.ToolAudio, mcptest.ToolResourceLink, mcptest.ToolUnicode} {
		res, err := p.Call(context.Background(), cfg, "s", tool, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range res.Attachments {
			if a.Data != "" || a.SHA256 == "" || a.Size <= 0 {
				t.Errorf("%s: attachment %+v (strip mode)", tool, a)
			}
		}
		switch tool {
		case mcptest.ToolResourceBlob:
			if len(res.Attachments) != 1 || res.Attachments[0].URI != mcptest.ResourceBlobURI || res.Attachments[0].SHA256 != sha256Hex(mcptest.BlobBytes()) {
				t.Errorf("blob: %+v", res.Attachments)
			}
		case mcptest.ToolUnicode:
			if res.Content != mcptest.UnicodeText {
				t.Errorf("unicode: %q", res.Content)
			}
		case mcptest.ToolResourceLink:
			if !strings.Contains(res.Content, mcptest.ResourceTextURI) {
				t.Errorf("link: %q", res.Content)
			}
		}
	}
}

func TestCallFailures(t *testing.T) {
	cfg := probeConfig(t, map[string]any{"s": stdio(mcptest.Command(t))}, nil)
	p := testProber(t, func(o *ProberOptions) { o.CallTimeout = 500 * time.Millisecond })
	started := track(p)
	cases := []struct {
		name, tool, args string
		code             string
		message          string
		fields           []FieldError
		stderr           string
	}{
		{"unknown tool", "nope", `{}`, CodeToolNotFound, `server "s" has no tool "nope" (its tools: audio, echo, empty, fail`, nil, ""},
		{"missing and invalid arguments", mcptest.ToolEcho, `{"mode":"shout","repeat":9}`, CodeInvalidArguments,
			`invalid arguments for tool "echo" of server "s": message: is required; mode: must be one of "plain", "upper", "reverse", got "shout"; repeat: must be at most 5, got 9`,
			[]FieldError{
				{Path: "message", Code: ParamRequired, Message: "is required"},
				{Path: "mode", Code: ParamEnumInvalid, Message: `must be one of "plain", "upper", "reverse", got "shout"`},
				{Path: "repeat", Code: ParamConstraintViolated, Message: "must be at most 5, got 9"}}, ""},
		{"nested argument", mcptest.ToolEcho, `{"message":"x","options":{"tags":["a",2]}}`, CodeInvalidArguments, "options.tags[1]: must be a string, got a number",
			[]FieldError{{Path: "options.tags[1]", Code: ParamInvalidType, Message: "must be a string, got a number"}}, ""},
		{"not an object", mcptest.ToolText, `[1]`, CodeInvalidArguments, "they must be a JSON object",
			[]FieldError{{Path: RootPath, Code: ParamInvalidType, Message: "must be a JSON object"}}, ""},
		{"timeout", mcptest.ToolSlow, `{"ms":60000}`, CodeTimeout, `server "s": no answer to tools/call within 500ms`, nil, ""},
		{"the server dies during the call", mcptest.ToolFail, `{"mode":"exit"}`, CodeProcessExited,
			"the server process exited with status 3 during tools/call", nil, "fail mode exit: exiting with status 3"},
	}
	starts := 0
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := p.Call(context.Background(), cfg, "s", c.tool, json.RawMessage(c.args))
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v, want an *Error", err)
			}
			if e.Code != c.code || !strings.Contains(e.Message, c.message) || !strings.Contains(e.StderrTail, c.stderr) {
				t.Errorf("error %s %q (stderr %q), want %s %q", e.Code, e.Message, e.StderrTail, c.code, c.message)
			}
			if c.fields != nil && !equalFields(e.Fields, c.fields) {
				t.Errorf("fields %+v, want %+v", e.Fields, c.fields)
			}
			pe := e.ProtocolError()
			switch c.code {
			case CodeInvalidArguments:
				if pe.Code != protocol.CodeMCPInvalidArguments || pe.Details == nil || len(pe.Details.Fields) != len(c.fields) {
					t.Errorf("protocol error %+v", pe)
				}
			case CodeToolNotFound:
				if pe.Code != protocol.CodeMCPToolNotFound {
					t.Errorf("protocol error %+v", pe)
				}
			default:
				if pe.Code != protocol.MCPCode(c.code) || pe.Details.ProbeCode != c.code || pe.Details.StderrTail != e.StderrTail {
					t.Errorf("protocol error %+v", pe)
				}
			}
		})
		if c.args != `[1]` {
			starts++ // invalid JSON is refused before connecting
		}
	}
	started.assertGone(t, starts)
}

func equalFields(a, b []FieldError) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestCallRealServers calls tools of the npm reference servers.
func TestCallRealServers(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	if err := os.WriteFile(filepath.Join(work, "hello.txt"), []byte("hello from a file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := probeConfig(t, map[string]any{
		"everything": stdio(nodeBin(t, "mcp-server-everything")),
		"filesystem": stdio(nodeBin(t, "mcp-server-filesystem"), work),
		"memory": map[string]any{"command": nodeBin(t, "mcp-server-memory"), "args": []string{},
			"env": map[string]string{"MEMORY_FILE_PATH": filepath.Join(work, "memory.jsonl")}},
		"envsrv": map[string]any{"command": nodeBin(t, "mcp-server-everything"), "args": []string{},
			"env": map[string]string{"MY_API_KEY": "sekrit-env-value-12345"}},
	}, nil)
	p := testProber(t, nil)
	started := track(p)
	cases := []struct {
		server, tool, args, want string
		isError                  bool
	}{
		{"everything", "get-sum", `{"a":2,"b":40}`, "42", false},
		{"everything", "echo", `{"message":"hi"}`, "hi", false},
		{"everything", "get-tiny-image", `{}`, "[image image/png", false},
		{"filesystem", "read_text_file", `{"path":"` + filepath.Join(work, "hello.txt") + `"}`, "hello from a file", false},
		{"filesystem", "read_text_file", `{"path":"/etc/passwd"}`, "Access denied", true},
		{"memory", "create_entities", `{"entities":[{"name":"ccproxy","entityType":"program","observations":["probes servers"]}]}`, "ccproxy", false},
		// A tool that prints its environment: the configured value is
		// scrubbed from a successful result too.
		{"envsrv", "get-env", `{}`, `"MY_API_KEY": "***"`, false},
	}
	for _, c := range cases {
		res, err := p.Call(context.Background(), cfg, c.server, c.tool, json.RawMessage(c.args))
		if err != nil {
			t.Errorf("%s %s: %v", c.server, c.tool, err)
			continue
		}
		if !strings.Contains(res.Content, c.want) || res.IsError != c.isError || strings.Contains(res.Content+string(res.StructuredContent), "sekrit-env-value") {
			t.Errorf("%s %s: isError=%v content %q, want %q (and no secret)", c.server, c.tool, res.IsError, res.Content, c.want)
		}
	}
	_, err := p.Call(context.Background(), cfg, "everything", "get-sum", json.RawMessage(`{"a":"2"}`))
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeInvalidArguments || len(e.Fields) != 2 {
		t.Errorf("get-sum with bad arguments: %v", err)
	}
	started.assertGone(t, len(cases)+1)
}
