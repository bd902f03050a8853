package testkit

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sync"

	"github.com/ccproxy/ccproxy/internal/privdir"
)

// builds holds one build per package path for this process.
var builds struct {
	mu  sync.Mutex
	pkg map[string]*build
}

type build struct {
	once sync.Once
	path string
	err  error
}

// BuildCommand builds the command package pkgPath (an import path in this
// module, such as github.com/ccproxy/ccproxy/cmd/ccproxy) once per process
// and returns the path of the binary; later calls return the first call's
// answer. The binary lives at a fixed place under the system temp directory,
// one per checkout and package, and is replaced atomically on each build, so
// concurrent test processes never see a half-written file and nothing piles
// up. Errors are returned with go build's output.
func BuildCommand(pkgPath string) (string, error) {
	builds.mu.Lock()
	if builds.pkg == nil {
		builds.pkg = map[string]*build{}
	}
	b := builds.pkg[pkgPath]
	if b == nil {
		b = &build{}
		builds.pkg[pkgPath] = b
	}
	builds.mu.Unlock()
	b.once.Do(func() { b.path, b.err = buildCommand(pkgPath) })
	return b.path, b.err
}

func buildCommand(pkgPath string) (string, error) {
	name := path.Base(pkgPath)
	root, err := ModuleRoot()
	if err != nil {
		return "", fmt.Errorf("building %s: %w", name, err)
	}
	// One directory per checkout, holding one per package (named with a hash
	// of its full path, so two commands with the same last element do not
	// share one, and made only once a build succeeded); the binary keeps the
	// command's name, as it shows in process listings.
	rootSum, pkgSum := sha256.Sum256([]byte(root)), sha256.Sum256([]byte(pkgPath))
	base := privdir.UserTemp("ccproxy-testkit") + "-" + hex.EncodeToString(rootSum[:6])
	if err := os.MkdirAll(base, 0o755); err != nil {
		return "", fmt.Errorf("building %s: %w", name, err)
	}
	tmp, err := os.CreateTemp(base, name+"-*.tmp")
	if err != nil {
		return "", fmt.Errorf("building %s: %w", name, err)
	}
	tmp.Close()
	defer os.Remove(tmp.Name()) // gone after the rename; cleans up after a failure
	cmd := exec.Command(goTool(), "build", "-o", tmp.Name(), pkgPath)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %w\n%s", pkgPath, err, out)
	}
	dir := filepath.Join(base, name+"-"+hex.EncodeToString(pkgSum[:4]))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("building %s: %w", name, err)
	}
	final := filepath.Join(dir, name)
	if err := os.Rename(tmp.Name(), final); err != nil { // atomic: the same file system
		return "", fmt.Errorf("building %s: %w", name, err)
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
