package mcptest

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ccproxy/ccproxy/internal/testkit"
)

// CommandPackage is the import path of the stdio/HTTP command serving
// NewServer.
const CommandPackage = "github.com/ccproxy/ccproxy/internal/testkit/cmd/ccproxy-testmcp"

// BuildCommand builds the ccproxy-testmcp command (once per process, see
// testkit.BuildCommand) and returns the path of the binary.
func BuildCommand() (string, error) {
	return testkit.BuildCommand(CommandPackage)
}

// Command is BuildCommand for tests: a build failure fails the test.
func Command(t testing.TB) string {
	t.Helper()
	p, err := BuildCommand()
	if err != nil {
		t.Fatalf("mcptest: %v", err)
	}
	return p
}

// ServeHTTP serves NewServer over streamable HTTP on a loopback httptest
// server, closed when the test ends. The MCP endpoint is the server's URL.
func ServeHTTP(t testing.TB) *httptest.Server {
	t.Helper()
	srv := NewServer()
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts
}
