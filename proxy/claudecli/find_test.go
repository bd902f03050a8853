package claudecli

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FindClaude: --claude, then $CCPROXY_CLAUDE, then PATH; version checked.
func TestFindClaude(t *testing.T) {
	bin := t.TempDir()
	script, err := os.ReadFile(fakeClaudePath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "claude"), script, 0o755); err != nil {
		t.Fatal(err)
	}
	notExec := filepath.Join(bin, "notexec")
	os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644)
	t.Setenv("PATH", bin)
	env := func(v string) func(string) string {
		return func(name string) string {
			if name == ClaudeEnv {
				return v
			}
			return ""
		}
	}
	ctx := context.Background()
	for _, tc := range []struct {
		name, explicit, env, wantPath, wantErr string
	}{
		{"PATH", "", "", filepath.Join(bin, "claude"), ""},
		{"env", "", fakeClaudePath, fakeClaudePath, ""},
		{"explicit wins", fakeClaudePath, oldClaudePath, fakeClaudePath, ""},
		{"env too old", "", oldClaudePath, "", "(from $CCPROXY_CLAUDE) is Claude Code 2.0.14, ccproxy needs 2.1.329 or newer"},
		{"explicit missing", "/nope/claude", "", "", "/nope/claude (from --claude) does not exist"},
		{"a directory", bin, "", "", "is a directory"},
		{"not executable", notExec, "", "", "is not executable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := FindClaude(ctx, tc.explicit, env(tc.env), "")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, ErrClaudeUnavailable) {
					t.Errorf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || c.Path != tc.wantPath || c.Version != "2.1.329" {
				t.Errorf("got %+v, %v; want %s", c, err, tc.wantPath)
			}
		})
	}
	t.Setenv("PATH", t.TempDir())
	if _, err := FindClaude(ctx, "", env(""), ""); err == nil || !strings.Contains(err.Error(), "not on PATH; install it") {
		t.Errorf("nothing anywhere: %v", err)
	}
	for _, v := range []struct {
		s  string
		ok bool
	}{{"2.1.329", true}, {"10.0.0-beta.1", true}, {"2.1", false}, {"x.y.z", false}, {"", false}} {
		if _, ok := parseVersion(v.s); ok != v.ok {
			t.Errorf("parseVersion(%q) ok = %v", v.s, ok)
		}
	}
}
