package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/ccproxy/ccproxy/internal/testkit"
)

// fakeClaudeBin writes a stand-in claude that prints version v and returns
// its path.
func fakeClaudeBin(t *testing.T, v string) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the stand-in claude is a shell script")
	}
	p := filepath.Join(t.TempDir(), "claude")
	if err := os.WriteFile(p, []byte("#!/bin/sh\necho '"+v+" (Claude Code)'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func runVersionCmd(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(context.Background(), args, strings.NewReader(""), &out, &errb)
	code = exitCode(err, &errb)
	return out.String(), errb.String(), code
}

// `ccproxy version --json` reports the build and the Claude Code CLI found;
// `ccproxy --version` says the same in text.
func TestVersionCommand(t *testing.T) {
	claude := fakeClaudeBin(t, "2.1.400")
	out, errs, code := runVersionCmd(t, "version", "--json", "--claude", claude)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var v versionInfo
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if v.Version == "" || v.GoVersion != runtime.Version() || v.OS != runtime.GOOS || v.Arch != runtime.GOARCH {
		t.Errorf("build fields: %+v", v)
	}
	if v.Claude != (claudeFound{Path: claude, Version: "2.1.400"}) {
		t.Errorf("claude = %+v, want %s 2.1.400", v.Claude, claude)
	}

	t.Setenv("CCPROXY_CLAUDE", claude)
	out, errs, code = runVersionCmd(t, "--version")
	if code != 0 {
		t.Fatalf("--version: exit %d: %s", code, errs)
	}
	for _, want := range []string{"ccproxy " + v.Version + "\n", "go:       " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH, "claude:   2.1.400 (" + claude + ")"} {
		if !strings.Contains(out, want) {
			t.Errorf("--version output lacks %q:\n%s", want, out)
		}
	}
}

// No usable Claude Code CLI is reported with the reason, and is no failure.
func TestVersionWithoutClaude(t *testing.T) {
	old := fakeClaudeBin(t, "2.0.14")
	for _, tc := range []struct{ name, claude, want string }{
		{"missing", filepath.Join(t.TempDir(), "nope"), "does not exist"},
		{"too old", old, "is Claude Code 2.0.14, ccproxy needs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errs, code := runVersionCmd(t, "version", "--claude", tc.claude)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			if !strings.Contains(out, "claude:   none: ") || !strings.Contains(out, tc.want) {
				t.Errorf("want claude: none: …%s…, got:\n%s", tc.want, out)
			}
			out, _, _ = runVersionCmd(t, "version", "--json", "--claude", tc.claude)
			var v versionInfo
			if err := json.Unmarshal([]byte(out), &v); err != nil {
				t.Fatal(err)
			}
			if v.Claude.Path != "" || !strings.Contains(v.Claude.Error, tc.want) {
				t.Errorf("claude = %+v", v.Claude)
			}
		})
	}
	if _, errs, code := runVersionCmd(t, "version", "extra"); code != 2 || !strings.Contains(errs, `unexpected argument "extra"`) {
		t.Errorf("extra argument: exit %d, %s", code, errs)
	}
}

// The stamped version wins over the module version; the VCS settings are
// read from the build info.
func TestBuildVersion(t *testing.T) {
	bi := &debug.BuildInfo{
		GoVersion: "go1.99.1",
		Main:      debug.Module{Path: "github.com/ccproxy/ccproxy", Version: "v1.2.3"},
		Settings: []debug.BuildSetting{
			{Key: "GOOS", Value: "windows"}, {Key: "GOARCH", Value: "arm64"},
			{Key: "vcs.revision", Value: "0123abcd"}, {Key: "vcs.time", Value: "2026-11-24T03:00:00Z"},
			{Key: "vcs.modified", Value: "true"},
		},
	}
	want := versionInfo{Version: "v1.2.3", Module: "github.com/ccproxy/ccproxy", Revision: "0123abcd",
		Time: "2026-11-24T03:00:00Z", Modified: true, GoVersion: "go1.99.1", OS: "windows", Arch: "arm64"}
	if got := buildVersion("", bi); got != want {
		t.Errorf("from build info:\n got %+v\nwant %+v", got, want)
	}
	want.Version = "v2.0.0"
	if got := buildVersion("v2.0.0", bi); got != want {
		t.Errorf("stamped:\n got %+v\nwant %+v", got, want)
	}
	bi.Main.Version = ""
	if got := buildVersion("", bi).Version; got != "(devel)" {
		t.Errorf("no version: %q", got)
	}
	if got := buildVersion("", nil); got.Version != "(unknown)" || got.GoVersion != runtime.Version() {
		t.Errorf("no build info: %+v", got)
	}
	text := want.text()
	if !strings.Contains(text, "revision: 0123abcd (modified)\n") || !strings.Contains(text, "go:       go1.99.1 windows/arm64\n") {
		t.Errorf("text:\n%s", text)
	}
}

// scripts/release.sh stamps the version, and building the same target twice
// (in different directories) gives the same bytes.
func TestReleaseReproducible(t *testing.T) {
	if testing.Short() {
		t.Skip("builds ccproxy twice")
	}
	if runtime.GOOS != "linux" {
		t.Skip("release.sh is run on Linux")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	target := "linux/" + runtime.GOARCH
	name := "ccproxy_v9.8.7-test_linux_" + runtime.GOARCH
	var sums [2]string
	var bins [2]string
	for i := range sums {
		dir := t.TempDir()
		cmd := exec.Command("bash", filepath.Join(root, "scripts", "release.sh"), "v9.8.7-test")
		cmd.Env = append(os.Environ(), "RELEASE_DIR="+dir, "RELEASE_TARGETS="+target)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("release.sh: %v\n%s", err, out)
		}
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.Sum256(b)
		sums[i], bins[i] = hex.EncodeToString(h[:]), filepath.Join(dir, name)
		list, err := os.ReadFile(filepath.Join(dir, "SHA256SUMS"))
		if err != nil {
			t.Fatal(err)
		}
		if want := sums[i] + "  " + name + "\n"; string(list) != want {
			t.Errorf("SHA256SUMS = %q, want %q", list, want)
		}
	}
	if sums[0] != sums[1] {
		t.Errorf("two builds differ: %s vs %s", sums[0], sums[1])
	}
	out, err := exec.Command(bins[0], "version", "--json", "--claude", filepath.Join(t.TempDir(), "none")).Output()
	if err != nil {
		t.Fatal(err)
	}
	var v versionInfo
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	head, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	if v.Version != "v9.8.7-test" || v.Module != "github.com/ccproxy/ccproxy" || v.Revision != strings.TrimSpace(string(head)) || v.Time == "" {
		t.Errorf("the release binary says %+v, want version v9.8.7-test, revision %s", v, head)
	}
	t.Logf("sha256 %s %s", sums[0], name)
}

// The real CLI's version is reported.
func TestVersionRealClaude(t *testing.T) {
	claude := testkit.Claude(t)
	out, errs, code := runVersionCmd(t, "version", "--json", "--claude", claude)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var v versionInfo
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	if v.Claude.Version != testkit.ClaudeVersion || v.Claude.Path != claude {
		t.Errorf("claude = %+v, want %s at %s", v.Claude, testkit.ClaudeVersion, claude)
	}
}
