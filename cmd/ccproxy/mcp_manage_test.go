package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/ccproxy/ccproxy/internal/testkit"
)

// manageRoot makes a temporary HOME (set) and project directory.
func manageRoot(t *testing.T) (home, project string) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home, project = filepath.Join(root, "home"), filepath.Join(root, "project")
	for _, d := range []string{home, project} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("HOME", home)
	return home, project
}

func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return m
}

// written is what a set of adds left in the three scopes' places.
type written struct {
	user, localEntry, project any
}

func readWritten(t *testing.T, home, project string) written {
	cj := readJSON(t, filepath.Join(home, ".claude.json"))
	projects, _ := cj["projects"].(map[string]any)
	return written{user: cj["mcpServers"], localEntry: projects[project], project: readJSON(t, filepath.Join(project, ".mcp.json"))}
}

// addCases are `mcp add` and `mcp add-json` argument lists for every
// transport, run in each scope.
var addCases = [][]string{
	{"add", "std1", "-e", "K=v", "-e", "A=b=c", "--", "node", "/srv/server.js", "--flag", "a b"},
	{"add", "std2", "--", "npx", "-y", "@scope/pkg"},
	{"add", "-t", "stdio", "std3", "/usr/bin/srv"},
	{"add", "--transport", "http", "h1", "https://example.com/mcp", "-H", "Authorization: Bearer abc", "-H", "X-Y:z"},
	{"add", "-t", "streamable-http", "h2", "https://example.com/mcp2"},
	{"add", "-t", "sse", "s1", "https://example.com/sse", "--header", "X-Api-Key: ${KEY}"},
	{"add-json", "j1", `{"command":"node","args":["x"],"env":{"A":"1"},"cwd":"/dropped","timeout":5}`},
	{"add-json", "j2", `{"type":"streamable-http","url":"https://x.example/y","headers":{"a":"b"},"oauth":{"clientId":"c"},"foo":1}`},
	{"add-json", "j3", `{"type":"sse","url":"https://x.example/s","headersHelper":"/bin/h"}`},
	{"add-json", "j4", `{"type":"ws","url":"wss://x.example/w"}`},
	{"add-json", "j5", `{"type":"stdio","command":"node"}`},
}

// TestMCPAddMatchesRealCLI runs the real `claude mcp add` and `add-json`
// and ccproxy's for the same arguments, for each scope and transport, in
// two temporary HOMEs, and checks the written servers are JSON-equal:
// ~/.claude.json mcpServers (user), the whole projects["<dir>"] entry
// (local, created by the first add) and the whole .mcp.json (project).
func TestMCPAddMatchesRealCLI(t *testing.T) {
	claude := testkit.Claude(t)
	homeC, projC := manageRoot(t)
	homeP, projP := manageRoot(t)
	for _, scope := range []string{"local", "project", "user"} {
		for _, c := range addCases {
			args := append([]string{"mcp", c[0], "-s", scope}, c[1:]...)
			cmd := exec.Command(claude, args...)
			cmd.Dir = projC
			cmd.Env = append(os.Environ(), "HOME="+homeC)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("claude %q: %v\n%s", args, err, out)
			}
			t.Setenv("HOME", homeP)
			if out, errs, code := runMCPCmd(t, append([]string{c[0], "-s", scope, "--project", projP}, c[1:]...)...); code != 0 {
				t.Fatalf("ccproxy %q: exit %d\n%s%s", args, code, out, errs)
			}
		}
	}
	cli, ours := readWritten(t, homeC, projC), readWritten(t, homeP, projP)
	for _, part := range []struct {
		name      string
		cli, ours any
	}{{"user (~/.claude.json mcpServers)", cli.user, ours.user},
		{"local (~/.claude.json projects[dir])", cli.localEntry, ours.localEntry},
		{"project (.mcp.json)", cli.project, ours.project}} {
		if part.cli == nil {
			t.Fatalf("%s: the CLI wrote nothing", part.name)
		}
		if !reflect.DeepEqual(part.cli, part.ours) {
			a, _ := json.MarshalIndent(part.cli, "", " ")
			b, _ := json.MarshalIndent(part.ours, "", " ")
			t.Errorf("%s differs:\nclaude:\n%s\nccproxy:\n%s", part.name, a, b)
		}
	}
	if n := len(ours.user.(map[string]any)); n != len(addCases) {
		t.Errorf("user scope has %d servers, want %d", n, len(addCases))
	}
}

func fileSum(t *testing.T, paths ...string) string {
	t.Helper()
	h := sha256.New()
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		fmt.Fprintf(h, "%s:%d:%x\n", p, len(data), sha256.Sum256(data))
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// TestMCPAddBadInput: each bad input gets a clear error and leaves every
// file as it was.
func TestMCPAddBadInput(t *testing.T) {
	home, project := manageRoot(t)
	if _, errs, code := runMCPCmd(t, "add", "--project", project, "dup", "--", "node", "x"); code != 0 {
		t.Fatal(errs)
	}
	if _, errs, code := runMCPCmd(t, "add", "-s", "project", "--project", project, "dup", "--", "node", "x"); code != 0 {
		t.Fatal(errs)
	}
	files := []string{filepath.Join(home, ".claude.json"), filepath.Join(project, ".mcp.json")}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"add", "bad name", "--", "node"}, "Invalid name bad name. Names can only contain letters, numbers, hyphens, and underscores."},
		{[]string{"add", "a.b", "--", "node"}, "Invalid name a.b."},
		{[]string{"add", "dup", "--", "node", "y"}, "MCP server dup already exists in local config"},
		{[]string{"add", "-s", "project", "dup", "--", "node", "y"}, "MCP server dup already exists in project config"},
		{[]string{"add", "-t", "ws", "w", "wss://x"}, "Invalid transport type: ws. Must be one of: stdio, sse, http (or streamable-http)"},
		{[]string{"add", "-t", "foo", "w", "x"}, "Invalid transport type: foo."},
		{[]string{"add", "-s", "global", "w", "--", "node"}, "Invalid scope: global. Must be one of: local, user, project"},
		{[]string{"add", "w", "--", "./server.js"}, `command "./server.js" is a relative path`},
		{[]string{"add", "w", "--", "bin/server"}, `command "bin/server" is a relative path`},
		{[]string{"add", "w", "https://x.example/mcp"}, "is a URL: add --transport http"},
		{[]string{"add", "-t", "http", "w", "not-a-url"}, "is not an absolute http(s) URL"},
		{[]string{"add", "-e", "NOEQUALS", "w", "--", "node"}, "Invalid environment variable format: NOEQUALS"},
		{[]string{"add", "-t", "http", "-H", "bad header", "w", "https://x.example"}, `Invalid header format: "bad header"`},
		{[]string{"add", "-H", "X: y", "w", "--", "node"}, "-H/--header is for http and sse servers"},
		{[]string{"add", "w"}, "want NAME and a COMMAND"},
		{[]string{"add-json", "w", "{bad"}, `Invalid configuration: the JSON argument:1:2: server "w": not JSON at line 1, column 2`},
		{[]string{"add-json", "w", "[1]"}, "the definition must be a JSON object, not an array"},
		{[]string{"add-json", "w", `{"type":"http"}`}, `"url" is missing`},
		{[]string{"add-json", "w", `{"url":"https://x"}`}, `has "url" but no "type"`},
		{[]string{"add-json", "w", `{"command":""}`}, `"command" is empty`},
		{[]string{"add-json", "w", `{"command":"node","args":"x"}`}, `"args" must be an array`},
		{[]string{"add-json", "w", `{"type":"grpc","url":"x"}`}, `unknown "type" "grpc"`},
		{[]string{"add-json", "w", `{"command":"node","command":"x"}`}, `duplicate key "command"`},
		{[]string{"add-json", "dup", `{"command":"node"}`}, "MCP server dup already exists in local config"},
	} {
		before := fileSum(t, files...)
		out, errs, code := runMCPCmd(t, append([]string{c.args[0], "--project", project}, c.args[1:]...)...)
		if code == 0 || !strings.Contains(errs, c.want) {
			t.Errorf("%q: exit %d, stderr %q, want an error containing %q (stdout %q)", c.args, code, errs, c.want, out)
		}
		if fileSum(t, files...) != before {
			t.Errorf("%q changed a file", c.args)
		}
	}
	// --force replaces.
	if _, errs, code := runMCPCmd(t, "add", "--project", project, "--force", "dup", "--", "node", "z"); code != 0 {
		t.Fatalf("--force: %s", errs)
	}
	cj := readJSON(t, files[0])
	got := cj["projects"].(map[string]any)[project].(map[string]any)["mcpServers"].(map[string]any)["dup"].(map[string]any)["args"]
	if !reflect.DeepEqual(got, []any{"z"}) {
		t.Errorf("after --force args = %v", got)
	}
}

// TestMCPAddUnwritable: a file that is not valid JSON, and a place that
// cannot be written, are errors naming the file; nothing changes.
func TestMCPAddUnwritable(t *testing.T) {
	home, project := manageRoot(t)
	cj := filepath.Join(home, ".claude.json")
	if err := os.WriteFile(cj, []byte(`{"a": 1,}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, errs, code := runMCPCmd(t, "add", "--project", project, "-s", "user", "w", "--", "node")
	if code == 0 || !strings.Contains(errs, "not changing "+cj+": "+cj+":1:10: not JSON at line 1, column 10") {
		t.Errorf("invalid ~/.claude.json: exit %d, %q", code, errs)
	}
	if data, _ := os.ReadFile(cj); string(data) != `{"a": 1,}` {
		t.Errorf("file changed: %q", data)
	}
	// A project "directory" below a regular file: .mcp.json cannot be created.
	blocker := filepath.Join(project, "file")
	if err := os.WriteFile(blocker, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errs, code = runMCPCmd(t, "add", "--project", filepath.Join(blocker, "sub"), "-s", "project", "w", "--", "node")
	if code == 0 || !strings.Contains(errs, filepath.Join(blocker, "sub")) {
		t.Errorf("unwritable project: exit %d, %q", code, errs)
	}
}

// TestMCPAddKeepsFormatting: other keys, the indentation and the final
// newline of an existing file are kept.
func TestMCPAddKeepsFormatting(t *testing.T) {
	_, project := manageRoot(t)
	mj := filepath.Join(project, ".mcp.json")
	orig := "{\n    \"other\": {\n        \"keep\": [1, 2]\n    },\n    \"mcpServers\": {}\n}\n"
	if err := os.WriteFile(mj, []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := runMCPCmd(t, "add", "--project", project, "-s", "project", "srv", "--", "node", "a"); code != 0 {
		t.Fatal(errs)
	}
	data, _ := os.ReadFile(mj)
	want := "{\n    \"other\": {\n        \"keep\": [\n            1,\n            2\n        ]\n    },\n    \"mcpServers\": {\n        \"srv\": {\n" +
		"            \"type\": \"stdio\",\n            \"command\": \"node\",\n            \"args\": [\n                \"a\"\n            ],\n            \"env\": {}\n        }\n    }\n}\n"
	if string(data) != want {
		t.Errorf("got\n%s\nwant\n%s", data, want)
	}
	if _, errs, code := runMCPCmd(t, "remove", "--project", project, "srv"); code != 0 {
		t.Fatal(errs)
	}
	data, _ = os.ReadFile(mj)
	if !strings.HasPrefix(string(data), "{\n    \"other\"") || !strings.HasSuffix(string(data), "\"mcpServers\": {}\n}\n") {
		t.Errorf("after remove:\n%s", data)
	}
}

// TestMCPRemoveScopes: a name in several scopes is not removed without
// --scope, and the error lists the scopes; with --scope only that one goes.
func TestMCPRemoveScopes(t *testing.T) {
	home, project := manageRoot(t)
	for _, s := range []string{"local", "project", "user"} {
		if _, errs, code := runMCPCmd(t, "add", "--project", project, "-s", s, "srv", "--", "node"); code != 0 {
			t.Fatal(errs)
		}
	}
	files := []string{filepath.Join(home, ".claude.json"), filepath.Join(project, ".mcp.json")}
	before := fileSum(t, files...)
	_, errs, code := runMCPCmd(t, "remove", "--project", project, "srv")
	want := `MCP server "srv" exists in multiple scopes:
  - Local config (private to you in this project) (` + files[0] + ` [project: ` + project + `])
  - Project config (shared via .mcp.json) (` + files[1] + `)
  - User config (available in all your projects) (` + files[0] + `)

To remove from a specific scope, use:
  ccproxy mcp remove srv -s local
  ccproxy mcp remove srv -s project
  ccproxy mcp remove srv -s user`
	if code != 1 || !strings.Contains(errs, want) {
		t.Errorf("exit %d, stderr:\n%s\nwant:\n%s", code, errs, want)
	}
	if fileSum(t, files...) != before {
		t.Error("a refused remove changed a file")
	}
	out, errs, code := runMCPCmd(t, "remove", "--project", project, "-s", "project", "srv")
	if code != 0 || !strings.Contains(out, "Removed MCP server srv from project config") {
		t.Fatalf("exit %d %q %q", code, out, errs)
	}
	if _, errs, code = runMCPCmd(t, "remove", "--project", project, "-s", "project", "srv"); code != 1 || !strings.Contains(errs, `No MCP server named "srv" in project scope`) {
		t.Errorf("second remove: %d %q", code, errs)
	}
	if _, errs, code = runMCPCmd(t, "remove", "--project", project, "nope"); code != 1 || !strings.Contains(errs, `No MCP server named "nope". Configured servers: srv`) {
		t.Errorf("unknown: %d %q", code, errs)
	}
	out, _, _ = runMCPCmd(t, "get", "--project", project, "srv")
	if !strings.Contains(out, "Scope: Local config") || !strings.Contains(out, "Scope: User config") || strings.Contains(out, "Project config") {
		t.Errorf("get after remove:\n%s", out)
	}
}

// TestMCPAddProjectSecretWarns: a literal secret for the project scope
// warns and suggests ${VAR}; a ${VAR} reference does not warn, nor does
// the local scope; get never prints the value.
func TestMCPAddProjectSecretWarns(t *testing.T) {
	_, project := manageRoot(t)
	_, errs, code := runMCPCmd(t, "add", "--project", project, "-s", "project", "-e", "API_KEY=sk-live-123456", "-e", "MODE=fast", "p1", "--", "node")
	if code != 0 || !strings.Contains(errs, "Warning: server p1: env API_KEY") || !strings.Contains(errs, "${API_KEY}") || strings.Contains(errs, "MODE") || strings.Contains(errs, "sk-live") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
	_, errs, _ = runMCPCmd(t, "add", "--project", project, "-s", "project", "-t", "http", "-H", "Authorization: Bearer s3cr3t-value", "p2", "https://x.example")
	if !strings.Contains(errs, "header Authorization") || !strings.Contains(errs, "${AUTHORIZATION}") {
		t.Errorf("header: %q", errs)
	}
	_, errs, _ = runMCPCmd(t, "add", "--project", project, "-s", "project", "-e", "API_KEY=${API_KEY}", "p3", "--", "node")
	_, errs2, _ := runMCPCmd(t, "add", "--project", project, "-e", "API_KEY=sk-live-123456", "p4", "--", "node")
	if errs != "" || errs2 != "" {
		t.Errorf("unexpected warnings: %q %q", errs, errs2)
	}
	out, _, _ := runMCPCmd(t, "get", "--project", project, "p1")
	if strings.Contains(out, "sk-live") || !strings.Contains(out, "API_KEY=") {
		t.Errorf("get:\n%s", out)
	}
}

// TestMCPAddConcurrent: concurrent adds to the same file all land.
func TestMCPAddConcurrent(t *testing.T) {
	home, project := manageRoot(t)
	var wg sync.WaitGroup
	errc := make(chan string, 16)
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, errs, code := runMCPCmd(t, "add", "--project", project, "-s", "user", fmt.Sprintf("s%d", i), "--", "node"); code != 0 {
				errc <- errs
			}
		}()
	}
	wg.Wait()
	close(errc)
	for e := range errc {
		t.Error(e)
	}
	if n := len(readJSON(t, filepath.Join(home, ".claude.json"))["mcpServers"].(map[string]any)); n != 16 {
		t.Errorf("%d servers, want 16", n)
	}
}

// Twenty `ccproxy mcp add` processes at once, alternately to the user and
// the local scope of the same ~/.claude.json: every server is kept (the
// file is locked across processes), and so is the file's other content.
func TestMCPAddConcurrentProcesses(t *testing.T) {
	bin, err := testkit.BuildCommand("github.com/ccproxy/ccproxy/cmd/ccproxy")
	if err != nil {
		t.Fatal(err)
	}
	home, project := manageRoot(t)
	cj := filepath.Join(home, ".claude.json")
	if err := os.WriteFile(cj, []byte(`{"numStartups": 3, "projects": {"/elsewhere": {"mcpServers": {}}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	const n = 20
	errs := make(chan error, n)
	for i := range n {
		go func() {
			scope := []string{"user", "local"}[i%2]
			cmd := exec.Command(bin, "mcp", "add", "-s", scope, "--project", project, fmt.Sprintf("s%02d", i), "--", "node", "x")
			cmd.Env = append(os.Environ(), "HOME="+home)
			out, err := cmd.CombinedOutput()
			if err != nil {
				err = fmt.Errorf("add s%02d: %v: %s", i, err, out)
			}
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	m := readJSON(t, cj)
	user := m["mcpServers"].(map[string]any)
	local := m["projects"].(map[string]any)[project].(map[string]any)["mcpServers"].(map[string]any)
	for i := range n {
		name := fmt.Sprintf("s%02d", i)
		if _, ok := map[bool]map[string]any{true: user, false: local}[i%2 == 0][name]; !ok {
			t.Errorf("%s lost", name)
		}
	}
	if len(user)+len(local) != n || m["numStartups"] != float64(3) || m["projects"].(map[string]any)["/elsewhere"] == nil {
		t.Errorf("file after the adds: %v", m)
	}
}

// TestMCPAddJSONStdin: add-json NAME - reads the definition from stdin;
// a definition that is not JSON names stdin and its position.
func TestMCPAddJSONStdin(t *testing.T) {
	home, project := manageRoot(t)
	var out, errb bytes.Buffer
	err := run(context.Background(), []string{"mcp", "add-json", "-s", "user", "--project", project, "web", "-"},
		strings.NewReader(`{"type":"http","url":"https://x.example/mcp","headers":{"Authorization":"Bearer ${TOKEN}"}}`), &out, &errb)
	if err != nil || !strings.Contains(out.String(), "Added http MCP server web to user config") {
		t.Fatalf("%v %q %q", err, out.String(), errb.String())
	}
	got := readJSON(t, filepath.Join(home, ".claude.json"))["mcpServers"].(map[string]any)["web"]
	want := map[string]any{"type": "http", "url": "https://x.example/mcp", "headers": map[string]any{"Authorization": "Bearer ${TOKEN}"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("written %v", got)
	}
	err = run(context.Background(), []string{"mcp", "add-json", "--project", project, "bad", "-"}, strings.NewReader("{\n  \"command\": node\n}"), &out, &errb)
	if err == nil || !strings.Contains(err.Error(), "Invalid configuration: stdin:2:15: server \"bad\": not JSON at line 2, column 15") {
		t.Errorf("bad stdin: %v", err)
	}
}
