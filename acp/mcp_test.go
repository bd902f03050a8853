package acp

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
)

// ACP's mcpServers become session/create's: definitions by name in the
// order sent, shaped as in .mcp.json.
func TestClientServersConvert(t *testing.T) {
	got, err := clientServers("session/new", []sdk.McpServer{
		{Stdio: &sdk.McpServerStdio{Name: "tools", Command: "/usr/bin/tools", Env: []sdk.EnvVariable{{Name: "K", Value: "v"}}}},
		{Http: &sdk.McpServerHttpInline{Type: "http", Name: "web", Url: "https://mcp.example/x", Headers: []sdk.HttpHeader{{Name: "Authorization", Value: "Bearer t"}}}},
		{Sse: &sdk.McpServerSseInline{Type: "sse", Name: "events", Url: "https://mcp.example/sse", Headers: []sdk.HttpHeader{}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"tools":{"args":[],"command":"/usr/bin/tools","env":{"K":"v"},"type":"stdio"},` +
		`"web":{"headers":{"Authorization":"Bearer t"},"type":"http","url":"https://mcp.example/x"},` +
		`"events":{"headers":{},"type":"sse","url":"https://mcp.example/sse"}}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got, err := clientServers("session/new", []sdk.McpServer{}); got != nil || err != nil {
		t.Errorf("no servers: %s %v", got, err)
	}
}

// A bad definition is -32602 naming its index, its name and the field.
func TestClientServersInvalid(t *testing.T) {
	stdio := func(name, cmd string) sdk.McpServer {
		return sdk.McpServer{Stdio: &sdk.McpServerStdio{Name: name, Command: cmd, Args: []string{}, Env: []sdk.EnvVariable{}}}
	}
	for _, tc := range []struct {
		list []sdk.McpServer
		want string
	}{
		{[]sdk.McpServer{stdio("rel", "bin/srv")}, `mcpServers[0] ("rel"): command "bin/srv" is a relative path`},
		{[]sdk.McpServer{stdio("ok", "/bin/a"), stdio("", "/bin/b")}, `mcpServers[1]: name: must not be empty`},
		{[]sdk.McpServer{stdio("a", "/bin/a"), stdio("a", "/bin/b")}, `mcpServers[1] ("a"): the name is also given to mcpServers[0]`},
		{[]sdk.McpServer{stdio("a b", "/bin/a")}, `mcpServers[0] ("a b"): Invalid name a b`},
		{[]sdk.McpServer{stdio("ok", "/bin/a"), stdio("-h", "/bin/a")}, `mcpServers[1] ("-h"): Invalid name -h. A server name must not start with "-"`},
		{[]sdk.McpServer{stdio("--version", "/bin/a")}, `mcpServers[0] ("--version"): Invalid name --version. A server name must not start with "-"`},
		{[]sdk.McpServer{{Http: &sdk.McpServerHttpInline{Type: "http", Name: "-x", Url: "https://x.example/mcp", Headers: []sdk.HttpHeader{}}}}, `mcpServers[0] ("-x"): Invalid name -x. A server name must not start with "-"`},
		{[]sdk.McpServer{stdio("a.b", "/bin/a")}, `mcpServers[0] ("a.b"): Invalid name a.b. Names can only contain letters, numbers, hyphens, and underscores.`},
		{[]sdk.McpServer{stdio("e", "")}, `mcpServers[0] ("e"): "command" is empty`},
		{[]sdk.McpServer{{Http: &sdk.McpServerHttpInline{Type: "ws", Name: "w", Url: "ws://x/", Headers: []sdk.HttpHeader{}}}}, `mcpServers[0] ("w"): unknown transport "ws"`},
		{[]sdk.McpServer{{Http: &sdk.McpServerHttpInline{Type: "http", Name: "h", Url: "/relative", Headers: []sdk.HttpHeader{}}}}, `mcpServers[0] ("h"): url "/relative" is not an absolute`},
		{[]sdk.McpServer{{Acp: &sdk.McpServerAcpInline{Type: "acp", Name: "c", Id: "1"}}}, `mcpServers[0] ("c"): transport "acp" is not supported`},
		{[]sdk.McpServer{{Stdio: &sdk.McpServerStdio{Name: "d", Command: "/bin/d", Env: []sdk.EnvVariable{{Name: "K", Value: "1"}, {Name: "K", Value: "2"}}}}}, `mcpServers[0] ("d"): env: the variable "K" is given twice`},
	} {
		_, err := clientServers("session/new", tc.list)
		var re *sdk.RequestError
		if !errors.As(err, &re) || re.Code != -32602 || !strings.Contains(fmt.Sprint(re.Data), "session/new: "+tc.want) {
			t.Errorf("%v, want -32602 with %q", err, tc.want)
		}
	}
}
