package proxy

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/proxy/mcphub"
)

// initServers returns the names of the MCP servers of the first system/init
// among evs (the fake lists the servers it was given).
func initServers(evs []protocol.SessionEvent) []string {
	for _, ev := range evs {
		if eventType(ev) == "system/init" {
			var names []string
			for _, s := range gjson.GetBytes(ev.Event, "mcp_servers.#.name").Array() {
				names = append(names, s.Str)
			}
			slices.Sort(names)
			return names
		}
	}
	return nil
}

// The MCP servers a client sends with session/create go through the
// proxy's configuration: merged below the files (a file's server of the
// same name wins), started only when the source trusts client servers,
// applied again with every configuration change, and their --mcp-config
// file goes with the session. Their secrets reach no log.
func TestSessionCreateClientMCPServers(t *testing.T) {
	t.Parallel()
	const secret = "client-secret-value-42"
	servers := map[string]any{
		"cli":    map[string]any{"command": "/opt/client/bin/srv", "env": map[string]any{"CLIENT_TOKEN": secret}},
		"shared": map[string]any{"command": "/opt/client/bin/shared"},
	}
	for _, trust := range []bool{false, true} {
		t.Run(map[bool]string{false: "untrusted", true: "trusted"}[trust], func(t *testing.T) {
			e := newMCPEnv(t)
			os.WriteFile(filepath.Join(e.Home, ".claude.json"), []byte(`{"mcpServers":{"shared":{"command":"/bin/user-shared"},"usr":{"command":"/bin/usr"}}}`), 0o644)
			e.Opts.TrustClient = trust
			src, err := mcphub.NewConfigSource(e.Opts, e.FilesDir, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { src.Close() })
			argsFile := filepath.Join(t.TempDir(), "args.json")
			ts := startServer(t, Options{Project: e.Project, MCPOptions: MCPOptions{MCP: src}}, "FAKE_ARGS_FILE="+argsFile)
			c := ts.dial(t)
			var r protocol.SessionCreateResult
			mustUnmarshal(t, c.do(protocol.TypeSessionCreate, map[string]any{"mcpServers": servers}), &r)
			c.do(protocol.TypeSessionSubscribe, map[string]any{"session": r.Session})
			if len(r.MCPServers) != 2 || r.MCPServers[0].Name != "cli" || r.MCPServers[1].Name != "shared" {
				t.Fatalf("reply mcpServers %+v", r.MCPServers)
			}
			cli, shared := r.MCPServers[0], r.MCPServers[1]
			if trust && (!cli.Active || cli.Approval != protocol.ApprovalApproved) {
				t.Errorf("trusted cli: %+v", cli)
			}
			if !trust && (cli.Active || cli.Approval != protocol.ApprovalAwaiting || !strings.Contains(cli.Reason, "--trust-client-mcp")) {
				t.Errorf("untrusted cli: %+v", cli)
			}
			if shared.Active || !strings.Contains(shared.Reason, "user server of the same name") {
				t.Errorf("shared: %+v", shared)
			}

			want := []string{"shared", "usr"}
			if trust {
				want = []string{"cli", "shared", "usr"}
			}
			if got := initServers(c.turn(r.Session, "hi")); !slices.Equal(got, want) {
				t.Errorf("claude was given %v, want %v", got, want)
			}
			file := mcpConfigArg(t, argsFile)
			def, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if got := gjson.GetBytes(def, "mcpServers.shared.command").Str; got != "/bin/user-shared" {
				t.Errorf("shared runs %q, want the user's /bin/user-shared", got)
			}
			if got := gjson.GetBytes(def, "mcpServers.cli.env.CLIENT_TOKEN").Str; trust != (got == secret) {
				t.Errorf("cli's env in the --mcp-config file: %q", got)
			}
			// The proxy's mcp/config stays the files' configuration.
			if src.Current().View.Servers[0].Name == "cli" {
				t.Error("mcp/config shows the client's server")
			}

			// The session's --mcp-config file goes with it.
			s2 := c.create(map[string]any{"mcpServers": servers})
			c.turn(s2, "hi")
			file2 := mcpConfigArg(t, argsFile)
			c.do(protocol.TypeSessionClose, map[string]any{"session": s2})
			if _, err := os.Stat(file2); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the session's --mcp-config file is still there after session/close: %v", err)
			}

			// A configuration change is applied with the client's servers kept.
			os.WriteFile(filepath.Join(e.Home, ".claude.json"), []byte(`{"mcpServers":{"shared":{"command":"/bin/user-shared"},"usr":{"command":"/bin/usr"},"usr2":{"command":"/bin/usr2"}}}`), 0o644)
			want = append(want, "usr2")
			slices.Sort(want)
			var got []string
			for range 200 { // until the change reached claude: one turn each
				if got = initServers(c.turn(r.Session, "again")); slices.Equal(got, want) {
					break
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("after the change claude has %v, want %v", got, want)
			}

			c.do(protocol.TypeSessionClose, map[string]any{"session": r.Session})
			if left, _ := filepath.Glob(filepath.Join(e.FilesDir, "*")); len(left) > 0 {
				t.Errorf("files left after session/close: %v", left)
			}
			if strings.Contains(ts.logBuf.String(), secret) {
				t.Error("the proxy's log holds a client server's secret")
			}
		})
	}
}

// A bad definition is refused naming the server and the field; a proxy
// without an MCP configuration refuses client servers.
func TestSessionCreateClientMCPServersRefused(t *testing.T) {
	e := newMCPEnv(t)
	src, err := mcphub.NewConfigSource(e.Opts, e.FilesDir, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	ts := startServer(t, Options{Project: e.Project, MCPOptions: MCPOptions{MCP: src}})
	c := ts.dial(t)
	for _, tc := range []struct {
		servers any
		want    string
	}{
		{map[string]any{"rel": map[string]any{"command": "./bin/srv"}}, `data.mcpServers["rel"]: command "./bin/srv" is a relative path`},
		{map[string]any{"odd": map[string]any{"type": "pigeon", "url": "https://x.example"}}, `data.mcpServers["odd"]: unknown "type"`},
		{map[string]any{"nourl": map[string]any{"type": "http"}}, `data.mcpServers["nourl"]: "url" is missing`},
		{map[string]any{"bad name": map[string]any{"command": "/bin/x"}}, `data.mcpServers: key "bad name": a server name is 1 to 256 letters, digits, _ or -, not - first`},
		{map[string]any{"-h": map[string]any{"command": "/bin/x"}}, `data.mcpServers: key "-h": a server name is 1 to 256 letters, digits, _ or -, not - first`},
		{[]any{map[string]any{"name": "x", "command": "/bin/x"}}, `mcpServers: want an object`},
	} {
		pe := c.doErr(protocol.TypeSessionCreate, map[string]any{"mcpServers": tc.servers})
		if pe.Code != protocol.CodeBadRequest || !strings.Contains(pe.Message, tc.want) {
			t.Errorf("%v: %v, want bad_request with %q", tc.servers, pe, tc.want)
		}
	}

	bare := startServer(t, Options{})
	bc := bare.dial(t)
	pe := bc.doErr(protocol.TypeSessionCreate, map[string]any{"mcpServers": map[string]any{"x": map[string]any{"command": "/bin/x"}}})
	if pe.Code != protocol.CodeBadRequest || !strings.Contains(pe.Message, "takes no MCP servers from clients") {
		t.Errorf("without an MCP configuration: %v", pe)
	}
}

// mcpConfigArg returns the --mcp-config file of the last claude the fake
// started.
func mcpConfigArg(t *testing.T, argsFile string) string {
	t.Helper()
	args := fakeArgs(t, argsFile)
	v := argValue(args, "--mcp-config")
	if v == "" {
		t.Fatalf("no --mcp-config in %q", args)
	}
	return v
}

// The error output of a failed call of a client's server reaches the call
// log (mcp/log) without the secrets of that server's definition, which
// the proxy's own configuration does not know.
func TestCallLogScrubsClientServerSecrets(t *testing.T) {
	const secret = "client-secret-value-77"
	e := newMCPEnv(t)
	e.Opts.TrustClient = true
	src, err := mcphub.NewConfigSource(e.Opts, e.FilesDir, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	ts := startServer(t, Options{Project: e.Project, MCPOptions: MCPOptions{MCP: src, CallLogDir: t.TempDir(), CallLogIO: true}})
	c := ts.dial(t)
	s := c.create(map[string]any{"mcpServers": map[string]any{"cli": map[string]any{"command": "/opt/cli", "env": map[string]any{"CLI_TOKEN": secret}}}})
	c.turn(s, "mcpfail cli login with "+secret+" refused")
	var lr protocol.MCPLogResult
	mustUnmarshal(t, c.do(protocol.TypeMCPLog, map[string]any{}), &lr)
	if len(lr.Entries) != 1 || lr.Entries[0].Server != "cli" || lr.Entries[0].Output == nil || *lr.Entries[0].Output != "login with *** refused" {
		b, _ := json.Marshal(lr)
		t.Errorf("the call log holds %s", b)
	}
}
