package mcphub

import (
	"testing"

	"github.com/ccproxy/ccproxy/protocol"
)

func TestAllowsRules(t *testing.T) {
	ref := &protocol.MCPRef{Server: "my_srv", Tool: "do-it"}
	for _, tc := range []struct {
		rules []string
		want  bool
	}{
		{[]string{"mcp__my_srv"}, true},
		{[]string{"mcp__my_srv__do-it"}, true},
		{[]string{"mcp__my_srv__*"}, true},
		{[]string{"mcp__my_srv(*)"}, true},
		{[]string{"Bash,mcp__my_srv"}, true},
		{[]string{"Bash mcp__my_srv"}, true},
		{[]string{"mcp__*"}, false},
		{[]string{"mcp__my_sr*"}, false},
		{[]string{"mcp__my"}, false},
		{[]string{"mcp__my_srv__other"}, false},
		{nil, false},
	} {
		cfg := &Config{AllowedTools: tc.rules}
		if got := cfg.Allows("mcp__my_srv__do-it", ref); got != tc.want {
			t.Errorf("%q allows = %v, want %v", tc.rules, got, tc.want)
		}
	}
	if (&Config{AllowedTools: []string{"mcp__my_srv"}}).Allows("Bash", nil) {
		t.Error("an MCP rule allowed Bash")
	}
	// claude replaces what is outside [A-Za-z0-9_-] in a server's name by
	// "_" in its tool names and rules: "my.srv x" has mcp__my_srv_x.
	dotted := &protocol.MCPRef{Server: "my.srv x", Tool: "do-it"}
	for _, rule := range []string{"mcp__my_srv_x", "mcp__my_srv_x__*", "mcp__my_srv_x(*)", "mcp__my_srv_x__do-it"} {
		if !(&Config{AllowedTools: []string{rule}}).Allows("mcp__my_srv_x__do-it", dotted) {
			t.Errorf("%q does not allow a tool of server %q", rule, dotted.Server)
		}
	}
	// Without the MCP annotation the server comes from the tool name.
	for _, tc := range []struct {
		rule string
		want bool
	}{{"mcp__my_srv", true}, {"mcp__my_srv__*", true}, {"mcp__my_srv(*)", true}, {"mcp__my_srv__do-it", true}, {"mcp__my", false}, {"mcp__*", false}, {"mcp__my_sr*", false}} {
		if got := (&Config{AllowedTools: []string{tc.rule}}).Allows("mcp__my_srv__do-it", nil); got != tc.want {
			t.Errorf("%q allows (no ref) = %v, want %v", tc.rule, got, tc.want)
		}
	}
	// A deny rule (permissions.deny, --disallowedTools) wins over any allow.
	for _, deny := range []string{"mcp__my_srv__do-it", "mcp__my_srv", "mcp__my_srv__*"} {
		if (&Config{AllowedTools: []string{"mcp__my_srv"}, DisallowedTools: []string{deny}}).Allows("mcp__my_srv__do-it", ref) {
			t.Errorf("denied by %q, yet allowed", deny)
		}
	}
	if !(&Config{AllowedTools: []string{"mcp__my_srv"}, DisallowedTools: []string{"mcp__my_srv__other"}}).Allows("mcp__my_srv__do-it", ref) {
		t.Error("a deny rule of another tool denied this one")
	}
	var nilCfg *Config
	if nilCfg.Allows("x", ref) {
		t.Error("nil config allowed")
	}
}
