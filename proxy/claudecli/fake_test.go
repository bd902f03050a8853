package claudecli

// The test binary doubles as a small fake Claude Code CLI (like os/exec's
// tests and go-sdk's mcp/cmd_test.go): with CLAUDECLI_FAKE=1 in its
// environment, TestMain runs fakeClaude instead of the tests. A shell
// script made by TestMain sets that variable and execs the test binary, so
// the client runs it like any claude executable. TestMain also points
// $CCPROXY_CLAUDE at it, for the Example.
//
// The fake speaks the stream-json protocol of Claude Code: it answers the
// control requests initialize and mcp_status, never answers "slow", and
// rejects other subtypes like the real CLI. A user turn's first word picks
// what it does (see turn).

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ccproxy/ccproxy/internal/testkit"
)

var fakeClaudePath, oldClaudePath string

func TestMain(m *testing.M) {
	if os.Getenv("CLAUDECLI_FAKE") == "1" {
		os.Exit(fakeClaude(os.Args[1:]))
	}
	dir, err := os.MkdirTemp("", "claudecli-fake")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fakeClaudePath, err = testkit.SelfCommand(dir, "claude", "CLAUDECLI_FAKE=1")
	if err == nil {
		oldClaudePath, err = testkit.SelfCommand(dir, "claude-old", "CLAUDECLI_FAKE=1", "FAKE_VERSION=2.0.14")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "making the fake claude:", err)
		os.Exit(1)
	}
	os.Setenv(ClaudeEnv, fakeClaudePath)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type fakeCLI struct {
	out     *bufio.Writer
	session string
	asking  string // the id of claude's own control request awaiting an answer
}

func fakeClaude(args []string) int {
	if len(args) == 1 && args[0] == "--version" {
		v := os.Getenv("FAKE_VERSION")
		if v == "" {
			v = MinClaudeVersion
		}
		fmt.Printf("%s (Claude Code)\n", v)
		return 0
	}
	if os.Getenv("FAKE_IGNORE_TERM") == "1" {
		signal.Ignore(syscall.SIGTERM)
	}
	f := &fakeCLI{out: bufio.NewWriter(os.Stdout), session: "fake-session"}
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	for {
		line, err := in.ReadBytes('\n')
		if len(strings.TrimSpace(string(line))) > 0 {
			var msg map[string]any
			if jerr := json.Unmarshal(line, &msg); jerr != nil {
				fmt.Fprintf(os.Stderr, "Error parsing streaming input line: %v\n", jerr)
				return 1 // like the real CLI: one malformed line kills it
			}
			f.input(msg)
			f.out.Flush()
		}
		if err != nil {
			break
		}
	}
	if os.Getenv("FAKE_IGNORE_EOF") == "1" {
		for {
			time.Sleep(time.Hour) // until a signal ends it
		}
	}
	return 0
}

func (f *fakeCLI) emit(v any) {
	b, _ := json.Marshal(v)
	f.out.Write(append(b, '\n'))
}

func (f *fakeCLI) say(text string) {
	f.emit(map[string]any{"type": "assistant", "session_id": f.session,
		"message": map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "text", "text": text}}}})
}

func (f *fakeCLI) result() {
	f.emit(map[string]any{"type": "result", "subtype": "success", "is_error": false, "session_id": f.session})
}

func (f *fakeCLI) input(msg map[string]any) {
	switch msg["type"] {
	case "control_request":
		id, _ := msg["request_id"].(string)
		req, _ := msg["request"].(map[string]any)
		switch req["subtype"] {
		case "initialize":
			f.emit(map[string]any{"type": "control_response", "response": map[string]any{"subtype": "success", "request_id": id,
				"response": map[string]any{"commands": []any{}}}})
		case "mcp_status":
			f.emit(map[string]any{"type": "control_response", "response": map[string]any{"subtype": "success", "request_id": id,
				"response": map[string]any{"mcpServers": []any{}}}})
		case "slow":
			// never answered
		default:
			f.emit(map[string]any{"type": "control_response", "response": map[string]any{"subtype": "error", "request_id": id,
				"error": fmt.Sprintf("Unsupported control request subtype: %v", req["subtype"])}})
		}
	case "control_response":
		resp, _ := msg["response"].(map[string]any)
		if id, _ := resp["request_id"].(string); id != "" && id == f.asking {
			f.asking = ""
			b, _ := json.Marshal(resp)
			f.say("answer: " + string(b))
			f.result()
		}
	case "user":
		m, _ := msg["message"].(map[string]any)
		text, _ := m["content"].(string)
		f.turn(text)
	}
}

// turn plays a user turn:
//
//	ask      claude's own can_use_tool request; the answer is echoed, then the result
//	cancel   a can_use_tool request, withdrawn at once by control_cancel_request
//	exit N   "bye" on stderr, exit with status N
//	TEXT     system/init, "echo: TEXT", result
func (f *fakeCLI) turn(text string) {
	f.emit(map[string]any{"type": "system", "subtype": "init", "session_id": f.session, "model": "fake"})
	word, rest, _ := strings.Cut(text, " ")
	switch word {
	case "ask", "cancel":
		f.asking = "fake-req-1"
		f.emit(map[string]any{"type": "control_request", "request_id": f.asking,
			"request": map[string]any{"subtype": "can_use_tool", "tool_name": "Bash", "input": map[string]any{"command": "ls"}}})
		if word == "cancel" {
			f.emit(map[string]any{"type": "control_cancel_request", "request_id": f.asking})
			f.asking = ""
			f.result()
		}
	case "exit":
		f.out.Flush()
		fmt.Fprintln(os.Stderr, "bye")
		n, _ := strconv.Atoi(rest)
		os.Exit(n)
	default:
		f.say("echo: " + text)
		f.result()
	}
}
