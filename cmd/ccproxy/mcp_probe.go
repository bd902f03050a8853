package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ccproxy/ccproxy/mcpconfig"
	"github.com/ccproxy/ccproxy/mcpconfig/probe"
	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/proxy/mcpcalls"
	"github.com/ccproxy/ccproxy/stream"
)

// maxArgsBytes bounds the --args of `mcp call` (read from stdin with "-").
const maxArgsBytes = 16 << 20

// probeFlags are the flags `mcp probe`, `mcp tools` and `mcp call` share:
// where the configuration is (as for `mcp config`) and how to connect.
type probeFlags struct {
	project, managed string
	extra            []string
	trust            bool
	timeout          time.Duration
	verbose          bool
}

func (f *probeFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.project, "project", "", "project `DIR` (default: the working directory)")
	fs.StringArrayVar(&f.extra, "mcp-config", nil, "extra MCP config `FILE`, as given to ccproxy (repeatable; a later one wins)")
	fs.BoolVar(&f.trust, "trust-project-mcp", false, "approve every project .mcp.json server not rejected")
	fs.StringVar(&f.managed, "managed-config", "", "managed-mcp.json `FILE` to honour (default: the platform's)")
	fs.DurationVar(&f.timeout, "timeout", 0, "per-server timeout `DURATION` (default: $MCP_TIMEOUT milliseconds, else 5s)")
	fs.BoolVarP(&f.verbose, "verbose", "v", false, "log what the prober does to stderr")
}

// resolve reads the configuration and makes a Prober for it.
func (f *probeFlags) resolve(stderr io.Writer, mod func(*probe.ProberOptions)) (*mcpconfig.Config, *probe.Prober, error) {
	cfg, err := mcpconfig.Resolve(mcpconfig.Options{ProjectDir: f.project, Extra: f.extra, TrustProject: f.trust, ManagedPath: f.managed})
	if err != nil {
		return nil, nil, err
	}
	for _, e := range cfg.Errors {
		fmt.Fprintf(stderr, "ccproxy: config: %s (skipped)\n", e.Error())
	}
	opts := probe.ProberOptions{Timeout: f.timeout, Attachments: stream.Options{Attachments: stream.AttachStrip}}
	if f.verbose {
		opts.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	if mod != nil {
		mod(&opts)
	}
	return cfg, probe.NewProber(opts), nil
}

// mcpFailure prints the details of a failure (a stderr tail) and returns
// the error to report.
func mcpFailure(stderr io.Writer, cmd string, err error) error {
	var e *probe.Error
	if !errors.As(err, &e) {
		return fmt.Errorf("%s: %w", cmd, err)
	}
	printTail(stderr, e.StderrTail)
	return fmt.Errorf("%s: %s (%s)", cmd, e.Message, e.Code)
}

func printTail(w io.Writer, tail string) {
	if tail == "" {
		return
	}
	fmt.Fprintln(w, "the server's stderr ended with:")
	for _, l := range strings.Split(tail, "\n") {
		fmt.Fprintf(w, "  | %s\n", l)
	}
}

func newMCPProbeCmd() *cobra.Command {
	var pf probeFlags
	var asJSON bool
	var concurrency int
	c := mcpCmd("probe [NAME] [flags]", "connect to the servers (or NAME): status, latency, tools",
		`Connects to every configured MCP server (or NAME) with the MCP Go SDK,
initializes and lists its tools, resources and prompts. Servers that are
not active (awaiting approval, rejected, disabled) are not started. Exits
1, after printing every result, when a server asked for is not connected:
one that failed, or one not started because it is not active.`,
		func(c *cobra.Command, args []string) error {
			return runMCPProbe(c.Context(), &pf, asJSON, concurrency, args, c.OutOrStdout(), c.ErrOrStderr())
		})
	pf.register(c.Flags())
	c.Flags().BoolVar(&asJSON, "json", false, "print the mcp/probe reply data: {\"results\": [...]}")
	c.Flags().IntVar(&concurrency, "concurrency", probe.DefaultProbeConcurrency, "`N` servers probed at once")
	return c
}

// runMCPProbe implements `ccproxy mcp probe [NAME] [--json]`.
func runMCPProbe(ctx context.Context, pf *probeFlags, asJSON bool, concurrency int, pos []string, stdout, stderr io.Writer) error {
	if len(pos) > 1 {
		return usagef("mcp probe: want at most one server name, got %d", len(pos))
	}
	if concurrency < 1 {
		return usagef("mcp probe: --concurrency must be at least 1")
	}
	cfg, prober, err := pf.resolve(stderr, func(o *probe.ProberOptions) { o.Concurrency = concurrency })
	if err != nil {
		return fmt.Errorf("mcp probe: %w", err)
	}
	var results []protocol.ProbeResult
	if len(pos) == 1 {
		r, err := prober.Probe(ctx, cfg, pos[0])
		if err != nil {
			return mcpFailure(stderr, "mcp probe", err)
		}
		results = []protocol.ProbeResult{mcpcalls.ProbeResult(r)}
	} else {
		results = mcpcalls.ProbeResults(prober.ProbeAll(ctx, cfg))
	}
	if asJSON {
		if err := writeJSON(stdout, protocol.MCPProbeResult{Results: results}); err != nil {
			return err
		}
	} else {
		printProbe(stdout, results)
	}
	// One server asked for and not connected (active or not): a failure.
	if len(pos) == 1 && !results[0].OK {
		return fmt.Errorf("mcp probe: %s is %s (%s)", results[0].Name, results[0].Status, results[0].Error.Code)
	}
	return probeFailures(results)
}

// probeFailures is the error of a probe whose results are printed: the
// servers asked for that are not connected — probed and failed, or not
// started because they are not active (awaiting approval, rejected,
// disabled) — or nil when every one is.
func probeFailures(results []protocol.ProbeResult) error {
	var failed []string
	for _, r := range results {
		switch {
		case r.OK:
		case r.Error != nil && r.Error.Code == protocol.ProbeNotActive:
			failed = append(failed, r.Name+" ("+string(r.Status)+", not started)")
		default:
			failed = append(failed, r.Name+" ("+string(r.Status)+")")
		}
	}
	if len(failed) == 0 {
		return nil
	}
	return fmt.Errorf("mcp probe: %d of %d servers not connected: %s", len(failed), len(results), strings.Join(failed, ", "))
}

// printProbe prints the probe table, then failure details.
func printProbe(w io.Writer, results []protocol.ProbeResult) {
	if len(results) == 0 {
		fmt.Fprintln(w, "No MCP servers configured.")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVER\tSCOPE\tSTATUS\tLATENCY\tTOOLS\tDETAIL")
	for _, r := range results {
		latency, tools, detail := "-", "-", ""
		if r.Error == nil || r.Error.Code != protocol.ProbeNotActive {
			latency = fmtMillis(r.LatencyMs.Total)
		}
		if r.OK {
			tools = strconv.FormatInt(r.ToolCount, 10)
			if r.ServerInfo != nil {
				detail = r.ServerInfo.Name + " " + r.ServerInfo.Version + ", "
			}
			detail += "MCP " + r.ProtocolVersion + ", " + r.Transport
		} else if r.Error != nil {
			detail = r.Error.Code + ": " + strings.TrimPrefix(r.Error.Message, probe.MessagePrefix(r.Name))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.Name, r.Scope, r.Status, latency, tools, oneLine(detail, 160))
	}
	tw.Flush()
	for _, r := range results {
		if r.Error != nil && r.Error.StderrTail != "" {
			fmt.Fprintf(w, "\n%s: ", r.Name)
			printTail(w, r.Error.StderrTail)
		}
	}
}

func fmtMillis(ms float64) string {
	if ms >= 1000 {
		return strconv.FormatFloat(ms/1000, 'f', 2, 64) + " s"
	}
	return strconv.FormatFloat(ms, 'f', 0, 64) + " ms"
}

// oneLine shortens s to one line of at most n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func newMCPToolsCmd() *cobra.Command {
	var pf probeFlags
	var asJSON bool
	c := mcpCmd("tools NAME [flags]", "list the tools of server NAME with their parameters",
		"Connects to the server NAME and lists its tools with their parameters.",
		func(c *cobra.Command, args []string) error {
			return runMCPTools(c.Context(), &pf, asJSON, args, c.OutOrStdout(), c.ErrOrStderr())
		})
	pf.register(c.Flags())
	c.Flags().BoolVar(&asJSON, "json", false, "print the mcp/tools reply data: {\"server\", \"tools\": [...]}")
	return c
}

// runMCPTools implements `ccproxy mcp tools NAME [--json]`.
func runMCPTools(ctx context.Context, pf *probeFlags, asJSON bool, pos []string, stdout, stderr io.Writer) error {
	if len(pos) != 1 {
		return usagef("mcp tools: want exactly one server name")
	}
	cfg, prober, err := pf.resolve(stderr, nil)
	if err != nil {
		return fmt.Errorf("mcp tools: %w", err)
	}
	tools, err := prober.ListTools(ctx, cfg, pos[0])
	if err != nil {
		return mcpFailure(stderr, "mcp tools", err)
	}
	if asJSON {
		res := protocol.MCPToolsResult{Server: pos[0], Tools: make([]protocol.Tool, len(tools))}
		for i, t := range tools {
			res.Tools[i] = mcpcalls.Tool(t.Tool)
		}
		return writeJSON(stdout, res)
	}
	printTools(stdout, tools)
	return nil
}

func printTools(w io.Writer, tools []probe.ListedTool) {
	if len(tools) == 0 {
		fmt.Fprintln(w, "The server has no tools.")
		return
	}
	for i, t := range tools {
		if i > 0 {
			fmt.Fprintln(w)
		}
		head := t.Name
		if t.Title != "" && t.Title != t.Name {
			head += " (" + t.Title + ")"
		}
		if d := oneLine(t.Description, 200); d != "" {
			head += " — " + d
		}
		fmt.Fprintln(w, head)
		for _, n := range t.Notes {
			fmt.Fprintf(w, "  note (arguments): %s\n", oneLine(n, 200))
		}
		if len(t.Parameters) == 0 {
			fmt.Fprintln(w, "  (no parameters)")
			continue
		}
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, p := range t.Parameters {
			printParam(tw, p, "  ")
		}
		tw.Flush()
	}
}

// printParam prints one parameter and its children, indented.
func printParam(w io.Writer, p probe.Parameter, indent string) {
	typ := p.Type
	if p.Items != nil && len(p.Items.Properties) == 0 && p.Items.Items == nil {
		typ += " of " + p.Items.Type
	}
	if p.Nullable {
		typ += " or null"
	}
	var attrs []string
	if p.Required {
		attrs = append(attrs, "required")
	}
	if p.Default != nil {
		attrs = append(attrs, "default "+string(p.Default))
	}
	if len(p.Enum) > 0 {
		vals := make([]string, len(p.Enum))
		for i, e := range p.Enum {
			vals[i] = string(e)
		}
		attrs = append(attrs, "one of "+oneLine(strings.Join(vals, ", "), 80))
	}
	if p.Minimum != nil || p.Maximum != nil {
		attrs = append(attrs, "range "+bound(p.Minimum, "…")+".."+bound(p.Maximum, "…"))
	}
	if p.MinLength != nil || p.MaxLength != nil {
		attrs = append(attrs, "length "+boundInt(p.MinLength, "0")+".."+boundInt(p.MaxLength, "…"))
	}
	if p.Pattern != "" {
		attrs = append(attrs, "pattern "+p.Pattern)
	}
	if p.Format != "" {
		attrs = append(attrs, "format "+p.Format)
	}
	fmt.Fprintf(w, "%s%s\t%s\t%s\t%s\n", indent, p.Name, typ, strings.Join(attrs, ", "), oneLine(p.Description, 100))
	if p.Unsupported != "" {
		fmt.Fprintf(w, "%s\t\t\tnote: %s\n", indent, oneLine(p.Unsupported, 160))
	}
	for _, c := range p.Properties {
		printParam(w, c, indent+"  ")
	}
	if p.Items != nil && (len(p.Items.Properties) > 0 || p.Items.Items != nil || len(p.Items.AnyOf)+len(p.Items.OneOf) > 0) {
		printParam(w, *p.Items, indent+"  ")
	}
	for i, alt := range p.AnyOf {
		alt.Name = fmt.Sprintf("(any of #%d)", i+1)
		printParam(w, alt, indent+"  ")
	}
	for i, alt := range p.OneOf {
		alt.Name = fmt.Sprintf("(one of #%d)", i+1)
		printParam(w, alt, indent+"  ")
	}
}

func bound(v *float64, none string) string {
	if v == nil {
		return none
	}
	return strconv.FormatFloat(*v, 'f', -1, 64)
}

func boundInt(v *int64, none string) string {
	if v == nil {
		return none
	}
	return strconv.FormatInt(*v, 10)
}

// mcpCallFlags are the flags of `mcp call` besides probeFlags.
type mcpCallFlags struct {
	args, attach string
	asJSON       bool
	timeout      time.Duration
}

func newMCPCallCmd() *cobra.Command {
	var pf probeFlags
	var f mcpCallFlags
	c := mcpCmd("call NAME TOOL [flags]", "call TOOL of server NAME directly (arguments checked against its schema first)",
		"Calls TOOL of the active server NAME directly; the arguments are checked against\nthe tool's input schema first. Exits 1 when the tool reports an error.",
		func(c *cobra.Command, args []string) error {
			return runMCPCall(c.Context(), &pf, &f, args, c.InOrStdin(), c.OutOrStdout(), c.ErrOrStderr())
		})
	c.Example = `  ccproxy mcp call memory create_entities --args '{"entities": []}'
  echo '{"a": 1}' | ccproxy mcp call NAME TOOL --args -`
	pf.register(c.Flags())
	fs := c.Flags()
	fs.StringVar(&f.args, "args", "{}", "the tool's arguments: a `JSON` object, or - to read it from stdin")
	fs.BoolVar(&f.asJSON, "json", false, "print the mcp/call reply data")
	fs.StringVar(&f.attach, "attachments", "strip", "binary parts of the result: strip (describe them) or inline (base64 in --json)")
	fs.DurationVar(&f.timeout, "call-timeout", 0, "how long the tool may run: `DURATION` (default: $MCP_TOOL_TIMEOUT milliseconds, else 2m)")
	return c
}

// runMCPCall implements `ccproxy mcp call NAME TOOL --args JSON`.
func runMCPCall(ctx context.Context, pf *probeFlags, f *mcpCallFlags, pos []string, stdin io.Reader, stdout, stderr io.Writer) error {
	var err error
	if len(pos) != 2 {
		return usagef("mcp call: want a server name and a tool name")
	}
	mode, ok := stream.ParseAttachmentMode(f.attach)
	if !ok || mode == stream.AttachSink {
		return usagef("mcp call: --attachments must be strip or inline, got %q", f.attach)
	}
	raw := []byte(f.args)
	if f.args == "-" {
		if raw, err = io.ReadAll(io.LimitReader(stdin, maxArgsBytes+1)); err != nil {
			return fmt.Errorf("mcp call: reading the arguments from stdin: %w", err)
		}
		if len(raw) > maxArgsBytes {
			return usagef("mcp call: the arguments on stdin are larger than %d MiB", maxArgsBytes>>20)
		}
	}
	if !json.Valid(raw) {
		return usagef("mcp call: --args is not valid JSON")
	}
	cfg, prober, err := pf.resolve(stderr, func(o *probe.ProberOptions) {
		o.Attachments = stream.Options{Attachments: mode}
		o.CallTimeout = f.timeout
	})
	if err != nil {
		return fmt.Errorf("mcp call: %w", err)
	}
	res, err := prober.Call(ctx, cfg, pos[0], pos[1], raw)
	var invalid *probe.Error
	if errors.As(err, &invalid) && invalid.Code == probe.CodeInvalidArguments {
		fmt.Fprintln(stderr, "invalid arguments:")
		for _, f := range invalid.Fields {
			fmt.Fprintf(stderr, "  %s: %s (%s)\n", f.Path, f.Message, f.Code)
		}
		return fmt.Errorf("mcp call: invalid arguments for tool %q of server %q", pos[1], pos[0])
	}
	if err != nil {
		return mcpFailure(stderr, "mcp call", err)
	}
	if f.asJSON {
		if err := writeJSON(stdout, mcpcalls.CallResult(res)); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(stdout, res.Content)
		for _, a := range res.Attachments {
			fmt.Fprintf(stdout, "[attachment] %s %s %s sha256:%s\n", a.Kind, a.MediaType, stream.FormatSize(int(a.Size)), a.SHA256)
		}
		if len(res.StructuredContent) > 0 {
			fmt.Fprintf(stdout, "structuredContent: %s\n", res.StructuredContent)
		}
		fmt.Fprintf(stderr, "(%s.%s took %s)\n", res.Server, res.Tool, fmtMillis(res.DurationMs))
	}
	if res.IsError {
		return fmt.Errorf("mcp call: %s of server %q reported an error", res.Tool, res.Server)
	}
	return nil
}
