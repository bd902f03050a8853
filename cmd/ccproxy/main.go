// Command ccproxy sits between chat UIs and the Claude Code CLI. See doc.go.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

// usageError marks an error in the command line; it exits 2. help is the
// command whose --help the message points to ("ccproxy serve"); run fills
// it in.
type usageError struct{ msg, help string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{msg: fmt.Sprintf(format, args...)} }

// exitCode prints err once and decides the exit code: 0 success, 1
// failure, 2 usage (with a pointer to the command's --help).
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	fmt.Fprintln(stderr, "ccproxy:", err)
	var ue usageError
	if errors.As(err, &ue) {
		if ue.help != "" {
			fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", ue.help)
		}
		return 2
	}
	return 1
}

const rootLong = `ccproxy — a safe, well-formed event feed between chat UIs and the Claude Code CLI.

Try it without Claude Code or an API key, on a replayed demo session:
  ccproxy serve --demo    the web UI: open the one-time loginURL it prints
  ccproxy acp --demo      an Agent Client Protocol agent for editors (Zed, JetBrains, Neovim)

Flags that read an environment variable say so, as in "(env CCPROXY_TOKEN)";
the command line wins over the environment.

Exit status, the same for every command:
  0  success
  1  failure: the command could not do its work (a daemon that did not answer,
     a probed MCP server that failed, MCP config errors in 'mcp config' without
     --allow-errors, a port in use, ...)
  2  usage: an unknown command or flag, a wrong number of arguments, a bad flag
     or environment value; the message says which, and where to read more`

// exitStatusHelp ends every command's help.
const exitStatusHelp = `
Exit status: 0 success, 1 failure, 2 usage error (see 'ccproxy --help').
`

// run is the whole program: it builds the command tree, parses args and
// runs the command they name. Errors come back unprinted: exitCode prints
// them and decides the status.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	root := newRootCmd(stdin, stdout, stderr)
	root.SetArgs(args)
	// Every error that does not come out of a command's body is cobra's
	// own (unknown command, bad arguments): a usage error.
	ran := false
	markRun(root, &ran)
	c, err := root.ExecuteContextC(ctx)
	if err == nil {
		return nil
	}
	var ue usageError
	if !errors.As(err, &ue) {
		if ran {
			return err
		}
		ue = usageError{msg: commandName(c) + err.Error()}
	}
	if ue.help == "" && c != nil {
		ue.help = c.CommandPath()
	}
	return ue
}

// commandName is "serve: " for ccproxy serve, "" for the root: the prefix
// of a message about c.
func commandName(c *cobra.Command) string {
	if c == nil || !c.HasParent() {
		return ""
	}
	return strings.TrimPrefix(c.CommandPath(), c.Root().Name()+" ") + ": "
}

// newRootCmd builds the command tree on stdin, stdout and stderr. Each
// command's body is a runX function next to its flags; the commands write
// to c.OutOrStdout() and c.ErrOrStderr() and read c.InOrStdin().
func newRootCmd(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	var showVersion bool
	root := &cobra.Command{
		Use:   "ccproxy",
		Short: "a safe, well-formed event feed between chat UIs and the Claude Code CLI",
		Long:  rootLong,
		Args:  cobra.ArbitraryArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if showVersion {
				if len(args) > 0 {
					return usagef("--version takes no argument")
				}
				return runVersion(c.Context(), versionConfig{}, c.OutOrStdout())
			}
			return groupRun(c, args)
		},
		// The environment fills in the flags not on the command line.
		PersistentPreRunE: func(c *cobra.Command, args []string) error { return applyEnv(c, os.Getenv) },
		SilenceErrors:     true, // exitCode prints them, once
		SilenceUsage:      true,
	}
	root.Flags().BoolVar(&showVersion, "version", false, "print the version, as 'ccproxy version' does")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usagef("%s%v", commandName(c), err)
	})
	root.SetUsageTemplate(root.UsageTemplate() + exitStatusHelp)
	root.AddCommand(
		newServeCmd(),
		newACPCmd(),
		newNormalizeCmd(),
		newMCPCmd(),
		newStatusCmd(),
		newLoginURLCmd(),
		newVersionCmd(),
		newReplayClaudeCmd(),
	)
	root.SetIn(stdin)
	root.SetOut(stdout) // before the completion command, which keeps it
	root.SetErr(stderr)
	root.SetHelpCommand(newHelpCmd())
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd() // ccproxy completion bash|zsh|fish|powershell
	for _, c := range root.Commands() {
		if c.Name() == "completion" { // a group: an unknown shell is a usage error
			c.Args, c.RunE = cobra.ArbitraryArgs, groupRun
			c.Short = "print the shell completion script (bash, zsh, fish, powershell)"
			c.Long = "Prints the completion script of ccproxy for a shell; each shell's help says where to put it."
			for _, sh := range c.Commands() {
				sh.Short = "print the completion script for " + sh.Name()
			}
		}
	}
	return root
}

// groupRun is the body of a command that only groups others (ccproxy,
// ccproxy mcp): without a subcommand it prints its usage on stderr; an
// unknown one is a usage error with cobra's suggestions.
func groupRun(c *cobra.Command, args []string) error {
	if len(args) == 0 {
		fmt.Fprint(c.ErrOrStderr(), c.UsageString())
		return usagef("%sno command given", commandName(c))
	}
	msg := fmt.Sprintf("%sunknown command %q", commandName(c), args[0])
	if s := suggest(c, args[0]); len(s) > 0 {
		msg += "; did you mean " + strings.Join(s, " or ") + "?"
	}
	return usagef("%s", msg)
}

// suggest is what c would take for typed: cobra's suggestions (a prefix,
// or a name a few edits away), the closest first: one edit, and two only
// when none is one edit away ("lst" is list, not also get). cobra applies
// its default distance only on its own path, so SuggestionsFor alone
// matches prefixes only.
func suggest(c *cobra.Command, typed string) []string {
	for _, d := range []int{1, 2} {
		c.SuggestionsMinimumDistance = d
		if s := c.SuggestionsFor(typed); len(s) > 0 {
			return s
		}
	}
	return nil
}

// markRun makes every command of the tree set *ran when its body starts, so
// that run tells the body's errors from cobra's.
func markRun(c *cobra.Command, ran *bool) {
	if body := c.RunE; body != nil {
		c.RunE = func(c *cobra.Command, args []string) error {
			*ran = true
			return body(c, args)
		}
	}
	for _, sub := range c.Commands() {
		markRun(sub, ran)
	}
}

// newHelpCmd is `ccproxy help [command]`: cobra's, but an unknown command is
// a usage error rather than the root's help with exit 0.
func newHelpCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "help [command]",
		Short: "help about any command",
		Long:  "Prints the help of any command: ccproxy help mcp probe is ccproxy mcp probe --help.",
		Args:  cobra.ArbitraryArgs,
		ValidArgsFunction: func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			target, _, err := c.Root().Find(args)
			if err != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var names []cobra.Completion
			for _, sub := range target.Commands() {
				if sub.IsAvailableCommand() && strings.HasPrefix(sub.Name(), toComplete) {
					names = append(names, cobra.CompletionWithDesc(sub.Name(), sub.Short))
				}
			}
			return names, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(c *cobra.Command, args []string) error {
			target, rest, err := c.Root().Find(args)
			if err != nil || len(rest) > 0 {
				return usagef("help: unknown command %q", strings.Join(args, " "))
			}
			return target.Help()
		},
	}
}
