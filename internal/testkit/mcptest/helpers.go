package mcptest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ccproxy/ccproxy/internal/testkit"
)

// CommandPackage is the import path of the stdio/HTTP command serving
// NewServer.
const CommandPackage = "github.com/ccproxy/ccproxy/internal/testkit/cmd/ccproxy-testmcp"

var (
	buildOnce sync.Once
	buildPath string
	buildErr  error
)

// BuildCommand builds the ccproxy-testmcp command (once per process) and
// returns the path of the binary. The binary lives at a fixed place under
// the system temp directory, one per checkout, and is replaced atomically on
// each build, so concurrent test processes never see a half-written file and
// nothing piles up. Errors are returned with go build's output.
func BuildCommand() (string, error) {
	buildOnce.Do(func() { buildPath, buildErr = build() })
	return buildPath, buildErr
}

func build() (string, error) {
	root, err := testkit.ModuleRoot()
	if err != nil {
		return "", fmt.Errorf("building ccproxy-testmcp: %w", err)
	}
	sum := sha256.Sum256([]byte(root))
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("ccproxy-testkit-%d-%s", os.Getuid(), hex.EncodeToString(sum[:6])))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("building ccproxy-testmcp: %w", err)
	}
	tmp, err := os.CreateTemp(dir, "ccproxy-testmcp-*.tmp")
	if err != nil {
		return "", fmt.Errorf("building ccproxy-testmcp: %w", err)
	}
	tmp.Close()
	defer os.Remove(tmp.Name()) // gone after the rename; cleans up after a failure
	cmd := exec.Command(goTool(), "build", "-o", tmp.Name(), CommandPackage)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %w\n%s", CommandPackage, err, out)
	}
	final := filepath.Join(dir, "ccproxy-testmcp")
	if err := os.Rename(tmp.Name(), final); err != nil {
		return "", fmt.Errorf("building ccproxy-testmcp: %w", err)
	}
	return final, nil
}

// goTool is the go command. `go test` puts its own toolchain's bin
// directory first on PATH, so tests build with the toolchain running them.
func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return "go"
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
