package mcpconfig

import (
	"errors"
	"slices"

	"github.com/tidwall/gjson"
)

// ClientServers are the MCP server definitions a client sent with its
// session (ccproxy's session/create "mcpServers", which `ccproxy acp` fills
// from ACP's session/new and session/load), checked by ParseClientServers.
// They are not a file: Config.WithClient merges them into a resolved
// configuration as ScopeClient, below every file scope, and they go through
// the same approval as project servers. A ClientServers is immutable.
type ClientServers struct {
	source string
	data   []byte // the checked object, as sent
	names  []string
}

// ParseClientServers checks data, an object of server definitions by name
// (the shape of a file's "mcpServers"), with the checks and messages of a
// definition in a file (FileError; its File is source) and those of
// NormalizeDefinition (a stdio command that is a relative path with a
// folder, a url that is not absolute), plus the CLI's name rule
// (CheckName) and no name twice. The error is a *FileError naming the
// server; its message never quotes a value but the name.
func ParseClientServers(source string, data []byte) (*ClientServers, error) {
	d, ferr := parseDoc(source, data)
	if ferr != nil {
		return nil, ferr
	}
	seen := map[string]bool{}
	var dup *FileError
	d.root.ForEach(func(k, _ gjson.Result) bool {
		if seen[k.Str] {
			dup = d.errAt(k.Index, k.Str, "the name is given to two servers")
			return false
		}
		seen[k.Str] = true
		return true
	})
	if dup != nil {
		return nil, dup
	}
	if e := d.duplicateKey(); e != nil { // inside a definition (env, headers)
		return nil, e
	}
	cs := &ClientServers{source: source, data: slices.Clone(data)}
	none := func(string) (string, bool) { return "", false }
	for _, m := range members(d.root) {
		if err := CheckName(m.key); err != nil {
			return nil, d.errAt(m.val.Index, m.key, "%s", err.Error())
		}
		def, ferr := d.server(m.key, m.val, none)
		if ferr != nil {
			return nil, ferr
		}
		fields := members(m.val)
		var err error
		at := fields.get("command")
		if def.typ == TransportStdio {
			err = checkCommand(at.Str)
		} else {
			at = fields.get("url")
			err = checkURL(at.Str)
		}
		if err != nil {
			return nil, d.errAt(at.Index, m.key, "%s", err.Error())
		}
		cs.names = append(cs.names, m.key)
	}
	return cs, nil
}

// Names returns the names of the servers, in the order sent.
func (cs *ClientServers) Names() []string { return slices.Clone(cs.names) }

// errNotResolved is WithClient's error for a Config not made by Resolve.
var errNotResolved = errors.New("mcpconfig: client servers need a configuration made by Resolve")

// WithClient returns the configuration of c with the client's servers
// merged in as ScopeClient: for one name every file scope wins (the
// client's definition is then a shadow, see ClientStatus); a client server
// is approved only by Options.TrustClient (ApprovalSource
// "--trust-client-mcp"), otherwise it awaits approval and does not start;
// disabledMcpServers and managed-mcp.json apply to it as to any server;
// Options.AllowServerTools does not allow its tools (a permission rule
// does, or someone answers the prompt).
// ${VAR}s expand in its definition as in a file's (the --mcp-config file
// claude reads would expand them anyway). c is not modified; a nil or
// empty cs returns c.
func (c *Config) WithClient(cs *ClientServers) (*Config, error) {
	if cs == nil || len(cs.names) == 0 {
		return c, nil
	}
	if c.asm == nil {
		return nil, errNotResolved
	}
	d, ferr := parseDoc(cs.source, cs.data)
	if ferr != nil { // checked by ParseClientServers
		return nil, ferr
	}
	defs, errs := d.serverList(d.root, "mcpServers", ScopeClient, 0, c.asm.env)
	if len(errs) > 0 {
		return nil, &errs[0]
	}
	out := &Config{
		ProjectDir: c.ProjectDir, HomeDir: c.HomeDir, Trusted: c.Trusted, ManagedPresent: c.ManagedPresent,
		Permissions: c.Permissions, Errors: c.Errors, allowServerTools: c.allowServerTools,
	}
	all := append(slices.Clone(c.asm.defs), defs...)
	out.asm = &assembly{defs: all, ap: c.asm.ap, managedPath: c.asm.managedPath, env: c.asm.env}
	assemble(out, all, c.asm.ap, c.asm.managedPath)
	return out, nil
}

// ClientStatus is what became of one server a client sent.
type ClientStatus struct {
	Name     string   `json:"name"`
	Active   bool     `json:"active"`
	Approval Approval `json:"approval"`
	// Reason says why an inactive server is inactive: it awaits approval,
	// is disabled, or a configuration file defines the name (files win).
	Reason string `json:"reason,omitempty"`
}

// ClientStatus reports, for each server of cs in the order sent, what c
// (a result of WithClient) does with it.
func (c *Config) ClientStatus(cs *ClientServers) []ClientStatus {
	if cs == nil {
		return nil
	}
	out := make([]ClientStatus, 0, len(cs.names))
	for _, name := range cs.names {
		s, ok := c.Server(name)
		switch {
		case !ok:
			out = append(out, ClientStatus{Name: name, Approval: ApprovalAwaiting, Reason: "not merged into the configuration"})
		case s.Scope != ScopeClient:
			st := ClientStatus{Name: name, Approval: ApprovalNotNeeded,
				Reason: "not used: the " + string(s.Scope) + " server of the same name in " + s.Source + " wins (configuration files take precedence over a client's servers)"}
			for _, o := range s.Shadows {
				if o.Scope == ScopeClient {
					st.Approval = o.Approval
				}
			}
			out = append(out, st)
		default:
			out = append(out, ClientStatus{Name: name, Active: s.Active, Approval: s.Approval, Reason: s.Reason})
		}
	}
	return out
}

// clientApproval decides the approval of a server a client sent.
func (a *approvals) clientApproval() (Approval, string, string) {
	if a.trustClient {
		return ApprovalApproved, "--trust-client-mcp", ""
	}
	return ApprovalAwaiting, "", "awaiting approval: sent by the client with its session; ccproxy starts a client's MCP servers only when started with --trust-client-mcp"
}
