package claudecli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/ccproxy/ccproxy/internal/childproc"
)

// MinClaudeVersion is the oldest Claude Code CLI ccproxy runs: the version
// whose stream-json and control protocol ccproxy was built and tested
// against (stdio permission prompts, mcp_set_servers, mcp_status).
const MinClaudeVersion = "2.1.329"

// ClaudeEnv is the environment variable naming the Claude Code CLI to run
// when no explicit path is given.
const ClaudeEnv = "CCPROXY_CLAUDE"

// Claude is a located Claude Code CLI.
type Claude struct {
	Path    string // absolute or as given
	Version string // e.g. "2.1.329"
}

// ErrClaudeUnavailable is wrapped by every error of FindClaude.
var ErrClaudeUnavailable = errors.New("claude code CLI unavailable")

// FindClaude locates the Claude Code CLI: explicit (a --claude flag) if set,
// else $CCPROXY_CLAUDE (read with getenv), else "claude" on PATH. It runs
// `<path> --version` and checks it against minVersion (MinClaudeVersion when
// ""). The errors wrap ErrClaudeUnavailable and say how to fix the problem.
func FindClaude(ctx context.Context, explicit string, getenv func(string) string, minVersion string) (Claude, error) {
	return FindClaudePrefixed(ctx, explicit, nil, getenv, minVersion)
}

// FindClaudePrefixed is FindClaude with arguments placed before --version
// (a stand-in command such as `ccproxy replay-claude`).
func FindClaudePrefixed(ctx context.Context, explicit string, prefix []string, getenv func(string) string, minVersion string) (Claude, error) {
	if minVersion == "" {
		minVersion = MinClaudeVersion
	}
	path, from := explicit, "--claude"
	if path == "" && getenv != nil {
		path, from = getenv(ClaudeEnv), "$"+ClaudeEnv
	}
	if path == "" {
		p, err := exec.LookPath("claude")
		if err != nil {
			return Claude{}, fmt.Errorf("%w: no --claude PATH given, $%s is not set, and \"claude\" is not on PATH; install it (npm install -g @anthropic-ai/claude-code) or point --claude at it", ErrClaudeUnavailable, ClaudeEnv)
		}
		path, from = p, "PATH"
	}
	st, err := os.Stat(path)
	switch {
	case err != nil:
		return Claude{}, fmt.Errorf("%w: %s (from %s) does not exist: %v", ErrClaudeUnavailable, path, from, errors.Unwrap(err))
	case st.IsDir():
		return Claude{}, fmt.Errorf("%w: %s (from %s) is a directory, not the claude executable", ErrClaudeUnavailable, path, from)
	case st.Mode()&0o111 == 0:
		return Claude{}, fmt.Errorf("%w: %s (from %s) is not executable", ErrClaudeUnavailable, path, from)
	}

	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, append(append([]string(nil), prefix...), "--version")...)
	out, errOut := childproc.NewHead(4096), childproc.NewHead(4096)
	cmd.Stdout = out
	cmd.Stderr = errOut
	cmd.WaitDelay = time.Second
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errOut.String())
		if len(msg) > 300 {
			msg = msg[:300] + "…"
		}
		if msg != "" {
			msg = ": " + msg
		}
		return Claude{}, fmt.Errorf("%w: running %s --version (from %s) failed: %v%s", ErrClaudeUnavailable, path, from, err, msg)
	}
	line := strings.TrimSpace(out.String())
	version, _, _ := strings.Cut(line, " ")
	have, ok := parseVersion(version)
	if !ok {
		return Claude{}, fmt.Errorf("%w: %s (from %s) --version printed %.80q, not a Claude Code version such as \"%s (Claude Code)\"", ErrClaudeUnavailable, path, from, line, MinClaudeVersion)
	}
	want, ok := parseVersion(minVersion)
	if !ok {
		return Claude{}, fmt.Errorf("%w: bad minimum version %q", ErrClaudeUnavailable, minVersion)
	}
	if compareVersions(have, want) < 0 {
		return Claude{}, fmt.Errorf("%w: %s (from %s) is Claude Code %s, ccproxy needs %s or newer; update it (claude update, or npm install -g @anthropic-ai/claude-code@latest)", ErrClaudeUnavailable, path, from, version, minVersion)
	}
	return Claude{Path: path, Version: version}, nil
}

// parseVersion parses "MAJOR.MINOR.PATCH" (a pre-release suffix after "-"
// is ignored).
func parseVersion(s string) ([3]int, bool) {
	var v [3]int
	s, _, _ = strings.Cut(s, "-")
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return v, false
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return v, false
		}
		v[i] = n
	}
	return v, true
}

func compareVersions(a, b [3]int) int {
	for i := range a {
		if a[i] != b[i] {
			if a[i] < b[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}
