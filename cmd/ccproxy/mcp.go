package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/ccproxy/ccproxy/internal/childproc"
	"github.com/ccproxy/ccproxy/mcpconfig"
	"github.com/ccproxy/ccproxy/proxy/claudecli"
)

const mcpUsage = `Usage:
  ccproxy mcp config [--project DIR] [--json] [--mcp-config FILE]... [--trust-project-mcp] [--allow-mcp-tools] [--managed-config FILE]
        print the MCP servers Claude Code would load, merged and approved
  ccproxy mcp list --from-cli [--claude PATH] [--project DIR] [--json] [--timeout DURATION]
        run 'claude mcp list' in DIR and show its parsed result
  ccproxy mcp approve|reject NAME [--project DIR]
        record an approval (or rejection) of a project .mcp.json server in
        DIR/.claude/settings.local.json, where the interactive CLI reads it
  ccproxy mcp add NAME [-s local|project|user] [-t stdio|http|sse] [-e KEY=VALUE]... [-H "Name: value"]... [--force] -- COMMAND [ARGS...] | URL
        add a server where 'claude mcp add' writes it, in the same shape
  ccproxy mcp add-json NAME JSON|- [-s SCOPE] [--force]
        add a server from its JSON definition, checked as in a file
  ccproxy mcp remove NAME [-s SCOPE]
        remove a server (a name in several scopes needs -s)
  ccproxy mcp get NAME
        show the definitions of NAME in each scope (values redacted)
  ccproxy mcp probe [NAME] [--json] [--project DIR] [--timeout DURATION]
        connect to the servers (or NAME) with the MCP Go SDK: status, latency, tools
  ccproxy mcp tools NAME [--json]
        the tools of NAME with their parameters
  ccproxy mcp call NAME TOOL --args JSON
        call a tool of an active server directly (arguments validated first)
`

// runMCP implements `ccproxy mcp ...`.
func runMCP(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, mcpUsage)
		return usagef("mcp: no subcommand given")
	}
	switch args[0] {
	case "config":
		return runMCPConfig(args[1:], stdout, stderr)
	case "list":
		return runMCPList(ctx, args[1:], stdout, stderr)
	case "approve", "reject":
		return runMCPApprove(args[0], args[1:], stdout, stderr)
	case "add":
		return runMCPAdd(args[1:], stdout, stderr)
	case "add-json":
		return runMCPAddJSON(args[1:], stdin, stdout, stderr)
	case "remove":
		return runMCPRemove(args[1:], stdout, stderr)
	case "get":
		return runMCPGet(args[1:], stdout, stderr)
	case "probe":
		return runMCPProbe(ctx, args[1:], stdout, stderr)
	case "tools":
		return runMCPTools(ctx, args[1:], stdout, stderr)
	case "call":
		return runMCPCall(ctx, args[1:], stdin, stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, mcpUsage)
		return nil
	default:
		fmt.Fprint(stderr, mcpUsage)
		return usagef("mcp: unknown subcommand %q", args[0])
	}
}

// multiFlag is a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(s string) error { *m = append(*m, s); return nil }

func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// parseFlags parses args, allowing flags after positional arguments, and
// returns the positional arguments.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, usagef("%s: %v", fs.Name(), err)
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

func runMCPConfig(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("mcp config", stderr)
	project := fs.String("project", "", "project directory (default: the working directory)")
	asJSON := fs.Bool("json", false, "print one JSON object")
	var extra multiFlag
	fs.Var(&extra, "mcp-config", "extra MCP config file, as given to ccproxy (repeatable; a later one wins)")
	trust := fs.Bool("trust-project-mcp", false, "approve every project .mcp.json server not rejected")
	allowTools := fs.Bool("allow-mcp-tools", false, "allow every tool of every active server without asking, as serve --allow-mcp-tools")
	managed := fs.String("managed-config", "", "managed-mcp.json to honour (default: the platform's)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("mcp config: unexpected argument %q", pos[0])
	}
	cfg, err := mcpconfig.Resolve(mcpconfig.Options{
		ProjectDir: *project, Extra: extra, TrustProject: *trust, AllowServerTools: *allowTools, ManagedPath: *managed,
	})
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, cfg.Redacted())
	}
	printConfig(stdout, cfg)
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
	fmt.Fprintf(w, "\n--allowedTools: %s\n", strings.Join(v.AllowedTools, " "))
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

func runMCPApprove(verb string, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("mcp "+verb, stderr)
	project := fs.String("project", "", "project directory (default: the working directory)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("mcp %s: want exactly one server name", verb)
	}
	do := mcpconfig.Approve
	if verb == "reject" {
		do = mcpconfig.Reject
	}
	cfg, err := do(mcpconfig.Options{ProjectDir: *project}, pos[0])
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

func runMCPList(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("mcp list", stderr)
	fromCLI := fs.Bool("from-cli", false, "run 'claude mcp list' and parse its output (required)")
	claude := fs.String("claude", "", "the claude executable (default: $"+claudecli.ClaudeEnv+", else claude on PATH)")
	project := fs.String("project", "", "directory to run it in (default: the working directory)")
	asJSON := fs.Bool("json", false, "print one JSON object")
	timeout := fs.Duration("timeout", 2*time.Minute, "give up after this long (claude checks every server's health)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("mcp list: unexpected argument %q", pos[0])
	}
	if !*fromCLI {
		return usagef("mcp list: only --from-cli is supported; `ccproxy mcp config` shows ccproxy's own view")
	}
	// --claude, $CCPROXY_CLAUDE or PATH, as `ccproxy serve` finds it.
	found, err := claudecli.FindClaude(ctx, *claude, os.Getenv, "")
	if err != nil {
		return fmt.Errorf("mcp list: %w", err)
	}
	// It runs in --project: a relative path is relative to the working
	// directory.
	bin, err := filepath.Abs(found.Path)
	if err != nil {
		return fmt.Errorf("mcp list: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "mcp", "list")
	cmd.Dir = *project
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
		return fmt.Errorf("mcp list: %s mcp list did not finish within %v", bin, *timeout)
	case errors.Is(perr, mcpconfig.ErrCLIOutputTooLarge):
		return fmt.Errorf("mcp list: %s mcp list printed more than %d MiB", bin, mcpconfig.MaxCLIOutput>>20)
	case err != nil:
		return fmt.Errorf("mcp list: %s mcp list: %w: %s", bin, err, strings.TrimSpace(errOut.String()))
	case perr != nil:
		return fmt.Errorf("mcp list: %w", perr)
	}
	redactList(res, listSecrets(*project))
	if *asJSON {
		return writeJSON(stdout, res)
	}
	printList(stdout, res)
	return nil
}

// listSecrets is what `mcp list --from-cli` masks by value: the configured
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
