package proxy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ccproxy/ccproxy/protocol"
	"github.com/ccproxy/ccproxy/proxy/mcphub"
)

// "Always" with the mcphub.ConfigSource: the proxy writes the rule to the
// session's .claude/settings.local.json (locked, atomic) and tells claude
// to apply it to the session; a settings file it must not change (a
// duplicate key) makes the answer an error and leaves the request pending.
func TestPermissionAlwaysRecorded(t *testing.T) {
	env := newMCPEnv(t)
	src, err := mcphub.NewConfigSource(env.Opts, env.FilesDir, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	ts := startServer(t, Options{Project: env.Project, MCPOptions: MCPOptions{MCP: src}})
	c := ts.dial(t)
	c.do(protocol.TypeMCPSubscribe, map[string]any{})
	s := c.create(nil)
	local := filepath.Join(env.Project, ".claude", "settings.local.json")

	// A file with a duplicate key is refused and left alone.
	bad := "{\"permissions\": {}, \"permissions\": {}}\n"
	os.MkdirAll(filepath.Dir(local), 0o755)
	os.WriteFile(local, []byte(bad), 0o644)
	from := c.count()
	c.do(protocol.TypeSessionSend, map[string]any{"session": s, "text": "perm Bash"})
	var req protocol.PermissionRequest
	c.waitPush(from, protocol.TypePermissionRequest, &req, nil)
	e := c.doErr(protocol.TypePermissionRespond, map[string]any{"session": s, "requestId": req.RequestID, "behavior": "allow", "always": true})
	if e == nil || e.Code != protocol.CodeBadRequest || !strings.Contains(e.Message, `duplicate key "permissions"`) {
		t.Errorf("always with a bad file: %+v", e)
	}
	if data, _ := os.ReadFile(local); string(data) != bad {
		t.Errorf("the bad file was changed: %s", data)
	}
	// Still pending: fix the file, answer again.
	os.WriteFile(local, []byte(`{"enabledMcpjsonServers": []}`), 0o644)
	c.do(protocol.TypePermissionRespond, map[string]any{"session": s, "requestId": req.RequestID, "behavior": "allow", "always": true})
	if got := answerText(t, c, from, s); got != `permission answer: {"behavior":"allow","updatedInput":{"command":"ls"},"updatedPermissions":[{"behavior":"allow","destination":"session","rules":[{"toolName":"Bash"}],"type":"addRules"}]}` {
		t.Errorf("claude got %s", got)
	}
	var m struct {
		Enabled     []string `json:"enabledMcpjsonServers"`
		Permissions struct{ Allow []string }
	}
	data, _ := os.ReadFile(local)
	if json.Unmarshal(data, &m) != nil || !slices.Equal(m.Permissions.Allow, []string{"Bash"}) || m.Enabled == nil {
		t.Errorf("settings.local.json: %s", data)
	}
	// The proxy's own rules now allow Bash (mcp/config shows them).
	c.waitPush(from, protocol.TypeMCPConfig, nil, func(raw json.RawMessage) bool {
		var v protocol.MCPConfig
		return json.Unmarshal(raw, &v) == nil && slices.Contains(v.AllowedTools, "Bash")
	})
	if !ts.srv.mcp.Config().Allows("Bash", nil) {
		t.Error("the proxy's rules do not allow Bash")
	}
}
