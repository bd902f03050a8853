package main

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"unicode"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ccproxy/ccproxy/internal/testkit"
)

// commandPaths lists every command of the tree but the hidden ones (and
// cobra's help), as argument lists: {"serve"}, {"mcp", "probe"}, ...
func commandPaths(c *cobra.Command, prefix []string) [][]string {
	var paths [][]string
	for _, sub := range c.Commands() {
		if sub.Hidden || sub.Name() == "help" {
			continue
		}
		p := append(append([]string(nil), prefix...), sub.Name())
		paths = append(paths, p)
		paths = append(paths, commandPaths(sub, p)...)
	}
	return paths
}

// Every command answers --help on stdout with exit 0, in one style (cobra's
// usage, the flags, the exit status), and refuses an unknown flag with exit
// 2, the message and a pointer to its --help, on stderr only.
func TestEveryCommandHelpAndBadFlag(t *testing.T) {
	t.Setenv("CCPROXY_TOKEN", "")
	paths := commandPaths(newRootCmd(nil, io.Discard, io.Discard), nil)
	var names []string
	for _, p := range paths {
		names = append(names, strings.Join(p, " "))
	}
	sort.Strings(names)
	want := []string{"acp", "completion", "completion bash", "completion fish", "completion powershell", "completion zsh",
		"login-url", "mcp", "mcp add", "mcp add-json", "mcp approve", "mcp call", "mcp config", "mcp get", "mcp list", "mcp probe",
		"mcp reject", "mcp remove", "mcp tools", "normalize", "serve", "status", "version"}
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Errorf("commands:\n%q\nwant\n%q", names, want)
	}
	// One voice in the help: every command's line in a list, and every
	// flag's, starts lowercase (cobra's own "Help about any command" and
	// "Generate the autocompletion script ..." did not).
	lowerStart := func(s string) bool {
		r := []rune(s)
		return len(r) < 2 || !unicode.IsUpper(r[0]) || unicode.IsUpper(r[1]) // "MCP servers" is an acronym
	}
	root := newRootCmd(nil, io.Discard, io.Discard)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if !lowerStart(c.Short) {
			t.Errorf("%s: its line in the help starts uppercase: %q", c.CommandPath(), c.Short)
		}
		c.InitDefaultHelpFlag()
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if !lowerStart(f.Usage) {
				t.Errorf("%s --%s: its help starts uppercase: %q", c.CommandPath(), f.Name, f.Usage)
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	for _, p := range append(paths, nil) { // nil: the root
		name := strings.TrimSpace("ccproxy " + strings.Join(p, " "))
		out, errOut, code := runCmd(t, "", append(p, "--help")...)
		if code != 0 || errOut != "" {
			t.Errorf("%s --help: exit %d, stderr %q", name, code, errOut)
		}
		for _, part := range []string{"Usage:\n  " + name, "\nFlags:\n", "  -h, --help", exitStatusHelp} {
			if !strings.Contains(out, part) {
				t.Errorf("%s --help lacks %q:\n%s", name, part, out)
			}
		}
		out, errOut, code = runCmd(t, "", append(p, "--no-such-flag")...)
		hint := "Run '" + name + " --help' for usage.\n"
		if code != 2 || out != "" || !strings.Contains(errOut, "unknown flag: --no-such-flag") || !strings.HasSuffix(errOut, hint) {
			t.Errorf("%s --no-such-flag: exit %d, stdout %q, stderr %q; want exit 2, the flag and %q", name, code, out, errOut, hint)
		}
	}
}

// Usage errors of every kind exit 2 with the hint; failures exit 1 without.
func TestExitCodes(t *testing.T) {
	t.Setenv("CCPROXY_TOKEN", "")
	t.Setenv("CCPROXY_URL", "")
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"serv"}, 2, `unknown command "serv"; did you mean serve?`},
		{[]string{"mcp", "prob"}, 2, `mcp: unknown command "prob"; did you mean probe?`},
		{[]string{"mcp", "lst"}, 2, `mcp: unknown command "lst"; did you mean list?`}, // a letter missing, not a prefix
		{[]string{"mcp", "confgi"}, 2, `mcp: unknown command "confgi"; did you mean config?`},
		{[]string{"statsu"}, 2, `unknown command "statsu"; did you mean status?`},
		{[]string{"completion", "tcsh"}, 2, `completion: unknown command "tcsh"`},
		{[]string{"help", "mcp", "nope"}, 2, `help: unknown command "mcp nope"`},
		{[]string{"mcp", "get"}, 2, "mcp get: want exactly one server name"},
		{[]string{"status", "--timeout", "soon"}, 2, `invalid argument "soon" for "--timeout" flag`},
		{[]string{"version", "extra"}, 2, `version: unexpected argument "extra"`},
		{[]string{"--version", "extra"}, 2, "--version takes no argument"},
		{[]string{"status", "--url", "http://127.0.0.1:1", "--token", serveToken}, 1, "status: http://127.0.0.1:1"},
	} {
		_, errOut, code := runCmd(t, "", tc.args...)
		hasHint := strings.Contains(errOut, "--help' for usage.")
		if code != tc.code || !strings.Contains(errOut, tc.want) || hasHint != (tc.code == 2) {
			t.Errorf("%q: exit %d, stderr %q; want exit %d and %q", tc.args, code, errOut, tc.code, tc.want)
		}
	}
}

// Every flag bound to an environment variable says so in its help, and the
// variables are the ones ccproxy has always read.
func TestEnvFlagsInHelp(t *testing.T) {
	bound := map[string]string{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if env := f.Annotations[envAnnotation]; len(env) > 0 {
				bound[c.CommandPath()+" --"+f.Name] = env[0]
				if !strings.HasSuffix(f.Usage, "(env "+env[0]+")") {
					t.Errorf("%s --%s: the help does not name %s: %q", c.CommandPath(), f.Name, env[0], f.Usage)
				}
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd(nil, io.Discard, io.Discard))
	want := map[string]string{
		"ccproxy serve --token": envToken, "ccproxy serve --claude": envClaude,
		"ccproxy acp --token": envToken, "ccproxy acp --claude": envClaude, "ccproxy acp --tls-fingerprint": envTLSFingerprint,
		"ccproxy status --token": envToken, "ccproxy status --url": envURL, "ccproxy status --tls-fingerprint": envTLSFingerprint,
		"ccproxy login-url --token": envToken, "ccproxy login-url --url": envURL, "ccproxy login-url --tls-fingerprint": envTLSFingerprint,
		"ccproxy version --claude": envClaude, "ccproxy mcp list --claude": envClaude,
	}
	for k, v := range want {
		if bound[k] != v {
			t.Errorf("%s: bound to %q, want %s", k, bound[k], v)
		}
	}
	if len(bound) != len(want) {
		t.Errorf("bound: %v", bound)
	}
}

// status reads its URL and token from CCPROXY_URL and CCPROXY_TOKEN; the
// command line wins; a bad value is a usage error naming the variable.
func TestStatusReadsTheEnvironment(t *testing.T) {
	var mu sync.Mutex
	var got []string
	daemon := func(name string) *httptest.Server {
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			got = append(got, name+" "+r.URL.Path+" "+r.Header.Get("Authorization"))
			mu.Unlock()
			http.Error(w, `{"code":"unavailable","message":"test"}`, http.StatusServiceUnavailable)
		}))
		t.Cleanup(ts.Close)
		return ts
	}
	fromEnv, fromFlag := daemon("env"), daemon("flag")
	t.Setenv("CCPROXY_URL", fromEnv.URL)
	t.Setenv("CCPROXY_TOKEN", serveToken)
	t.Setenv("CCPROXY_TLS_FINGERPRINT", "")
	runCmd(t, "", "status")
	runCmd(t, "", "status", "--url", fromFlag.URL)
	want := []string{"env /v1/health Bearer " + serveToken, "flag /v1/health Bearer " + serveToken}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	t.Setenv("CCPROXY_URL", "nonsense")
	if _, errOut, code := runCmd(t, "", "status"); code != 2 || !strings.Contains(errOut, "status: $CCPROXY_URL \"nonsense\": want http://HOST:PORT") {
		t.Errorf("bad $CCPROXY_URL: exit %d, %q", code, errOut)
	}
	t.Setenv("CCPROXY_URL", fromEnv.URL)
	t.Setenv("CCPROXY_TOKEN", "short")
	if _, errOut, code := runCmd(t, "", "status"); code != 2 || !strings.Contains(errOut, "status: $CCPROXY_TOKEN: ") || strings.Contains(errOut, "short") {
		t.Errorf("bad $CCPROXY_TOKEN: exit %d, %q; want a usage error naming the variable, not showing it", code, errOut)
	}
	t.Setenv("CCPROXY_TOKEN", serveToken)
	t.Setenv("CCPROXY_TLS_FINGERPRINT", "AB:CD")
	if _, errOut, code := runCmd(t, "", "status"); code != 2 || !strings.Contains(errOut, "status: $CCPROXY_TLS_FINGERPRINT: ") {
		t.Errorf("bad $CCPROXY_TLS_FINGERPRINT: exit %d, %q", code, errOut)
	}
}

// A value a typed flag refuses, from the environment, is a usage error
// naming the variable (and not showing the value).
func TestApplyEnvBadValue(t *testing.T) {
	c := &cobra.Command{Use: "x"}
	n := c.Flags().Int("count", 1, "how many")
	bindEnv(c.Flags(), "count", "CCPROXY_TEST_COUNT")
	env := map[string]string{"CCPROXY_TEST_COUNT": "many-secret"}
	err := applyEnv(c, func(k string) string { return env[k] })
	var ue usageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "$CCPROXY_TEST_COUNT: not a valid value for --count") || strings.Contains(err.Error(), "many-secret") {
		t.Errorf("bad value: %v", err)
	}
	env["CCPROXY_TEST_COUNT"] = "3"
	if err := applyEnv(c, func(k string) string { return env[k] }); err != nil || *n != 3 || flagSource(c.Flags(), "count") != "$CCPROXY_TEST_COUNT" {
		t.Errorf("good value: %v, %d, %s", err, *n, flagSource(c.Flags(), "count"))
	}
	c.Flags().Set("count", "5") // on the command line: the environment is not read
	if err := applyEnv(c, func(k string) string { return env[k] }); err != nil || *n != 5 {
		t.Errorf("command line: %v, %d", err, *n)
	}
}

// A variable in the environment never conflicts with a flag on the command
// line: $CCPROXY_CLAUDE with --demo, $CCPROXY_TOKEN with --token-file.
func TestEnvDoesNotConflict(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "empty")
	os.WriteFile(empty, nil, 0o600)
	t.Setenv("CCPROXY_CLAUDE", "/nonexistent/claude")
	t.Setenv("CCPROXY_TOKEN", serveToken)
	if _, errOut, code := runCmd(t, "", "serve", "--demo", "--addr", "nonsense"); code != 2 || !strings.Contains(errOut, "want HOST:PORT") {
		t.Errorf("serve --demo with $CCPROXY_CLAUDE: exit %d, %q; want only the --addr error", code, errOut)
	}
	if _, errOut, code := runCmd(t, "", "serve", "--token-file", empty); code != 2 || !strings.Contains(errOut, "is empty") || strings.Contains(errOut, "warning") {
		t.Errorf("serve --token-file with $CCPROXY_TOKEN: exit %d, %q; want the file read (and no warning)", code, errOut)
	}
}

// A --claude from $CCPROXY_CLAUDE is named as such in FindClaude's
// messages.
func TestClaudeFromTheEnvironment(t *testing.T) {
	t.Setenv("CCPROXY_CLAUDE", "/nonexistent/claude")
	out, _, code := runCmd(t, "", "version")
	if code != 0 || !strings.Contains(out, "/nonexistent/claude (from $CCPROXY_CLAUDE) does not exist") {
		t.Errorf("version: exit %d, %q", code, out)
	}
	out, _, _ = runCmd(t, "", "version", "--claude", "/nonexistent/other")
	if !strings.Contains(out, "/nonexistent/other (from --claude) does not exist") {
		t.Errorf("version --claude: %q", out)
	}
	_, errOut, code := runCmd(t, "", "mcp", "list", "--from-cli")
	if code != 1 || !strings.Contains(errOut, "/nonexistent/claude (from $CCPROXY_CLAUDE) does not exist") {
		t.Errorf("mcp list: exit %d, %q", code, errOut)
	}
}

// serve on a port in use fails (exit 1) and suggests a free one.
func TestServePortInUse(t *testing.T) {
	t.Setenv("CCPROXY_TOKEN", "")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	out, errOut, code := runCmd(t, "", "serve", "--demo", "--addr", ln.Addr().String(), "--spool-dir", t.TempDir(), "--log-level", "error")
	if code != 1 || out != "" || !strings.Contains(errOut, "the port is in use") || !strings.Contains(errOut, "give --addr 127.0.0.1:0 for a free one") {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 1 suggesting --addr 127.0.0.1:0", code, out, errOut)
	}
}

// `ccproxy completion bash` is a script bash loads, whose completion of
// `ccproxy ` offers the commands (it asks the binary, as cobra's scripts
// do); zsh and fish get theirs.
func TestCompletion(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	bin, err := testkit.BuildCommand("github.com/ccproxy/ccproxy/cmd/ccproxy")
	if err != nil {
		t.Fatal(err)
	}
	// cobra's script uses bash-completion's _get_comp_words_by_ref, as
	// shells with completion have it; without the package, a stand-in.
	setup := `_get_comp_words_by_ref() { cur="${COMP_WORDS[COMP_CWORD]}"; prev="${COMP_WORDS[COMP_CWORD-1]}"; words=("${COMP_WORDS[@]}"); cword=$COMP_CWORD; }`
	if _, err := os.Stat("/usr/share/bash-completion/bash_completion"); err == nil {
		setup = "source /usr/share/bash-completion/bash_completion"
	}
	script := setup + `
source <(ccproxy completion bash) || exit 3
complete -p ccproxy || exit 4
complete_line() {
	COMP_LINE="$1"; COMP_POINT=${#COMP_LINE}
	read -ra COMP_WORDS <<< "$COMP_LINE"
	[[ "$COMP_LINE" == *" " ]] && COMP_WORDS+=("")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=()
	__start_ccproxy
	printf '%s\n' "${COMPREPLY[@]}"
}
echo "-- top"; complete_line "ccproxy "
echo "-- mcp"; complete_line "ccproxy mcp "
echo "-- flag"; complete_line "ccproxy serve --de"
`
	cmd := exec.Command(bash, "--norc", "--noprofile", "-c", script)
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	outB, err := cmd.CombinedOutput()
	out := string(outB)
	if err != nil {
		t.Fatalf("bash: %v\n%s", err, out)
	}
	top, rest, _ := strings.Cut(strings.SplitN(out, "-- top\n", 2)[1], "-- mcp\n")
	mcp, flags, _ := strings.Cut(rest, "-- flag\n")
	for _, want := range []string{"serve", "acp", "normalize", "mcp", "status", "version", "completion"} {
		if !hasLine(top, want) {
			t.Errorf("ccproxy <TAB> lacks %s:\n%s", want, top)
		}
	}
	if hasLine(top, "replay-claude") {
		t.Errorf("ccproxy <TAB> offers the hidden replay-claude:\n%s", top)
	}
	for _, want := range []string{"probe", "config", "add", "call"} {
		if !hasLine(mcp, want) {
			t.Errorf("ccproxy mcp <TAB> lacks %s:\n%s", want, mcp)
		}
	}
	for _, want := range []string{"--demo", "--demo-speed"} {
		if !hasLine(flags, want) {
			t.Errorf("ccproxy serve --de<TAB> lacks %s:\n%s", want, flags)
		}
	}
	for shell, want := range map[string]string{"zsh": "#compdef ccproxy", "fish": "complete -c ccproxy"} {
		if out, errOut, code := runCmd(t, "", "completion", shell); code != 0 || !strings.Contains(out, want) {
			t.Errorf("completion %s: exit %d, %s; want %q in the script", shell, code, errOut, want)
		}
	}
}

// hasLine reports whether s has the line l (bash may pad completions).
func hasLine(s, l string) bool {
	for _, x := range strings.Split(s, "\n") {
		if strings.TrimSpace(x) == l {
			return true
		}
	}
	return false
}
