package mcphub

import (
	"encoding/json"
	"strings"

	"github.com/ccproxy/ccproxy/mcpconfig"
	"github.com/ccproxy/ccproxy/protocol"
)

// Source is where the proxy's MCP configuration comes from. Package
// mcpconfig provides the real one; tests use a fixed one.
//
// Current, Changes, Approve and Reject may be called from any goroutine, at
// any time, concurrently.
type Source interface {
	// Current returns the configuration in force now. The proxy does not
	// modify it and may keep it.
	Current() *Config
	// Changes receives a value (sent without blocking, coalesced) whenever
	// Current changed: a config file was edited, a server approved, ...
	Changes() <-chan struct{}
	// Approve and Reject record a decision about a project (.mcp.json)
	// server and return its approval afterwards ("approved", "rejected").
	// Errors a client may see are *protocol.Error (mcp_server_not_found,
	// bad_request); others are logged and reported as internal.
	Approve(name string) (approval string, err error)
	Reject(name string) (approval string, err error)
}

// Config is one resolved MCP configuration, as the proxy uses it.
type Config struct {
	// Spawn returns the MCP flags of a new claude process, e.g.
	// --strict-mcp-config --mcp-config FILE --allowedTools mcp__a mcp__b
	// (they go last on the command line: the flags are variadic), and
	// release, called once that process has exited (the flags may name a
	// file that must exist until then). Nil means no flags. It may be
	// called concurrently.
	Spawn func() (args []string, release func(), err error)
	// Servers is the mcp_set_servers payload: every active server by name,
	// its definition as claude takes it (stdio entries always carry "args").
	Servers map[string]json.RawMessage
	// AllowedTools are the tool rules passed with --allowedTools: the
	// user's permissions.allow rules (and, with serve --allow-mcp-tools,
	// "mcp__<server>" for every active server). A permission request for a
	// tool they allow and DisallowedTools do not deny (a rule or a server
	// added after claude started) is allowed without asking anyone.
	AllowedTools []string
	// DisallowedTools are the rules passed with --disallowedTools: the
	// user's permissions.deny rules.
	DisallowedTools []string
	// View is the redacted configuration pushed as mcp/config.
	View protocol.MCPConfig
	// ForClient, when set, returns the configuration of a session whose
	// client sent MCP servers (session/create mcpServers): this one with
	// them merged by mcpconfig.Config.WithClient (below every file; started
	// only when the source trusts client servers), with a Spawn of its own,
	// and what became of each server. The session calls retire once it no
	// longer uses the result (a newer configuration, or its end); the
	// --mcp-config file goes once every process that read it has exited
	// too. Nil when the source takes no client servers: session/create
	// then refuses them. It may be called concurrently.
	ForClient func(cs *mcpconfig.ClientServers) (cfg *Config, status []mcpconfig.ClientStatus, retire func(), err error)
	// Resolved is the configuration package probe connects to for
	// mcp/probe, mcp/tools and mcp/call (SPEC §3), the same servers as
	// Servers and View. Nil when the source has none: then those requests
	// are not offered, and each new configuration counts as changed in
	// every way (with it, mcpconfig.Diff says what changed).
	Resolved *mcpconfig.Config
	// Known is what is known of the servers before any session reports
	// them (serve --demo: the recording's mcp_status answer): SetConfig
	// records it as a session's report made when it installs the
	// configuration, so mcp/status shows them at once; a newer report
	// wins as always.
	Known []Report
}

// Allows reports whether the AllowedTools rules allow toolName of the MCP
// tool ref (nil for tools that are not MCP tools) and no DisallowedTools
// rule denies it. Forms understood (FACTS §4): the tool's exact name,
// mcp__srv, mcp__srv__tool, mcp__srv__*, mcp__srv(*). mcp__* and prefixes
// match nothing, as in the CLI; other rules (e.g. "Bash(npm test:*)") are
// left to claude, which applies them itself: the proxy then asks.
func (c *Config) Allows(toolName string, ref *protocol.MCPRef) bool {
	if c == nil {
		return false
	}
	return ruleMatches(c.AllowedTools, toolName, ref) && !ruleMatches(c.DisallowedTools, toolName, ref)
}

// ruleMatches reports whether one of the rules (each entry may hold several,
// comma or space separated, as on claude's command line) names the tool.
// Without ref the server part is taken from the tool name.
func ruleMatches(rules []string, toolName string, ref *protocol.MCPRef) bool {
	srv, tool := "", ""
	if ref != nil {
		srv, tool = mcpconfig.ToolPrefix(ref.Server), ref.Tool // as claude names the server's tools
	}
	for _, entry := range rules {
		for _, rule := range strings.FieldsFunc(entry, func(r rune) bool { return r == ',' || r == ' ' }) {
			if rule == toolName {
				return true
			}
			base := strings.TrimSuffix(strings.TrimSuffix(rule, "__*"), "(*)")
			if !strings.HasPrefix(base, "mcp__") || len(base) <= len("mcp__") {
				continue // mcp__* matches nothing, as in the CLI
			}
			if ref != nil && (base == srv || rule == srv+"__"+tool) {
				return true
			}
			if ref == nil && strings.HasPrefix(toolName, base+"__") && !strings.Contains(toolName[len(base)+2:], "__") {
				return true
			}
		}
	}
	return false
}
