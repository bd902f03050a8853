package mcpconfig

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/tidwall/sjson"
)

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
	if err := CheckNameRef(name); err != nil {
		return nil, err
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
	changed, err := updateSettings(r.opts.ProjectDir, path, func(d *doc, exists bool) ([]byte, error) {
		enabled, errs := d.stringList(d.root, "enabledMcpjsonServers", "")
		var disabled []string
		if len(errs) == 0 {
			disabled, errs = d.stringList(d.root, "disabledMcpjsonServers", "")
		}
		if len(errs) > 0 {
			return nil, &errs[0]
		}
		add, del := &enabled, &disabled
		if !approve {
			add, del = del, add
		}
		if slices.Contains(*add, name) && !slices.Contains(*del, name) && exists {
			return nil, nil // recorded already
		}
		if !slices.Contains(*add, name) {
			*add = append(*add, name)
		}
		*del = slices.DeleteFunc(*del, func(s string) bool { return s == name })
		data := []byte(d.text)
		for _, kv := range []struct {
			key  string
			list []string
		}{{"enabledMcpjsonServers", enabled}, {"disabledMcpjsonServers", disabled}} {
			if len(kv.list) == 0 && !member(d.root, kv.key).Exists() {
				continue
			}
			var err error
			if data, err = setKey(data, kv.key, kv.list); err != nil {
				return nil, err
			}
		}
		return data, nil
	})
	if err != nil {
		return nil, fmt.Errorf("mcpconfig: %s %q: %w", verb, name, err)
	}
	if changed {
		r.opts.Logger.Info("mcpconfig: recorded approval", "server", name, "approved", approve, "file", path)
	}
	return r.resolve(), nil
}

// setKey sets the value at a dotted path of simple keys (a list is never
// written as null).
func setKey(data []byte, path string, list []string) ([]byte, error) {
	if list == nil {
		list = []string{}
	}
	return sjson.SetBytes(data, path, list)
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
	// A symlinked file (dotfiles kept elsewhere) is written where it
	// points: renaming onto the link would replace it with a plain file.
	if target, err := filepath.EvalSymlinks(path); err == nil {
		path = target
	}
	return replaceFile(path, data, mode)
}

// replaceFile is writeFileAtomic without following a link at path: the
// rename replaces what is there. The temporary file is created
// exclusively (never through a link).
func replaceFile(path string, data []byte, mode fs.FileMode) error {
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
