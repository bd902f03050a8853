package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ccproxy/ccproxy/proxy"
)

// The one way a flag reads an environment variable: bindEnv names the
// variable on the flag (and in its help), and applyEnv, run by the root
// command before every command, sets each bound flag that is not on the
// command line from its variable when that is set and not empty. A value the
// flag refuses is a usage error naming the variable. Checks of what was
// given together (--token with --token-file, --claude with --demo) look at
// the command line only (Changed), so a variable set in the environment
// never conflicts with a flag.
const (
	envAnnotation     = "ccproxy_env"      // the variable bound to the flag
	fromEnvAnnotation = "ccproxy_from_env" // set when the value came from it
)

// Environment variables bound to flags.
const (
	envToken          = "CCPROXY_TOKEN"
	envURL            = "CCPROXY_URL"
	envTLSFingerprint = "CCPROXY_TLS_FINGERPRINT"
	envClaude         = proxy.ClaudeEnv // CCPROXY_CLAUDE
)

// bindEnv binds flag name of fs to the environment variable env.
func bindEnv(fs *pflag.FlagSet, name, env string) {
	f := fs.Lookup(name)
	if f == nil {
		panic("bindEnv: no flag --" + name)
	}
	f.Usage += " (env " + env + ")"
	if f.Annotations == nil {
		f.Annotations = map[string][]string{}
	}
	f.Annotations[envAnnotation] = []string{env}
}

// applyEnv sets the flags of c bound to a variable (bindEnv) and not given
// on the command line from getenv.
func applyEnv(c *cobra.Command, getenv func(string) string) error {
	var err error
	c.Flags().VisitAll(func(f *pflag.Flag) {
		env := f.Annotations[envAnnotation]
		if err != nil || len(env) == 0 || f.Changed {
			return
		}
		v := getenv(env[0])
		if v == "" {
			return
		}
		if e := f.Value.Set(v); e != nil {
			// The value is not shown: it may be a secret.
			err = usagef("%s$%s: not a valid value for --%s: %v", commandName(c), env[0], f.Name, redactValue(e, v))
			return
		}
		f.Annotations[fromEnvAnnotation] = []string{"true"}
	})
	return err
}

// redactValue is err without the text v in it.
func redactValue(err error, v string) string {
	return strings.ReplaceAll(err.Error(), v, "…")
}

// flagSource names where the value of flag name came from, for messages:
// "$CCPROXY_URL" when from the environment, else "--url".
func flagSource(fs *pflag.FlagSet, name string) string {
	if f := fs.Lookup(name); f != nil && len(f.Annotations[fromEnvAnnotation]) > 0 {
		return "$" + f.Annotations[envAnnotation][0]
	}
	return "--" + name
}

// explicitClaude is the --claude to give FindClaude: the flag's value when
// it is on the command line; "" when it came from $CCPROXY_CLAUDE, which
// FindClaude reads itself (the same value), so that its messages say where
// the path came from.
func explicitClaude(fs *pflag.FlagSet) string {
	if fs.Changed("claude") {
		return fs.Lookup("claude").Value.String()
	}
	return ""
}

// tokenFlags are --token and --token-file, which serve, acp and status
// share, read by one reader (read).
type tokenFlags struct {
	token, file string
	fs          *pflag.FlagSet
}

// register adds --token (env CCPROXY_TOKEN) and --token-file to fs.
func (t *tokenFlags) register(fs *pflag.FlagSet, tokenHelp, fileHelp string) {
	t.fs = fs
	fs.StringVar(&t.token, "token", "", tokenHelp)
	fs.StringVar(&t.file, "token-file", "", fileHelp)
	bindEnv(fs, "token", envToken)
}

// given reports whether --token or --token-file is on the command line.
func (t *tokenFlags) given() bool {
	return t.fs.Changed("token") || t.fs.Changed("token-file")
}

// check warns that --token shows the token to every user of the machine and
// refuses --token with --token-file. It runs with the other flag checks.
func (t *tokenFlags) check(cmd string, stderr io.Writer) error {
	if !t.fs.Changed("token") {
		return nil
	}
	fmt.Fprintln(stderr, "ccproxy: warning: --token puts the token on the command line, where any user of this machine can read it (/proc/PID/cmdline); use --token-file or $CCPROXY_TOKEN instead")
	if t.fs.Changed("token-file") {
		return usagef("%s: give --token or --token-file, not both", cmd)
	}
	return nil
}

// read returns the token: --token-file, else --token or $CCPROXY_TOKEN, else
// "" (the caller decides whether one is needed). A token is checked
// (proxy.CheckToken); no message shows it. cmd prefixes the messages.
func (t *tokenFlags) read(cmd string) (string, error) {
	token, from := t.token, flagSource(t.fs, "token")
	if t.fs.Changed("token-file") {
		b, err := os.ReadFile(t.file)
		if err != nil {
			return "", usagef("%s: --token-file: %v", cmd, err)
		}
		token, from = strings.TrimSpace(string(b)), "--token-file "+t.file
		if token == "" {
			return "", usagef("%s: --token-file %s is empty", cmd, t.file)
		}
	}
	if token == "" {
		return "", nil
	}
	if err := proxy.CheckToken(token); err != nil {
		return "", usagef("%s: %s: %v", cmd, from, err) // says what is wrong, never the token
	}
	return token, nil
}
