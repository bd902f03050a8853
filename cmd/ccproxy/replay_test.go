package main

import (
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/ccproxy/ccproxy/internal/replay"
	"github.com/ccproxy/ccproxy/internal/testkit"
	"github.com/ccproxy/ccproxy/stream"
)

// proc is `ccproxy replay-claude` run as a child process, as the proxy runs
// claude.
type proc struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  <-chan string
	stderr *testkit.SyncBuffer
	norm   *stream.Normalizer
}

// The argv the proxy gives claude, after `replay-claude --speed 0`.
var proxyArgs = []string{"-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose",
	"--include-partial-messages", "--permission-prompt-tool", "stdio", "--replay-user-messages",
	"--mcp-config", "/nonexistent/mcp.json", "--strict-mcp-config", "--model", "claude-test-model", "--permission-mode", "plan",
	"--allowedTools", "mcp__everything__get-tiny-image", "mcp__testmcp"}

func startProc(t *testing.T, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(testkit.CCProxyBinary(t), append([]string{"replay-claude"}, args...)...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &proc{t: t, cmd: cmd, stdin: stdin, stderr: &testkit.SyncBuffer{},
		norm: stream.NewNormalizer(stream.Options{Attachments: stream.AttachInline})}
	cmd.Stderr = p.stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	p.lines = testkit.ReadLines(t, stdout, 1024) // stopped (and stdout closed) first at cleanup
	return p
}

func (p *proc) write(line []byte, err error) {
	p.t.Helper()
	if err != nil {
		p.t.Fatal(err)
	}
	if _, err := p.stdin.Write(line); err != nil {
		p.t.Fatalf("writing stdin: %v", err)
	}
}

// next returns the next stdout line, normalized as the proxy will.
func (p *proc) next() gjson.Result {
	p.t.Helper()
	select {
	case l, ok := <-p.lines:
		if !ok {
			p.t.Fatal("stdout ended")
		}
		ev := p.norm.Normalize([]byte(l))
		if ev.Type == stream.TypeCCProxy {
			p.t.Fatalf("not an event: %.200s", l)
		}
		return gjson.ParseBytes(append([]byte(nil), ev.JSON...))
	case <-time.After(30 * time.Second):
		p.t.Fatal("no stdout line within 30 s")
	}
	return gjson.Result{}
}

func (p *proc) untilType(typ string) []gjson.Result {
	p.t.Helper()
	var evs []gjson.Result
	for {
		e := p.next()
		evs = append(evs, e)
		if e.Get("type").Str == typ {
			return evs
		}
	}
}

// The built command, driven like the proxy drives claude: initialize, the
// demo's turns (an image attachment, a permission prompt), then stdin
// closes and it exits 0.
func TestReplayClaudeProcess(t *testing.T) {
	p := startProc(t, append([]string{"--speed", "0"}, proxyArgs...)...)
	p.write(stream.ControlRequest("req_1", "initialize", map[string]any{"hooks": nil}))
	if r := p.next(); r.Get("response.request_id").Str != "req_1" || r.Get("response.subtype").Str != "success" {
		t.Fatalf("initialize: %.300s", r.Raw)
	}
	p.write(stream.UserTurn("hello", nil))
	evs := p.untilType("result")
	for _, e := range evs {
		if e.Get("subtype").Str == "init" && (e.Get("model").Str != "claude-test-model" || e.Get("permissionMode").Str != "plan") {
			t.Errorf("init model %q, mode %q, want the --model and --permission-mode", e.Get("model").Str, e.Get("permissionMode").Str)
		}
	}
	if n := len(evs); n < 50 {
		t.Errorf("first turn: %d events, want a streamed reply", n)
	}

	p.write(stream.UserTurn("image", nil))
	images := 0
	for _, e := range p.untilType("result") {
		e.Get("message.content.#.attachments").ForEach(func(_, a gjson.Result) bool {
			a.ForEach(func(_, x gjson.Result) bool {
				if x.Get("kind").Str == "image" {
					images++
				}
				return true
			})
			return true
		})
	}
	if images != 1 {
		t.Errorf("%d image attachments in turn two, want 1", images)
	}

	p.write(stream.UserTurn("echo", nil))
	req := p.untilType("control_request")
	id := req[len(req)-1].Get("request_id").Str
	p.write(stream.ControlSuccess(id, map[string]any{"behavior": "allow", "updatedInput": map[string]any{"message": "hi"}}))
	res := p.untilType("result")
	if last := res[len(res)-1]; last.Get("subtype").Str != "success" {
		t.Errorf("turn three: %.300s", last.Raw)
	}

	p.stdin.Close()
	if err := p.cmd.Wait(); err != nil {
		t.Errorf("exit after EOF: %v (stderr %q)", err, p.stderr.String())
	}
}

// A malformed line kills it with status 1 and the reason on stderr.
func TestReplayClaudeMalformed(t *testing.T) {
	p := startProc(t, append([]string{"--speed", "0"}, proxyArgs...)...)
	p.write([]byte("this is not json\n"), nil)
	err := p.cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("exit: %v, want status 1", err)
	}
	if !strings.Contains(p.stderr.String(), "stdin line 1 is not a JSON object") {
		t.Errorf("stderr %q", p.stderr.String())
	}
}

func TestReplayClaudeFlags(t *testing.T) {
	out, _, code := runCmd(t, "", "replay-claude", "-p", "--version")
	if code != 0 || out != replay.VersionLine+"\n" {
		t.Errorf("--version: %q, exit %d", out, code)
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--speed", "-1"}, 2, `--speed "-1": want a number ≥ 0`},
		{[]string{"--speed", "fast"}, 2, `--speed "fast"`},
		{[]string{"--speed"}, 2, "--speed needs a value"},
		{[]string{"--input-format", "text"}, 2, "only stream-json is supported"},
		{[]string{"--replay", "/nonexistent/x.jsonl"}, 1, "no such file"},
	} {
		_, errOut, code := runCmd(t, "", append([]string{"replay-claude"}, c.args...)...)
		if code != c.code || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.args, code, errOut, c.code, c.want)
		}
	}
}

// --replay FILE (gzip-compressed too) plays that transcript instead.
func TestReplayClaudeFile(t *testing.T) {
	turn, _ := stream.UserTurn("go", nil)
	for _, f := range []string{"../../testdata/transcripts/streamjson_multiturn.jsonl", "../../testdata/transcripts/captured/testmcp_large.jsonl.gz"} {
		out, errOut, code := runCmd(t, string(turn), "replay-claude", "--replay="+f, "--speed", "0",
			"--input-format", "stream-json", "--output-format", "stream-json", "--verbose")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", f, code, errOut)
		}
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		first, last := gjson.Get(lines[0], "subtype").Str, gjson.Get(lines[len(lines)-1], "type").Str
		if first != "init" || last != "result" {
			t.Errorf("%s: from %s to %s", f, first, last)
		}
	}
}
