package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ccproxy/ccproxy/proxy"
)

// version is stamped by release builds (scripts/release.sh):
//
//	go build -ldflags "-X main.version=v1.2.3" ./cmd/ccproxy
//
// When it is empty, `ccproxy version` reports the module version from the
// build info instead (set by `go install ...@v1.2.3`, or a pseudo-version
// derived from the VCS for a build in a clone).
var version string

// revision, revisionTime and modified ("true" or "false") are stamped by
// scripts/release.sh too, which builds with -buildvcs=false: the go command
// stamps no VCS settings in a git worktree (its .git is a file), so its own
// stamps would make a worktree's build differ from a clone's. They are used
// only when the build info has no VCS settings (go build and go install in
// a clone have them).
var revision, revisionTime, modified string

// ccproxyVersion is the version of this binary, as `ccproxy version` prints
// it and `serve` announces it to clients in hello.
func ccproxyVersion() string {
	bi, _ := debug.ReadBuildInfo()
	return buildVersion(version, bi).Version
}

// stampedVCS fills in the VCS fields that release.sh stamped where the
// build info had none.
func stampedVCS(v *versionInfo) {
	if v.Revision == "" && revision != "" {
		v.Revision, v.Time, v.Modified = revision, revisionTime, modified == "true"
	}
}

// findClaude locates the Claude Code CLI for `ccproxy version`: explicit
// (--claude) if set, else $CCPROXY_CLAUDE, else claude on PATH. It is the
// one place this command depends on where FindClaude lives.
func findClaude(ctx context.Context, explicit string) (path, version string, err error) {
	c, err := proxy.FindClaude(ctx, explicit, os.Getenv, "")
	return c.Path, c.Version, err
}

// versionInfo is what `ccproxy version` prints; its JSON form is
// `ccproxy version --json`.
type versionInfo struct {
	Version   string      `json:"version"`            // v1.2.3, a pseudo-version, or (devel)
	Module    string      `json:"module,omitempty"`   // github.com/ccproxy/ccproxy
	Revision  string      `json:"revision,omitempty"` // VCS commit the binary was built from
	Time      string      `json:"time,omitempty"`     // that commit's time, RFC 3339
	Modified  bool        `json:"modified"`           // built from a work tree with uncommitted changes
	GoVersion string      `json:"go"`
	OS        string      `json:"os"`
	Arch      string      `json:"arch"`
	Claude    claudeFound `json:"claude"`
}

// claudeFound is the Claude Code CLI found, or why none was.
type claudeFound struct {
	Path    string `json:"path,omitempty"`
	Version string `json:"version,omitempty"`
	Error   string `json:"error,omitempty"`
}

// buildVersion reads the version fields from the stamped version and the
// binary's build info (bi may be nil: no build info).
func buildVersion(stamped string, bi *debug.BuildInfo) versionInfo {
	v := versionInfo{Version: stamped, GoVersion: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	if bi == nil {
		if v.Version == "" {
			v.Version = "(unknown)"
		}
		return v
	}
	v.Module = bi.Main.Path
	if v.Version == "" {
		v.Version = bi.Main.Version
	}
	if v.Version == "" {
		v.Version = "(devel)"
	}
	if bi.GoVersion != "" {
		v.GoVersion = bi.GoVersion
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		case "GOOS":
			v.OS = s.Value
		case "GOARCH":
			v.Arch = s.Value
		}
	}
	return v
}

// versionConfig is what `ccproxy version` was asked to do.
type versionConfig struct {
	asJSON bool
	claude string
}

func newVersionCmd() *cobra.Command {
	var cfg versionConfig
	c := &cobra.Command{
		Use:   "version [flags]",
		Short: "print ccproxy's version and the Claude Code CLI found (also: ccproxy --version)",
		Long:  "Prints ccproxy's version, revision, Go version and platform, and the Claude Code CLI found\n(a missing CLI is reported, not a failure). 'ccproxy --version' prints the same.",
		Args:  cobra.ArbitraryArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("version: unexpected argument %q", args[0])
			}
			cfg.claude = explicitClaude(c.Flags())
			return runVersion(c.Context(), cfg, c.OutOrStdout())
		},
	}
	c.Flags().BoolVar(&cfg.asJSON, "json", false, "print a JSON object")
	c.Flags().StringVar(&cfg.claude, "claude", "", "the Claude Code CLI to report, at `PATH` (default: claude on $PATH)")
	bindEnv(c.Flags(), "claude", envClaude)
	return c
}

// runVersion prints the version of ccproxy and of the Claude Code CLI it
// would run. A missing CLI is reported, not an error: the command succeeds.
// cfg.claude "" looks for $CCPROXY_CLAUDE, then claude on PATH.
func runVersion(ctx context.Context, cfg versionConfig, stdout io.Writer) error {
	bi, _ := debug.ReadBuildInfo()
	v := buildVersion(version, bi)
	stampedVCS(&v)
	path, cv, err := findClaude(ctx, cfg.claude)
	if err != nil {
		v.Claude.Error = err.Error()
	} else {
		v.Claude.Path, v.Claude.Version = path, cv
	}
	if cfg.asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	_, err = io.WriteString(stdout, v.text())
	return err
}

// text is the human form: one "key: value" line each.
func (v versionInfo) text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "ccproxy %s\n", v.Version)
	if v.Revision != "" {
		rev := v.Revision
		if v.Modified {
			rev += " (modified)"
		}
		fmt.Fprintf(&b, "  revision: %s\n", rev)
	}
	if v.Time != "" {
		fmt.Fprintf(&b, "  time:     %s\n", v.Time)
	}
	fmt.Fprintf(&b, "  go:       %s %s/%s\n", v.GoVersion, v.OS, v.Arch)
	if v.Claude.Error != "" {
		fmt.Fprintf(&b, "  claude:   none: %s\n", v.Claude.Error)
	} else {
		fmt.Fprintf(&b, "  claude:   %s (%s)\n", v.Claude.Version, v.Claude.Path)
	}
	return b.String()
}
