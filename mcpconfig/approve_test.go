package mcpconfig

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("%s: %v\n%s", path, err, data)
	}
	return m
}

func TestApproveReject(t *testing.T) {
	f := newFixture(t, "trusted") // trusted: the local settings file counts
	local := f.path("work/project/.claude/settings.local.json")

	cfg, err := Approve(f.opts, "pending")
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := cfg.Server("pending"); !s.Active || s.Approval != ApprovalApproved || s.ApprovalSource != local {
		t.Errorf("after Approve: %+v", s)
	}
	m := readJSON(t, local)
	if got, _ := json.Marshal(m["enabledMcpjsonServers"]); string(got) != `["by_local","pending"]` {
		t.Errorf("enabledMcpjsonServers = %s", got)
	}
	if _, ok := m["permissions"]; !ok {
		t.Error("other keys were lost")
	}

	cfg, err = Reject(f.opts, "pending")
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := cfg.Server("pending"); s.Active || s.Approval != ApprovalRejected {
		t.Errorf("after Reject: %+v", s)
	}
	m = readJSON(t, local)
	en, _ := json.Marshal(m["enabledMcpjsonServers"])
	dis, _ := json.Marshal(m["disabledMcpjsonServers"])
	if string(en) != `["by_local"]` || string(dis) != `["pending"]` {
		t.Errorf("after Reject: enabled %s disabled %s", en, dis)
	}
	// Approving again undoes the rejection.
	if cfg, err = Approve(f.opts, "pending"); err != nil {
		t.Fatal(err)
	}
	if s, _ := cfg.Server("pending"); !s.Active {
		t.Errorf("after re-Approve: %+v", s)
	}
	if dis, _ := json.Marshal(readJSON(t, local)["disabledMcpjsonServers"]); string(dis) != `[]` {
		t.Errorf("disabledMcpjsonServers = %s", dis)
	}
}

func TestApproveCreatesFolderAndFile(t *testing.T) {
	f := newFixture(t, "collisions") // untrusted, no .claude folder
	cfg, err := Approve(f.opts, "p1")
	if err != nil {
		t.Fatal(err)
	}
	local := f.path("work/project/.claude/settings.local.json")
	st, err := os.Stat(local)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", st.Mode().Perm())
	}
	data, _ := os.ReadFile(local)
	if string(data) != "{\n  \"enabledMcpjsonServers\": [\n    \"p1\"\n  ]\n}\n" {
		t.Errorf("new file:\n%s", data)
	}
	// Untrusted: recorded, but (like the CLI) not honoured yet.
	s, _ := cfg.Server("p1")
	if s.Active || s.Approval != ApprovalAwaiting || !strings.Contains(s.Reason, "trusted workspace") {
		t.Errorf("untrusted approve: %+v", s)
	}
	// Approving a name approved already changes nothing.
	if _, err := Approve(f.opts, "p1"); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(local); string(again) != string(data) {
		t.Errorf("second Approve changed the file:\n%s", again)
	}
	// No temporary files are left behind (the lock file stays).
	entries, _ := os.ReadDir(f.path("work/project/.claude"))
	if len(entries) != 2 || entries[0].Name() != ".settings.local.json.lock" {
		t.Errorf("folder holds %d entries", len(entries))
	}
}

func TestApproveErrors(t *testing.T) {
	f := newFixture(t, "collisions")
	if _, err := Approve(f.opts, "u1"); err == nil || !strings.Contains(err.Error(), `no .mcp.json`) {
		t.Errorf("approving a user server: %v", err)
	}
	if _, err := Reject(f.opts, "nope"); err == nil {
		t.Error("rejecting an unknown server: no error")
	}
	// A parent .mcp.json counts as a project server.
	if _, err := Approve(f.opts, "parent_only"); err != nil {
		t.Errorf("parent .mcp.json server: %v", err)
	}
	// A broken settings.local.json is left alone and reported with its position.
	broken := "{\n  \"enabledMcpjsonServers\": [\"p1\",]\n}\n"
	f.write(t, "work/project/.claude/settings.local.json", broken)
	_, err := Approve(f.opts, "p1")
	if err == nil || !strings.Contains(err.Error(), "settings.local.json:2:") {
		t.Errorf("broken file: %v", err)
	}
	if data, _ := os.ReadFile(f.path("work/project/.claude/settings.local.json")); string(data) != broken {
		t.Error("broken file was changed")
	}
	f.write(t, "work/project/.claude/settings.local.json", `{"enabledMcpjsonServers": "p1"}`)
	if _, err := Approve(f.opts, "p1"); err == nil || !strings.Contains(err.Error(), "must be an array") {
		t.Errorf("wrong type: %v", err)
	}
}

// TestProjectApproval: the approval of a name's .mcp.json definition,
// winning or shadowed; none for names no .mcp.json defines, which Approve
// refuses.
func TestProjectApproval(t *testing.T) {
	f := newFixture(t, "collisions")
	cfg := f.resolve(t)
	for name, want := range map[string]Approval{
		"p1":          ApprovalAwaiting, // wins
		"dup_up":      ApprovalAwaiting, // shadowed by the user one, which runs meanwhile
		"pdis_shadow": ApprovalRejected, // shadowed
		"dup_all":     ApprovalAwaiting, // outranked by extra and local
		"u1":          "",
		"nope":        "",
	} {
		s, _ := cfg.Server(name)
		got, ok := s.ProjectApproval()
		if got != want || ok != (want != "") {
			t.Errorf("%s: ProjectApproval() = %q, %v; want %q", name, got, ok, want)
		}
		if want == "" {
			if _, err := Approve(f.opts, name); err == nil || !strings.Contains(err.Error(), "no .mcp.json") {
				t.Errorf("Approve(%s): %v", name, err)
			}
		}
	}
}
