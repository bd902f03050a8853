package testkit

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// SelfCommand writes an executable script dir/name that runs the current
// test binary again with the environment entries env (NAME=value) set, so
// that a test's TestMain can impersonate another program (a fake claude)
// when it sees them. GORACE=atexit_sleep_ms=0 keeps a -race child from
// sleeping at exit. It returns the script's path.
func SelfCommand(dir, name string, env ...string) (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	quoted := make([]string, len(env))
	for i, kv := range env {
		quoted[i] = fmt.Sprintf("%q", kv)
	}
	path := filepath.Join(dir, name)
	script := fmt.Sprintf("#!/bin/sh\nexport GORACE=atexit_sleep_ms=0 %s\nexec %q \"$@\"\n", strings.Join(quoted, " "), self)
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		return "", err
	}
	return path, nil
}
