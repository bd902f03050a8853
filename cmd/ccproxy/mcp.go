package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ccproxy/ccproxy/internal/childproc"
	"github.com/ccproxy/ccproxy/mcpconfig"
	"github.com/ccproxy/ccproxy/proxy/claudecli"
)

func newMCPCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "mcp",
		Short: "MCP servers: the config Claude Code would load, approval, add/remove, probe, tools, call",
		Long: `Inspects and edits the MCP configuration Claude Code reads (the same files,
scopes and approvals), and talks to the configured servers directly with
the MCP Go SDK. Values that look secret are redacted in every output.`,
		Args: cobra.ArbitraryArgs,
		RunE: groupRun,
	}
	c.AddCommand(
		newMCPConfigCmd(),
		newMCPListCmd(),
		newMCPApproveCmd("approve"),
		newMCPApproveCmd("reject"),
		newMCPAddCmd(),
		newMCPAddJSONCmd(),
		newMCPRemoveCmd(),
		newMCPGetCmd(),
		newMCPProbeCmd(),
		newMCPToolsCmd(),
		newMCPCallCmd(),
	)
	return c
}

// mcpCmd is a leaf of `ccproxy mcp`: use, short and long as in
// cobra.Command; run gets the positional arguments (flags may come after
// them, and every argument after "--" is positional).
func mcpCmd(use, short, long string, run func(c *cobra.Command, args []string) error) *cobra.Command {
	return &cobra.Command{Use: use, Short: short, Long: long, Args: cobra.ArbitraryArgs, RunE: run}
}

// projectFlag registers --project, the directory whose configuration is read.
func projectFlag(fs *pflag.FlagSet) *string {
	return fs.String("project", "", "project `DIR` (default: the working directory)")
}

// mcpConfigFlags are the flags of `mcp config`.
type mcpConfigFlags struct {
	project, managed                 string
	extra                            []string
	asJSON, trust, allowTools, allow bool
}

func newMCPConfigCmd() *cobra.Command {
	var f mcpConfigFlags
	c := mcpCmd("config [flags]", "print the MCP servers Claude Code would load: merged, approved, redacted",
		`Prints the MCP servers Claude Code would load in the project: each one's scope,
source (file:line:column), shadowed definitions, approval and missing ${VAR}s,
values redacted; then the --allowedTools ccproxy passes. Entries with errors
are skipped and listed: the command then fails (exit 1) unless --allow-errors.`,
		func(c *cobra.Command, args []string) error { return runMCPConfig(&f, args, c.OutOrStdout()) })
	fs := c.Flags()
	fs.StringVar(&f.project, "project", "", "project `DIR` (default: the working directory)")
	fs.BoolVar(&f.asJSON, "json", false, "print one JSON object")
	fs.StringArrayVar(&f.extra, "mcp-config", nil, "extra MCP config `FILE`, as given to ccproxy (repeatable; a later one wins)")
	fs.BoolVar(&f.trust, "trust-project-mcp", false, "approve every project .mcp.json server not rejected")
	fs.BoolVar(&f.allowTools, "allow-mcp-tools", false, "allow every tool of every active server without asking, as serve --allow-mcp-tools")
	fs.StringVar(&f.managed, "managed-config", "", "managed-mcp.json `FILE` to honour (default: the platform's)")
	fs.BoolVar(&f.allow, "allow-errors", false, "exit 0 even when configuration entries have errors (they are skipped, as Claude Code skips them)")
	return c
}

func runMCPConfig(f *mcpConfigFlags, pos []string, stdout io.Writer) error {
	if len(pos) > 0 {
		return usagef("mcp config: unexpected argument %q", pos[0])
	}
	cfg, err := mcpconfig.Resolve(mcpconfig.Options{
		ProjectDir: f.project, Extra: f.extra, TrustProject: f.trust, AllowServerTools: f.allowTools, ManagedPath: f.managed,
	})
	if err != nil {
		return err
	}
	if f.asJSON {
		if err := writeJSON(stdout, cfg.Redacted()); err != nil {
			return err
		}
	} else {
		printConfig(stdout, cfg)
	}
	if n := len(cfg.Errors); n > 0 && !f.allow {
		return fmt.Errorf("mcp config: %d configuration error(s), listed above (their entries are skipped); --allow-errors exits 0 all the same", n)
	}
	return nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// printConfig prints the redacted configuration for people.
func printConfig(w io.Writer, cfg *mcpconfig.Config) {
	v := cfg.Redacted()
	trust := "not trusted"
	if v.Trusted {
		trust = "trusted"
	}
	fmt.Fprintf(w, "Project: %s (%s)\nHome:    %s\n", v.ProjectDir, trust, v.HomeDir)
	if v.ManagedPresent {
		fmt.Fprintln(w, "Managed: managed-mcp.json is present; only its servers load")
	}
	fmt.Fprintln(w)
	if len(v.Servers) == 0 {
		fmt.Fprintln(w, "No MCP servers configured.")
	} else {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "SERVER\tSCOPE\tTYPE\tSTATE\tSOURCE")
		for _, s := range v.Servers {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s:%d:%d\n", s.Name, s.Scope, s.Type, serverState(s), s.Source, s.Line, s.Column)
		}
		tw.Flush()
		for _, s := range v.Servers {
			notes := []string{"config: " + string(s.Redacted)}
			if s.Reason != "" && s.Reason != serverState(s) {
				notes = append(notes, s.Reason)
			}
			if len(s.MissingEnv) > 0 {
				notes = append(notes, "missing environment variables (left literal): "+strings.Join(s.MissingEnv, ", "))
			}
			for _, o := range s.Shadows {
				n := fmt.Sprintf("shadows the %s definition in %s", o.Scope, o.Source)
				if o.Scope.Rank() > s.Scope.Rank() {
					n = fmt.Sprintf("the %s definition in %s would win, but it is %s", o.Scope, o.Source, o.Approval)
				} else if o.Approval != "" && o.Approval != mcpconfig.ApprovalNotNeeded {
					n += " (" + string(o.Approval) + ")"
				}
				notes = append(notes, n)
			}
			fmt.Fprintf(w, "\n%s:\n", s.Name)
			for _, n := range notes {
				fmt.Fprintf(w, "  - %s\n", n)
			}
		}
	}
	if len(v.Errors) > 0 {
		fmt.Fprintf(w, "\nErrors (%d; those entries are skipped):\n", len(v.Errors))
		for _, e := range v.Errors {
			fmt.Fprintf(w, "  %s\n", e.Error())
		}
	}
	if len(v.AllowedTools) > 0 {
		fmt.Fprintf(w, "\n--allowedTools: %s\n", strings.Join(v.AllowedTools, " "))
	} else {
		fmt.Fprintf(w, "\n--allowedTools: none (every MCP tool asks unless a permission rule allows it)\n")
	}
	if deny := cfg.DisallowedTools(); len(deny) > 0 {
		fmt.Fprintf(w, "--disallowedTools: %s\n", strings.Join(deny, " "))
	}
}

func serverState(s mcpconfig.Server) string {
	switch {
	case s.Active:
		return "active"
	case s.Approval == mcpconfig.ApprovalAwaiting:
		return "awaiting approval"
	case s.Approval == mcpconfig.ApprovalRejected:
		return "rejected"
	case s.Disabled:
		return "disabled"
	}
	return "not loaded"
}

func newMCPApproveCmd(verb string) *cobra.Command {
	var project *string
	c := mcpCmd(verb+" NAME [flags]", verb+" a project (.mcp.json) server, as the interactive CLI records it",
		"Records the "+map[string]string{"approve": "approval", "reject": "rejection"}[verb]+` of the project (.mcp.json) server NAME in
DIR/.claude/settings.local.json, where the interactive CLI reads it.`,
		func(c *cobra.Command, args []string) error {
			return runMCPApprove(verb, *project, args, c.OutOrStdout())
		})
	project = projectFlag(c.Flags())
	return c
}

func runMCPApprove(verb, project string, pos []string, stdout io.Writer) error {
	if len(pos) != 1 {
		return usagef("mcp %s: want exactly one server name", verb)
	}
	do := mcpconfig.Approve
	if verb == "reject" {
		do = mcpconfig.Reject
	}
	cfg, err := do(mcpconfig.Options{ProjectDir: project}, pos[0])
	if err != nil {
		return err
	}
	s, _ := cfg.Server(pos[0])
	fmt.Fprintf(stdout, "%s: %s", s.Name, serverState(s))
	if !s.Active && s.Reason != "" {
		fmt.Fprintf(stdout, " (%s)", s.Reason)
	}
	fmt.Fprintln(stdout)
	return nil
}

// mcpListFlags are the flags of `mcp list`.
type mcpListFlags struct {
	fromCLI, asJSON bool
	claude, project string
	timeout         time.Duration
}

func newMCPListCmd() *cobra.Command {
	var f mcpListFlags
	c := mcpCmd("list [flags]", "run 'claude mcp list' and show its parsed result",
		`Runs 'claude mcp list' in DIR (claude checks every server's health) and
prints its parsed result, secrets redacted. 'ccproxy mcp config' shows
ccproxy's own view of the configuration.`,
		func(c *cobra.Command, args []string) error {
			f.claude = explicitClaude(c.Flags())
			return runMCPList(c.Context(), &f, args, c.OutOrStdout())
		})
	fs := c.Flags()
	// Its only mode, once required: accepted still, so scripts that pass
	// it keep working, and hidden.
	fs.BoolVar(&f.fromCLI, "from-cli", true, "run 'claude mcp list' and parse its output (the default; the only mode)")
	_ = fs.MarkHidden("from-cli")
	fs.StringVar(&f.claude, "claude", "", "the claude executable, at `PATH` (default: claude on $PATH)")
	bindEnv(fs, "claude", envClaude)
	fs.StringVar(&f.project, "project", "", "`DIR` to run it in (default: the working directory)")
	fs.BoolVar(&f.asJSON, "json", false, "print one JSON object")
	fs.DurationVar(&f.timeout, "timeout", 2*time.Minute, "give up after `DURATION` (claude checks every server's health)")
	return c
}

func runMCPList(ctx context.Context, f *mcpListFlags, pos []string, stdout io.Writer) error {
	if len(pos) > 0 {
		return usagef("mcp list: unexpected argument %q", pos[0])
	}
	if !f.fromCLI {
		return usagef("mcp list: --from-cli=false: running 'claude mcp list' is its only mode; `ccproxy mcp config` shows ccproxy's own view")
	}
	// --claude, $CCPROXY_CLAUDE or PATH, as `ccproxy serve` finds it.
	found, err := claudecli.FindClaude(ctx, f.claude, os.Getenv, "")
	if err != nil {
		return fmt.Errorf("mcp list: %w", err)
	}
	// It runs in --project: a relative path is relative to the working
	// directory.
	bin, err := filepath.Abs(found.Path)
	if err != nil {
		return fmt.Errorf("mcp list: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "mcp", "list")
	cmd.Dir = f.project
	// The output streams into ParseList, whose bound (MaxCLIOutput) is the
	// only one: once it stops reading, closing the pipe makes claude's
	// further writes fail, so it ends.
	out, outW := io.Pipe()
	errOut := childproc.NewHead(4 << 10)
	cmd.Stdout, cmd.Stderr = outW, errOut
	cmd.WaitDelay = 5 * time.Second
	// Its own process group, killed whole when the context is cancelled.
	cmd.Cancel = func() error { return childproc.SignalGroup(cmd.Process.Pid, syscall.SIGKILL) }
	if err := childproc.Start(cmd); err != nil {
		return fmt.Errorf("mcp list: %s mcp list: %w", bin, err)
	}
	waited := make(chan error, 1)
	go func() {
		err := cmd.Wait()
		outW.Close() // the end of the output for ParseList
		waited <- err
	}()
	res, perr := mcpconfig.ParseList(out)
	out.CloseWithError(errors.New("mcp list: the output is not read any more"))
	err = <-waited
	// claude's health checks start MCP servers; none may outlive it.
	_ = childproc.SignalGroup(cmd.Process.Pid, syscall.SIGKILL)
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("mcp list: %s mcp list did not finish within %v", bin, f.timeout)
	case errors.Is(perr, mcpconfig.ErrCLIOutputTooLarge):
		return fmt.Errorf("mcp list: %s mcp list printed more than %d MiB", bin, mcpconfig.MaxCLIOutput>>20)
	case err != nil:
		return fmt.Errorf("mcp list: %s mcp list: %w: %s", bin, err, strings.TrimSpace(errOut.String()))
	case perr != nil:
		return fmt.Errorf("mcp list: %w", perr)
	}
	redactList(res, listSecrets(f.project))
	if f.asJSON {
		return writeJSON(stdout, res)
	}
	printList(stdout, res)
	return nil
}

// listSecrets is what `mcp list` masks by value: the configured
// secrets of the configuration claude read in dir (it prints targets with
// literal values in clear) and the secret-looking variables of our
// environment, which claude and its servers inherit.
func listSecrets(dir string) *mcpconfig.Secrets {
	sec := mcpconfig.EnvSecrets(os.Environ())
	if cfg, err := mcpconfig.Resolve(mcpconfig.Options{ProjectDir: dir}); err == nil {
		sec = mcpconfig.MergeSecrets(cfg.Secrets(), sec)
	}
	return sec
}

// redactList masks the secrets in the parsed output of `claude mcp list`:
// targets by position and by value, free text (failure reasons,
// diagnostics, lines not understood) by value.
func redactList(res *mcpconfig.ListOutput, sec *mcpconfig.Secrets) {
	for i := range res.Servers {
		e := &res.Servers[i]
		e.Target = e.RedactedTarget(sec)
		e.Detail = sec.Scrub(e.Detail)
		e.StatusText = sec.Scrub(e.StatusText)
	}
	for i := range res.Diagnostics {
		res.Diagnostics[i].Message = sec.Scrub(res.Diagnostics[i].Message)
	}
	for i := range res.Unparsed {
		res.Unparsed[i].Text = sec.Scrub(res.Unparsed[i].Text)
	}
}

func printList(w io.Writer, res *mcpconfig.ListOutput) {
	if len(res.Servers) == 0 {
		fmt.Fprintln(w, "No MCP servers configured.")
	} else {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "SERVER\tTYPE\tSTATUS\tTARGET\tDETAIL")
		for _, e := range res.Servers {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", e.Name, e.Transport, e.Status, e.Target, e.Detail)
		}
		tw.Flush()
	}
	if len(res.Diagnostics) > 0 {
		fmt.Fprintln(w, "\nDiagnostics:")
		for _, d := range res.Diagnostics {
			prefix := d.Section
			if d.Level != "" {
				prefix = d.Level
			}
			if d.Server != "" {
				prefix += " [" + d.Server + "]"
			}
			fmt.Fprintf(w, "  %s: %s\n", prefix, d.Message)
		}
	}
	for _, u := range res.Unparsed {
		fmt.Fprintf(w, "unparsed line %d: %s\n", u.Line, u.Text)
	}
}
