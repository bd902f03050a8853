package mcpconfig

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// settingsMu serializes this process's read-modify-write cycles of
// settings.local.json. (Another process writing it at the same moment can
// still win; the file is never left half-written.)
var settingsMu sync.Mutex

// Approve approves the project (.mcp.json) server name the way the
// interactive CLI records it: name is added to enabledMcpjsonServers and
// removed from disabledMcpjsonServers in <ProjectDir>/.claude/settings.local.json.
// The file and folder are created when missing, other keys are kept, and the
// file is replaced atomically. It returns the configuration resolved
// afterwards; the server may still not be approved (rejected elsewhere, or
// the workspace is not trusted): Server.Reason says why.
//
// It is an error when no .mcp.json defines name, or when settings.local.json
// exists but is not valid (the file is then left alone).
func Approve(opts Options, name string) (*Config, error) {
	return setApproval(opts, name, true)
}

// Reject rejects the project server name: it is added to
// disabledMcpjsonServers and removed from enabledMcpjsonServers in
// <ProjectDir>/.claude/settings.local.json, like Approve. A rejected server
// is never loaded, whatever else approves it.
func Reject(opts Options, name string) (*Config, error) {
	return setApproval(opts, name, false)
}

func setApproval(opts Options, name string, approve bool) (*Config, error) {
	verb := "approve"
	if !approve {
		verb = "reject"
	}
	r, err := newResolver(opts)
	if err != nil {
		return nil, err
	}
	srv, _ := r.resolve().Server(name)
	if _, ok := srv.ProjectApproval(); !ok {
		return nil, fmt.Errorf("mcpconfig: %s %q: no .mcp.json of %s defines a server with that name", verb, name, r.opts.ProjectDir)
	}
	path := filepath.Join(r.opts.ProjectDir, ".claude", "settings.local.json")

	settingsMu.Lock()
	defer settingsMu.Unlock()
	data, exists, err := readConfigFile(path)
	if err != nil {
		return nil, fmt.Errorf("mcpconfig: %s %q: read %s: %s", verb, name, path, errorText(err))
	}
	mode := fs.FileMode(0o600)
	enabled, disabled := []string{}, []string{}
	if exists {
		d, ferr := parseDoc(path, data)
		if ferr != nil {
			return nil, fmt.Errorf("mcpconfig: %s %q: not changing %s: %w", verb, name, path, *ferr)
		}
		var errs []FileError
		enabled, errs = d.stringList(d.root, "enabledMcpjsonServers", "")
		if len(errs) == 0 {
			disabled, errs = d.stringList(d.root, "disabledMcpjsonServers", "")
		}
		if len(errs) > 0 {
			return nil, fmt.Errorf("mcpconfig: %s %q: not changing %s: %w", verb, name, path, errs[0])
		}
		data = []byte(d.text)
		if st, err := os.Stat(path); err == nil {
			mode = st.Mode().Perm()
		}
	} else {
		data = []byte("{}")
	}
	add, del := &enabled, &disabled
	if !approve {
		add, del = del, add
	}
	if slices.Contains(*add, name) && !slices.Contains(*del, name) && exists {
		return r.resolve(), nil // recorded already
	}
	if !slices.Contains(*add, name) {
		*add = append(*add, name)
	}
	*del = slices.DeleteFunc(*del, func(s string) bool { return s == name })

	for _, kv := range []struct {
		key  string
		list []string
	}{{"enabledMcpjsonServers", enabled}, {"disabledMcpjsonServers", disabled}} {
		if len(kv.list) == 0 && !member(gjson.ParseBytes(data), kv.key).Exists() {
			continue
		}
		if kv.list == nil {
			kv.list = []string{}
		}
		if data, err = sjson.SetBytes(data, kv.key, kv.list); err != nil {
			return nil, fmt.Errorf("mcpconfig: %s %q: update %s: %w", verb, name, path, err)
		}
	}
	// Two-space indentation, as the CLI writes it; key order is kept.
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, data, "", "  "); err != nil {
		return nil, fmt.Errorf("mcpconfig: %s %q: update %s: %w", verb, name, path, err)
	}
	pretty.WriteByte('\n')
	data = pretty.Bytes()
	if err := writeFileAtomic(path, data, mode); err != nil {
		return nil, fmt.Errorf("mcpconfig: %s %q: %w", verb, name, err)
	}
	r.opts.Logger.Info("mcpconfig: recorded approval", "server", name, "approved", approve, "file", path)
	return r.resolve(), nil
}

// ProjectApproval returns the approval state of the project (.mcp.json)
// definition of the server's name, the winning one or a shadowed one (the
// one that would win among them), and false when no .mcp.json defines the
// name: only then do Approve and Reject apply.
func (s Server) ProjectApproval() (Approval, bool) {
	if s.Scope == ScopeProject {
		return s.Approval, true
	}
	for _, o := range s.Shadows {
		if o.Scope == ScopeProject {
			return o.Approval, true
		}
	}
	return "", false
}

// writeFileAtomic replaces path with data: a temporary file in the same
// folder (created when missing) is written, synced and renamed over path.
func writeFileAtomic(path string, data []byte, mode fs.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	fail := func(err error) error {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := tmp.Write(data); err != nil {
		return fail(err)
	}
	if err := tmp.Chmod(mode); err != nil {
		return fail(err)
	}
	if err := tmp.Sync(); err != nil {
		return fail(err)
	}
	if err := tmp.Close(); err != nil {
		return fail(err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
