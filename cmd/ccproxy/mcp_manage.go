package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ccproxy/ccproxy/mcpconfig"
)

// `ccproxy mcp add|add-json|remove|get`: the same flags, defaults, scope
// rules and messages as `claude mcp add|add-json|remove|get` (2.1.329),
// writing what the CLI writes where it writes it (mcpconfig.AddServer,
// RemoveServer), with stricter input checks (docs/CLI-NOTES.md).

// manageFlags are the flags of `mcp add`, `add-json`, `remove` and `get`
// (each takes some).
type manageFlags struct {
	scope, project, transport string
	env, headers              []string
	force                     bool
}

// scopeFlags registers -s/--scope and --project.
func (f *manageFlags) scopeFlags(fs *pflag.FlagSet) {
	fs.StringVarP(&f.scope, "scope", "s", "", "configuration `SCOPE`: local (default), user or project")
	fs.StringVar(&f.project, "project", "", "project `DIR` (default: the working directory)")
}

// nameScope checks the server name an add command was given and parses
// its --scope.
func (f *manageFlags) nameScope(name string) (mcpconfig.Scope, error) {
	if err := mcpconfig.CheckName(name); err != nil {
		return "", err
	}
	return mcpconfig.ParseScope(f.scope)
}

func (f *manageFlags) forceFlag(fs *pflag.FlagSet) {
	fs.BoolVar(&f.force, "force", false, "replace a server of that name already in the scope")
}

func newMCPAddCmd() *cobra.Command {
	var f manageFlags
	c := mcpCmd("add NAME [flags] -- COMMAND [ARGS...] | URL", "add a server where 'claude mcp add' writes it, in the same shape",
		`Adds the server NAME where 'claude mcp add' writes it, in the same shape:
a stdio server runs COMMAND with ARGS (everything after "--" is passed as
it is), an http or sse server is at URL.`,
		func(c *cobra.Command, args []string) error {
			return runMCPAdd(&f, args, c.OutOrStdout(), c.ErrOrStderr())
		})
	c.Example = `  ccproxy mcp add memory -- npx -y @modelcontextprotocol/server-memory
  ccproxy mcp add -s user -t http docs https://example.com/mcp -H "Authorization: Bearer ${DOCS_TOKEN}"`
	fs := c.Flags()
	f.scopeFlags(fs)
	fs.StringVarP(&f.transport, "transport", "t", "", "`TRANSPORT`: stdio (default), http or sse")
	fs.StringArrayVarP(&f.env, "env", "e", nil, "environment variable `KEY=VALUE` for a stdio server (repeatable)")
	fs.StringArrayVarP(&f.headers, "header", "H", nil, "header `\"Name: value\"` for an http or sse server (repeatable)")
	f.forceFlag(fs)
	return c
}

func runMCPAdd(f *manageFlags, pos []string, stdout, stderr io.Writer) error {
	if len(pos) < 2 {
		return usagef("mcp add: want NAME and a COMMAND [ARGS...] (stdio) or URL (http, sse): ccproxy mcp add NAME -- COMMAND [ARGS...]")
	}
	name := pos[0]
	scope, err := f.nameScope(name)
	if err != nil {
		return err
	}
	tr, err := mcpconfig.ParseTransport(f.transport)
	if err != nil {
		return err
	}
	def, err := mcpconfig.BuildDefinition(mcpconfig.AddSpec{
		Transport: tr, CommandOrURL: pos[1], Args: pos[2:], Env: f.env, Headers: f.headers,
	})
	if err != nil {
		return err
	}
	warnProjectSecrets(scope, name, def, stderr)
	loc, err := mcpconfig.AddServer(mcpconfig.Options{ProjectDir: f.project}, scope, name, def, writeMode(f.force))
	if err != nil {
		return err
	}
	if tr == mcpconfig.TransportStdio {
		fmt.Fprintf(stdout, "Added stdio MCP server %s with command: %s %s to %s config\n",
			name, pos[1], strings.Join(mcpconfig.RedactArgs(pos[2:]), " "), scope)
	} else {
		fmt.Fprintf(stdout, "Added %s MCP server %s with URL: %s to %s config\n",
			strings.ToUpper(string(tr)), name, mcpconfig.RedactURL(pos[1]), scope)
		if len(f.headers) > 0 {
			fmt.Fprintf(stdout, "Headers: %s\n", redactedObject(def, "headers"))
		}
	}
	fmt.Fprintf(stdout, "File modified: %s\n", loc)
	return nil
}

func writeMode(force bool) mcpconfig.WriteMode {
	if force {
		return mcpconfig.AddOrReplace
	}
	return mcpconfig.AddNew
}

// redactedObject prints def[key] as the CLI does (two-space JSON), values
// of secret-looking names masked.
func redactedObject(def json.RawMessage, key string) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(def, &m) != nil {
		return "{}"
	}
	var obj map[string]string
	if json.Unmarshal(m[key], &obj) != nil {
		return "{}"
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("{\n")
	for i, k := range keys {
		v := obj[k]
		if mcpconfig.SecretName(k) {
			v = "[REDACTED]"
		}
		kj, _ := json.Marshal(k)
		vj, _ := json.Marshal(v)
		fmt.Fprintf(&b, "  %s: %s", kj, vj)
		if i < len(keys)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("}")
	return b.String()
}

// warnProjectSecrets warns when a project definition (.mcp.json, a file
// that is usually committed) holds a secret-looking value written
// literally, and suggests ${VAR}.
func warnProjectSecrets(scope mcpconfig.Scope, name string, def json.RawMessage, stderr io.Writer) {
	if scope != mcpconfig.ScopeProject {
		return
	}
	for _, entry := range mcpconfig.LiteralSecrets(def) {
		kind, key, _ := strings.Cut(entry, " ")
		v := strings.ToUpper(strings.NewReplacer("-", "_", " ", "_").Replace(key))
		fmt.Fprintf(stderr, "Warning: server %s: %s %s holds a literal value that looks secret, and .mcp.json is usually committed; "+
			"write ${%s} instead and set %s in your environment (or use --scope local)\n", name, kind, key, v, v)
	}
}

func newMCPAddJSONCmd() *cobra.Command {
	var f manageFlags
	c := mcpCmd("add-json NAME JSON|- [flags]", "add a server from its JSON definition, checked as in a file",
		"Adds the server NAME from its JSON definition (- reads it from stdin), checked\nas in a configuration file, where 'claude mcp add-json' writes it.",
		func(c *cobra.Command, args []string) error {
			return runMCPAddJSON(&f, args, c.InOrStdin(), c.OutOrStdout(), c.ErrOrStderr())
		})
	f.scopeFlags(c.Flags())
	f.forceFlag(c.Flags())
	return c
}

func runMCPAddJSON(f *manageFlags, pos []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(pos) != 2 {
		return usagef("mcp add-json: want NAME and JSON (or - to read it from stdin)")
	}
	name := pos[0]
	scope, err := f.nameScope(name)
	if err != nil {
		return err
	}
	data := []byte(pos[1])
	source := "the JSON argument"
	if pos[1] == "-" {
		source = "stdin"
		if data, err = io.ReadAll(io.LimitReader(stdin, mcpconfig.MaxFileSize+1)); err != nil {
			return fmt.Errorf("mcp add-json: read stdin: %w", err)
		}
		if len(data) > mcpconfig.MaxFileSize {
			return fmt.Errorf("mcp add-json: stdin is larger than %d MiB", mcpconfig.MaxFileSize>>20)
		}
	}
	def, tr, dropped, err := mcpconfig.NormalizeDefinition(source, name, data)
	if err != nil {
		return fmt.Errorf("Invalid configuration: %w", err)
	}
	if len(dropped) > 0 {
		fmt.Fprintf(stderr, "Warning: server %s: dropping keys Claude Code does not keep for a %s server: %s\n", name, tr, strings.Join(dropped, ", "))
	}
	warnProjectSecrets(scope, name, def, stderr)
	if _, err := mcpconfig.AddServer(mcpconfig.Options{ProjectDir: f.project}, scope, name, def, writeMode(f.force)); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Added %s MCP server %s to %s config\n", tr, name, scope)
	return nil
}

func newMCPRemoveCmd() *cobra.Command {
	var f manageFlags
	c := mcpCmd("remove NAME [flags]", "remove a server (a name in several scopes needs -s)",
		"Removes the server NAME from the configuration file of its scope; a name\ndefined in several scopes needs -s.",
		func(c *cobra.Command, args []string) error { return runMCPRemove(&f, args, c.OutOrStdout()) })
	f.scopeFlags(c.Flags())
	return c
}

func runMCPRemove(f *manageFlags, pos []string, stdout io.Writer) error {
	var err error
	if len(pos) != 1 {
		return usagef("mcp remove: want exactly one server name")
	}
	var scope mcpconfig.Scope
	if f.scope != "" {
		if scope, err = mcpconfig.ParseScope(f.scope); err != nil {
			return err
		}
	}
	loc, err := mcpconfig.RemoveServer(mcpconfig.Options{ProjectDir: f.project}, scope, pos[0])
	var se *mcpconfig.ScopesError
	if errors.As(err, &se) {
		// The CLI's text, with ccproxy's command in the suggestions.
		return errors.New(strings.ReplaceAll(se.Error(), "claude mcp remove", "ccproxy mcp remove"))
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Removed MCP server %s from %s config\nFile modified: %s\n", pos[0], loc.Scope, loc)
	return nil
}

func newMCPGetCmd() *cobra.Command {
	var project *string
	c := mcpCmd("get NAME [flags]", "show the definitions of NAME in each scope (values redacted)",
		"Shows the definitions of the server NAME in each scope, as 'claude mcp get'\ndoes without its health check ('ccproxy mcp probe NAME' does that); values\nthat look secret are redacted.",
		func(c *cobra.Command, args []string) error { return runMCPGet(*project, args, c.OutOrStdout()) })
	project = projectFlag(c.Flags())
	return c
}

func runMCPGet(project string, pos []string, stdout io.Writer) error {
	if len(pos) != 1 {
		return usagef("mcp get: want exactly one server name")
	}
	name := pos[0]
	opts := mcpconfig.Options{ProjectDir: project}
	found, err := mcpconfig.FindServer(opts, name)
	if err != nil {
		return err
	}
	if len(found) == 0 {
		return &mcpconfig.MissingServerError{Name: name, Configured: mcpconfig.ConfiguredNames(opts)}
	}
	for i, f := range found {
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		printServer(stdout, name, f)
	}
	return nil
}

// printServer prints one definition as `claude mcp get` does, without the
// health check (`ccproxy mcp probe NAME` does that) and with env and
// header values redacted.
func printServer(w io.Writer, name string, f mcpconfig.Found) {
	var d struct {
		Type    string            `json:"type"`
		Command string            `json:"command"`
		Args    []string          `json:"args"`
		Env     map[string]string `json:"env"`
		URL     string            `json:"url"`
		Headers map[string]string `json:"headers"`
	}
	_ = json.Unmarshal(f.Definition, &d)
	desc := f.Describe()
	desc = desc[:strings.LastIndex(desc, " (")] // without the file
	fmt.Fprintf(w, "%s:\n  Scope: %s\n  File: %s\n", name, desc, f.Location)
	sorted := func(m map[string]string, sep string) {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(w, "    %s%s%s\n", k, sep, mcpconfig.MaskValue(m[k]))
		}
	}
	if d.Type == "" || d.Type == "stdio" {
		fmt.Fprintf(w, "  Type: stdio\n  Command: %s\n  Args: %s\n  Environment:\n", d.Command, strings.Join(mcpconfig.RedactArgs(d.Args), " "))
		sorted(d.Env, "=")
	} else {
		if d.Type == "streamable-http" {
			d.Type = "http"
		}
		fmt.Fprintf(w, "  Type: %s\n  URL: %s\n", d.Type, mcpconfig.RedactURL(d.URL))
		if len(d.Headers) > 0 {
			fmt.Fprintf(w, "  Headers:\n")
			sorted(d.Headers, ": ")
		}
	}
	fmt.Fprintf(w, "\nTo remove this server, run: ccproxy mcp remove %s -s %s\n", name, f.Scope)
}
