package mcpconfig

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/tidwall/gjson"

	"github.com/ccproxy/ccproxy/internal/privdir"
)

// settingsMu serializes this process's settings writes; the lock file
// (lockFile) serializes them between processes.
var settingsMu sync.Mutex

// LockSuffix is appended to a settings file's name to name its lock file,
// in the same folder: ".claude/.settings.local.json.lock". It is created on
// the first write and left in place (removing a lock file others may hold
// open would let two writers in).
const LockSuffix = ".lock"

func lockPath(path string) string {
	return filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+LockSuffix)
}

// updateSettings is the one read-modify-write of a settings file, used by
// every settings write (approvals, permission rules): updateJSONFile with
// duplicate keys refused and the file written as the CLI writes settings
// (two-space indentation, a final newline, 0600 when new).
// project is the project directory the file belongs to (its links must
// stay inside it, see confine).
func updateSettings(project, path string, edit func(d *doc, exists bool) ([]byte, error)) (changed bool, err error) {
	return updateJSONFile(path, fileStyle{refuseDuplicates: true, finalNewline: true, newMode: 0o600, forceIndent: true, within: project}, edit)
}

// fileStyle says how updateJSONFile checks and writes one kind of file.
type fileStyle struct {
	refuseDuplicates bool        // a duplicate key anywhere is an error (settings files)
	finalNewline     bool        // a new file ends with a newline
	newMode          fs.FileMode // permissions of a new file
	forceIndent      bool        // always two spaces, whatever the file had (settings files)
	// within is the project directory of a project file: a link on the
	// way that resolves outside it is refused (confine). "": a user file,
	// links followed.
	within  string
	cliLock bool // also take the CLI's own lock of the file (~/.claude.json: lockCLIConfig)
}

// updateJSONFile is the one read-modify-write of a JSON file ccproxy
// writes (settings files, ~/.claude.json, .mcp.json): under an exclusive
// lock on the lock file beside it (flock / LockFileEx, so concurrent
// ccproxy processes all keep their change), the file is read and checked (a
// file that is not a valid JSON object, or, for settings, has a duplicate
// key, is left unchanged and is an error), edit returns the new content
// (nil: nothing to change), and the file is replaced atomically, with its
// permissions kept. The existing file's formatting style is kept unless
// style.forceIndent: its indentation (two spaces, four, a tab, or compact)
// and whether it ends with a newline; key order is kept. A new file is
// written with two spaces. The folder is created when missing. A file of
// a project (style.within) is written at its path with the links on the
// way resolved, and not at all when one resolves outside the project
// (confine, *LinkError).
//
// lockFile takes the lock of ccproxy's writes to path (its lock file,
// beside it; settingsMu is the caller's): unlock releases it. With
// noFollow (a project's file) a lock file that is a link is refused, not
// opened.
func lockFile(path string, noFollow bool) (unlock func(), err error) {
	flags := os.O_RDWR | os.O_CREATE
	if noFollow {
		if fi, err := os.Lstat(lockPath(path)); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return nil, fmt.Errorf("lock %s: the lock file %s is a link: not following it", path, lockPath(path))
		}
		flags |= oNoFollow
	}
	lf, err := os.OpenFile(lockPath(path), flags, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := privdir.Lock(lf, true); err != nil {
		lf.Close()
		return nil, fmt.Errorf("lock %s: %w", lf.Name(), err)
	}
	return func() { lf.Close() }, nil // closing releases the lock
}

func updateJSONFile(path string, style fileStyle, edit func(d *doc, exists bool) ([]byte, error)) (changed bool, err error) {
	settingsMu.Lock()
	defer settingsMu.Unlock()
	// name is the file as the user knows it (messages); path, from here
	// on, the file written.
	name := path
	if style.within != "" {
		if path, err = confine(style.within, path); err != nil {
			return false, err
		}
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, fmt.Errorf("create %s: %w", dir, err)
	}
	unlock, err := lockFile(path, style.within != "")
	if err != nil {
		return false, err
	}
	defer unlock()
	if style.cliLock {
		release, err := lockCLIConfig(path)
		if err != nil {
			return false, err
		}
		defer release()
	}

	data, exists, err := readConfigFile(path)
	if err != nil {
		return false, fmt.Errorf("read %s: %s", name, errorText(err))
	}
	mode := style.newMode
	indent, newline := "  ", style.finalNewline
	d := &doc{file: name, text: "{}", root: gjson.Parse("{}")}
	if exists {
		var ferr *FileError
		if d, ferr = parseDoc(name, data); ferr == nil && style.refuseDuplicates {
			ferr = d.duplicateKey()
		}
		if ferr != nil {
			return false, fmt.Errorf("not changing %s: %w", name, ferr)
		}
		if st, err := os.Stat(path); err == nil {
			mode = st.Mode().Perm()
		}
		if !style.forceIndent {
			indent, newline = detectStyle(d.text)
		}
	}
	out, err := edit(d, exists)
	if err != nil || out == nil {
		return false, err
	}
	out = bytes.TrimSpace(out) // the final newline is decided below
	var pretty bytes.Buffer
	if indent == "" {
		err = json.Compact(&pretty, out)
	} else {
		err = json.Indent(&pretty, out, "", indent)
	}
	if err != nil {
		return false, fmt.Errorf("update %s: %w", path, err)
	}
	if newline {
		pretty.WriteByte('\n')
	}
	write := writeFileAtomic
	if style.within != "" {
		write = replaceFile // path is resolved: a link put there meanwhile is replaced, not followed
	}
	if err := write(path, pretty.Bytes(), mode); err != nil {
		return false, err
	}
	return true, nil
}

// detectStyle returns the indentation of a JSON text (the leading
// whitespace of its first indented line; "" when it is on one line) and
// whether it ends with a newline.
func detectStyle(text string) (indent string, finalNewline bool) {
	trimmed := strings.TrimRight(text, " \t\r\n")
	finalNewline = len(trimmed) < len(text) && strings.ContainsAny(text[len(trimmed):], "\n")
	for _, line := range strings.Split(trimmed, "\n")[1:] {
		line = strings.TrimRight(line, "\r")
		ws := line[:len(line)-len(strings.TrimLeft(line, " \t"))]
		if ws != "" && len(ws) < len(line) {
			return ws, finalNewline
		}
	}
	if strings.Contains(trimmed, "\n") || len(strings.Join(strings.Fields(trimmed), "")) <= 2 {
		return "  ", finalNewline // indented without a nested line, or "{}"
	}
	return "", finalNewline // one line: kept compact
}

// duplicateKey reports the first key that appears twice in one object of
// the document, at the second occurrence. Claude Code's JSON.parse would
// silently keep the last value; a settings file with a duplicate key is
// refused instead, since a rule or an approval could hide behind it.
func (d *doc) duplicateKey() *FileError {
	var found *FileError
	var walk func(v gjson.Result, path string)
	walk = func(v gjson.Result, path string) {
		switch {
		case v.IsObject():
			seen := map[string]bool{}
			v.ForEach(func(k, el gjson.Result) bool {
				if seen[k.Str] {
					found = d.errAt(k.Index, "", "duplicate key %s in %s", quoteShort(k.Str), objectName(path))
					return false
				}
				seen[k.Str] = true
				walk(el, path+"."+k.Str)
				return found == nil
			})
		case v.IsArray():
			i := 0
			v.ForEach(func(_, el gjson.Result) bool {
				walk(el, fmt.Sprintf("%s[%d]", path, i))
				i++
				return found == nil
			})
		}
	}
	walk(d.root, "")
	return found
}

func objectName(path string) string {
	if path == "" {
		return "the top-level object"
	}
	return strings.TrimPrefix(path, ".")
}

// Permissions are the permission rules of Claude Code's settings files
// (permissions.allow, .deny, .ask), gathered from every scope the CLI reads:
// managed (managed-settings.json beside managed-mcp.json),
// ~/.claude/settings.json, <dir>/.claude/settings.json and
// <dir>/.claude/settings.local.json. As claude -p applies them (measured on
// 2.1.329, docs/CLI-NOTES.md): the allow rules of <dir>/.claude/settings.json
// (a file that comes with the repository) count only in a trusted workspace
// (projects["<dir>"].hasTrustDialogAccepted); every other rule always
// counts. Rules keep the order of the scopes, without duplicates.
type Permissions struct {
	Allow []string `json:"allow"`
	Deny  []string `json:"deny"`
	Ask   []string `json:"ask"`
}

func (p *Permissions) read(d *doc, allowCounts bool, errs *[]FileError) {
	obj := member(d.root, "permissions")
	if !obj.Exists() {
		return
	}
	if !obj.IsObject() {
		*errs = append(*errs, *d.errAt(obj.Index, "", "permissions must be an object, not %s", kind(obj)))
		return
	}
	for _, kv := range []struct {
		key  string
		list *[]string
	}{{"allow", &p.Allow}, {"deny", &p.Deny}, {"ask", &p.Ask}} {
		rules, es := d.stringList(obj, kv.key, "permissions.")
		*errs = append(*errs, es...)
		if kv.key == "allow" && !allowCounts {
			continue
		}
		for _, r := range rules {
			if r = strings.TrimSpace(r); r != "" && !slices.Contains(*kv.list, r) {
				*kv.list = append(*kv.list, r)
			}
		}
	}
}

func (p Permissions) equal(o Permissions) bool {
	return slices.Equal(p.Allow, o.Allow) && slices.Equal(p.Deny, o.Deny) && slices.Equal(p.Ask, o.Ask)
}

// AllowRules adds rules (e.g. "mcp__srv__tool", "Bash(npm test:*)") to
// permissions.allow of <ProjectDir>/.claude/settings.local.json, where
// Claude Code itself writes "allow, and don't ask again" answers: in one
// write, locked across processes, rules there already not repeated, other
// keys kept, the file replaced atomically. A file that is not valid, or has
// a duplicate key, is left unchanged and is an error. It returns the
// configuration resolved afterwards.
func AllowRules(opts Options, rules ...string) (*Config, error) {
	var add []string
	for _, rule := range rules {
		rule = strings.TrimSpace(rule)
		if rule == "" {
			return nil, fmt.Errorf("mcpconfig: allow rules: a rule is empty")
		}
		if !slices.Contains(add, rule) {
			add = append(add, rule)
		}
	}
	if len(add) == 0 {
		return nil, fmt.Errorf("mcpconfig: allow rules: no rule given")
	}
	// Messages and the log name the rules' tools only: a rule's content
	// (e.g. a Bash command prefix) may hold a secret.
	var tools []string
	for _, a := range add {
		if name, _, _ := strings.Cut(a, "("); !slices.Contains(tools, name) {
			tools = append(tools, name)
		}
	}
	r, err := newResolver(opts)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(r.opts.ProjectDir, ".claude", "settings.local.json")
	changed, err := updateSettings(r.opts.ProjectDir, path, func(d *doc, exists bool) ([]byte, error) {
		perms := member(d.root, "permissions")
		if perms.Exists() && !perms.IsObject() {
			return nil, d.errAt(perms.Index, "", "permissions must be an object, not %s", kind(perms))
		}
		allow, errs := d.stringList(perms, "allow", "permissions.")
		if len(errs) > 0 {
			return nil, &errs[0]
		}
		n := len(allow)
		for _, a := range add {
			if !slices.Contains(allow, a) {
				allow = append(allow, a)
			}
		}
		if len(allow) == n {
			return nil, nil // all there already
		}
		return setKey([]byte(d.text), "permissions.allow", allow)
	})
	if err != nil {
		return nil, fmt.Errorf("mcpconfig: allow rules for %s: %w", strings.Join(tools, ", "), err)
	}
	if changed {
		r.opts.Logger.Info("mcpconfig: recorded permission rules", "tools", tools, "rules", len(add), "file", path)
	}
	return r.resolve(), nil
}
