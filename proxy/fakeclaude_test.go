package proxy

// The test binary doubles as a fake Claude Code CLI (like os/exec's tests
// and go-sdk's mcp/cmd_test.go): with CCPROXY_FAKE_CLAUDE=1 in its
// environment, TestMain runs fakeClaude instead of the tests. A small shell
// script made by TestMain sets that variable and execs the test binary, so
// the proxy runs it like any claude executable (--version included).
//
// The fake speaks the stream-json protocol of FACTS §5–§6: it answers
// initialize, interrupt, mcp_status and mcp_set_servers (except those
// FAKE_IGNORE_CONTROL names), rejects other control requests like the real
// CLI, and plays each user turn according to the turn's first word (see
// fakeTurn).

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ccproxy/ccproxy/internal/testkit"
	"github.com/ccproxy/ccproxy/internal/testkit/mcptest"
)

// fakeClaudePath is the script that runs the fake (set by TestMain);
// oldClaudePath runs a fake reporting a version that is too old.
var fakeClaudePath, oldClaudePath string

func TestMain(m *testing.M) {
	if os.Getenv("CCPROXY_FAKE_CLAUDE") == "1" {
		os.Exit(fakeClaude(os.Args[1:]))
	}
	dir, err := os.MkdirTemp("", "ccproxy-fakeclaude")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fakeClaudePath, err = testkit.SelfCommand(dir, "claude", "CCPROXY_FAKE_CLAUDE=1")
	if err == nil {
		oldClaudePath, err = testkit.SelfCommand(dir, "claude-old", "CCPROXY_FAKE_CLAUDE=1", "FAKE_VERSION=2.0.14")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "making the fake claude:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type fake struct {
	outMu     sync.Mutex
	sessionID string

	mu       sync.Mutex
	waiters  map[string]chan map[string]any // control responses awaited by id
	servers  map[string]bool
	interrup chan struct{} // closed by an interrupt while a turn hangs
	turns    chan fakeTurn
	replay   bool          // --replay-user-messages: echo each user turn as it starts
	userIn   chan struct{} // a user message arrived on stdin (capacity 1)
	ctlSeq   int
	ignored  int // control requests of FAKE_IGNORE_CONTROL's subtype seen
}

func fakeClaude(args []string) int {
	if len(args) == 1 && args[0] == "--version" {
		v := os.Getenv("FAKE_VERSION")
		if v == "" {
			v = "2.1.329"
		}
		fmt.Printf("%s (Claude Code)\n", v)
		return 0
	}
	if f := os.Getenv("FAKE_ARGS_FILE"); f != "" {
		b, _ := json.Marshal(args)
		os.WriteFile(f, b, 0o644)
	}
	if len(args) >= 3 && args[0] == "mcp" && (args[1] == "login" || args[1] == "logout") {
		return fakeMCPAuth(args[1], args[2])
	}
	if os.Getenv("FAKE_IGNORE_TERM") == "1" {
		signal.Ignore(syscall.SIGTERM)
	}
	if os.Getenv("FAKE_EXIT_ON_USR1") == "1" {
		// Stdin EOF does not end the fake: SIGUSR1 does, with status 0.
		usr1 := make(chan os.Signal, 1)
		signal.Notify(usr1, sigUSR1)
		go func() { <-usr1; os.Exit(0) }()
	}
	f := &fake{sessionID: "fake-session-1", waiters: map[string]chan map[string]any{}, servers: map[string]bool{}, turns: make(chan fakeTurn, 4096), userIn: make(chan struct{}, 1)}
	for i, a := range args {
		switch a {
		case "--replay-user-messages":
			// The real CLI echoes each user turn as it starts; the fake
			// does with FAKE_REPLAY=1 only, so that the event counts the
			// older tests expect stay as they are.
			f.replay = os.Getenv("FAKE_REPLAY") == "1"
		case "--resume":
			if i+1 < len(args) {
				f.sessionID = args[i+1]
			}
		case "--mcp-config":
			if i+1 < len(args) {
				var cfg struct {
					MCPServers map[string]any `json:"mcpServers"`
				}
				b, _ := os.ReadFile(args[i+1])
				json.Unmarshal(b, &cfg)
				for name := range cfg.MCPServers {
					f.servers[name] = true
				}
			}
		}
	}
	if os.Getenv("FAKE_STARTUP_STDERR") != "" {
		fmt.Fprintln(os.Stderr, os.Getenv("FAKE_STARTUP_STDERR"))
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for t := range f.turns {
			f.turn(t)
		}
	}()
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
		}
		if err != nil {
			break
		}
	}
	close(f.turns)
	<-done
	if os.Getenv("FAKE_IGNORE_EOF") == "1" || os.Getenv("FAKE_EXIT_ON_USR1") == "1" {
		select {} // hang until killed
	}
	return 0
}

func (f *fake) emit(v any) {
	b, _ := json.Marshal(v)
	f.outMu.Lock()
	os.Stdout.Write(append(b, '\n'))
	f.outMu.Unlock()
}

func (f *fake) input(msg map[string]any) {
	switch msg["type"] {
	case "control_request":
		id, _ := msg["request_id"].(string)
		req, _ := msg["request"].(map[string]any)
		f.control(id, req)
	case "control_response":
		resp, _ := msg["response"].(map[string]any)
		id, _ := resp["request_id"].(string)
		f.mu.Lock()
		ch := f.waiters[id]
		delete(f.waiters, id)
		f.mu.Unlock()
		if ch != nil {
			ch <- resp
		}
	case "user":
		m, _ := msg["message"].(map[string]any)
		text := ""
		switch c := m["content"].(type) {
		case string:
			text = c
		case []any:
			for _, b := range c {
				if bm, _ := b.(map[string]any); bm["type"] == "text" {
					text, _ = bm["text"].(string)
				} else if bm["type"] == "image" {
					text += " [image]"
				}
			}
		}
		select {
		case f.userIn <- struct{}{}:
		default:
		}
		f.turns <- fakeTurn{text: text, content: m["content"]}
	}
}

func (f *fake) success(id string, resp any) {
	f.emit(map[string]any{"type": "control_response", "response": map[string]any{"subtype": "success", "request_id": id, "response": resp}})
}

func (f *fake) control(id string, req map[string]any) {
	if f.ignore(req["subtype"]) {
		return
	}
	switch req["subtype"] {
	case "initialize":
		f.success(id, map[string]any{"commands": []any{}, "models": []any{}})
	case "interrupt":
		f.mu.Lock()
		if f.interrup != nil {
			close(f.interrup)
			f.interrup = nil
		}
		f.mu.Unlock()
		f.success(id, map[string]any{"still_queued": []any{}})
	case "mcp_status":
		f.mu.Lock()
		var list []any
		for name := range f.servers {
			list = append(list, map[string]any{"name": name, "status": "connected", "scope": "dynamic",
				"serverInfo": map[string]any{"name": name + "-server", "version": "1.0.0"},
				"config":     map[string]any{"type": "stdio", "command": "x", "args": []any{}},
				"tools":      []any{map[string]any{"name": "echo"}, map[string]any{"name": "image"}}})
		}
		f.mu.Unlock()
		if list == nil {
			list = []any{}
		}
		f.success(id, map[string]any{"mcpServers": list})
	case "mcp_set_servers":
		servers, _ := req["servers"].(map[string]any)
		f.mu.Lock()
		var added, removed []string
		errs := map[string]any{}
		for name, def := range servers {
			if d, _ := def.(map[string]any); d["type"] == "stdio" || d["type"] == nil {
				if _, ok := d["args"]; !ok {
					errs[name] = "Spread syntax requires ...iterable not be null or undefined"
				}
			}
			if !f.servers[name] {
				added = append(added, name)
			}
		}
		for name := range f.servers {
			if _, ok := servers[name]; !ok {
				removed = append(removed, name)
			}
		}
		f.servers = map[string]bool{}
		for name := range servers {
			f.servers[name] = true
		}
		f.mu.Unlock()
		if os.Getenv("FAKE_REFUSE_SET") == "1" {
			for _, n := range added {
				errs[n] = "refused by the fake"
			}
		}
		f.success(id, map[string]any{"added": orEmptyStrings(added), "removed": orEmptyStrings(removed), "errors": errs})
	default:
		f.emit(map[string]any{"type": "control_response", "response": map[string]any{"subtype": "error", "request_id": id,
			"error": fmt.Sprintf("Unsupported control request subtype: %v", req["subtype"])}})
	}
}

// ignore reports whether a control request of subtype goes unanswered:
// FAKE_IGNORE_CONTROL=SUBTYPE ignores every one, SUBTYPE:N the first N.
func (f *fake) ignore(subtype any) bool {
	sub, n, limited := strings.Cut(os.Getenv("FAKE_IGNORE_CONTROL"), ":")
	if sub == "" || subtype != sub {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ignored++
	if !limited {
		return true
	}
	max, _ := strconv.Atoi(n)
	return f.ignored <= max
}

func orEmptyStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// ask sends claude's own control request and waits for the host's answer.
func (f *fake) ask(req map[string]any, then func(id string)) map[string]any {
	f.mu.Lock()
	f.ctlSeq++
	id := fmt.Sprintf("fake-req-%d", f.ctlSeq)
	ch := make(chan map[string]any, 1)
	f.waiters[id] = ch
	f.mu.Unlock()
	f.emit(map[string]any{"type": "control_request", "request_id": id, "request": req})
	if then != nil {
		then(id)
	}
	select {
	case r := <-ch:
		return r
	case <-time.After(30 * time.Second):
		return map[string]any{"subtype": "error", "error": "fake: no answer in 30s"}
	}
}

func (f *fake) initEvent() {
	f.mu.Lock()
	var servers []any
	for name := range f.servers {
		servers = append(servers, map[string]any{"name": name, "status": "connected", "source": "dynamic"})
	}
	f.mu.Unlock()
	if servers == nil {
		servers = []any{}
	}
	f.emit(map[string]any{"type": "system", "subtype": "init", "session_id": f.sessionID, "cwd": mustGetwd(),
		"model": "fake-model", "tools": []any{"Bash"}, "mcp_servers": servers, "permissionMode": "default", "claude_code_version": "2.1.329"})
}

func mustGetwd() string { wd, _ := os.Getwd(); return wd }

func (f *fake) say(text string) {
	f.emit(map[string]any{"type": "stream_event", "event": map[string]any{"type": "content_block_delta", "index": 0,
		"delta": map[string]any{"type": "text_delta", "text": text}}, "session_id": f.sessionID, "parent_tool_use_id": nil, "uuid": "u-delta"})
	f.emit(map[string]any{"type": "assistant", "message": map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "text", "text": text}}},
		"session_id": f.sessionID, "parent_tool_use_id": nil, "uuid": "u-assistant"})
}

// fakeTurn is a user message: its text and its content as sent.
type fakeTurn struct {
	text    string
	content any
}

func (f *fake) result(subtype, text string) {
	f.emit(map[string]any{"type": "result", "subtype": subtype, "is_error": subtype != "success", "result": text, "session_id": f.sessionID})
}

// turn plays one user turn. The first word of the text picks the script:
//
//	flood N [BYTES]  N assistant events (text of BYTES bytes), then a result
//	perm TOOL        a can_use_tool request; the answer is echoed
//	permcancel       a can_use_tool request, withdrawn at once
//	permtwice        two can_use_tool requests pending at once; the second's answer is
//	                 reported when it arrives, then both answers echoed
//	ctl SUBTYPE      a control request of SUBTYPE; claude's view of the answer is echoed
//	hang             starts a turn that runs until interrupted
//	noise            a line that is not JSON, then a normal answer
//	big N            an assistant event N bytes long
//	stderr N         N lines on stderr
//	exit CODE        "fatal" on stderr, exit with CODE
//	bg [hold]        a turn, then one the fake starts by itself (see below)
//	pid              reports the fake's pid
//	child            starts a long sleep in its process group and reports its pid
//	image            a tool_result with an image, as an MCP tool returns it
//	anything else    echoes the text
func (f *fake) turn(t fakeTurn) {
	text := t.text
	fields := strings.Fields(text)
	cmd := ""
	if len(fields) > 0 {
		cmd = fields[0]
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
	switch cmd {
	case "flood":
		n, size := arg(1, 100), arg(2, 100)
		pad := strings.Repeat("x", size)
		for i := 1; i <= n; i++ {
			f.emit(map[string]any{"type": "assistant", "message": map[string]any{"role": "assistant",
				"content": []any{map[string]any{"type": "text", "text": pad}}}, "n": i, "session_id": f.sessionID})
		}
		f.result("success", fmt.Sprintf("flooded %d", n))
	case "perm":
		tool := "Bash"
		if len(fields) > 1 {
			tool = fields[1]
		}
		resp := f.ask(map[string]any{"subtype": "can_use_tool", "tool_name": tool, "input": map[string]any{"command": "ls"},
			"tool_use_id": "toolu_fake_1", "display_name": tool, "permission_suggestions": []any{}}, nil)
		r, _ := resp["response"].(map[string]any)
		b, _ := json.Marshal(r)
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
				go func() {
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
	case "permcancel":
		f.ask(map[string]any{"subtype": "can_use_tool", "tool_name": "Bash", "input": map[string]any{"command": "rm"}, "tool_use_id": "toolu_fake_2"},
			func(id string) {
				f.emit(map[string]any{"type": "control_cancel_request", "request_id": id})
				f.mu.Lock()
				ch := f.waiters[id]
				delete(f.waiters, id)
				f.mu.Unlock()
				if ch != nil {
					ch <- map[string]any{"subtype": "cancelled"}
				}
			})
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
		f.interrup = ch
		f.mu.Unlock()
		f.say("working on it")
		select {
		case <-ch:
			f.result("error_during_execution", "")
		case <-time.After(60 * time.Second):
			f.result("success", "gave up waiting for an interrupt")
		}
	case "noise":
		f.outMu.Lock()
		os.Stdout.Write([]byte("this is not json\n"))
		f.outMu.Unlock()
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
			case <-time.After(60 * time.Second):
			}
		}
		f.result("success", "noticed the background task")
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

func syscallKill(pid int) { killPID(pid, syscall.SIGKILL) }
