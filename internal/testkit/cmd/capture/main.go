// Command capture re-makes ccproxy's real-CLI transcripts: for each
// scenario of package internal/testkit/capture it runs the real Claude Code
// CLI against the fake Anthropic API, with the npm server-everything and
// ccproxy-testmcp as MCP servers, saves stdout and the stdin log, and checks
// the capture.
//
//	go run ./internal/testkit/cmd/capture -out testdata/transcripts/captured [-claude PATH] [-only a,b]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/ccproxy/ccproxy/internal/testkit"
	"github.com/ccproxy/ccproxy/internal/testkit/capture"
	"github.com/ccproxy/ccproxy/internal/testkit/mcptest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "capture:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("capture", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "testdata/transcripts/captured", "output `directory`")
	claude := fs.String("claude", "", "Claude Code CLI `path` (default: $CCPROXY_TEST_CLAUDE or the one scripts/test.sh installs)")
	everything := fs.String("everything", "", "mcp-server-everything `path` (default: the one scripts/test.sh installs)")
	testmcp := fs.String("testmcp", "", "ccproxy-testmcp `path` (default: go build it)")
	only := fs.String("only", "", "comma-separated scenario `names` (default: all)")
	timeout := fs.Duration("timeout", 3*time.Minute, "time limit per scenario")
	keep := fs.Bool("keep", false, "keep each scenario's HOME and project directory")
	verbose := fs.Bool("v", false, "log progress and every fake API request")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	var err error
	if *claude == "" {
		if *claude, err = testkit.ClaudePath(); err != nil {
			return fmt.Errorf("finding the Claude Code CLI (use -claude): %w", err)
		}
	}
	if *everything == "" {
		if *everything, err = testkit.NodeBinPath("mcp-server-everything"); err != nil {
			return fmt.Errorf("finding mcp-server-everything (use -everything): %w", err)
		}
	}
	if *testmcp == "" {
		if *testmcp, err = mcptest.BuildCommand(); err != nil {
			return err
		}
	}
	scenarios, err := pick(*only)
	if err != nil {
		return err
	}
	cfg := capture.Config{Claude: *claude, Everything: *everything, TestMCP: *testmcp, OutDir: *out,
		Timeout: *timeout, Logger: log, KeepTemp: *keep}

	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "scenario\tlines\tbytes\tlongest line\texit\ttime\tleft behind\tfile")
	var failures []error
	for _, sc := range scenarios {
		res, err := capture.Run(ctx, cfg, sc)
		if err != nil {
			failures = append(failures, err)
			continue
		}
		tr, err := capture.ReadTranscript(res.StdoutPath)
		if err != nil {
			failures = append(failures, err)
			continue
		}
		failures = append(failures, capture.Verify(sc, tr, res)...)
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%.1fs\t%d\t%s\n", sc.Name, res.Lines, res.Bytes, res.MaxLine,
			res.ExitCode, res.Duration.Seconds(), len(res.LeftBehind), res.StdoutPath)
		for _, p := range res.LeftBehind {
			log.Warn("capture: process left behind by the CLI (killed)", "scenario", sc.Name, "process", p)
		}
	}
	tw.Flush()
	return errors.Join(failures...)
}

func pick(only string) ([]capture.Scenario, error) {
	if only == "" {
		return capture.Scenarios(), nil
	}
	var out []capture.Scenario
	for _, name := range strings.Split(only, ",") {
		sc, ok := capture.ScenarioNamed(strings.TrimSpace(name))
		if !ok {
			var names []string
			for _, s := range capture.Scenarios() {
				names = append(names, s.Name)
			}
			return nil, fmt.Errorf("-only: no scenario %q (there are %s)", name, strings.Join(names, ", "))
		}
		out = append(out, sc)
	}
	return out, nil
}
