package acp

import (
	"encoding/json"
	"errors"
	"fmt"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/ccproxy/ccproxy/mcpconfig"
	"github.com/ccproxy/ccproxy/protocol"
)

// clientServers converts ACP's mcpServers into session/create's: an
// object of definitions by name, shaped as in .mcp.json (stdio: command,
// args, env; http and sse: type, url, headers), in the order sent; nil for
// none. It checks them as the proxy will (mcpconfig.ParseClientServers),
// so that a bad one gets -32602 naming its index, name and field; the
// proxy checks them again and applies its merge and approval policy. The
// result holds the client's env and header values: it goes to the proxy
// only, never to a log.
func clientServers(method string, list []sdk.McpServer) (json.RawMessage, error) {
	if len(list) == 0 {
		return nil, nil
	}
	bad := func(i int, name, format string, args ...any) error {
		at := fmt.Sprintf("mcpServers[%d]", i)
		if name != "" {
			at += fmt.Sprintf(" (%q)", name)
		}
		return sdk.NewInvalidParams(map[string]any{"error": method + ": " + at + ": " + fmt.Sprintf(format, args...)})
	}
	if len(list) > protocol.MaxClientMCPServers {
		return nil, sdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf("%s: mcpServers: %d servers, at most %d", method, len(list), protocol.MaxClientMCPServers)})
	}
	// An object keeps the order sent; json.Marshal of a map would sort it.
	out := []byte{'{'}
	index := map[string]int{}
	for i, srv := range list {
		var name string
		var def any
		switch {
		case srv.Stdio != nil:
			s := srv.Stdio
			env := map[string]string{}
			for _, e := range s.Env {
				if _, dup := env[e.Name]; dup {
					return nil, bad(i, s.Name, "env: the variable %q is given twice", e.Name)
				}
				env[e.Name] = e.Value
			}
			args := s.Args
			if args == nil {
				args = []string{}
			}
			name, def = s.Name, map[string]any{"type": "stdio", "command": s.Command, "args": args, "env": env}
		case srv.Http != nil && srv.Http.Type == "http", srv.Sse != nil && srv.Sse.Type == "sse":
			typ, url, hs := "http", "", []sdk.HttpHeader(nil)
			if srv.Http != nil {
				name, url, hs = srv.Http.Name, srv.Http.Url, srv.Http.Headers
			} else {
				typ, name, url, hs = "sse", srv.Sse.Name, srv.Sse.Url, srv.Sse.Headers
			}
			headers := map[string]string{}
			for _, h := range hs {
				if _, dup := headers[h.Name]; dup {
					return nil, bad(i, name, "headers: the header %q is given twice", h.Name)
				}
				headers[h.Name] = h.Value
			}
			def = map[string]any{"type": typ, "url": url, "headers": headers}
		case srv.Http != nil:
			return nil, bad(i, srv.Http.Name, "unknown transport %q (ccproxy takes stdio, http and sse)", srv.Http.Type)
		case srv.Sse != nil:
			return nil, bad(i, srv.Sse.Name, "unknown transport %q (ccproxy takes stdio, http and sse)", srv.Sse.Type)
		case srv.Acp != nil:
			return nil, bad(i, srv.Acp.Name, `transport "acp" is not supported (initialize advertises mcpCapabilities http and sse only)`)
		default:
			return nil, bad(i, "", "no transport")
		}
		if name == "" {
			return nil, bad(i, "", "name: must not be empty")
		}
		if j, dup := index[name]; dup {
			return nil, bad(i, name, "the name is also given to mcpServers[%d]", j)
		}
		index[name] = i
		k, _ := json.Marshal(name)
		v, err := json.Marshal(def)
		if err != nil {
			return nil, bad(i, name, "%v", err)
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(append(append(out, k...), ':'), v...)
	}
	out = append(out, '}')
	if _, err := mcpconfig.ParseClientServers("mcpServers", out); err != nil {
		var fe *mcpconfig.FileError
		if errors.As(err, &fe) && fe.Server != "" {
			return nil, bad(index[fe.Server], fe.Server, "%s", fe.Message)
		}
		return nil, sdk.NewInvalidParams(map[string]any{"error": method + ": mcpServers: " + err.Error()})
	}
	return out, nil
}

// mcpMeta is the _meta of the session/new and session/load responses:
// what became of the client's MCP servers (started, or why not), under
// "ccproxy". Nil without servers.
func mcpMeta(st []protocol.ClientMCPServer) map[string]any {
	if len(st) == 0 {
		return nil
	}
	return map[string]any{"ccproxy": map[string]any{"mcpServers": st}}
}
