package main

import (
	"encoding/json"

	"github.com/ccproxy/ccproxy/internal/replay"
	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/proxy/mcphub"
)

// demoMCP is the MCP configuration of `serve --demo`: the servers the
// recording ran with, as its mcp_status answer lists them (the demo's one
// server, demo). A live setup's configuration comes from the files and is
// probed at start, so the web UI's MCP strip shows its servers before any
// session; the demo's servers exist only in the recording, so its
// configuration says what the recording knows of them (Config.Known):
// connected, with their tools, from the first page load. It starts
// nothing (no --mcp-config for the replayed CLI, nothing to probe) and
// never changes.
type demoMCP struct{ cfg *mcphub.Config }

// newDemoMCP returns the demo's MCP configuration, or nil when the
// transcript recorded no mcp_status answer.
func newDemoMCP(tr *replay.Transcript) *demoMCP {
	st, ok := tr.Recorded("mcp_status")
	if !ok {
		return nil
	}
	known := mcphub.ParseMCPStatus(st)
	if len(known) == 0 {
		return nil
	}
	cfg := &mcphub.Config{Known: known}
	for _, r := range known {
		def := map[string]any{"type": r.Transport}
		if c := recordedConfig(st, r.Name); c != nil {
			def = c
		}
		raw, _ := json.Marshal(def)
		cfg.View.Servers = append(cfg.View.Servers, protocol.MCPConfigServer{
			Name: r.Name, Scope: protocol.ScopeExtra, Source: "the built-in demo's recording", Type: r.Transport, Active: true,
			Approval: protocol.ApprovalNotNeeded, Config: raw,
		})
	}
	return &demoMCP{cfg: cfg}
}

// recordedConfig returns the recorded definition (config) of server name in
// an mcp_status answer, nil when it has none.
func recordedConfig(st []byte, name string) map[string]any {
	var resp struct {
		MCPServers []struct {
			Name   string         `json:"name"`
			Config map[string]any `json:"config"`
		} `json:"mcpServers"`
	}
	if json.Unmarshal(st, &resp) != nil {
		return nil
	}
	for _, s := range resp.MCPServers {
		if s.Name == name {
			return s.Config
		}
	}
	return nil
}

// Current implements mcphub.Source.
func (d *demoMCP) Current() *mcphub.Config { return d.cfg }

// Changes implements mcphub.Source: the demo's configuration never changes.
func (d *demoMCP) Changes() <-chan struct{} { return nil }

// Approve implements mcphub.Source: the demo's server needs no approval.
func (d *demoMCP) Approve(name string) (string, error) { return d.decide(name) }

// Reject implements mcphub.Source, as Approve.
func (d *demoMCP) Reject(name string) (string, error) { return d.decide(name) }

func (d *demoMCP) decide(name string) (string, error) {
	for _, s := range d.cfg.View.Servers {
		if s.Name == name {
			return "", protocol.Errorf(protocol.CodeBadRequest, "the demo's MCP server %q needs no approval", name)
		}
	}
	return "", protocol.Errorf(protocol.CodeMCPServerNotFound, "no MCP server named %q is configured (the demo has only its own)", name)
}
