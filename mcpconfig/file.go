package mcpconfig

import (
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/ccproxy/ccproxy/internal/privdir"
)

// ConfigFile is a private file holding MCPConfigJSON, to pass to claude with
// --strict-mcp-config --mcp-config. Remove it with Close when the claude
// process that reads it has exited. Close is safe to call more than once and
// from several goroutines.
type ConfigFile struct {
	Path string

	once sync.Once
	err  error
}

// MCPConfigFile writes MCPConfigJSON to a new file in dir (this process's
// PrivateDir when dir is ""), readable and writable by the owner only
// (0600).
func (c *Config) MCPConfigFile(dir string) (*ConfigFile, error) {
	var f *os.File
	var err error
	if dir == "" {
		f, err = createPrivate("ccproxy-mcp-*.json")
	} else {
		f, err = os.CreateTemp(dir, "ccproxy-mcp-*.json")
	}
	if err != nil {
		return nil, fmt.Errorf("mcpconfig: create --mcp-config file: %w", err)
	}
	path := f.Name()
	fail := func(err error) (*ConfigFile, error) {
		f.Close()
		os.Remove(path)
		return nil, fmt.Errorf("mcpconfig: write %s: %w", path, err)
	}
	if err := f.Chmod(0o600); err != nil {
		return fail(err)
	}
	if err := privdir.OwnerOnly(path); err != nil { // Windows: an ACL for this user alone
		return fail(err)
	}
	if _, err := f.Write(c.MCPConfigJSON()); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		return fail(err)
	}
	return &ConfigFile{Path: path}, nil
}

// Args returns the claude flags that load exactly this file's servers:
// --strict-mcp-config --mcp-config PATH. --mcp-config is variadic: put a
// prompt after "--" or send it on stdin.
func (f *ConfigFile) Args() []string {
	return []string{"--strict-mcp-config", "--mcp-config", f.Path}
}

// Close removes the file. A file already gone is not an error.
func (f *ConfigFile) Close() error {
	f.once.Do(func() {
		if err := os.Remove(f.Path); err != nil && !errors.Is(err, os.ErrNotExist) {
			f.err = fmt.Errorf("mcpconfig: remove %s: %w", f.Path, err)
		}
	})
	return f.err
}
