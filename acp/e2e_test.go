package acp_test

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ccproxy/ccproxy/internal/testkit"
	"github.com/ccproxy/ccproxy/internal/testkit/fakeapi"
	"github.com/ccproxy/ccproxy/internal/testkit/mcptest"
)

// obs is one observation line of testdata/acp/client.mjs.
type obs map[string]any

func (o obs) str(path ...string) string {
	var v any = map[string]any(o)
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		v = m[k]
	}
	s, _ := v.(string)
	return s
}

// runClient runs the official TypeScript ACP SDK's client side
// (testdata/acp/client.mjs) against `ccproxy acp` with args, with one
// scenario: sessions, each a list of prompts. The script spawns the agent
// itself, as an editor does, and closes its stdin at the end.
func runClient(t *testing.T, args []string, env []string, project string, load map[string]any, sessions [][]map[string]any) []obs {
	t.Helper()
	got, _ := runClientWith(t, args, env, project, map[string]any{"load": load}, sessions)
	return got
}

// runClientWith is runClient with more members of the script's
// configuration (load, mcpServers, badNew); it also returns the agent's
// stderr (its log).
func runClientWith(t *testing.T, args []string, env []string, project string, more map[string]any, sessions [][]map[string]any) ([]obs, string) {
	t.Helper()
	bin, err := testkit.BuildCommand("github.com/ccproxy/ccproxy/cmd/ccproxy")
	if err != nil {
		t.Fatal(err)
	}
	deps, err := testkit.DepsDir()
	if err != nil {
		t.Fatal(err)
	}
	sdk := filepath.Join(deps, "node_modules", "@agentclientprotocol", "sdk")
	if _, err := os.Stat(filepath.Join(sdk, "package.json")); err != nil {
		testkit.Missing(t, "npm package @agentclientprotocol/sdk", err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		testkit.Missing(t, "node", err)
	}
	// ES modules resolve packages from the script's directory: a copy of
	// the script next to a node_modules link.
	dir := t.TempDir()
	script, err := os.ReadFile(filepath.Join("..", "testdata", "acp", "client.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "client.mjs"), script, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(deps, "node_modules"), filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	envMap := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		envMap[k] = v
	}
	conf := map[string]any{"cmd": append([]string{bin, "acp"}, args...), "cwd": project, "sessions": sessions, "env": envMap}
	for k, v := range more {
		conf[k] = v
	}
	cfg, _ := json.Marshal(conf)
	cmd := exec.Command(node, filepath.Join(dir, "client.mjs"), string(cfg))
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("client: %v\nstderr:\n%s", err, stderr.String())
	}
	var list []obs
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var o obs
		if err := json.Unmarshal(sc.Bytes(), &o); err != nil {
			t.Fatalf("client line %q: %v", sc.Text(), err)
		}
		list = append(list, o)
	}
	if t.Failed() || testing.Verbose() {
		t.Logf("agent stderr:\n%s", stderr.String())
	}
	return list, stderr.String()
}

// The demo through the real TypeScript SDK's client: initialize, an
// unknown method (-32601), a session with three prompts (streamed text
// and thinking, an MCP tool call whose image arrives as an image block, a
// permission request answered allow), a second session whose permission
// request is met by session/cancel (the prompt ends cancelled), and exit
// by closing stdin, with no process left. First, session/load of a real
// stored session replays it before answering, and takes a prompt.
func TestACPDemoWithTypeScriptSDK(t *testing.T) {
	t.Parallel()
	marker := "acp-demo-" + strings.ReplaceAll(time.Now().Format("150405.000000000"), ".", "")
	allow := []map[string]any{{"text": "Hi"}, {"text": "Show me an image"}, {"text": "Echo a greeting", "onPermission": "allow"}}
	cancel := []map[string]any{{"text": "Hi"}, {"text": "Show me an image"}, {"text": "Echo a greeting", "onPermission": "cancel"}}
	// A HOME whose Claude Code store holds a real stored session, to load.
	home := t.TempDir()
	if err := os.CopyFS(filepath.Join(home, ".claude", "projects"), os.DirFS("../testdata/history/2.1.329/projects")); err != nil {
		t.Fatal(err)
	}
	const stored = "a53a96ea-6d00-48d2-90ad-6cb56a9ff999"
	got := runClient(t, []string{"--demo", "--demo-speed", "0"}, []string{"CCPROXY_TEST_MARKER=" + marker, "HOME=" + home}, t.TempDir(),
		map[string]any{"sessionId": stored, "prompt": "Hi"}, [][]map[string]any{allow, cancel})
	var loadedUser, loadedDiff, loaded bool
	for _, o := range got {
		if o["ev"] == "loaded" {
			loaded = true
		}
		if o["ev"] != "update" || o.str("sessionId") != stored || loaded {
			continue
		}
		u := o["update"].(map[string]any)
		if u["sessionUpdate"] == "user_message_chunk" {
			loadedUser = true
		}
		if u["sessionUpdate"] == "tool_call_update" {
			for _, c := range u["content"].([]any) {
				loadedDiff = loadedDiff || c.(map[string]any)["type"] == "diff"
			}
		}
	}
	if !loaded || !loadedUser || !loadedDiff {
		t.Errorf("session/load: answered %v; before the answer: user prompts %v, a diff %v", loaded, loadedUser, loadedDiff)
	}
	got = slices.DeleteFunc(got, func(o obs) bool { return o.str("sessionId") == stored })

	var sessions []string
	var stops []string
	var text strings.Builder
	var sawThought, sawImage, sawEchoDone, sawCommands bool
	var perms []obs
	for _, o := range got {
		switch o["ev"] {
		case "init":
			if v, _ := o["result"].(map[string]any)["protocolVersion"].(float64); v != 1 {
				t.Errorf("initialize: protocolVersion %v, want 1", o["result"])
			}
		case "error":
			if o.str("method") != "no/such_method" || o["code"] != float64(-32601) {
				t.Errorf("unexpected error: %v", o)
			}
		case "new":
			sessions = append(sessions, o.str("result", "sessionId"))
		case "stop":
			stops = append(stops, o.str("result", "stopReason"))
		case "permission":
			perms = append(perms, o)
		case "update":
			u := o["update"].(map[string]any)
			switch u["sessionUpdate"] {
			case "agent_message_chunk":
				if o.str("sessionId") == sessions[0] {
					text.WriteString(o.str("update", "content", "text"))
				}
			case "agent_thought_chunk":
				sawThought = true
			case "available_commands_update":
				sawCommands = true
			case "tool_call_update":
				for _, c := range u["content"].([]any) {
					b := c.(map[string]any)["content"].(map[string]any)
					if b["type"] == "image" {
						data, err := base64.StdEncoding.DecodeString(b["data"].(string))
						if err != nil || !bytes.HasPrefix(data, []byte("\x89PNG")) {
							t.Errorf("image block is not a PNG: %v %.20q", err, data)
						}
						sawImage = true
					}
					if b["type"] == "text" && strings.Contains(b["text"].(string), "Echo: Hello from the ccproxy demo!") && u["status"] == "completed" && o.str("sessionId") == sessions[0] {
						sawEchoDone = true
					}
				}
			}
		case "exit":
			if o["code"] != float64(0) {
				t.Errorf("ccproxy acp exited with %v %v, want 0", o["code"], o["signal"])
			}
		}
	}
	if len(sessions) != 2 || sessions[0] == "" || sessions[0] == sessions[1] {
		t.Fatalf("sessions %v", sessions)
	}
	if want := []string{"end_turn", "end_turn", "end_turn", "end_turn", "end_turn", "cancelled"}; strings.Join(stops, ",") != strings.Join(want, ",") {
		t.Errorf("stop reasons %v, want %v", stops, want)
	}
	if !strings.Contains(text.String(), "Hello! You are looking at ccproxy's reference web UI") {
		t.Errorf("streamed text: %.200q", text.String())
	}
	if !sawThought || !sawImage || !sawCommands {
		t.Errorf("thought %v, image block %v, commands %v: want all", sawThought, sawImage, sawCommands)
	}
	if len(perms) != 2 {
		t.Fatalf("%d permission requests, want 2", len(perms))
	}
	p := perms[0]["params"].(map[string]any)
	if tc := p["toolCall"].(map[string]any); tc["title"] != "demo · echo" || tc["toolCallId"] != "toolu_fake_0002" {
		t.Errorf("permission toolCall %v", tc)
	}
	var kinds []string
	for _, o := range p["options"].([]any) {
		kinds = append(kinds, o.(map[string]any)["kind"].(string))
	}
	if strings.Join(kinds, ",") != "allow_once,allow_always,reject_once" {
		t.Errorf("permission options %v", kinds)
	}
	if !sawEchoDone {
		t.Error("the allowed echo tool did not complete")
	}
	if left := testkit.WaitGone("CCPROXY_TEST_MARKER="+marker, 5*time.Second); len(left) > 0 {
		t.Errorf("processes left running: %v", left)
	}
}

// The real Claude Code CLI against the fake API, through the TypeScript
// SDK's client: streamed text and thinking, an MCP tool call (asked, then
// allowed) whose image reaches the client as an image block, a second
// session whose permission request is met by session/cancel (the real
// CLI's interrupt: the prompt ends cancelled), exit with nothing left.
func TestACPRealCLIWithTypeScriptSDK(t *testing.T) {
	t.Parallel()
	claude := testkit.Claude(t)
	testmcp := mcptest.Command(t)
	api := fakeapi.Start(t, fakeapi.First(
		fakeapi.OnText("HELLO", &fakeapi.Reply{Blocks: []fakeapi.Block{fakeapi.Thinking("The user greets me."), fakeapi.Text("Hello from the fake API, streamed in pieces.")}}),
		fakeapi.OnText("IMAGE", fakeapi.CallTool("mcp__testmcp__image", nil)),
		fakeapi.OnToolResults(fakeapi.Summarize),
	))
	home, project := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(home, "tmp"), 0o755)
	mcpJSON, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"testmcp": map[string]any{"command": testmcp}}})
	os.WriteFile(filepath.Join(project, ".mcp.json"), mcpJSON, 0o644)
	marker := "acp-real-" + strings.ReplaceAll(time.Now().Format("150405.000000000"), ".", "")
	env := append(api.Env(home), "CCPROXY_TEST_MARKER="+marker)
	got, agentLog := runClientWith(t, []string{"--claude", claude, "--project", project, "--trust-project-mcp"}, env, project, map[string]any{"load": nil}, [][]map[string]any{
		{{"text": "Say HELLO"}, {"text": "Show an IMAGE", "onPermission": "allow"}},
		{{"text": "Show an IMAGE", "onPermission": "cancel"}},
	})
	var stops []string
	var text strings.Builder
	var sawThought, sawImage bool
	var perms int
	var usages []map[string]any // the prompt responses' usage
	var usageUpdates []map[string]any
	for _, o := range got {
		switch o["ev"] {
		case "stop":
			stops = append(stops, o.str("result", "stopReason"))
			if r, _ := o["result"].(map[string]any); r != nil && r["stopReason"] == "end_turn" {
				u, _ := r["usage"].(map[string]any)
				usages = append(usages, u)
			}
		case "permission":
			perms++
			if tc := o["params"].(map[string]any)["toolCall"].(map[string]any); tc["title"] != "testmcp · image" {
				t.Errorf("permission toolCall %v", tc)
			}
		case "error":
			if o.str("method") != "no/such_method" {
				t.Errorf("error: %v", o)
			}
		case "update":
			u := o["update"].(map[string]any)
			switch u["sessionUpdate"] {
			case "agent_message_chunk":
				text.WriteString(o.str("update", "content", "text"))
			case "agent_thought_chunk":
				sawThought = true
			case "usage_update":
				usageUpdates = append(usageUpdates, u)
			case "tool_call_update":
				for _, c := range u["content"].([]any) {
					if b := c.(map[string]any)["content"].(map[string]any); b["type"] == "image" {
						data, _ := base64.StdEncoding.DecodeString(b["data"].(string))
						if !bytes.Equal(data, mcptest.SmallPNG()) {
							t.Errorf("image block: %d bytes, not the MCP server's PNG", len(data))
						}
						sawImage = true
					}
				}
			}
		case "exit":
			if o["code"] != float64(0) {
				t.Errorf("ccproxy acp exited with %v %v, want 0", o["code"], o["signal"])
			}
		}
	}
	if want := "end_turn,end_turn,cancelled"; strings.Join(stops, ",") != want {
		t.Errorf("stop reasons %v, want %s", stops, want)
	}
	if !strings.Contains(text.String(), "Hello from the fake API, streamed in pieces.") {
		t.Errorf("streamed text %q", text.String())
	}
	// Usage (usage.go): each ended turn's tokens in its prompt response,
	// and usage_update with the context window and the cost.
	for i, u := range usages {
		if u == nil || u["inputTokens"].(float64) <= 0 || u["outputTokens"].(float64) <= 0 || u["totalTokens"].(float64) < u["inputTokens"].(float64)+u["outputTokens"].(float64) {
			t.Errorf("prompt response %d usage %v, want the turn's tokens", i, u)
		}
	}
	if len(usageUpdates) == 0 {
		t.Errorf("no usage_update")
	}
	defer func() {
		if t.Failed() {
			t.Logf("agent log:\n%s", agentLog)
		}
	}()
	for _, u := range usageUpdates {
		cost, _ := u["cost"].(map[string]any)
		if u["size"].(float64) <= 0 || u["used"].(float64) <= 0 || u["used"].(float64) >= u["size"].(float64) || cost == nil || cost["currency"] != "USD" || cost["amount"].(float64) <= 0 {
			t.Errorf("usage_update %v", u)
		}
	}
	if !sawThought || !sawImage || perms != 2 {
		t.Errorf("thought %v, image %v, permission requests %d (want 2)", sawThought, sawImage, perms)
	}
	if left := testkit.WaitGone("CCPROXY_TEST_MARKER="+marker, 5*time.Second); len(left) > 0 {
		t.Errorf("processes left running: %v", left)
	}
}

// An editor's session picker with the real Claude Code CLI, through the
// TypeScript SDK's client: initialize offers session/list and
// session/resume; session/list of the project shows the sessions captured
// from the real CLI (testkit.HistoryHome), titled by their first prompt;
// session/resume of one answers without replaying it, and a prompt
// continues it: the real CLI resumes it, so the fake API's request holds
// the earlier turn; the next session/list shows it updated, first.
func TestACPRealCLIListAndResume(t *testing.T) {
	t.Parallel()
	claude := testkit.Claude(t)
	api := fakeapi.Start(t, fakeapi.OnText("RESUMED", fakeapi.Say("Continued after the resume.")))
	project := t.TempDir()
	home, ids := testkit.HistoryHome(t, project, nil)
	os.MkdirAll(filepath.Join(home, "tmp"), 0o755)
	id := ids["2.1.329"]
	marker := "acp-resume-" + strings.ReplaceAll(time.Now().Format("150405.000000000"), ".", "")
	env := append(api.Env(home), "CCPROXY_TEST_MARKER="+marker)
	got, _ := runClientWith(t, []string{"--claude", claude, "--project", project}, env, project,
		map[string]any{"resume": map[string]any{"sessionId": id, "prompt": "Go on: RESUMED"}}, [][]map[string]any{})

	var lists []map[string]any
	var resumed bool
	var stop string
	var text strings.Builder
	for _, o := range got {
		switch o["ev"] {
		case "init":
			caps, _ := o["result"].(map[string]any)["agentCapabilities"].(map[string]any)["sessionCapabilities"].(map[string]any)
			if caps["list"] == nil || caps["resume"] == nil || caps["close"] == nil {
				t.Errorf("initialize: sessionCapabilities %v, want list, resume and close", caps)
			}
		case "listed":
			lists = append(lists, o["result"].(map[string]any))
		case "resumed":
			resumed = true
		case "update":
			if o.str("sessionId") != id {
				t.Errorf("an update of session %s", o.str("sessionId"))
				continue
			}
			kind := o.str("update", "sessionUpdate")
			if !resumed {
				if kind == "user_message_chunk" || kind == "agent_message_chunk" || kind == "tool_call" {
					t.Errorf("session/resume replayed history: a %s before its answer", kind)
				}
				continue
			}
			if kind == "agent_message_chunk" {
				text.WriteString(o.str("update", "content", "text"))
			}
		case "stop":
			stop = o.str("result", "stopReason")
		case "error":
			if o.str("method") != "no/such_method" {
				t.Errorf("error: %v", o)
			}
		case "exit":
			if o["code"] != float64(0) {
				t.Errorf("ccproxy acp exited with %v %v, want 0", o["code"], o["signal"])
			}
		}
	}
	if len(lists) != 2 || !resumed {
		t.Fatalf("%d session/list answers (want 2), resumed %v", len(lists), resumed)
	}
	// entry returns session i of a list answer.
	entry := func(l map[string]any, i int) map[string]any {
		ss, _ := l["sessions"].([]any)
		if i >= len(ss) {
			return nil
		}
		return ss[i].(map[string]any)
	}
	var before map[string]any
	for i := range 2 {
		if s := entry(lists[0], i); s != nil && s["sessionId"] == id {
			before = s
		}
	}
	if n := len(lists[0]["sessions"].([]any)); n != 2 || before == nil || before["cwd"] != project ||
		before["title"] != "[H-TEXT] Say hello, after some thought." || lists[0]["nextCursor"] != nil {
		t.Fatalf("session/list of the project: %v; want the 2 captured sessions, %s titled by its first prompt", lists[0], id)
	}
	if stop != "end_turn" || !strings.Contains(text.String(), "Continued after the resume.") {
		t.Errorf("the resumed session's prompt: stop %q, text %q", stop, text.String())
	}
	req, err := api.LastRequestWith("RESUMED")
	if err != nil {
		t.Fatal(err)
	}
	if !req.Has("[H-TEXT] Say hello") {
		t.Errorf("the request after session/resume does not carry the earlier turn: %d messages", len(req.Messages))
	}
	after := entry(lists[1], 0)
	if after == nil || after["sessionId"] != id || len(lists[1]["sessions"].([]any)) != 2 {
		t.Fatalf("session/list after the prompt: %v, want %s first", lists[1], id)
	}
	t0, err0 := time.Parse(time.RFC3339, before["updatedAt"].(string))
	t1, err1 := time.Parse(time.RFC3339, after["updatedAt"].(string))
	if err0 != nil || err1 != nil || !t1.After(t0) {
		t.Errorf("updatedAt %v then %v: want RFC 3339, later after the prompt (%v, %v)", before["updatedAt"], after["updatedAt"], err0, err1)
	}
	if left := testkit.WaitGone("CCPROXY_TEST_MARKER="+marker, 5*time.Second); len(left) > 0 {
		t.Errorf("processes left running: %v", left)
	}
}

// An editor's model and mode pickers with the real Claude Code CLI,
// through the TypeScript SDK's client: session/new answers the mode
// option; right after it, before any prompt (claude's answer to
// initialize), available_commands_update (compact among them) and a
// config_option_update with the model option; set_config_option model
// haiku answers it chosen, and the next turn's API request asks for
// haiku; set_config_option mode acceptEdits sends current_mode_update.
// (Not plan: in plan mode the CLI asked for claude-sonnet-5-5 although
// haiku was chosen; docs/CLI-NOTES.md.)
func TestACPRealCLIConfigOptions(t *testing.T) {
	t.Parallel()
	claude := testkit.Claude(t)
	api := fakeapi.Start(t, fakeapi.First(
		fakeapi.OnText("HELLO", &fakeapi.Reply{Blocks: []fakeapi.Block{fakeapi.Text("Hello from the fake API.")}}),
	))
	home, project := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(home, "tmp"), 0o755)
	marker := "acp-config-" + strings.ReplaceAll(time.Now().Format("150405.000000000"), ".", "")
	env := append(api.Env(home), "CCPROXY_TEST_MARKER="+marker)
	got := runClient(t, []string{"--claude", claude, "--project", project}, env, project, nil, [][]map[string]any{{
		{"wait": []string{"available_commands_update"}},
		{"text": "Say HELLO"},
		{"config": map[string]any{"configId": "model", "value": "haiku"}},
		{"config": map[string]any{"configId": "mode", "value": "acceptEdits"}},
		{"text": "Say HELLO again"},
	}})
	// current returns the currentValue of option id in a configOptions list.
	current := func(opts any, id string) (string, []any) {
		list, _ := opts.([]any)
		for _, o := range list {
			m := o.(map[string]any)
			if m["id"] == id {
				s, _ := m["currentValue"].(string)
				v, _ := m["options"].([]any)
				return s, v
			}
		}
		return "", nil
	}
	var newMode, setModel, setMode, modelOffered string
	var modelUpdate, acceptUpdate, waited, modelEarly bool
	var stops []string
	var commands []any
	for _, o := range got {
		switch o["ev"] {
		case "waited":
			waited = len(stops) == 0
		case "new":
			newMode, _ = current(o["result"].(map[string]any)["configOptions"], "mode")
			_, models := current(o["result"].(map[string]any)["configOptions"], "model")
			modelEarly = len(models) > 0
		case "update":
			u := o["update"].(map[string]any)
			switch u["sessionUpdate"] {
			case "available_commands_update":
				if len(stops) == 0 {
					commands, _ = u["availableCommands"].([]any)
				}
			case "config_option_update":
				if _, opts := current(u["configOptions"], "model"); len(opts) > 0 {
					modelUpdate = true
					modelEarly = modelEarly || len(stops) == 0
					for _, v := range opts {
						if v.(map[string]any)["value"] == "haiku" {
							modelOffered = "haiku"
						}
					}
				}
			case "current_mode_update":
				acceptUpdate = acceptUpdate || u["currentModeId"] == "acceptEdits"
			}
		case "config":
			opts := o["result"].(map[string]any)["configOptions"]
			if m, _ := current(opts, "model"); m != "" && setModel == "" {
				setModel = m
			} else {
				setMode, _ = current(opts, "mode")
			}
		case "stop":
			stops = append(stops, o.str("result", "stopReason"))
		case "error":
			if o.str("method") != "no/such_method" {
				t.Errorf("error: %v", o)
			}
		}
	}
	if !waited || !modelEarly || !slices.ContainsFunc(commands, func(c any) bool { return c.(map[string]any)["name"] == "compact" }) {
		t.Errorf("before the first prompt: waited for the commands %v, the model option %v; available_commands_update %v, want compact among them", waited, modelEarly, commands)
	}
	if newMode != "default" || !modelUpdate || modelOffered != "haiku" {
		t.Errorf("session/new's mode %q (want default); a config_option_update with the model option %v, offering haiku: %q", newMode, modelUpdate, modelOffered)
	}
	if setModel != "haiku" || setMode != "acceptEdits" || !acceptUpdate {
		t.Errorf("set_config_option answered model %q, mode %q (want haiku, acceptEdits); current_mode_update acceptEdits %v", setModel, setMode, acceptUpdate)
	}
	if strings.Join(stops, ",") != "end_turn,end_turn" {
		t.Errorf("stop reasons %v", stops)
	}
	reqs := api.MessageRequests()
	if len(reqs) < 2 || strings.Contains(reqs[0].Model, "haiku") || !strings.Contains(reqs[len(reqs)-1].Model, "haiku") {
		var models []string
		for _, r := range reqs {
			models = append(models, r.Model)
		}
		t.Errorf("the API requests' models %q: want the last turn's to be haiku, the first's not", models)
	}
	if left := testkit.WaitGone("CCPROXY_TEST_MARKER="+marker, 5*time.Second); len(left) > 0 {
		t.Errorf("processes left running: %v", left)
	}
}
