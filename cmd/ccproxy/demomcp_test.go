package main

import (
	"errors"
	"testing"

	"github.com/ccproxy/ccproxy/internal/replay"
	"github.com/ccproxy/ccproxy/protocol"
)

// The demo's MCP configuration is the recording's one server, demo, known
// connected with its tools; it asks for no approval and never changes.
func TestDemoMCP(t *testing.T) {
	tr, err := replay.Demo()
	if err != nil {
		t.Fatal(err)
	}
	m := newDemoMCP(tr)
	if m == nil {
		t.Fatal("no MCP configuration for the demo")
	}
	cfg := m.Current()
	if len(cfg.View.Servers) != 1 || cfg.View.Servers[0].Name != "demo" || cfg.View.Servers[0].Source != "the built-in demo's recording" || !cfg.View.Servers[0].Active || string(cfg.View.Servers[0].Config) != `{"args":[],"command":"mcp-server-demo","type":"stdio"}` {
		t.Errorf("view %+v", cfg.View.Servers)
	}
	if err := cfg.View.Validate(); err != nil {
		t.Error(err)
	}
	if len(cfg.Known) != 1 || cfg.Known[0].Status != "connected" || len(cfg.Known[0].Tools) != 16 {
		t.Errorf("known %+v", cfg.Known)
	}
	if cfg.Spawn != nil || len(cfg.Servers) != 0 || cfg.Resolved != nil || m.Changes() != nil {
		t.Error("the demo's configuration starts or probes something, or changes")
	}
	var perr *protocol.Error
	if _, err := m.Approve("demo"); !errors.As(err, &perr) || perr.Code != protocol.CodeBadRequest {
		t.Errorf("approve demo: %v", err)
	}
	if _, err := m.Reject("nope"); !errors.As(err, &perr) || perr.Code != protocol.CodeMCPServerNotFound {
		t.Errorf("reject nope: %v", err)
	}
}
