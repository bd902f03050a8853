package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ccproxy/ccproxy/internal/replay"
)

func newReplayClaudeCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "replay-claude [--replay FILE] [--speed X] [claude flags...]",
		Short:  "impersonate the Claude Code CLI by replaying a transcript (serve --demo and tests)",
		Hidden: true, // internal: what --demo runs instead of claude
		// It takes claude's command line, parsed by its body.
		DisableFlagParsing: true,
		Args:               cobra.ArbitraryArgs,
		RunE: func(c *cobra.Command, args []string) error {
			return runReplayClaude(c.Context(), args, c.InOrStdin(), c.OutOrStdout(), c.ErrOrStderr())
		},
	}
}

// runReplayClaude implements the hidden `ccproxy replay-claude`: it
// impersonates the Claude Code CLI by replaying a transcript (the embedded
// demo unless --replay FILE) in answer to stream-json on stdin.
//
//	ccproxy replay-claude [--replay FILE] [--speed X] [claude flags...]
//
// The flags the proxy passes to claude are accepted: --include-partial-messages,
// --replay-user-messages, --model, --permission-mode and --resume /
// --session-id are honoured, the others ignored. --version prints the
// version the transcripts were recorded with.
func runReplayClaude(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	opts := replay.Options{Speed: 1, Logger: slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	file := ""
	for i := 0; i < len(args); i++ {
		name, value, hasValue := strings.Cut(args[i], "=")
		if !strings.HasPrefix(name, "-") || hasValue && !strings.HasPrefix(name, "--") {
			continue // a value of an ignored flag, or a prompt
		}
		// take returns the flag's value: after "=" or the next argument.
		take := func() (string, error) {
			if hasValue {
				return value, nil
			}
			if i+1 >= len(args) {
				return "", usagef("replay-claude: %s needs a value", name)
			}
			i++
			return args[i], nil
		}
		var err error
		switch name {
		case "--version", "-v":
			fmt.Fprintln(stdout, replay.VersionLine)
			return nil
		case "--replay":
			file, err = take()
		case "--speed":
			var v string
			if v, err = take(); err == nil {
				opts.Speed, err = strconv.ParseFloat(v, 64)
				if err == nil {
					err = replay.CheckSpeed(opts.Speed)
				}
				if err != nil {
					return usagef("replay-claude: --speed %q: want a number ≥ 0 (1 realistic, 0 no delays)", v)
				}
			}
		case "--include-partial-messages":
			opts.PartialMessages = true
		case "--replay-user-messages":
			opts.ReplayUserMessages = true
		case "--model":
			opts.Model, err = take()
		case "--permission-mode":
			opts.PermissionMode, err = take()
		case "--resume", "-r", "--session-id":
			opts.SessionID, err = take()
		case "--input-format", "--output-format":
			var v string
			if v, err = take(); err == nil && v != "stream-json" {
				return usagef("replay-claude: %s %s: only stream-json is supported", name, v)
			}
		}
		if err != nil {
			return err
		}
	}

	var t *replay.Transcript
	var err error
	if file != "" {
		t, err = replay.Open(file)
	} else {
		t, err = replay.Demo()
	}
	if err != nil {
		return err
	}
	r, err := replay.New(t, opts)
	if err != nil {
		return err
	}
	err = r.Run(ctx, stdin, stdout)
	if errors.Is(err, context.Canceled) && ctx.Err() != nil {
		return nil // a signal: stop quietly, as at the end of stdin
	}
	if err != nil {
		return fmt.Errorf("replay-claude: %w", err)
	}
	return nil
}
