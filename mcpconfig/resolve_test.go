package mcpconfig

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
)

var allSetups = []string{"collisions", "disabled", "trusted", "env", "invalid", "managed", "redaction", "empty"}

// TestResolveGolden resolves every setup and compares the redacted view,
// with the temporary root replaced by $ROOT, with a golden file.
func TestResolveGolden(t *testing.T) {
	for _, name := range allSetups {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, name)
			cfg := f.resolve(t)
			b, err := json.Marshal(cfg.Redacted())
			if err != nil {
				t.Fatal(err)
			}
			b = []byte(strings.ReplaceAll(string(b), f.root, "$ROOT"))
			checkGolden(t, name+".json", b)
		})
	}
}

type wantServer struct {
	scope    Scope
	source   string // relative to the fixture root
	active   bool
	approval Approval
	disabled bool
}

func checkServers(t *testing.T, f *fixture, cfg *Config, want map[string]wantServer) {
	t.Helper()
	var names []string
	for _, s := range cfg.Servers {
		names = append(names, s.Name)
	}
	var wantNames []string
	for n := range want {
		wantNames = append(wantNames, n)
	}
	slices.Sort(wantNames)
	if !slices.Equal(names, wantNames) {
		t.Errorf("servers = %v, want %v", names, wantNames)
	}
	for name, w := range want {
		s, ok := cfg.Server(name)
		if !ok {
			continue
		}
		got := wantServer{s.Scope, s.Source, s.Active, s.Approval, s.Disabled}
		w.source = f.path(w.source)
		if got != w {
			t.Errorf("%s = %+v (reason %q), want %+v", name, got, s.Reason, w)
		}
	}
}

func TestResolvePrecedence(t *testing.T) {
	f := newFixture(t, "collisions")
	cfg := f.resolve(t)
	const (
		home  = "home/.claude.json"
		proj  = "work/project/.mcp.json"
		par   = "work/.mcp.json"
		extA  = "extra/a.json"
		extB  = "extra/b.json"
		nn    = ApprovalNotNeeded
		await = ApprovalAwaiting
	)
	checkServers(t, f, cfg, map[string]wantServer{
		"u1":          {ScopeUser, home, true, nn, false},
		"dup_ul":      {ScopeLocal, home, true, nn, false},
		"dup_up":      {ScopeUser, home, true, nn, false}, // -p runs the project one; ccproxy, like the interactive CLI, the user one
		"dup_lp":      {ScopeLocal, home, true, nn, false},
		"dup_all":     {ScopeExtra, extA, true, nn, false},
		"pdis_shadow": {ScopeUser, home, true, nn, false}, // the rejected project one drops out
		"pend_shadow": {ScopeUser, home, true, nn, false}, // the awaiting project one is skipped
		"l1":          {ScopeLocal, home, true, nn, false},
		"p1":          {ScopeProject, proj, false, await, false},
		"near_far":    {ScopeProject, proj, false, await, false},
		"parent_only": {ScopeProject, par, false, await, false},
		"x":           {ScopeExtra, extB, true, nn, false},
		"ext_b":       {ScopeExtra, extB, true, nn, false},
	})
	all, _ := cfg.Server("dup_all")
	wantShadows := []Origin{
		{ScopeLocal, f.path(home), ""},
		{ScopeProject, f.path(proj), ApprovalAwaiting},
		{ScopeUser, f.path(home), ""},
	}
	if !slices.Equal(all.Shadows, wantShadows) {
		t.Errorf("dup_all shadows = %+v, want %+v", all.Shadows, wantShadows)
	}
	if got := string(all.Expanded); got != `{"type":"stdio","command":"true","args":["extra-a"]}` {
		t.Errorf("dup_all expanded = %s", got)
	}
	nf, _ := cfg.Server("near_far")
	if !strings.Contains(string(nf.Expanded), `"near"`) {
		t.Errorf("near_far should come from the nearer .mcp.json: %s", nf.Expanded)
	}
	if got := cfg.AwaitingApproval(); !slices.Equal(got, []string{"dup_up", "near_far", "p1", "parent_only", "pend_shadow"}) { // not dup_all, dup_lp: outranked anyway
		t.Errorf("AwaitingApproval = %v", got)
	}

	// What claude -p loads: awaiting project servers included, the rejected one not.
	cli := map[string]Scope{}
	for _, s := range cfg.CLIServers() {
		cli[s.Name] = s.Scope
	}
	wantCLI := map[string]Scope{
		"u1": ScopeUser, "dup_ul": ScopeLocal, "dup_up": ScopeProject, "dup_lp": ScopeLocal,
		"dup_all": ScopeExtra, "pdis_shadow": ScopeUser, "pend_shadow": ScopeProject, "l1": ScopeLocal,
		"p1": ScopeProject, "near_far": ScopeProject, "parent_only": ScopeProject, "x": ScopeExtra, "ext_b": ScopeExtra,
	}
	if len(cli) != len(wantCLI) {
		t.Errorf("CLIServers = %v, want %v", cli, wantCLI)
	}
	for n, s := range wantCLI {
		if cli[n] != s {
			t.Errorf("CLIServers[%s] = %q, want %q", n, cli[n], s)
		}
	}
	if got := cfg.AllowedTools("Read", "mcp__u1"); !slices.Equal(got, []string{
		"mcp__dup_all", "mcp__dup_lp", "mcp__dup_ul", "mcp__dup_up", "mcp__ext_b", "mcp__l1", "mcp__pdis_shadow", "mcp__pend_shadow", "mcp__u1", "mcp__x", "Read"}) {
		t.Errorf("AllowedTools = %v", got)
	}
}

func TestResolveTrustProject(t *testing.T) {
	f := newFixture(t, "collisions")
	f.opts.TrustProject = true
	cfg := f.resolve(t)
	for _, name := range []string{"dup_up", "p1", "near_far", "parent_only", "pend_shadow"} {
		s, _ := cfg.Server(name)
		if !s.Active || s.Approval != ApprovalApproved || s.Scope != ScopeProject || s.ApprovalSource != "--trust-project-mcp" {
			t.Errorf("%s: active=%v approval=%s scope=%s source=%s", name, s.Active, s.Approval, s.Scope, s.ApprovalSource)
		}
	}
	if s, _ := cfg.Server("pdis_shadow"); s.Scope != ScopeUser || !s.Active {
		t.Errorf("pdis_shadow: disabledMcpjsonServers must win over --trust-project-mcp: %+v", s)
	}
}

func TestResolveApprovals(t *testing.T) {
	const (
		proj = "work/project/.mcp.json"
		home = "home/.claude.json"
	)
	t.Run("untrusted", func(t *testing.T) {
		f := newFixture(t, "disabled")
		cfg := f.resolve(t)
		if cfg.Trusted {
			t.Error("Trusted = true")
		}
		aw, rej, ok := ApprovalAwaiting, ApprovalRejected, ApprovalApproved
		checkServers(t, f, cfg, map[string]wantServer{
			"udis":             {ScopeUser, home, false, ApprovalNotNeeded, true},
			"u_ok":             {ScopeUser, home, true, ApprovalNotNeeded, false},
			"ldis":             {ScopeLocal, home, false, ApprovalNotNeeded, true},
			"plain":            {ScopeProject, proj, false, aw, false},
			"p_disabled":       {ScopeProject, proj, false, aw, true},
			"by_user_settings": {ScopeProject, proj, true, ok, false}, // ~/.claude/settings.json always counts
			"by_proj_settings": {ScopeProject, proj, false, aw, false},
			"by_local":         {ScopeProject, proj, false, aw, false}, // untrusted
			"rej_json":         {ScopeProject, proj, false, rej, false},
			"rej_user":         {ScopeProject, proj, false, rej, false},
			"rej_proj":         {ScopeProject, proj, false, rej, false},
			"rej_local":        {ScopeProject, proj, false, rej, false},
			"rej_local_too":    {ScopeProject, proj, false, rej, false},
		})
		s, _ := cfg.Server("by_local")
		if !strings.Contains(s.Reason, "trusted workspace") || !strings.Contains(s.Reason, "settings.local.json") {
			t.Errorf("by_local reason = %q", s.Reason)
		}
		s, _ = cfg.Server("rej_user")
		if s.ApprovalSource != f.path("home/.claude/settings.json") {
			t.Errorf("rej_user approval source = %q", s.ApprovalSource)
		}
		// -p: disabled ones listed as disabled, rejected ones absent.
		var cli []string
		for _, c := range cfg.CLIServers() {
			n := c.Name
			if c.Disabled {
				n += "(disabled)"
			}
			cli = append(cli, n)
		}
		want := []string{"by_local", "by_proj_settings", "by_user_settings", "ldis(disabled)", "p_disabled(disabled)", "plain", "u_ok", "udis(disabled)"}
		if !slices.Equal(cli, want) {
			t.Errorf("CLIServers = %v, want %v", cli, want)
		}
	})
	t.Run("trusted", func(t *testing.T) {
		f := newFixture(t, "trusted")
		cfg := f.resolve(t)
		if !cfg.Trusted {
			t.Error("Trusted = false")
		}
		ok := ApprovalApproved
		checkServers(t, f, cfg, map[string]wantServer{
			"by_local":  {ScopeProject, proj, true, ok, false},
			"by_proj":   {ScopeProject, proj, true, ok, false},
			"by_legacy": {ScopeProject, proj, true, ok, false},
			"pending":   {ScopeProject, proj, false, ApprovalAwaiting, false},
		})
	})
}

func TestResolveEnvExpansion(t *testing.T) {
	f := newFixture(t, "env")
	cfg := f.resolve(t)
	s, _ := cfg.Server("stdio_env")
	var got struct {
		Command string            `json:"command"`
		Args    []string          `json:"args"`
		Env     map[string]string `json:"env"`
	}
	if err := json.Unmarshal(s.Expanded, &got); err != nil {
		t.Fatal(err)
	}
	wantArgs := []string{"--token", "s3cr3t-token-value", "", "${CCP_UNSET}", "fallback", "$CCP_BIN", "a:-b"}
	if got.Command != "true" || !slices.Equal(got.Args, wantArgs) {
		t.Errorf("expanded command %q args %q, want true %q", got.Command, got.Args, wantArgs)
	}
	if got.Env["API_TOKEN"] != "s3cr3t-token-value" || got.Env["MISSING"] != "${CCP_NOPE}" || got.Env["LITERAL"] != "plain-secret" {
		t.Errorf("expanded env = %v", got.Env)
	}
	if !slices.Equal(s.MissingEnv, []string{"CCP_UNSET", "CCP_NOPE"}) {
		t.Errorf("MissingEnv = %v", s.MissingEnv)
	}
	r, _ := cfg.Server("remote_env")
	var rem struct {
		Type    string            `json:"type"`
		URL     string            `json:"url"`
		Headers map[string]string `json:"headers"`
	}
	_ = json.Unmarshal(r.Expanded, &rem)
	if rem.Type != "http" || rem.URL != "http://127.0.0.1:9/mcp?key=s3cr3t-token-value" || rem.Headers["Authorization"] != "Bearer s3cr3t-token-value" || rem.Headers["X-Missing"] != "${CCP_HDR_MISSING}" {
		t.Errorf("remote expanded = %+v", rem)
	}
	if !slices.Equal(r.MissingEnv, []string{"CCP_HDR_MISSING"}) {
		t.Errorf("remote MissingEnv = %v", r.MissingEnv)
	}
	// Nothing redacted may hold the secret.
	b, _ := json.Marshal(cfg.Redacted())
	for _, secret := range []string{"s3cr3t", "plain-secret"} {
		if strings.Contains(string(b), secret) {
			t.Errorf("redacted view leaks %q: %s", secret, b)
		}
	}
	if !strings.Contains(string(b), `${CCP_TOKEN}`) {
		t.Errorf("redacted view should still name ${CCP_TOKEN}: %s", b)
	}
}

func TestResolveInvalid(t *testing.T) {
	f := newFixture(t, "invalid")
	cfg := f.resolve(t)
	var valid []string
	for _, s := range cfg.Servers {
		valid = append(valid, s.Name)
	}
	// Measured on the real CLI: exactly these entries of the .mcp.json load.
	wantValid := []string{"ok_bad_url_text", "ok_empty_url", "ok_extra_keys", "ok_stdio", "ok_streamable", "ok_url_extra", "ok_ws", "u_ok"}
	if !slices.Equal(valid, wantValid) {
		t.Errorf("valid servers = %v, want %v", valid, wantValid)
	}
	type pos struct {
		file         string
		line, column int
		server       string
		contains     string
	}
	proj := f.path("work/project/.mcp.json")
	want := []pos{
		{proj, 3, 13, "no_url", `"url" is missing`},
		{proj, 4, 18, "url_no_type", `has "url" but no "type"`},
		{proj, 5, 17, "no_command", `"command" is missing`},
		{proj, 6, 49, "args_not_array", `"args" must be an array of strings, not a string`},
		{proj, 7, 54, "env_not_string", `env."X" must be a string, not a number`},
		{proj, 8, 26, "weird_type", `unknown "type" "weird"`},
		{proj, 9, 32, "empty_command", `"command" is empty`},
		{proj, 13, 52, "args_not_strings", `args[0] must be a string, not a number`},
		{proj, 15, 88, "header_not_string", `headers."A" must be a string, not a number`},
		{proj, 16, 17, "not_object", `must be an object, not a string`},
		{proj, 17, 25, "type_null", `"type" must be a string, not null`},
		{proj, 18, 26, "upper_type", `unknown "type" "HTTP"`},
		{proj, 19, 24, "ide_type", `unknown "type" "sse-ide"`},
		{proj, 20, 42, "env_null", `"env" must be an object of strings, not null`},
		{proj, 21, 44, "args_null", `"args" must be an array of strings, not null`},
		{proj, 23, 32, "command_array", `"command" must be a string, not an array`},
		{f.path("work/.mcp.json"), 4, 3, "", "not JSON at line 4, column 3: invalid character looking for beginning of object key string"},
		{f.path("work/project/.claude/settings.local.json"), 0, 0, "", "file is empty"},
		{f.path("home/.claude.json"), 1, 55, "u_bad", `"url" is missing`},
		{f.path("home/.claude/settings.json"), 1, 40, "", "enabledMcpjsonServers[1] must be a string, not a number"},
		{f.path("home/.claude/settings.json"), 1, 74, "", "enableAllProjectMcpServers must be true or false, not a string"},
		{f.path("extra/array.json"), 1, 1, "", "the top level must be a JSON object, not an array"},
	}
	for _, w := range want {
		found := false
		for _, e := range cfg.Errors {
			if e.File == w.file && e.Server == w.server && strings.Contains(e.Message, w.contains) {
				found = true
				if e.Line != w.line || e.Column != w.column {
					t.Errorf("%s %q: at %d:%d, want %d:%d", filepath.Base(w.file), w.contains, e.Line, e.Column, w.line, w.column)
				}
			}
		}
		if !found {
			t.Errorf("no error %q for %q in %s; errors:\n%v", w.contains, w.server, w.file, cfg.Errors)
		}
	}
	for _, sub := range []string{`projects["` + f.path("work/project") + `"].hasTrustDialogAccepted must be true or false`,
		`.disabledMcpServers must be an array of strings, not a string`, `.mcpServers must be an object, not an array`} {
		found := false
		for _, e := range cfg.Errors {
			found = found || strings.Contains(e.Message, sub)
		}
		if !found {
			t.Errorf("no error containing %q", sub)
		}
	}
}

func TestResolveManaged(t *testing.T) {
	f := newFixture(t, "managed")
	cfg := f.resolve(t)
	if !cfg.ManagedPresent {
		t.Fatal("ManagedPresent = false")
	}
	var active []string
	for _, s := range cfg.Active() {
		active = append(active, s.Name+"@"+string(s.Scope))
	}
	if !slices.Equal(active, []string{"corp@managed", "shared@managed"}) {
		t.Errorf("active = %v", active)
	}
	mine, _ := cfg.Server("mine")
	if mine.Active || !strings.Contains(mine.Reason, "only managed servers load") {
		t.Errorf("mine: active=%v reason=%q", mine.Active, mine.Reason)
	}
	if n := len(cfg.CLIServers()); n != 2 {
		t.Errorf("CLIServers = %v", cfg.CLIServers())
	}
	// Without the managed file the user's servers load.
	if err := os.Remove(f.path("etc/managed-mcp.json")); err != nil {
		t.Fatal(err)
	}
	cfg = f.resolve(t)
	if s, _ := cfg.Server("shared"); !s.Active || s.Scope != ScopeUser {
		t.Errorf("shared without managed: %+v", s)
	}
}

// TestResolveSymlinkedProject: the CLI keys projects[…] by the directory
// with symlinks resolved (measured), and so does Resolve.
func TestResolveSymlinkedProject(t *testing.T) {
	f := newFixture(t, "collisions")
	link := f.path("link")
	if err := os.Symlink(f.path("work/project"), link); err != nil {
		t.Fatal(err)
	}
	f.opts.ProjectDir = link
	cfg := f.resolve(t)
	if cfg.ProjectDir != f.path("work/project") {
		t.Errorf("ProjectDir = %s", cfg.ProjectDir)
	}
	if s, ok := cfg.Server("l1"); !ok || s.Scope != ScopeLocal {
		t.Errorf("local server through a symlinked project dir: %+v", s)
	}
}

func TestPayloadAndFile(t *testing.T) {
	f := newFixture(t, "env")
	f.opts.TrustProject = true
	cfg := f.resolve(t)
	var payload map[string]map[string]any
	if err := json.Unmarshal(cfg.SetServersPayload(), &payload); err != nil {
		t.Fatalf("payload %s: %v", cfg.SetServersPayload(), err)
	}
	if len(payload) != 3 {
		t.Errorf("payload has %d servers, want 3: %s", len(payload), cfg.SetServersPayload())
	}
	for name, s := range payload {
		if s["type"] == "stdio" {
			if _, ok := s["args"].([]any); !ok {
				t.Errorf("stdio server %s without args: %v", name, s)
			}
		}
	}
	if ud := payload["user_default"]; ud["command"] != "true" {
		t.Errorf("user_default = %v", ud)
	}

	dir := t.TempDir()
	file, err := cfg.MCPConfigFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(file.Path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", st.Mode().Perm())
	}
	data, _ := os.ReadFile(file.Path)
	var doc struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
	}
	if err := json.Unmarshal(data, &doc); err != nil || len(doc.MCPServers) != 3 {
		t.Errorf("file content %s: %v", data, err)
	}
	if args := file.Args(); !slices.Equal(args, []string{"--strict-mcp-config", "--mcp-config", file.Path}) {
		t.Errorf("Args = %v", args)
	}
	if err := file.Close(); err != nil {
		t.Fatal(err)
	}
	if err := file.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := os.Stat(file.Path); !os.IsNotExist(err) {
		t.Errorf("file still there after Close: %v", err)
	}

	empty := newFixture(t, "empty").resolve(t)
	if string(empty.MCPConfigJSON()) != `{"mcpServers":{}}` || string(empty.SetServersPayload()) != "{}" {
		t.Errorf("empty: %s / %s", empty.MCPConfigJSON(), empty.SetServersPayload())
	}
}

func TestDiff(t *testing.T) {
	f := newFixture(t, "collisions")
	a := f.resolve(t)
	if d := Diff(a, a); !d.Empty() {
		t.Errorf("Diff(a, a) = %+v", d)
	}
	first := Diff(nil, a)
	if len(first.Added) != len(a.Servers) || !first.ActiveChanged {
		t.Errorf("Diff(nil, a) = %+v", first)
	}
	f.write(t, "work/project/.mcp.json", `{"mcpServers": {
  "p1": {"command": "true", "args": ["changed"]},
  "new_one": {"command": "true"},
  "dup_up": {"command": "true", "args": ["project"]},
  "dup_lp": {"command": "true", "args": ["project"]},
  "dup_all": {"command": "true", "args": ["project"]},
  "pdis_shadow": {"command": "true", "args": ["project"]},
  "pend_shadow": {"command": "true", "args": ["project"]}
}}`)
	b := f.resolve(t)
	d := Diff(a, b)
	if !slices.Equal(d.Added, []string{"new_one"}) || !slices.Equal(d.Removed, []string{}) {
		t.Errorf("added %v removed %v", d.Added, d.Removed)
	}
	// p1 changed; near_far now comes from the parent file (source changed).
	if !slices.Equal(d.Changed, []string{"near_far", "p1"}) {
		t.Errorf("changed = %v", d.Changed)
	}
	if d.ActiveChanged {
		t.Error("only awaiting servers changed, yet ActiveChanged")
	}
	f.write(t, "extra/b.json", `{"mcpServers": {}}`)
	c := f.resolve(t)
	d = Diff(b, c)
	if !slices.Equal(d.Removed, []string{"ext_b"}) || !slices.Equal(d.Changed, []string{"x"}) || !d.ActiveChanged {
		t.Errorf("after emptying b.json: %+v", d)
	}
	f.write(t, "extra/b.json", `{"mcpServers": `)
	d = Diff(c, f.resolve(t))
	if !d.ErrorsChanged || !d.Empty() == false && len(d.Changed) > 0 {
		t.Errorf("after breaking b.json: %+v", d)
	}
}

// TestDuplicateKeys: a repeated key keeps its last value, as JSON.parse
// does, in small and large objects alike.
func TestDuplicateKeys(t *testing.T) {
	for _, n := range []int{1, 30} {
		f := newFixture(t, "empty")
		var parts []string
		for i := range n {
			parts = append(parts, fmt.Sprintf(`"s%d": {"command": "true"}`, i))
		}
		parts = append(parts, `"s0": {"type": "sse", "url": "http://127.0.0.1:9/sse", "type": "ws"}`)
		f.write(t, "home/.claude.json", `{"mcpServers": {`+strings.Join(parts, ",")+`}}`)
		cfg := f.resolve(t)
		s, _ := cfg.Server("s0")
		if len(cfg.Servers) != n || s.Type != TransportWS || s.Line != 1 {
			t.Errorf("n=%d: %d servers, s0 %+v", n, len(cfg.Servers), s)
		}
	}
}

// TestResolverKeepsLastGoodParsed: while a file stays broken, every
// resolution uses its last valid version (parsed once, not again) and
// reports the error, but the warning is logged once per problem.
func TestResolverKeepsLastGoodParsed(t *testing.T) {
	f := newFixture(t, "empty")
	const rel = "work/project/.mcp.json"
	f.write(t, rel, `{"mcpServers":{"p":{"command":"good"}}}`)
	var logs countHandler
	opts := f.opts
	opts.TrustProject = true
	opts.Logger = slog.New(&logs)
	r, err := newResolver(opts)
	if err != nil {
		t.Fatal(err)
	}
	r.resolve()
	good := r.lastGood[f.path(rel)]
	f.write(t, rel, `{"mcpServers":`)
	check := func(step string, warnings int) {
		t.Helper()
		cfg := r.resolve()
		if s, ok := cfg.Server("p"); !ok || !s.Active || len(cfg.Errors) != 1 || !strings.Contains(cfg.Errors[0].Message, "(using the last valid version)") {
			t.Fatalf("%s: servers %+v, errors %v", step, cfg.Servers, cfg.Errors)
		}
		if r.lastGood[f.path(rel)] != good {
			t.Errorf("%s: the last good version was parsed again", step)
		}
		if int(logs.warnings.Load()) != warnings {
			t.Errorf("%s: %d warnings logged, want %d", step, logs.warnings.Load(), warnings)
		}
	}
	check("first", 1)
	check("again", 1)
	check("and again", 1)
	f.write(t, rel, `[1]`) // another problem: logged
	check("another problem", 2)
	f.write(t, rel, `{"mcpServers":{"p":{"command":"good"}}}`)
	if cfg := r.resolve(); len(cfg.Errors) != 0 {
		t.Fatalf("fixed: errors %v", cfg.Errors)
	}
	good = r.lastGood[f.path(rel)]
	f.write(t, rel, `{"mcpServers":`) // broken again after a fix: logged again
	check("broken again", 3)
}

// countHandler counts the warnings logged.
type countHandler struct{ warnings atomic.Int64 }

func (h *countHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *countHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Level == slog.LevelWarn {
		h.warnings.Add(1)
	}
	return nil
}
func (h *countHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *countHandler) WithGroup(string) slog.Handler      { return h }
