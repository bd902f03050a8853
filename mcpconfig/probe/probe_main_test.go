//go:build unix

package probe

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ccproxy/ccproxy/internal/testkit/mcptest"
)

// fakeEnv selects a fake MCP server behaviour: the test binary, started
// with CCPROXY_PROBE_FAKE=<mode>, impersonates a misbehaving server (the
// os/exec test idiom).
const fakeEnv = "CCPROXY_PROBE_FAKE"

// Fake server modes.
const (
	fakeServe     = "fake-serve"     // a good server (mcptest over stdio)
	fakeHang      = "fake-hang"      // never answers, ignores stdin EOF
	fakeExit      = "fake-exit"      // writes a message on stderr and exits 3 at once
	fakeCloseOut  = "fake-closeout"  // closes its stdout, then waits for stdin EOF (a server that broke its pipe and stays)
	fakeGarbage   = "fake-garbage"   // logs to stdout, then waits for stdin EOF
	fakeVersion   = "fake-version"   // answers initialize with an unknown protocol version
	fakeRPCError  = "fake-rpcerror"  // answers initialize with a JSON-RPC error
	fakeSpawn     = "fake-spawn"     // starts a child that hangs, then serves well
	fakeSpawnHang = "fake-spawnhang" // starts a child that hangs, then hangs
	fakeSecret    = "fake-secret"    // prints $FAKE_SECRET on stderr and exits 1
	fakeMarker    = "fake-marker"    // creates the file $FAKE_MARKER, then serves
	fakeSlowStart = "fake-slowstart" // sleeps $FAKE_DELAY_MS (a server that waits on a database, say), then serves
	fakeListFail  = "fake-listfail"  // initializes (with tools), then exits with status 4 at tools/list
	fakeTools     = "fake-tools"     // serves tool "leak", which answers with a JSON-RPC error naming $FAKE_SECRET, and tool "noted" (see notedSchema)
)

// notedSchema is the inputSchema of fakeTools' tool "noted": its
// minProperties is checked but has no place in the parameter tree (a note).
const notedSchema = `{"type":"object","properties":{"a":{"type":"string"}},"minProperties":1}`

// fakeStderrLine is what fakeExit writes on stderr.
const fakeStderrLine = "fatal: cannot open the database /var/lib/fake/db: permission denied"

func TestMain(m *testing.M) {
	if mode := os.Getenv(fakeEnv); mode != "" {
		os.Exit(fakeServer(mode))
	}
	os.Exit(m.Run())
}

func fakeServer(mode string) int {
	switch mode {
	case fakeServe:
		return serveMCP()
	case fakeHang:
		time.Sleep(time.Hour)
	case fakeCloseOut:
		_ = os.Stdout.Close()
		_, _ = io.Copy(io.Discard, os.Stdin)
	case fakeExit:
		fmt.Fprintln(os.Stderr, "starting fake server")
		fmt.Fprintln(os.Stderr, fakeStderrLine)
		return 3
	case fakeGarbage:
		fmt.Println("Server listening on port 3000")
		_, _ = io.Copy(io.Discard, os.Stdin)
	case fakeVersion, fakeRPCError, fakeListFail:
		r := bufio.NewReader(os.Stdin)
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				return 0
			}
			var req struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal(line, &req) != nil {
				continue
			}
			if mode == fakeListFail && req.Method == "tools/list" {
				return 4
			}
			if req.Method != "initialize" {
				continue
			}
			if mode == fakeListFail {
				fmt.Printf(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"listfail","version":"0"}}}`+"\n", req.ID)
			} else if mode == fakeVersion {
				fmt.Printf(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"1999-01-01","capabilities":{},"serverInfo":{"name":"old","version":"0"}}}`+"\n", req.ID)
			} else {
				fmt.Printf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32600,"message":"this server only talks to its own client"}}`+"\n", req.ID)
			}
		}
	case fakeSpawn, fakeSpawnHang:
		self, err := os.Executable()
		if err != nil {
			return 1
		}
		child := exec.Command(self)
		child.Env = append(os.Environ(), fakeEnv+"="+fakeHang)
		if err := child.Start(); err != nil { // same process group as us
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if f := os.Getenv("FAKE_CHILD_PIDFILE"); f != "" {
			_ = os.WriteFile(f, []byte(strconv.Itoa(child.Process.Pid)), 0o644)
		}
		if mode == fakeSpawn {
			return serveMCP()
		}
		time.Sleep(time.Hour)
	case fakeSecret:
		fmt.Fprintf(os.Stderr, "using token %s\n", os.Getenv("FAKE_SECRET"))
		return 1
	case fakeSlowStart:
		ms, _ := strconv.Atoi(os.Getenv("FAKE_DELAY_MS"))
		time.Sleep(time.Duration(ms) * time.Millisecond)
		return serveMCP()
	case fakeMarker:
		_ = os.WriteFile(os.Getenv("FAKE_MARKER"), []byte("started"), 0o644)
		return serveMCP()
	case fakeTools:
		s := mcp.NewServer(&mcp.Implementation{Name: "leak", Version: "1"}, nil)
		mcp.AddTool(s, &mcp.Tool{Name: "leak", InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *mcp.CallToolRequest, map[string]any) (*mcp.CallToolResult, any, error) {
				return nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "upstream refused token " + os.Getenv("FAKE_SECRET")}
			})
		mcp.AddTool(s, &mcp.Tool{Name: "noted", InputSchema: json.RawMessage(notedSchema)},
			func(context.Context, *mcp.CallToolRequest, map[string]any) (*mcp.CallToolResult, any, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "noted"}}}, nil, nil
			})
		if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil && !strings.Contains(err.Error(), "EOF") {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	default:
		fmt.Fprintln(os.Stderr, "unknown fake mode", mode)
		return 2
	}
	return 0
}

func serveMCP() int {
	if err := mcptest.NewServer().Run(context.Background(), &mcp.StdioTransport{}); err != nil && !strings.Contains(err.Error(), "EOF") {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// fake is the stdio definition of a fake server.
func fake(t testing.TB, mode string, env map[string]string) map[string]any {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// GORACE: a -race test binary otherwise sleeps a second when it exits.
	e := map[string]string{fakeEnv: mode, "GORACE": "atexit_sleep_ms=0"}
	for k, v := range env {
		e[k] = v
	}
	return map[string]any{"command": self, "args": []string{}, "env": e}
}
