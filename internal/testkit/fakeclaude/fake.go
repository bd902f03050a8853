package fakeclaude

import (
	"bufio"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// answerWait bounds how long a turn waits for the host's answer to one of
// the fake's own control requests, and hangWait how long a turn waits for
// an interrupt or a user message: a test that forgets to answer still sees
// the turn end.
const (
	answerWait = 30 * time.Second
	hangWait   = 60 * time.Second
)

// fake is one run of the fake CLI: the stdin loop (Main) reads lines and
// answers control requests; one goroutine plays the user turns in order.
type fake struct {
	sessionID string
	models    []map[string]any // offered in the initialize reply (models.go)
	partial   bool             // --include-partial-messages: a stream_event before each assistant text
	replay    bool             // --replay-user-messages and FAKE_REPLAY=1: echo each user turn as it starts

	outMu sync.Mutex // guards stdout: one line at a time

	mu       sync.Mutex                     // guards the fields below
	waiters  map[string]chan map[string]any // the fake's own control requests awaiting an answer, by id
	servers  map[string]bool                // the MCP servers it has: launched ∪ dynamic
	launched map[string]bool                // the servers of --mcp-config: mcp_set_servers never removes them
	dynamic  map[string]bool                // the set mcp_set_servers last sent
	model    string                         // the model id system/init reports (--model, set_model)
	mode     string                         // the permission mode system/init reports (--permission-mode, set_permission_mode)
	disabled map[string]bool                // servers mcp_toggle disabled
	interrup chan struct{}                  // closed by an interrupt while a "hang" turn runs
	ignored  int                            // control requests of FAKE_IGNORE_CONTROL's subtype seen
	queued   int                            // user turns read but not started
	running  bool                           // a user turn is being played
	early    bool                           // an interrupt came before the running (or next) turn could take it
	stopped  bool                           // the turn being played was interrupted before it started
	resulted bool                           // the turn being played has written a result: an interrupt now is for the next (if queued)

	parked bool // --await-claim and not claimed yet: user turns are refused, claim_session is taken (mu)
	spare  bool // --await-claim: claim_session is accepted once

	turns  chan fakeTurn // user turns, read by the turn goroutine
	userIn chan struct{} // a user message arrived on stdin (capacity 1)
}

// fakeTurn is a user message: its text and its content as sent.
type fakeTurn struct {
	text    string
	content any
}

// Main runs the fake Claude Code CLI with the command-line arguments args
// (without the program name), on the process's stdin, stdout and stderr,
// and returns its exit status. See the package documentation.
func Main(args []string) int {
	if len(args) == 1 && args[0] == "--version" {
		v := os.Getenv("FAKE_VERSION")
		if v == "" {
			v = Version
		}
		fmt.Printf("%s (Claude Code)\n", v)
		return 0
	}
	if f := os.Getenv("FAKE_ARGS_FILE"); f != "" {
		b, _ := json.Marshal(args)
		os.WriteFile(f, b, 0o644)
	}
	if len(args) >= 2 && args[0] == "mcp" && (args[1] == "login" || args[1] == "logout") {
		return mcpAuthArgs(args[1], args[2:])
	}
	if os.Getenv("FAKE_IGNORE_TERM") == "1" {
		signal.Ignore(syscall.SIGTERM)
	}
	if os.Getenv("FAKE_EXIT_ON_USR1") == "1" {
		// Stdin EOF does not end the fake: ExitSignal does, with status 0.
		usr1 := make(chan os.Signal, 1)
		signal.Notify(usr1, ExitSignal)
		go func() { <-usr1; os.Exit(0) }()
	}
	f := &fake{sessionID: "fake-session-1", waiters: map[string]chan map[string]any{}, servers: map[string]bool{}, launched: map[string]bool{}, dynamic: map[string]bool{},
		turns: make(chan fakeTurn, 4096), userIn: make(chan struct{}, 1)}
	fork := false
	for i, a := range args {
		switch a {
		case "--include-partial-messages":
			f.partial = true
		case "--replay-user-messages":
			// The real CLI echoes each user turn as it starts; the fake
			// does with FAKE_REPLAY=1 only, so that the event counts the
			// older tests expect stay as they are.
			f.replay = os.Getenv("FAKE_REPLAY") == "1"
		case "--resume":
			if i+1 < len(args) {
				f.sessionID = args[i+1]
			}
		case "--fork-session":
			fork = true
		case "--await-claim":
			f.spare, f.parked = true, true
		case "--permission-mode":
			if i+1 < len(args) {
				f.mode = args[i+1]
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
					f.launched[name] = true
				}
			}
		}
	}
	if fork { // --resume ID --fork-session: a new session, continuing ID's
		f.sessionID = "fork-of-" + f.sessionID
	}
	if f.mode == "" {
		f.mode = "default"
	}
	f.models = fakeModels()
	f.model, _ = f.resolveModel(modelFlag(args))
	if s := os.Getenv("FAKE_STARTUP_STDERR"); s != "" {
		fmt.Fprintln(os.Stderr, s)
	}
	if f.spare {
		if os.Getenv("FAKE_SPARE_EXIT") == "1" {
			fmt.Fprintln(os.Stderr, "fatal: the fake spare was told to exit")
			return 1
		}
		// As the real CLI while parked: a session id already, and only
		// system/ui_invalidate events.
		f.emit(map[string]any{"type": "system", "subtype": "ui_invalidate", "event": "ui.render", "uuid": "u-parked", "session_id": f.sessionID})
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for t := range f.turns {
			f.mu.Lock()
			f.queued--
			f.running, f.resulted, f.stopped, f.early = true, false, f.early, false
			f.mu.Unlock()
			f.turn(t)
			f.mu.Lock()
			f.running = false
			f.mu.Unlock()
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
	if os.Getenv("FAKE_ASK_ON_EOF") == "1" {
		// A turn of its own started as it is being closed: it asks, and
		// ends without waiting for the answer.
		f.emit(map[string]any{"type": "control_request", "request_id": "fake-eof-1", "request": canUseTool("Bash", "ls", "toolu_fake_eof")})
	}
	if os.Getenv("FAKE_IGNORE_EOF") == "1" || os.Getenv("FAKE_EXIT_ON_USR1") == "1" {
		hang()
	}
	return 0
}

// hang blocks until a signal ends the process. (A bare select{} would not:
// with no other goroutine, the runtime ends the process as deadlocked.)
func hang() {
	for {
		time.Sleep(time.Hour)
	}
}

func (f *fake) emit(v any) {
	b, _ := json.Marshal(v)
	f.writeLine(b)
}

func (f *fake) writeLine(b []byte) {
	f.outMu.Lock()
	os.Stdout.Write(append(b, '\n'))
	f.outMu.Unlock()
}

// input handles one line from stdin.
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
		f.mu.Lock()
		parked := f.parked
		f.mu.Unlock()
		if parked { // as the real CLI: not run, no API request
			f.emit(map[string]any{"type": "result", "subtype": "error_during_execution", "is_error": true, "num_turns": 0, "session_id": f.sessionID})
			return
		}
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
		f.mu.Lock()
		f.queued++
		f.mu.Unlock()
		f.turns <- fakeTurn{text: text, content: m["content"]}
	}
}

func (f *fake) success(id string, resp any) {
	f.emit(map[string]any{"type": "control_response", "response": map[string]any{"subtype": "success", "request_id": id, "response": resp}})
}

// control answers the host's control request id.
func (f *fake) control(id string, req map[string]any) {
	if f.ignore(req["subtype"]) {
		return
	}
	switch req["subtype"] {
	case "initialize":
		waitInitGate()
		f.success(id, map[string]any{"commands": fakeCommands(), "models": f.models})
	case "claim_session":
		f.claim(id, req)
	case "set_model":
		f.setModel(id, req)
	case "set_permission_mode":
		// As the real CLI: the mode in the reply, then a system/status
		// with it.
		mode, _ := req["mode"].(string)
		if !slices.Contains([]string{"default", "acceptEdits", "plan", "bypassPermissions"}, mode) {
			f.emit(map[string]any{"type": "control_response", "response": map[string]any{"subtype": "error", "request_id": id,
				"error": fmt.Sprintf("Invalid permission mode: %q", mode)}})
			return
		}
		f.mu.Lock()
		f.mode = mode
		f.mu.Unlock()
		f.success(id, map[string]any{"mode": mode})
		f.emit(map[string]any{"type": "system", "subtype": "status", "status": nil, "permissionMode": mode, "session_id": f.sessionID})
	case "interrupt":
		f.mu.Lock()
		if f.interrup != nil {
			close(f.interrup)
			f.interrup = nil
		} else if f.running && !f.resulted || f.queued > 0 {
			// The real CLI starts a turn as it reads it, so an interrupt
			// read after it ends it; here the turn goroutine may not have
			// started it, or got to where it waits, yet.
			f.early = true
		}
		f.mu.Unlock()
		f.success(id, map[string]any{"still_queued": []any{}})
	case "mcp_status":
		f.mu.Lock()
		list := []any{}
		for name := range f.servers {
			if f.disabled[name] {
				list = append(list, map[string]any{"name": name, "status": "disabled", "scope": "dynamic"})
				continue
			}
			list = append(list, map[string]any{"name": name, "status": "connected", "scope": "dynamic",
				"serverInfo": map[string]any{"name": name + "-server", "version": "1.0.0"},
				"config":     map[string]any{"type": "stdio", "command": "x", "args": []any{}},
				"tools":      []any{map[string]any{"name": "echo"}, map[string]any{"name": "image"}}})
		}
		f.mu.Unlock()
		f.success(id, map[string]any{"mcpServers": list})
	case "mcp_set_servers":
		f.setServers(id, req)
	case "mcp_toggle":
		// The real CLI also records it in ~/.claude.json; the fake does not.
		name, _ := req["serverName"].(string)
		enabled, _ := req["enabled"].(bool)
		f.mu.Lock()
		known := f.servers[name]
		if known {
			if f.disabled == nil {
				f.disabled = map[string]bool{}
			}
			f.disabled[name] = !enabled
		}
		f.mu.Unlock()
		if !known {
			f.emit(map[string]any{"type": "control_response", "response": map[string]any{"subtype": "error", "request_id": id,
				"error": "Server not found: " + name}})
			return
		}
		f.success(id, nil)
	case "slow":
		// never answered: for the host's timeouts
	default:
		f.emit(map[string]any{"type": "control_response", "response": map[string]any{"subtype": "error", "request_id": id,
			"error": fmt.Sprintf("Unsupported control request subtype: %v", req["subtype"])}})
	}
}

// setServers plays mcp_set_servers as the real CLI 2.1.329 does
// (docs/CLI-NOTES.md): the set replaces the previous set, beside the
// --mcp-config servers, which it never removes (a name left out stays,
// and is not in "removed"); "added" names those not in the previous set
// (so the first call lists the --mcp-config names it repeats). A stdio
// server without "args" gets the real CLI's error; FAKE_REFUSE_SET=1
// refuses (an error answer, as the real CLI refuses a malformed request) a
// set that brings a server the fake does not have; FAKE_SET_ERRORS=1
// takes it but reports every such server as failing to connect (in
// errors, as the real CLI does).
func (f *fake) setServers(id string, req map[string]any) {
	servers, _ := req["servers"].(map[string]any)
	added, removed, fresh := []string{}, []string{}, []string{}
	errs := map[string]any{}
	f.mu.Lock()
	for name, def := range servers {
		if d, _ := def.(map[string]any); d["type"] == "stdio" || d["type"] == nil {
			if _, ok := d["args"]; !ok {
				errs[name] = "Spread syntax requires ...iterable not be null or undefined"
			}
		}
		if !f.dynamic[name] {
			added = append(added, name)
		}
		if !f.servers[name] {
			fresh = append(fresh, name)
		}
	}
	for name := range f.dynamic {
		if _, ok := servers[name]; !ok && !f.launched[name] {
			removed = append(removed, name)
		}
	}
	slices.Sort(added)
	slices.Sort(removed)
	if os.Getenv("FAKE_REFUSE_SET") == "1" && len(fresh) > 0 {
		f.mu.Unlock()
		f.emit(map[string]any{"type": "control_response", "response": map[string]any{"subtype": "error", "request_id": id,
			"error": "mcp_set_servers: refused by the fake"}})
		return
	}
	f.dynamic = map[string]bool{}
	f.servers = maps.Clone(f.launched)
	for name := range servers {
		f.dynamic[name] = true
		f.servers[name] = true
	}
	f.mu.Unlock()
	if os.Getenv("FAKE_SET_ERRORS") == "1" {
		for _, n := range fresh {
			errs[n] = "ECONNREFUSED: Unable to connect. Is the computer able to access the url?"
		}
	}
	f.success(id, map[string]any{"added": added, "removed": removed, "errors": errs})
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

// ask sends the fake's own control request and waits for the host's
// answer (the response object: subtype, request_id, response or error), at
// most answerWait. Its id is fake-req-N, N the lowest not pending, so
// ids are unique among the pending requests. then, if not nil, runs once
// the request is sent.
func (f *fake) ask(req map[string]any, then func(id string)) map[string]any {
	ch := make(chan map[string]any, 1)
	f.mu.Lock()
	var id string
	for n := 1; ; n++ {
		if id = fmt.Sprintf("fake-req-%d", n); f.waiters[id] == nil {
			break
		}
	}
	f.waiters[id] = ch
	f.mu.Unlock()
	f.emit(map[string]any{"type": "control_request", "request_id": id, "request": req})
	if then != nil {
		then(id)
	}
	select {
	case r := <-ch:
		return r
	case <-time.After(answerWait):
		f.mu.Lock()
		delete(f.waiters, id)
		f.mu.Unlock()
		return map[string]any{"subtype": "error", "error": "fake: no answer in 30s"}
	}
}

// withdraw cancels the pending request id (control_cancel_request); its
// ask returns {"subtype": "cancelled"}.
func (f *fake) withdraw(id string) {
	f.emit(map[string]any{"type": "control_cancel_request", "request_id": id})
	f.mu.Lock()
	ch := f.waiters[id]
	delete(f.waiters, id)
	f.mu.Unlock()
	if ch != nil {
		ch <- map[string]any{"subtype": "cancelled"}
	}
}

func (f *fake) initEvent() {
	f.mu.Lock()
	servers := []any{}
	for name := range f.servers {
		servers = append(servers, map[string]any{"name": name, "status": "connected", "source": "dynamic"})
	}
	model, mode := f.model, f.mode
	f.mu.Unlock()
	wd, _ := os.Getwd()
	f.emit(map[string]any{"type": "system", "subtype": "init", "session_id": f.sessionID, "cwd": wd,
		"model": model, "tools": []any{"Bash"}, "mcp_servers": servers, "permissionMode": mode, "claude_code_version": Version})
}

// say emits an assistant text, preceded by its text_delta stream_event
// when partial messages are on.
func (f *fake) say(text string) {
	if f.partial {
		f.emit(map[string]any{"type": "stream_event", "event": map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "text_delta", "text": text}}, "session_id": f.sessionID, "parent_tool_use_id": nil, "uuid": "u-delta"})
	}
	f.emit(map[string]any{"type": "assistant", "message": map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "text", "text": text}}},
		"session_id": f.sessionID, "parent_tool_use_id": nil, "uuid": "u-assistant"})
}

func (f *fake) result(subtype, text string) {
	// The turn is over before its result is out: an interrupt the host
	// sends after seeing it is for the next turn, if one is queued (a
	// turn that goes on after its result, bg, keeps running).
	f.mu.Lock()
	f.resulted, f.early = true, false
	f.mu.Unlock()
	f.emit(map[string]any{"type": "result", "subtype": subtype, "is_error": subtype != "success", "result": text, "session_id": f.sessionID})
}

// claim answers claim_session as the real CLI does (docs/CLI-NOTES.md,
// "Spares"): only once, only with --await-claim; a cwd that does not
// exist is refused and the fake stays parked; otherwise it moves to cwd,
// takes permission_mode, and with include_initialize the answer carries
// what initialize would.
func (f *fake) claim(id string, req map[string]any) {
	fail := func(msg string) {
		f.emit(map[string]any{"type": "control_response", "response": map[string]any{"subtype": "error", "request_id": id, "error": msg}})
	}
	f.mu.Lock()
	parked := f.parked
	f.mu.Unlock()
	if !parked {
		fail("not_a_spare: claim_session is only accepted by a process started with --await-claim that has not been claimed yet")
		return
	}
	cwd, _ := req["cwd"].(string)
	if st, err := os.Stat(cwd); err != nil || !st.IsDir() || os.Getenv("FAKE_CLAIM_REFUSE") == "1" || os.Chdir(cwd) != nil {
		fail("cwd_not_found: the claim cwd does not exist or is not accessible")
		return
	}
	f.mu.Lock()
	f.parked = false
	if mode, _ := req["permission_mode"].(string); mode != "" {
		f.mode = mode
	}
	f.mu.Unlock()
	resp := map[string]any{"status": "ok", "cwd": cwd, "session_id": f.sessionID, "parked_ms": 1, "sdk_mcp_settled": true}
	if inc, _ := req["include_initialize"].(bool); inc {
		resp["initialize"] = map[string]any{"commands": []any{}, "models": f.models}
	}
	f.success(id, resp)
	n, _ := strconv.Atoi(os.Getenv("FAKE_CLAIM_EVENTS"))
	for i := range n {
		f.emit(map[string]any{"type": "system", "subtype": "status", "status": fmt.Sprintf("claimed-%d", i+1), "session_id": f.sessionID})
	}
}
