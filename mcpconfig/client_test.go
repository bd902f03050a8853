package mcpconfig

import (
	"errors"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// Servers a client sends go through the files' checks, are merged below
// every file scope, and start only with TrustClient.
func TestClientServers(t *testing.T) {
	f := newFixture(t, "collisions")
	f.env["TOKEN"] = "s3cr3t-token-value"
	f.write(t, "home/.claude.json", `{"mcpServers":{"shared":{"command":"/bin/user-shared"}}}`)
	cs, err := ParseClientServers("session/create mcpServers", []byte(`{
		"tools": {"type":"stdio","command":"/usr/bin/tools","args":["--x"],"env":{"API_KEY":"${TOKEN}"}},
		"remote": {"type":"http","url":"https://mcp.example/v1","headers":{"Authorization":"Bearer abcdefgh123"}},
		"shared": {"command":"/bin/client-shared"}
	}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(cs.Names(), ","); got != "tools,remote,shared" {
		t.Errorf("names %s", got)
	}
	for _, trust := range []bool{false, true} {
		f.opts.TrustClient = trust
		base := f.resolve(t)
		cfg, err := base.WithClient(cs)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := base.Server("tools"); ok {
			t.Fatal("WithClient modified the base configuration")
		}
		st := cfg.ClientStatus(cs)
		if len(st) != 3 {
			t.Fatalf("status %+v", st)
		}
		for _, s := range st[:2] {
			srv, _ := cfg.Server(s.Name)
			if srv.Scope != ScopeClient || srv.Source != "session/create mcpServers" {
				t.Errorf("trust=%v %s: scope %s source %s", trust, s.Name, srv.Scope, srv.Source)
			}
			if trust && (!s.Active || s.Approval != ApprovalApproved || srv.ApprovalSource != "--trust-client-mcp") {
				t.Errorf("trusted %s: %+v", s.Name, s)
			}
			if !trust && (s.Active || s.Approval != ApprovalAwaiting || !strings.Contains(s.Reason, "--trust-client-mcp")) {
				t.Errorf("untrusted %s: %+v", s.Name, s)
			}
		}
		// Files win on a clash, whatever the trust.
		if s := st[2]; s.Active || !strings.Contains(s.Reason, "user server of the same name") {
			t.Errorf("shared: %+v", s)
		}
		if srv, _ := cfg.Server("shared"); srv.Scope != ScopeUser || !srv.Active || len(srv.Shadows) != 1 || srv.Shadows[0].Scope != ScopeClient {
			t.Errorf("shared: %+v", srv)
		}
		// The fixture allows every active server's tools (AllowServerTools):
		// never a client's.
		for _, rule := range cfg.AllowedTools() {
			if rule == "mcp__tools" || rule == "mcp__remote" {
				t.Errorf("trust=%v: AllowedTools allows a client server: %s", trust, rule)
			}
		}
		payload := gjson.ParseBytes(cfg.SetServersPayload())
		if got := payload.Get("tools").Exists(); got != trust {
			t.Errorf("trust=%v: tools in the payload: %v", trust, got)
		}
		if payload.Get("shared.command").Str != "/bin/user-shared" {
			t.Errorf("payload shared: %s", payload.Get("shared").Raw)
		}
		if trust && payload.Get("tools.env.API_KEY").Str != "s3cr3t-token-value" {
			t.Errorf("tools not expanded: %s", payload.Get("tools").Raw)
		}
		// Their secrets are masked in every view and in free text.
		red, _ := cfg.Server("remote")
		tools, _ := cfg.Server("tools")
		for _, v := range []string{string(red.Redacted), string(tools.Redacted)} {
			if strings.Contains(v, "abcdefgh123") || strings.Contains(v, "s3cr3t") {
				t.Errorf("redacted view shows a secret: %s", v)
			}
		}
		if got := cfg.Secrets().Scrub("failed with Bearer abcdefgh123 and s3cr3t-token-value"); strings.Contains(got, "abcdefgh123") || strings.Contains(got, "s3cr3t") {
			t.Errorf("scrubbed: %s", got)
		}
	}
}

// A client's bad definition is refused with a FileError naming the server
// and the field.
func TestClientServersInvalid(t *testing.T) {
	for _, tc := range []struct{ data, server, msg string }{
		{`{"a":{"command":"./bin/srv"}}`, "a", "relative path"},
		{`{"a":{"type":"carrier-pigeon","url":"https://x.example"}}`, "a", `unknown "type"`},
		{`{"":{"command":"/bin/x"}}`, "", "Invalid name"},
		{`{"a b":{"command":"/bin/x"}}`, "a b", "Invalid name"},
		{`{"a":{"command":"/bin/x"},"a":{"command":"/bin/y"}}`, "a", "the name is given to two servers"},
		{`{"a":{"command":"/bin/x","env":{"K":"1","K":"2"}}}`, "", "duplicate key"},
		{`{"a":{"command":""}}`, "a", `"command" is empty`},
		{`{"a":{"type":"http"}}`, "a", `"url" is missing`},
		{`{"a":{"type":"sse","url":"not a url"}}`, "a", "not an absolute"},
		{`{"a":{"command":"/bin/x","env":{"K":1}}}`, "a", `env."K" must be a string`},
		{`[]`, "", "must be"},
	} {
		_, err := ParseClientServers("mcpServers", []byte(tc.data))
		var fe *FileError
		if !errors.As(err, &fe) {
			t.Errorf("%s: error %v, want a *FileError", tc.data, err)
			continue
		}
		if fe.Server != tc.server || !strings.Contains(fe.Message, tc.msg) {
			t.Errorf("%s: %+v, want server %q and %q", tc.data, fe, tc.server, tc.msg)
		}
	}
}

// The rules that hold for every server hold for a client's: a present
// managed-mcp.json loads only its own servers, and disabledMcpServers
// disables one, trusted or not.
func TestClientServersPolicy(t *testing.T) {
	f := newFixture(t, "collisions")
	f.opts.TrustClient = true
	cs, err := ParseClientServers("session/create", []byte(`{"cli":{"command":"/bin/cli"}}`))
	if err != nil {
		t.Fatal(err)
	}
	f.write(t, "home/.claude.json", `{"projects":{"`+f.opts.ProjectDir+`":{"disabledMcpServers":["cli"]}}}`)
	cfg, err := f.resolve(t).WithClient(cs)
	if err != nil {
		t.Fatal(err)
	}
	if st := cfg.ClientStatus(cs)[0]; st.Active || !strings.Contains(st.Reason, "disabled for this project") {
		t.Errorf("disabled: %+v", st)
	}
	f.write(t, "home/.claude.json", `{}`)
	f.write(t, "etc/managed-mcp.json", `{"mcpServers":{"corp":{"command":"/bin/corp"}}}`)
	cfg, err = f.resolve(t).WithClient(cs)
	if err != nil {
		t.Fatal(err)
	}
	if st := cfg.ClientStatus(cs)[0]; st.Active || !strings.Contains(st.Reason, "only managed servers load") {
		t.Errorf("managed: %+v", st)
	}
	if _, err := (&Config{}).WithClient(cs); err == nil {
		t.Error("WithClient of a Config not made by Resolve succeeded")
	}
}
