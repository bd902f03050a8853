package replay

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/ccproxy/ccproxy/internal/childproc"
	"github.com/ccproxy/ccproxy/internal/testkit"
	"github.com/ccproxy/ccproxy/internal/testkit/fakeapi"
	"github.com/ccproxy/ccproxy/stream"
)

// signature describes an event by what a host looks at after an interrupt.
func signature(raw string) string {
	ev := gjson.Parse(raw)
	switch typ := ev.Get("type").Str; typ {
	case "user":
		b := ev.Get("message.content.0")
		if b.Get("type").Str == "tool_result" {
			return fmt.Sprintf("user tool_result is_error=%v content=%q tool_use_result=%q meta=%s", b.Get("is_error").Bool(),
				b.Get("content").Str, ev.Get("tool_use_result").Str, ev.Get("tool_result_meta.0.non_execution_kind").Str)
		}
		return "user text " + b.Get("text").Str
	case "result":
		return fmt.Sprintf("result %s is_error=%v terminal=%s stop=%s denials=%d has_result=%v", ev.Get("subtype").Str,
			ev.Get("is_error").Bool(), ev.Get("terminal_reason").Str, ev.Get("stop_reason").Raw,
			ev.Get("permission_denials.#").Int(), ev.Get("result").Exists())
	case "control_response":
		return "control_response " + ev.Get("response.subtype").Str + " " + ev.Get("response.response").Raw
	default:
		return typ
	}
}

// The replayer ends a turn interrupted at a permission prompt exactly as
// the real CLI does (same events, same order, same texts).
func TestInterruptAtPromptMatchesRealCLI(t *testing.T) {
	claude := testkit.Claude(t)
	everything := testkit.NodeBin(t, "mcp-server-everything")
	fake := fakeapi.Start(t, fakeapi.First(
		fakeapi.OnText("ECHO", fakeapi.CallTool("mcp__everything__echo", map[string]any{"message": "x"})),
		fakeapi.OnToolResults(fakeapi.Summarize)))
	tmp := t.TempDir()
	home := filepath.Join(tmp, "home")
	if err := os.MkdirAll(filepath.Join(home, "tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(tmp, "mcp.json")
	if err := os.WriteFile(cfg, []byte(`{"mcpServers":{"everything":{"type":"stdio","command":"`+everything+`","args":[]}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(claude, "-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose",
		"--permission-prompt-tool", "stdio", "--mcp-config", cfg, "--strict-mcp-config")
	cmd.Dir = tmp
	cmd.Env = fake.Env(home)
	cmd.WaitDelay = 5 * time.Second
	childproc.SetGroup(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		if err := testkit.KillGroup(cmd.Process.Pid, 10*time.Second); err != nil {
			t.Error(err)
		}
		cmd.Wait()
	})
	lines := testkit.ReadLines(t, stdout, 256)
	writeLine := func(line []byte, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := stdin.Write(line); err != nil {
			t.Fatalf("writing the CLI's stdin: %v", err)
		}
	}
	writeLine(stream.UserTurn("ECHO please", nil))
	var real []string
	prompted := false
	deadline := time.After(2 * time.Minute)
	for done := false; !done; {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("the CLI's stdout ended")
			}
			typ := gjson.Get(l, "type").Str
			if prompted {
				real = append(real, signature(l))
			}
			if typ == "control_request" && gjson.Get(l, "request.subtype").Str == "can_use_tool" {
				prompted = true
				writeLine(stream.ControlRequest("int1", "interrupt", nil))
			}
			done = typ == "result"
		case <-deadline:
			t.Fatal("the real CLI did not finish the turn")
		}
	}

	h := start(t, demo(t), Options{})
	skipTo(h, 2)
	h.user("echo")
	h.until("can_use_tool", isType("control_request", ""))
	h.control("int1", "interrupt", nil)
	var replayed []string
	for _, e := range h.turn() {
		replayed = append(replayed, signature(e.raw))
	}
	if strings.Join(real, "\n") != strings.Join(replayed, "\n") {
		t.Errorf("after an interrupt at a prompt\nthe real CLI printed:\n%s\n\nthe replayer:\n%s", strings.Join(real, "\n"), strings.Join(replayed, "\n"))
	}
}
