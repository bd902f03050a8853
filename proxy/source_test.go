package proxy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"

	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/proxy/mcphub"
)

// testSource is an mcphub.Source for tests: servers by name with their JSON
// definition; names in awaiting wait for approval (project scope).
type testSource struct {
	t   testing.TB
	dir string
	ch  chan struct{}

	mu       sync.Mutex
	n        int
	servers  map[string]string
	approval map[string]string // name -> awaiting/approved/rejected (project servers)
	cfg      *mcphub.Config
	spawnErr error // the error of Spawn, if set
}

func newTestSource(t testing.TB, servers map[string]string) *testSource {
	s := &testSource{t: t, dir: t.TempDir(), ch: make(chan struct{}, 1), approval: map[string]string{}}
	s.set(servers, nil)
	return s
}

// set replaces the servers (and project approvals) and signals a change.
func (s *testSource) set(servers map[string]string, approval map[string]string) {
	s.mu.Lock()
	s.servers = servers
	if approval != nil {
		s.approval = approval
	}
	s.rebuildLocked()
	s.mu.Unlock()
	select {
	case s.ch <- struct{}{}:
	default:
	}
}

func (s *testSource) rebuildLocked() {
	s.n++
	names := make([]string, 0, len(s.servers))
	for name := range s.servers {
		names = append(names, name)
	}
	sort.Strings(names)
	cfg := &mcphub.Config{Servers: map[string]json.RawMessage{}}
	file := map[string]map[string]json.RawMessage{"mcpServers": {}}
	var allowed []string
	for _, name := range names {
		def := json.RawMessage(s.servers[name])
		v := protocol.MCPConfigServer{Name: name, Scope: protocol.ScopeExtra, Type: "stdio", Active: true, Approval: protocol.ApprovalNotNeeded, Config: def}
		var typed struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(def, &typed) == nil && typed.Type != "" {
			v.Type = typed.Type
		}
		if a, ok := s.approval[name]; ok {
			v.Scope = protocol.ScopeProject
			v.Approval = a
			v.Active = a == protocol.ApprovalApproved
		}
		cfg.View.Servers = append(cfg.View.Servers, v)
		if v.Active {
			cfg.Servers[name] = def
			file["mcpServers"][name] = def
			allowed = append(allowed, "mcp__"+name)
		}
	}
	b, _ := json.Marshal(file)
	path := filepath.Join(s.dir, "mcp-"+itoa(s.n)+".json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		s.t.Error(err)
	}
	args := []string{"--mcp-config", path, "--strict-mcp-config"}
	if len(allowed) > 0 {
		args = append(args, "--allowedTools")
		args = append(args, allowed...)
	}
	cfg.Spawn = func() ([]string, func(), error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.spawnErr != nil {
			return nil, nil, s.spawnErr
		}
		return args, nil, nil
	}
	cfg.AllowedTools = allowed
	s.cfg = cfg
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// failSpawn makes Spawn fail with err from now on.
func (s *testSource) failSpawn(err error) {
	s.mu.Lock()
	s.spawnErr = err
	s.mu.Unlock()
}

func (s *testSource) Current() *mcphub.Config {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg
}

func (s *testSource) Changes() <-chan struct{} { return s.ch }

// args are the MCP flags of the current configuration.
func (s *testSource) args() []string {
	a, _, _ := s.Current().Spawn()
	return a
}

func (s *testSource) decide(name, approval string) (string, error) {
	s.mu.Lock()
	if _, ok := s.servers[name]; !ok {
		s.mu.Unlock()
		return "", protocol.Errorf(protocol.CodeMCPServerNotFound, "no MCP server %q", name)
	}
	if _, ok := s.approval[name]; !ok {
		s.mu.Unlock()
		return "", protocol.Errorf(protocol.CodeBadRequest, "%q is not a project server; it needs no approval", name)
	}
	s.approval[name] = approval
	s.rebuildLocked()
	s.mu.Unlock()
	select {
	case s.ch <- struct{}{}:
	default:
	}
	return approval, nil
}

func (s *testSource) Approve(name string) (string, error) {
	return s.decide(name, protocol.ApprovalApproved)
}

func (s *testSource) Reject(name string) (string, error) {
	return s.decide(name, protocol.ApprovalRejected)
}
