package mcpconfig_test

// Cross-checks against the real Claude Code CLI (testkit.Claude: skipped
// outside CI when missing, failing in CI) driven by the fake Anthropic API.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ccproxy/ccproxy/internal/childproc"
	"github.com/ccproxy/ccproxy/internal/testkit"
	"github.com/ccproxy/ccproxy/internal/testkit/fakeapi"
	"github.com/ccproxy/ccproxy/mcpconfig"
)

// claudeProc is a running claude in its own process group.
type claudeProc struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan []byte // stdout, one JSON object per line
	stderr bytes.Buffer
	done   chan struct{}
}

// startClaude starts claude for fixture f (HOME = root/home, cwd = the
// project) against srv, with env added. Everything it starts is killed when
// the test ends.
func startClaude(t *testing.T, f *mcpconfig.Fixture, srv *fakeapi.Server, env map[string]string, args ...string) *claudeProc {
	t.Helper()
	claude := testkit.Claude(t)
	home := f.Path("home")
	if err := os.MkdirAll(filepath.Join(home, "tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(claude, args...)
	cmd.Dir = f.Opts().ProjectDir
	cmd.Env = srv.Env(home)
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Env = append(cmd.Env, "MCP_TIMEOUT=10000")
	p := &claudeProc{t: t, cmd: cmd, lines: make(chan []byte, 1024), done: make(chan struct{})}
	var err error
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = &p.stderr
	childproc.SetGroup(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(p.lines)
		r := bufio.NewReader(stdout)
		for {
			line, err := r.ReadBytes('\n')
			if len(bytes.TrimSpace(line)) > 0 {
				p.lines <- line
			}
			if err != nil {
				return
			}
		}
	}()
	go func() { cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.stdin.Close()
		go func() { // unread output must not block claude, nor the reader
			for range p.lines {
			}
		}()
		select {
		case <-p.done:
		case <-time.After(30 * time.Second):
			t.Errorf("claude did not exit 30 s after its stdin closed")
		}
		if err := testkit.KillGroup(cmd.Process.Pid, 10*time.Second); err != nil {
			t.Error(err)
		}
	})
	return p
}

// next returns the next stdout object matching pred.
func (p *claudeProc) next(what string, pred func(map[string]any) bool) map[string]any {
	p.t.Helper()
	timeout := time.After(90 * time.Second)
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				p.t.Fatalf("claude's stdout ended before %s; stderr: %s", what, p.stderr.String())
			}
			var m map[string]any
			if err := json.Unmarshal(line, &m); err != nil {
				p.t.Fatalf("stdout line is not JSON: %v: %.200q", err, line)
			}
			if pred(m) {
				return m
			}
		case <-timeout:
			p.t.Fatalf("no %s from claude within 90 s", what)
		}
	}
}

func (p *claudeProc) send(v any) {
	p.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		p.t.Fatal(err)
	}
	if _, err := p.stdin.Write(append(b, '\n')); err != nil {
		p.t.Fatalf("write to claude: %v", err)
	}
}

// control sends a control request and returns the response's "response".
func (p *claudeProc) control(id string, request map[string]any) map[string]any {
	p.t.Helper()
	p.send(map[string]any{"type": "control_request", "request_id": id, "request": request})
	r := p.next("control_response "+id, func(m map[string]any) bool {
		if m["type"] != "control_response" {
			return false
		}
		resp, _ := m["response"].(map[string]any)
		return resp["request_id"] == id
	})["response"].(map[string]any)
	if r["subtype"] != "success" {
		p.t.Fatalf("control request %s failed: %v", id, r)
	}
	out, _ := r["response"].(map[string]any)
	return out
}

func isInit(m map[string]any) bool { return m["type"] == "system" && m["subtype"] == "init" }

// cliEntry is a server as the CLI reports it in system/init.
type cliEntry struct {
	Name, Source string
	Disabled     bool
}

// TestCrossCheckInit: for several setups, the servers the real `claude -p`
// reports in system/init (fresh HOME) are exactly Config.CLIServers: what
// ccproxy says claude would load before ccproxy's own approval filter.
func TestCrossCheckInit(t *testing.T) {
	t.Parallel()
	testkit.Claude(t)
	srv := fakeapi.Start(t, nil) // every turn: "OK."
	for _, setup := range []string{"collisions", "disabled", "trusted", "env", "invalid", "redaction", "empty"} {
		t.Run(setup, func(t *testing.T) {
			t.Parallel() // a fixture (HOME, project) and a claude of its own; srv serves them all
			f := mcpconfig.NewFixture(t, setup)
			cfg, err := mcpconfig.Resolve(f.Opts())
			if err != nil {
				t.Fatal(err)
			}
			var want []cliEntry
			for _, s := range cfg.CLIServers() {
				want = append(want, cliEntry{s.Name, s.CLISource(), s.Disabled})
			}
			// The CLI refuses to start with an --mcp-config file that is not
			// valid JSON; ccproxy skips such a file, so leave it out here.
			args := []string{"-p", "--output-format", "stream-json", "--verbose"}
			var extra []string
			for _, x := range f.Opts().Extra {
				if !fileLevelError(cfg, x) {
					extra = append(extra, x)
				}
			}
			if len(extra) > 0 {
				args = append(append(args, "--mcp-config"), extra...)
			}
			p := startClaude(t, f, srv, f.Env(), args...)
			io.WriteString(p.stdin, "hi\n")
			p.stdin.Close()
			init := p.next("system/init", isInit)
			var got []cliEntry
			for _, x := range init["mcp_servers"].([]any) {
				m := x.(map[string]any)
				got = append(got, cliEntry{m["name"].(string), m["source"].(string), m["status"] == "disabled"})
			}
			sort.Slice(got, func(i, j int) bool { return got[i].Name < got[j].Name })
			if !slices.Equal(got, want) {
				t.Errorf("system/init mcp_servers differ from CLIServers\n got %v\nwant %v", got, want)
			}
			t.Logf("%s: %d servers agree: %v", setup, len(got), got)
		})
	}
}

func fileLevelError(cfg *mcpconfig.Config, file string) bool {
	for _, e := range cfg.Errors {
		if e.File == file && e.Server == "" {
			return true
		}
	}
	return false
}

// argvServer is a stdio "server" that writes its arguments and $E to out and
// exits: claude reports it failed ("Connection closed") once it has run.
func argvServer(command, out string) map[string]any {
	return map[string]any{
		"type":    "stdio",
		"command": command,
		"args":    []string{"-c", `printf '%s\n' "$0" "$1" "$2" "$E" > ` + out, "${CCP_X}", "${CCP_UNSET:-dflt}", "${CCP_UNSET}"},
		"env":     map[string]string{"E": "${CCP_X}"},
	}
}

func readOut(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the server did not run: %v", err)
	}
	return string(b)
}

// TestCrossCheckSetServersExpansion finds out whether mcp_set_servers
// expands ${VAR} (it does not; a --mcp-config file does) and checks that
// what ccproxy sends, by file or by mcp_set_servers, makes the CLI run the
// same command with the same arguments and environment.
func TestCrossCheckSetServersExpansion(t *testing.T) {
	t.Parallel()
	testkit.Claude(t)
	srv := fakeapi.Start(t, nil)
	f := mcpconfig.NewFixture(t, "empty")
	env := map[string]string{"CCP_X": "x-value", "CCP_SH": "/bin/sh"}
	opts := f.Opts()
	opts.Env = func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	out := func(name string) string { return f.Path("out/" + name) }
	if err := os.MkdirAll(f.Path("out"), 0o755); err != nil {
		t.Fatal(err)
	}

	// ccproxy's view of the same definitions, from an extra file.
	user := map[string]any{"mcpServers": map[string]any{
		"raw_file": argvServer("${CCP_SH}", out("raw_file")),
	}}
	writeJSON(t, f.Path("raw.json"), user)
	mine := map[string]any{"mcpServers": map[string]any{
		"via_file": argvServer("${CCP_SH}", out("via_file")),
		"via_set":  argvServer("${CCP_SH}", out("via_set")),
	}}
	writeJSON(t, f.Path("mine.json"), mine)
	opts.Extra = []string{f.Path("mine.json")}
	cfg, err := mcpconfig.Resolve(opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Errors) != 0 || len(cfg.Active()) != 2 {
		t.Fatalf("resolve: errors %v, active %v", cfg.Errors, cfg.Active())
	}
	file, err := cfg.MCPConfigFile(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()

	// 1. --mcp-config files: the user's raw one, and the one ccproxy wrote
	//    (which holds via_set too; it is replaced below).
	args := []string{"-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose",
		"--strict-mcp-config", "--mcp-config", f.Path("raw.json"), file.Path}
	p := startClaude(t, f, srv, env, args...)
	p.control("init", map[string]any{"subtype": "initialize"})
	// A turn: its system/init shows both file servers failed, that is run.
	p.send(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": "hi"}, "parent_tool_use_id": nil, "session_id": "default"})
	init := p.next("system/init", isInit)
	for _, x := range init["mcp_servers"].([]any) {
		m := x.(map[string]any)
		if m["status"] != "failed" {
			t.Fatalf("server %v has not run yet: %v", m["name"], m["status"])
		}
	}
	p.next("result", func(m map[string]any) bool { return m["type"] == "result" })
	rawFile := readOut(t, out("raw_file"))
	const expanded = "x-value\ndflt\n${CCP_UNSET}\nx-value\n"
	if rawFile != expanded {
		t.Errorf("a --mcp-config file: the CLI ran with %q, want %q (expanded)", rawFile, expanded)
	}
	if got := readOut(t, out("via_file")); got != rawFile {
		t.Errorf("ccproxy's --mcp-config file: %q, the user's file: %q", got, rawFile)
	}

	// 2. mcp_set_servers with raw definitions: no expansion at all.
	rawArgs := argvServer("/bin/sh", out("raw_set"))
	resp := p.control("set-raw", map[string]any{"subtype": "mcp_set_servers", "servers": map[string]any{
		"raw_set": rawArgs,
		"raw_cmd": argvServer("${CCP_SH}", out("raw_cmd")),
	}})
	errs, _ := resp["errors"].(map[string]any)
	if e, _ := errs["raw_cmd"].(string); !strings.Contains(e, "not found") {
		t.Errorf(`mcp_set_servers with command "${CCP_SH}": error %q, want "executable not found" (not expanded)`, e)
	}
	if _, err := os.Stat(out("raw_cmd")); err == nil {
		t.Error("raw_cmd ran: the command was expanded")
	}
	const literal = "${CCP_X}\n${CCP_UNSET:-dflt}\n${CCP_UNSET}\n${CCP_X}\n"
	if got := readOut(t, out("raw_set")); got != literal {
		t.Errorf("mcp_set_servers: the CLI ran with %q, want %q (nothing expanded)", got, literal)
	}

	// 3. ccproxy's payload: the same as the file.
	var payload map[string]any
	if err := json.Unmarshal(cfg.SetServersPayload(), &payload); err != nil {
		t.Fatal(err)
	}
	delete(payload, "via_file")
	resp = p.control("set-mine", map[string]any{"subtype": "mcp_set_servers", "servers": payload})
	if added, _ := resp["added"].([]any); len(added) != 1 || added[0] != "via_set" {
		t.Errorf("set-mine: %v", resp)
	}
	if got := readOut(t, out("via_set")); got != rawFile {
		t.Errorf("ccproxy's mcp_set_servers payload: the CLI ran with %q, a --mcp-config file with %q", got, rawFile)
	}
	t.Logf("--mcp-config file: %q; raw mcp_set_servers: %q; ccproxy's payload: %q", rawFile, literal, readOut(t, out("via_set")))
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// cliList runs the real `claude mcp list` for fixture f and parses it.
func cliList(t *testing.T, f *mcpconfig.Fixture, srv *fakeapi.Server) map[string]mcpconfig.CLIStatus {
	t.Helper()
	cmd := exec.Command(testkit.Claude(t), "mcp", "list")
	cmd.Dir = f.Opts().ProjectDir
	cmd.Env = srv.Env(f.Path("home"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	childproc.SetGroup(cmd)
	err := cmd.Run()
	if kerr := testkit.KillGroup(cmd.Process.Pid, 10*time.Second); kerr != nil {
		t.Error(kerr)
	}
	if err != nil {
		t.Fatalf("claude mcp list: %v: %s", err, stderr.String())
	}
	res, err := mcpconfig.ParseList(&stdout)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]mcpconfig.CLIStatus{}
	for _, s := range res.Servers {
		out[s.Name] = s.Status
	}
	return out
}

// TestCrossCheckApprove: after Approve / Reject the interactive CLI's view
// (`claude mcp list`, which honours approval) agrees with ccproxy's.
func TestCrossCheckApprove(t *testing.T) {
	t.Parallel()
	testkit.Claude(t)
	srv := fakeapi.Start(t, nil)
	f := mcpconfig.NewFixture(t, "trusted")
	if err := os.MkdirAll(f.Path("home/tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	before := cliList(t, f, srv)
	if before["pending"] != mcpconfig.StatusPendingApproval {
		t.Fatalf("before: pending is %q", before["pending"])
	}
	cfg, err := mcpconfig.Approve(f.Opts(), "pending")
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := cfg.Server("pending"); !s.Active {
		t.Fatalf("ccproxy: %+v", s)
	}
	// `true` exits at once: an approved server that ran shows as failed.
	if got := cliList(t, f, srv)["pending"]; got != mcpconfig.StatusFailed {
		t.Errorf("after Approve the CLI shows pending as %q, want it started (failed)", got)
	}
	if _, err := mcpconfig.Reject(f.Opts(), "by_proj"); err != nil {
		t.Fatal(err)
	}
	after := cliList(t, f, srv)
	if _, listed := after["by_proj"]; listed {
		t.Errorf("after Reject the CLI still lists by_proj: %v", after)
	}
	// ccproxy agrees on every server the CLI lists, as it reads them now.
	cfg, err = mcpconfig.Resolve(f.Opts())
	if err != nil {
		t.Fatal(err)
	}
	for name, st := range after {
		s, _ := cfg.Server(name)
		if (st == mcpconfig.StatusPendingApproval) != (s.Approval == mcpconfig.ApprovalAwaiting) {
			t.Errorf("%s: CLI %q, ccproxy %s", name, st, s.Approval)
		}
	}
}
