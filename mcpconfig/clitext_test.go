package mcpconfig

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

const cliDir = "../testdata/mcpconfig/cli"

func openCLI(t *testing.T, name string) *os.File {
	t.Helper()
	f, err := os.Open(filepath.Join(cliDir, name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestParseList(t *testing.T) {
	type entry struct {
		name, target string
		tr           Transport
		st           CLIStatus
		detail       string
	}
	tests := []struct {
		file      string
		want      []entry
		noServers bool
		diag      []Diagnostic
	}{
		{file: "cli_mcp_list_sample.txt", want: []entry{
			{"fs-user", "/home/dev/mcpsrv/node_modules/.bin/mcp-server-filesystem /home/dev/work", TransportStdio, StatusConnected, ""},
			{"remote-http", "http://127.0.0.1:18150/mcp", TransportHTTP, StatusFailed, "ECONNREFUSED: Unable to connect. Is the computer able to access the url?"},
			{"memory-proj", "/home/dev/mcpsrv/node_modules/.bin/mcp-server-memory --flag1", TransportStdio, StatusPendingApproval, ""},
			{"everything-local", "/home/dev/mcpsrv/node_modules/.bin/mcp-server-everything", TransportStdio, StatusConnected, ""},
			{"remote-sse", "http://127.0.0.1:18151/sse", TransportSSE, StatusFailed, "SSE error: ECONNREFUSED: Unable to connect. Is the computer able to access the url?"},
			{"jsonsrv", "echo hi", TransportStdio, StatusFailed, "CONNECTION_CLOSED: Connection closed"},
		}},
		{file: "list_statuses.txt", want: []entry{
			{"a", "true", TransportStdio, StatusDisabled, ""},
			{"b", "true", TransportStdio, StatusFailed, "CONNECTION_CLOSED: Connection closed"},
			{"c", "true", TransportStdio, StatusFailed, "CONNECTION_CLOSED: Connection closed"},
			{"d", "true", TransportStdio, StatusFailed, "CONNECTION_CLOSED: Connection closed"},
			{"authy", "http://127.0.0.1:18377/mcp", TransportHTTP, StatusNeedsAuth, ""},
		}},
		{file: "list_diagnostics.txt", want: []entry{
			{"envy", "${NOPE_CMD} ${NOPE_ARG} ${FOO}", TransportStdio, StatusFailed, `ENOENT: Executable not found in $PATH: "[redacted]"`},
			{"wsy", "ws://127.0.0.1:9/ws", TransportWS, StatusFailed, "ECONNREFUSED: WebSocket connection to 'ws://127.0.0.1:9' failed: Failed to connect"},
			{"pr", "true", TransportStdio, StatusPendingApproval, ""},
		}, diag: []Diagnostic{
			{"Has warnings", "Warning", "envy", "mcpServers.envy: Missing environment variables: NOPE_CMD, NOPE_ARG, NOPE_ENV"},
			{"Has warnings", "Warning", "wsy", "mcpServers.wsy: Missing environment variables: NOPE_H"},
		}},
		{file: "list_empty.txt", noServers: true},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			out, err := ParseList(openCLI(t, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			var got []entry
			for _, e := range out.Servers {
				got = append(got, entry{e.Name, e.Target, e.Transport, e.Status, e.Detail})
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("servers:\n got %q\nwant %q", got, tt.want)
			}
			if out.NoServers != tt.noServers {
				t.Errorf("NoServers = %v", out.NoServers)
			}
			if len(out.Unparsed) != 0 {
				t.Errorf("unparsed lines: %v", out.Unparsed)
			}
			if tt.diag != nil && !slices.Equal(out.Diagnostics, tt.diag) {
				t.Errorf("diagnostics:\n got %q\nwant %q", out.Diagnostics, tt.diag)
			}
		})
	}
}

func TestParseListConflictingScopes(t *testing.T) {
	text := "Checking MCP server health…\n\nx: true user - ✘ Failed to connect — CONNECTION_CLOSED: Connection closed\n\n" +
		"MCP config diagnostics ⚠\n\nFor help configuring MCP servers, see: https://code.claude.com/docs/en/mcp\n\n[Conflicting scopes]\n" +
		"├ Server \"x\" is defined in multiple scopes with different endpoints: user (true user), project (true proj).\n" +
		"└ Keep the correct endpoint and remove the others: `claude mcp remove x -s user` or `claude mcp remove x -s project`\n"
	out, err := ParseList(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Servers) != 1 || out.Servers[0].Target != "true user" {
		t.Errorf("servers %+v", out.Servers)
	}
	if len(out.Diagnostics) != 2 || out.Diagnostics[0].Section != "Conflicting scopes" || !strings.HasPrefix(out.Diagnostics[0].Message, `Server "x" is defined`) {
		t.Errorf("diagnostics %+v", out.Diagnostics)
	}
}

func TestParseListBadInput(t *testing.T) {
	if _, err := ParseList(strings.NewReader("\n \n")); err == nil {
		t.Error("empty input: no error")
	}
	out, err := ParseList(strings.NewReader("Checking MCP server health…\n\nsomething new --token=abc123\nok: x - ✔ Connected\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Unparsed) != 1 || out.Unparsed[0].Line != 3 || strings.Contains(out.Unparsed[0].Text, "abc123") {
		t.Errorf("unparsed %+v", out.Unparsed)
	}
	if len(out.Servers) != 1 || out.Servers[0].Status != StatusConnected {
		t.Errorf("servers %+v", out.Servers)
	}
}

// getSamples splits cli_mcp_get_samples.txt ("=== get NAME", output, "rc=N").
func getSamples(t *testing.T) map[string]string {
	data, err := os.ReadFile(filepath.Join(cliDir, "cli_mcp_get_samples.txt"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, chunk := range strings.Split(string(data), "=== get ")[1:] {
		name, body, _ := strings.Cut(chunk, "\n")
		if i := strings.LastIndex(body, "rc="); i >= 0 {
			body = body[:i]
		}
		out[name] = body
	}
	return out
}

func TestParseGet(t *testing.T) {
	samples := getSamples(t)
	for _, f := range []string{"get_status_a", "get_status_authy", "get_status_d", "get_diag_envy", "get_diag_wsy", "get_diag_rej", "get_diag_pr"} {
		data, err := os.ReadFile(filepath.Join(cliDir, f+".txt"))
		if err != nil {
			t.Fatal(err)
		}
		samples[f] = string(data)
	}
	tests := []struct {
		sample string
		want   GetOutput
	}{
		{"fs-user", GetOutput{Name: "fs-user", Scope: ScopeUser, ScopeText: "User config (available in all your projects)", Status: StatusConnected, StatusText: "Connected",
			Type: TransportStdio, Command: "/home/dev/mcpsrv/node_modules/.bin/mcp-server-filesystem", Args: "/home/dev/work", RemoveHint: "claude mcp remove fs-user -s user"}},
		{"remote-http", GetOutput{Name: "remote-http", Scope: ScopeUser, ScopeText: "User config (available in all your projects)", Status: StatusFailed, StatusText: "Failed to connect",
			Issue: "ECONNREFUSED: Unable to connect. Is the computer able to access the url?", Type: TransportHTTP, URL: "http://127.0.0.1:18150/mcp",
			Headers: []KeyValue{{"Authorization", "Bearer abc"}}, RemoveHint: "claude mcp remove remote-http -s user"}},
		{"memory-proj", GetOutput{Name: "memory-proj", Scope: ScopeProject, ScopeText: "Project config (shared via .mcp.json)", Status: StatusPendingApproval,
			StatusText: "Pending approval (run `claude` to approve)", Type: TransportStdio, Command: "/home/dev/mcpsrv/node_modules/.bin/mcp-server-memory", Args: "--flag1",
			Env: []KeyValue{{"FOO", "bar"}}, RemoveHint: "claude mcp remove memory-proj -s project"}},
		{"everything-local", GetOutput{Name: "everything-local", Scope: ScopeLocal, ScopeText: "Local config (private to you in this project)", Status: StatusConnected, StatusText: "Connected",
			Type: TransportStdio, Command: "/home/dev/mcpsrv/node_modules/.bin/mcp-server-everything", RemoveHint: "claude mcp remove everything-local -s local"}},
		{"jsonsrv", GetOutput{Name: "jsonsrv", Scope: ScopeLocal, ScopeText: "Local config (private to you in this project)", Status: StatusFailed, StatusText: "Failed to connect",
			Issue: "CONNECTION_CLOSED: Connection closed", Type: TransportStdio, Command: "echo", Args: "hi", Env: []KeyValue{{"A", "${HOME}"}}, RemoveHint: "claude mcp remove jsonsrv -s local"}},
		{"get_status_a", GetOutput{Name: "a", Scope: ScopeProject, ScopeText: "Project config (shared via .mcp.json)", Status: StatusDisabled, StatusText: "Disabled for this project (re-enable via /mcp)",
			Type: TransportStdio, Command: "true", RemoveHint: "claude mcp remove a -s project"}},
		{"get_status_authy", GetOutput{Name: "authy", Scope: ScopeLocal, ScopeText: "Local config (private to you in this project)", Status: StatusNeedsAuth, StatusText: "Needs authentication",
			Type: TransportHTTP, URL: "http://127.0.0.1:18377/mcp", RemoveHint: "claude mcp remove authy -s local"}},
		{"get_diag_rej", GetOutput{Name: "rej", Scope: ScopeProject, ScopeText: "Project config (shared via .mcp.json)", Status: StatusRejected, StatusText: "Rejected (see disabledMcpjsonServers in settings)",
			Type: TransportStdio, Command: "true", RemoveHint: "claude mcp remove rej -s project"}},
		{"get_diag_wsy", GetOutput{Name: "wsy", Scope: ScopeUser, ScopeText: "User config (available in all your projects)", Status: StatusFailed, StatusText: "Failed to connect",
			Issue: "ECONNREFUSED: WebSocket connection to 'ws://127.0.0.1:9' failed: Failed to connect", Type: TransportWS, URL: "ws://127.0.0.1:9/ws",
			Headers: []KeyValue{{"X-Key", "${NOPE_H}"}}, RemoveHint: "claude mcp remove wsy -s user"}},
	}
	for _, tt := range tests {
		t.Run(tt.sample, func(t *testing.T) {
			text, ok := samples[tt.sample]
			if !ok {
				t.Fatalf("no sample %s", tt.sample)
			}
			got, err := ParseGet(strings.NewReader(text))
			if err != nil {
				t.Fatal(err)
			}
			if !equalGet(*got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", *got, tt.want)
			}
		})
	}
	// Every sample parses.
	for name, text := range samples {
		if name == "nonexist" {
			continue
		}
		if _, err := ParseGet(strings.NewReader(text)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func equalGet(a, b GetOutput) bool { return reflect.DeepEqual(a, b) }

func TestParseGetNotFound(t *testing.T) {
	samples := getSamples(t)
	for _, tt := range []struct {
		text       string
		configured []string
	}{
		{samples["nonexist"], []string{"everything-local", "fs-user", "jsonsrv", "remote-http", "remote-sse"}},
		{string(must(os.ReadFile(filepath.Join(cliDir, "get_unknown_pending.txt")))), []string{"envy", "wsy"}},
		{string(must(os.ReadFile(filepath.Join(cliDir, "get_unknown_empty.txt")))), nil},
	} {
		_, err := ParseGet(strings.NewReader(tt.text))
		var nf *NotFoundError
		if !errors.As(err, &nf) {
			t.Fatalf("%q: %v", tt.text, err)
		}
		if nf.Name == "" || !slices.Equal(nf.Configured, tt.configured) {
			t.Errorf("%+v, want configured %v", nf, tt.configured)
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestParseGetRedacted(t *testing.T) {
	g, err := ParseGet(strings.NewReader(getSamples(t)["remote-http"]))
	if err != nil {
		t.Fatal(err)
	}
	r := g.Redacted()
	if r.Headers[0].Value != Mask || g.Headers[0].Value != "Bearer abc" {
		t.Errorf("redacted %+v, original %+v", r.Headers, g.Headers)
	}
	if _, err := ParseGet(strings.NewReader("hello world\n")); err == nil {
		t.Error("garbage: no error")
	}
	if _, err := ParseGet(strings.NewReader("x:\n  Scope: User config\nsecret-value\n")); err == nil || strings.Contains(err.Error(), "secret-value") {
		t.Errorf("bad field line: %v", err)
	}
}
