package mcptest_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"image/png"
	"os/exec"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ccproxy/ccproxy/internal/childproc"
	"github.com/ccproxy/ccproxy/internal/testkit"
	"github.com/ccproxy/ccproxy/internal/testkit/mcptest"
)

func connectInMemory(t *testing.T, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := mcptest.NewServer().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	return connect(t, ct, opts)
}

func connect(t *testing.T, tr mcp.Transport, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "mcptest-client", Version: "1"}, opts)
	cs, err := c.Connect(ctx, tr, nil)
	if err != nil {
		t.Fatalf("connecting: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("calling %s: %v", name, err)
	}
	return res
}

func texts(res *mcp.CallToolResult) []string {
	var out []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			out = append(out, tc.Text)
		}
	}
	return out
}

// checkTools calls every tool but the huge, slow and failing ones and checks
// each result's content. It is shared by all transports.
func checkTools(t *testing.T, cs *mcp.ClientSession) {
	t.Helper()
	tests := []struct {
		tool  string
		args  map[string]any
		check func(t *testing.T, r *mcp.CallToolResult)
	}{
		{mcptest.ToolText, nil, func(t *testing.T, r *mcp.CallToolResult) {
			if got := texts(r); !reflect.DeepEqual(got, []string{mcptest.OneText}) {
				t.Errorf("texts %q", got)
			}
		}},
		{mcptest.ToolTexts, map[string]any{"count": 4}, func(t *testing.T, r *mcp.CallToolResult) {
			if got := texts(r); len(got) != 4 || got[3] != "part 4 of 4" {
				t.Errorf("texts %q", got)
			}
		}},
		{mcptest.ToolTexts, nil, func(t *testing.T, r *mcp.CallToolResult) {
			if got := texts(r); len(got) != 3 {
				t.Errorf("default count: texts %q", got)
			}
		}},
		{mcptest.ToolImage, nil, func(t *testing.T, r *mcp.CallToolResult) {
			img, ok := r.Content[0].(*mcp.ImageContent)
			if len(r.Content) != 1 || !ok || img.MIMEType != "image/png" || !bytes.Equal(img.Data, mcptest.SmallPNG()) {
				t.Errorf("content %v", r.Content)
			}
		}},
		{mcptest.ToolAudio, nil, func(t *testing.T, r *mcp.CallToolResult) {
			a, ok := r.Content[0].(*mcp.AudioContent)
			if !ok || a.MIMEType != "audio/wav" || !bytes.Equal(a.Data, mcptest.WAV()) {
				t.Errorf("content %v", r.Content)
			}
		}},
		{mcptest.ToolResourceText, nil, func(t *testing.T, r *mcp.CallToolResult) {
			e, ok := r.Content[0].(*mcp.EmbeddedResource)
			if !ok || e.Resource.URI != mcptest.ResourceTextURI || e.Resource.Text != mcptest.ResourceTextBody {
				t.Errorf("content %v", r.Content)
			}
		}},
		{mcptest.ToolResourceBlob, nil, func(t *testing.T, r *mcp.CallToolResult) {
			e, ok := r.Content[0].(*mcp.EmbeddedResource)
			if !ok || e.Resource.URI != mcptest.ResourceBlobURI || !bytes.Equal(e.Resource.Blob, mcptest.BlobBytes()) {
				t.Errorf("content %v", r.Content)
			}
		}},
		{mcptest.ToolResourceLink, nil, func(t *testing.T, r *mcp.CallToolResult) {
			l, ok := r.Content[1].(*mcp.ResourceLink)
			if len(r.Content) != 2 || !ok || l.URI != mcptest.ResourceTextURI || l.Size == nil || *l.Size != int64(len(mcptest.ResourceTextBody)) {
				t.Errorf("content %v", r.Content)
			}
		}},
		{mcptest.ToolIsError, nil, func(t *testing.T, r *mcp.CallToolResult) {
			if !r.IsError || len(texts(r)) != 2 || texts(r)[0] != mcptest.IsErrorText {
				t.Errorf("isError %v texts %q", r.IsError, texts(r))
			}
		}},
		{mcptest.ToolEmpty, nil, func(t *testing.T, r *mcp.CallToolResult) {
			if r.IsError || len(r.Content) != 0 || r.Content == nil {
				t.Errorf("content %#v", r.Content)
			}
		}},
		{mcptest.ToolStructured, nil, func(t *testing.T, r *mcp.CallToolResult) {
			b, _ := json.Marshal(r.StructuredContent)
			var w mcptest.Weather
			if err := json.Unmarshal(b, &w); err != nil || w.City != "Paris" || w.TemperatureC != 21.5 || len(w.Forecast) != 2 {
				t.Errorf("structuredContent %s (%v)", b, err)
			}
			if got := texts(r); len(got) != 1 || !json.Valid([]byte(got[0])) {
				t.Errorf("text content should be the JSON of the structured content: %q", got)
			}
		}},
		{mcptest.ToolStructured, map[string]any{"city": "Oslo"}, func(t *testing.T, r *mcp.CallToolResult) {
			if !strings.Contains(texts(r)[0], `"city":"Oslo"`) {
				t.Errorf("texts %q", texts(r))
			}
		}},
		{mcptest.ToolUnicode, nil, func(t *testing.T, r *mcp.CallToolResult) {
			if got := texts(r); len(got) != 1 || got[0] != mcptest.UnicodeText {
				t.Errorf("texts %q", got)
			}
		}},
		{mcptest.ToolEcho, map[string]any{"message": "héllo", "mode": "reverse", "repeat": 2,
			"options": map[string]any{"prefix": "> ", "tags": []string{"x"}}, "numbers": []float64{1.5}},
			func(t *testing.T, r *mcp.CallToolResult) {
				got := texts(r)
				if r.IsError || len(got) != 2 || got[0] != "> olléh\n> olléh" || !strings.HasPrefix(got[1], `received: {"message":"héllo","mode":"reverse","repeat":2`) {
					t.Errorf("isError %v texts %q", r.IsError, got)
				}
			}},
		{mcptest.ToolEcho, map[string]any{"message": "x", "repeat": 9}, func(t *testing.T, r *mcp.CallToolResult) {
			if !r.IsError || !strings.Contains(texts(r)[0], "repeat") {
				t.Errorf("repeat 9 should fail the schema: isError %v %q", r.IsError, texts(r))
			}
		}},
		{mcptest.ToolEcho, map[string]any{"mode": "upper"}, func(t *testing.T, r *mcp.CallToolResult) {
			if !r.IsError || !strings.Contains(texts(r)[0], "message") {
				t.Errorf("a missing required message should fail: isError %v %q", r.IsError, texts(r))
			}
		}},
		{mcptest.ToolEcho, map[string]any{"message": "x", "mode": "shout"}, func(t *testing.T, r *mcp.CallToolResult) {
			if !r.IsError {
				t.Errorf("mode outside the enum should fail: %q", texts(r))
			}
		}},
		{mcptest.ToolFail, map[string]any{"mode": "tool"}, func(t *testing.T, r *mcp.CallToolResult) {
			if !r.IsError || texts(r)[0] != mcptest.FailToolText {
				t.Errorf("isError %v texts %q", r.IsError, texts(r))
			}
		}},
		{mcptest.ToolSlow, map[string]any{"ms": 1}, func(t *testing.T, r *mcp.CallToolResult) {
			if texts(r)[0] != "slept 1 ms" {
				t.Errorf("texts %q", texts(r))
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) { tt.check(t, call(t, cs, tt.tool, tt.args)) })
	}

	// fail in protocol mode is a JSON-RPC error, not a result.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: mcptest.ToolFail})
	if err == nil || !strings.Contains(err.Error(), mcptest.FailProtocolText) {
		t.Errorf("fail (protocol): err = %v", err)
	}
}

func TestInMemory(t *testing.T) {
	cs := connectInMemory(t, nil)
	ctx := context.Background()
	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range lt.Tools {
		names = append(names, tool.Name)
		if tool.Name == mcptest.ToolStructured && tool.OutputSchema == nil {
			t.Error("structured has no output schema")
		}
		if tool.Name == mcptest.ToolEcho {
			b, _ := json.Marshal(tool.InputSchema)
			for _, want := range []string{`"required":["message"]`, `"enum":["plain","upper","reverse"]`, `"maximum":5`, `"options":{`, `"numbers":{`} {
				if !strings.Contains(string(b), want) {
					t.Errorf("echo input schema lacks %s: %s", want, b)
				}
			}
		}
	}
	want := append([]string(nil), mcptest.ToolNames...)
	if !sameSet(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}
	checkTools(t, cs)

	// The resource the link points to can be read.
	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: mcptest.ResourceTextURI})
	if err != nil || rr.Contents[0].Text != mcptest.ResourceTextBody {
		t.Errorf("reading %s: %v %v", mcptest.ResourceTextURI, rr, err)
	}
	// Exit mode is refused in-process.
	if r := call(t, cs, mcptest.ToolFail, map[string]any{"mode": "exit"}); !r.IsError || !strings.Contains(texts(r)[0], "disabled") {
		t.Errorf("fail exit in-process: %v %q", r.IsError, texts(r))
	}
}

func sameSet(a, b []string) bool {
	m := map[string]int{}
	for _, s := range a {
		m[s]++
	}
	for _, s := range b {
		m[s]--
	}
	for _, n := range m {
		if n != 0 {
			return false
		}
	}
	return len(a) == len(b)
}

// slow reports progress and stops as soon as the call is cancelled.
func TestSlowCancel(t *testing.T) {
	progress := make(chan struct{}, 100)
	cs := connectInMemory(t, &mcp.ClientOptions{
		ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {
			select {
			case progress <- struct{}{}:
			default:
			}
		},
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		params := &mcp.CallToolParams{Name: mcptest.ToolSlow, Arguments: map[string]any{"ms": mcptest.MaxSlowMillis}}
		params.SetProgressToken("p1")
		_, err := cs.CallTool(ctx, params)
		done <- err
	}()
	select {
	case <-progress:
	case <-time.After(30 * time.Second):
		t.Fatal("no progress notification from slow")
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled call returned %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("cancelled slow call did not return")
	}
	// The session still works afterwards.
	if got := texts(call(t, cs, mcptest.ToolText, nil)); got[0] != mcptest.OneText {
		t.Errorf("after cancel: %q", got)
	}
}

func TestMedia(t *testing.T) {
	img, err := png.Decode(bytes.NewReader(mcptest.SmallPNG()))
	if err != nil || img.Bounds().Dx() != mcptest.SmallImageSide {
		t.Errorf("small PNG: %v %v", err, img)
	}
	large := mcptest.LargePNG()
	if len(large) < 3<<20 || len(large) > 4<<20 {
		t.Errorf("large PNG is %d bytes, want about 3 MiB", len(large))
	}
	img, err = png.Decode(bytes.NewReader(large))
	if err != nil || img.Bounds().Dx() != mcptest.LargeImageSide {
		t.Errorf("large PNG: %v", err)
	}
	wav := mcptest.WAV()
	if string(wav[:4]) != "RIFF" || string(wav[8:16]) != "WAVEfmt " || len(wav) != 44+2*mcptest.AudioSampleRate/10 {
		t.Errorf("WAV header %q, %d bytes", wav[:16], len(wav))
	}
	text := mcptest.LargeText(mcptest.LargeTextBytes)
	if len(text) != mcptest.LargeTextBytes || !strings.HasPrefix(text, "line 0000001 the quick") || text != mcptest.LargeText(mcptest.LargeTextBytes) {
		t.Errorf("large text: %d bytes, starts %q", len(text), text[:40])
	}
}

func TestStreamableHTTP(t *testing.T) {
	ts := mcptest.ServeHTTP(t)
	cs := connect(t, &mcp.StreamableClientTransport{Endpoint: ts.URL, MaxRetries: -1}, nil)
	checkTools(t, cs)
	r := call(t, cs, mcptest.ToolLargeText, nil)
	if got := texts(r); len(got) != 1 || len(got[0]) != mcptest.LargeTextBytes {
		t.Errorf("large_text over HTTP: %d texts", len(got))
	}
}

// The command over stdio, driven by the SDK's CommandTransport: the huge
// payloads arrive whole, and fail mode exit kills the server mid-call.
func TestCommandStdio(t *testing.T) {
	bin := mcptest.Command(t)
	cmd := exec.Command(bin)
	cs := connect(t, &mcp.CommandTransport{Command: cmd}, nil)
	checkTools(t, cs)

	r := call(t, cs, mcptest.ToolLargeImage, nil)
	if img, ok := r.Content[0].(*mcp.ImageContent); !ok || !bytes.Equal(img.Data, mcptest.LargePNG()) {
		t.Errorf("large_image over stdio: %v", r.Content)
	}
	r = call(t, cs, mcptest.ToolLargeText, nil)
	if got := texts(r); len(got) != 1 || got[0] != mcptest.LargeText(mcptest.LargeTextBytes) {
		t.Errorf("large_text over stdio: %d texts", len(got))
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: mcptest.ToolFail, Arguments: map[string]any{"mode": "exit"}}); err == nil {
		t.Error("fail exit: the call succeeded")
	}
	if err := cs.Wait(); err == nil && cmd.ProcessState == nil {
		t.Error("session did not end with the server")
	}
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 3 {
		t.Errorf("server exit state %v, want status 3", cmd.ProcessState)
	}
}

// The command over streamable HTTP: --http 127.0.0.1:0 announces its URL,
// serves, and exits 0 on SIGTERM.
func TestCommandHTTP(t *testing.T) {
	bin := mcptest.Command(t)
	cmd := exec.Command(bin, "--http", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	childproc.SetGroup(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	t.Cleanup(func() {
		_ = testkit.KillGroup(cmd.Process.Pid, 5*time.Second)
	})
	br := bufio.NewReader(stderr)
	line, err := br.ReadString('\n')
	if err != nil {
		t.Fatalf("reading the announcement: %v", err)
	}
	i := strings.Index(line, "http://")
	if i < 0 {
		t.Fatalf("announcement without a URL: %q", line)
	}
	url := strings.TrimSpace(line[i:])
	go func() { _, _ = br.WriteTo(new(bytes.Buffer)); exited <- cmd.Wait() }()

	cs := connect(t, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, nil)
	if got := texts(call(t, cs, mcptest.ToolText, nil)); got[0] != mcptest.OneText {
		t.Errorf("text over HTTP: %q", got)
	}
	cs.Close()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("exit after SIGTERM: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no exit after SIGTERM")
	}
}

func TestCommandBadArgs(t *testing.T) {
	bin := mcptest.Command(t)
	for _, args := range [][]string{{"extra"}, {"--http", "256.0.0.1:bad"}, {"--nope"}} {
		out, err := exec.Command(bin, args...).CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() == 0 || len(out) == 0 {
			t.Errorf("%v: err %v, output %q; want a non-zero exit with a message", args, err, out)
		}
	}
}
