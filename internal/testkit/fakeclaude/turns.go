package fakeclaude

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/ccproxy/ccproxy/internal/testkit/mcptest"
)

// canUseTool is a can_use_tool request for tool with input {"command": command}.
func canUseTool(tool, command, toolUseID string) map[string]any {
	return map[string]any{"subtype": "can_use_tool", "tool_name": tool, "input": map[string]any{"command": command},
		"tool_use_id": toolUseID, "display_name": tool, "permission_suggestions": []any{}}
}

// turn plays one user turn: system/init (and the user message again with
// FAKE_REPLAY), then what the first word of the text picks (the package
// documentation lists the words).
func (f *fake) turn(t fakeTurn) {
	text := t.text
	fields := strings.Fields(text)
	word := ""
	if len(fields) > 0 {
		word = fields[0]
	}
	arg := func(i, def int) int {
		if len(fields) > i {
			if n, err := strconv.Atoi(fields[i]); err == nil {
				return n
			}
		}
		return def
	}
	f.initEvent()
	if f.replay {
		// Like the real CLI: the user message, echoed as its turn starts.
		f.emit(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": t.content},
			"session_id": f.sessionID, "parent_tool_use_id": nil, "isReplay": true})
	}
	switch word {
	case "flood":
		n, size := arg(1, 100), arg(2, 100)
		pad := strings.Repeat("x", size)
		for i := 1; i <= n; i++ {
			f.emit(map[string]any{"type": "assistant", "message": map[string]any{"role": "assistant",
				"content": []any{map[string]any{"type": "text", "text": pad}}}, "n": i, "session_id": f.sessionID})
		}
		f.result("success", fmt.Sprintf("flooded %d", n))
	case "ask":
		resp := f.ask(canUseTool("Bash", "ls", "toolu_fake_1"), nil)
		b, _ := json.Marshal(resp)
		f.say("answer: " + string(b))
		f.result("success", "done")
	case "questions":
		q := func(text string, labels ...string) map[string]any {
			var opts []any
			for _, l := range labels {
				opts = append(opts, map[string]any{"label": l, "description": l + "!"})
			}
			return map[string]any{"question": text, "header": text[:4], "options": opts, "multiSelect": false}
		}
		resp := f.ask(map[string]any{"subtype": "can_use_tool", "tool_name": "AskUserQuestion", "tool_use_id": "toolu_fake_q",
			"input": map[string]any{"questions": []any{q("Which colour?", "Red", "Blue"), q("Which size?", "S", "M")}}}, nil)
		b, _ := json.Marshal(resp["response"])
		f.say("permission answer: " + string(b))
		f.result("success", "done")
	case "perm":
		tool := "Bash"
		if len(fields) > 1 {
			tool = fields[1]
		}
		resp := f.ask(canUseTool(tool, "ls", "toolu_fake_1"), nil)
		b, _ := json.Marshal(resp["response"])
		f.say("permission answer: " + string(b))
		f.result("success", "done")
	case "permtwice":
		ask := func(cmd string) map[string]any {
			return f.ask(map[string]any{"subtype": "can_use_tool", "tool_name": "Bash", "input": map[string]any{"command": cmd}, "tool_use_id": "toolu_" + cmd}, nil)
		}
		// The answer to the second request is reported as soon as it
		// arrives ("permission second answered: ..."), so that a test can
		// wait for it before it answers the first.
		second := make(chan map[string]any, 1)
		first := f.ask(map[string]any{"subtype": "can_use_tool", "tool_name": "Bash", "input": map[string]any{"command": "first"}, "tool_use_id": "toolu_first"},
			func(string) {
				go func() { // ends when the second request is answered or answerWait passes
					r := ask("second")
					b, _ := json.Marshal(r["response"])
					f.say("permission second answered: " + string(b))
					second <- r
				}()
			})
		b1, _ := json.Marshal(first["response"])
		b2, _ := json.Marshal((<-second)["response"])
		f.say("permission answer: first " + string(b1) + " second " + string(b2))
		f.result("success", "done")
	case "permcancel", "cancel":
		f.ask(map[string]any{"subtype": "can_use_tool", "tool_name": "Bash", "input": map[string]any{"command": "rm"}, "tool_use_id": "toolu_fake_2"},
			f.withdraw)
		f.say("permission withdrawn")
		f.result("success", "done")
	case "ctl":
		sub := "hook_callback"
		if len(fields) > 1 {
			sub = fields[1]
		}
		resp := f.ask(map[string]any{"subtype": sub, "callback_id": "cb1"}, nil)
		f.say(fmt.Sprintf("control answer: %v / %v", resp["subtype"], resp["error"]))
		f.result("success", "done")
	case "hang":
		ch := make(chan struct{})
		f.mu.Lock()
		if f.stopped || f.early {
			f.early = false
			close(ch)
		} else {
			f.interrup = ch
		}
		f.mu.Unlock()
		f.say("working on it")
		select {
		case <-ch:
			f.result("error_during_execution", "")
		case <-time.After(hangWait):
			f.result("success", "gave up waiting for an interrupt")
		}
	case "noise":
		f.writeLine([]byte("this is not json"))
		f.say("after the noise")
		f.result("success", "done")
	case "big":
		f.say(strings.Repeat("b", arg(1, 1<<20)))
		f.result("success", "done")
	case "stderr":
		for i := 1; i <= arg(1, 10); i++ {
			fmt.Fprintf(os.Stderr, "stderr line %d\n", i)
		}
		f.say("wrote to stderr")
		f.result("success", "done")
	case "exit":
		fmt.Fprintln(os.Stderr, "bye")
		fmt.Fprintln(os.Stderr, "fatal: the fake was told to exit")
		os.Exit(arg(1, 1))
	case "bg":
		// Like a background task that ends after the turn: the fake then
		// starts a turn by itself (task_notification, then system/init …
		// result, no user message). With "hold" that turn runs until the
		// next user message arrives on stdin, which then waits behind it.
		select {
		case <-f.userIn: // this turn's own message
		default:
		}
		f.say("started a background task")
		f.result("success", "started")
		f.emit(map[string]any{"type": "system", "subtype": "task_notification", "task_id": "fake-task", "status": "completed",
			"summary": "Background command completed (exit code 0)", "session_id": f.sessionID})
		f.initEvent()
		f.say("background task done")
		if len(fields) > 1 && fields[1] == "hold" {
			select {
			case <-f.userIn:
			case <-time.After(hangWait):
			}
		}
		f.result("success", "noticed the background task")
	case "commands": // commands NAME...: a system/commands_changed with those commands
		list := []any{}
		for _, name := range fields[1:] {
			list = append(list, map[string]any{"name": name, "description": "the " + name + " command", "argumentHint": ""})
		}
		f.emit(map[string]any{"type": "system", "subtype": "commands_changed", "commands": list, "session_id": f.sessionID})
		f.result("success", "commands changed")
	case "pid":
		f.say(fmt.Sprintf("pid %d", os.Getpid()))
		f.result("success", "done")
	case "child":
		cmd := exec.Command("sleep", "300")
		if err := cmd.Start(); err != nil {
			f.say("child failed: " + err.Error())
		} else {
			f.say(fmt.Sprintf("child %d", cmd.Process.Pid))
		}
		f.result("success", "done")
	case "mcpfail": // mcpfail SERVER TEXT...: a call of SERVER's tool q that fails with TEXT
		srv, msg := "testmcp", "failed"
		if len(fields) > 2 {
			srv, msg = fields[1], strings.Join(fields[2:], " ")
		}
		f.emit(map[string]any{"type": "assistant", "message": map[string]any{"role": "assistant", "content": []any{
			map[string]any{"type": "tool_use", "id": "toolu_fail", "name": "mcp__" + srv + "__q", "input": map[string]any{}}}},
			"session_id": f.sessionID})
		f.emit(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "tool_result", "tool_use_id": "toolu_fail", "is_error": true, "content": msg}}},
			"session_id": f.sessionID})
		f.result("success", "done")
	case "image":
		png := base64.StdEncoding.EncodeToString(mcptest.SmallPNG())
		f.emit(map[string]any{"type": "assistant", "message": map[string]any{"role": "assistant", "content": []any{
			map[string]any{"type": "tool_use", "id": "toolu_img", "name": "mcp__testmcp__image", "input": map[string]any{}}}},
			"session_id": f.sessionID})
		f.emit(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "tool_result", "tool_use_id": "toolu_img", "content": []any{
				map[string]any{"type": "text", "text": "a picture"},
				map[string]any{"type": "image", "source": map[string]any{"type": "base64", "media_type": "image/png", "data": png}}}}}},
			"session_id": f.sessionID})
		f.result("success", "done")
	default:
		f.say("echo: " + text)
		f.result("success", "echo: "+text)
	}
}
