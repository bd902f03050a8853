package mcpconfig

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tidwall/gjson"
)

// Scope says which kind of file a server definition comes from.
type Scope string

// Scopes, as the CLI names them (extra is what the CLI calls "dynamic").
const (
	ScopeUser    Scope = "user"    // ~/.claude.json, top-level mcpServers
	ScopeLocal   Scope = "local"   // ~/.claude.json, projects["<dir>"].mcpServers
	ScopeProject Scope = "project" // <dir>/.mcp.json and the .mcp.json of every parent directory
	ScopeManaged Scope = "managed" // managed-mcp.json; when present only its servers load
	ScopeExtra   Scope = "extra"   // files given to ccproxy (--mcp-config); "dynamic" to the CLI
	// ScopeClient is not a file: the servers a client sent with its session
	// (Config.WithClient). Every file scope wins over it.
	ScopeClient Scope = "client"
)

// Rank orders scopes by precedence for one name: a definition in a scope of
// higher rank wins (managed 6, extra 5, local 4, project 3, user 2,
// client 1; 0 for an unknown scope).
func (s Scope) Rank() int {
	switch s {
	case ScopeManaged:
		return 6
	case ScopeExtra:
		return 5
	case ScopeLocal:
		return 4
	case ScopeProject:
		return 3
	case ScopeUser:
		return 2
	case ScopeClient:
		return 1
	}
	return 0
}

// Transport is a server's normalized "type".
type Transport string

// Transports. "streamable-http" in a file is reported as http; no type is stdio.
const (
	TransportStdio Transport = "stdio"
	TransportHTTP  Transport = "http"
	TransportSSE   Transport = "sse"
	TransportWS    Transport = "ws"
)

// Approval is the approval state of a server definition.
type Approval string

// Approval states. Only project (.mcp.json) servers and the servers a
// client sends (ScopeClient) need approval.
const (
	ApprovalNotNeeded Approval = "not-needed"
	ApprovalApproved  Approval = "approved"
	ApprovalAwaiting  Approval = "awaiting"
	ApprovalRejected  Approval = "rejected"
)

// Origin names one definition of a server: where it is and, for project
// definitions, its approval state.
type Origin struct {
	Scope    Scope    `json:"scope"`
	Source   string   `json:"source"`
	Approval Approval `json:"approval,omitempty"`
}

// Server is the resolved state of one server name.
//
// When a name is defined in several places, Server describes the definition
// that wins: the highest-precedence one ccproxy would load, or, when none
// would load, the highest-precedence one (an awaiting or rejected project
// definition, or one excluded by managed-mcp.json). Every other definition of
// the name is listed in Shadows.
type Server struct {
	Name   string    `json:"name"`
	Scope  Scope     `json:"scope"`
	Source string    `json:"source"` // the file holding the definition
	Line   int       `json:"line"`   // where the definition starts in Source (1-based)
	Column int       `json:"column"` // 1-based, in characters
	Type   Transport `json:"type"`

	// Active is true when ccproxy loads this server: it is valid, approved
	// (or needs no approval), not disabled for the project and not excluded
	// by a managed configuration.
	Active bool `json:"active"`
	// Approval of this definition; not-needed for every scope but project.
	Approval Approval `json:"approval"`
	// ApprovalSource is the settings file that approved or rejected the
	// definition, or "--trust-project-mcp".
	ApprovalSource string `json:"approvalSource,omitempty"`
	// Disabled is true when projects["<dir>"].disabledMcpServers in
	// ~/.claude.json names the server (the CLI shows it as "disabled").
	Disabled bool `json:"disabled,omitempty"`
	// Reason says, in words, why an inactive server is inactive.
	Reason string `json:"reason,omitempty"`
	// NeedsTrust is true when the server awaits approval only because the
	// workspace is not trusted: a project settings file approves it, and
	// TrustWorkspace would make it active.
	NeedsTrust bool `json:"needsTrust,omitempty"`

	Shadows    []Origin `json:"shadows"`
	MissingEnv []string `json:"missingEnv"` // ${VAR}s with no value and no default, left literal

	// Raw is the definition exactly as written in Source. It may hold
	// secrets: never show it; show Redacted instead.
	Raw json.RawMessage `json:"-"`
	// Expanded is the definition as ccproxy passes it to claude: ${VAR}s
	// expanded, "type" explicit and normalized, stdio "args" always present,
	// unknown keys kept. It holds secrets too.
	Expanded json.RawMessage `json:"-"`
	// Redacted is Raw with env and header values, URL user info and query
	// values, header values and secret-looking arguments masked, and URL
	// path segments and arguments that equal one of its Secrets; ${VAR}
	// names stay visible.
	Redacted json.RawMessage `json:"config"`

	secrets *Secrets // see Secrets

	fingerprint string // all of the above that Diff compares
}

// FileError is a problem found in one configuration file: a file that is not
// valid JSON, or one server or setting that is invalid. Messages never
// contain configuration values, so they are safe to log and to show.
//
// As an error it is always a *FileError (Error has a pointer receiver):
// every function of this package that fails on a file returns one, so
// errors.As(err, new(*FileError)) is the one test a caller needs.
// Config.Errors lists FileError values: they are data, not errors.
type FileError struct {
	File    string `json:"file"`
	Line    int    `json:"line"`   // 1-based; 0 when the error is about the whole file
	Column  int    `json:"column"` // 1-based, in characters
	Server  string `json:"server,omitempty"`
	Message string `json:"message"`
}

func (e *FileError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", e.Line, e.Column)
	}
	b.WriteString(": ")
	if e.Server != "" {
		fmt.Fprintf(&b, "server %q: ", e.Server)
	}
	b.WriteString(e.Message)
	return b.String()
}

// CLIServer is a server as `claude -p` would load it from the same files
// without --strict-mcp-config, that is before ccproxy's approval filter: -p
// loads project servers that nobody approved. See Config.CLIServers.
type CLIServer struct {
	Name   string `json:"name"`
	Scope  Scope  `json:"scope"`
	Source string `json:"source"`
	// Disabled: the CLI lists the server with status "disabled" and does not
	// start it.
	Disabled bool `json:"disabled,omitempty"`
}

// Secrets returns the configured secrets of the definition: its env and
// header values, the secret parts of its URL and arguments, the strings of
// its unknown keys, and the value of every ${VAR} it uses, as written and
// expanded (see Secrets). Mask them with Secrets.Scrub in whatever text the
// server produces.
func (s Server) Secrets() *Secrets {
	if s.secrets == nil && s.Expanded != nil {
		// A Server not made by Resolve: read what it will run.
		if v := gjson.ParseBytes(s.Expanded); v.IsObject() {
			return definitionSecrets(members(v), nil)
		}
	}
	return s.secrets
}

// Secrets returns the configured secrets of every server of c, whether it
// is active or not (see Server.Secrets).
func (c *Config) Secrets() *Secrets {
	sets := make([]*Secrets, 0, len(c.Servers))
	for _, s := range c.Servers {
		sets = append(sets, s.Secrets())
	}
	return MergeSecrets(sets...)
}
