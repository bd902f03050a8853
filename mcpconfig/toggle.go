package mcpconfig

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"time"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// UnrecordedToggle runs toggle, a CLI's mcp_toggle control request of
// server name to enabled in the project of opts, and takes back what the
// CLI records for it, so a toggle changes only the session that ran it.
// When the file before says a record is due (the project's
// disabledMcpServers does not already say so) and toggle succeeded, it
// waits for that record (awaitToggleRecord, up to toggleRecordWait) before
// it undoes it: the claude may save it after it answered (2.1.332 saves
// pluginUsage first and the record in a second save).
//
// The CLI (2.1.329, 2.1.332, docs/CLI-NOTES.md) records every mcp_toggle
// in ~/.claude.json, a save it starts (under its lock) before it answers
// but may rename into place just after: projects["<project>"].disabledMcpServers
// gets the name (disable) or loses it (enable), the project entry is
// created with the CLI's defaults when missing; every scope, --mcp-config
// servers too. New claude processes then start the server disabled. It
// keeps the toggled state in memory, so undoing the record leaves the
// session as toggled.
//
// The file is held under the lock of ccproxy's own writes (settingsMu and
// the lock file) from before toggle until the record is undone; the undo
// (after toggle) also holds the CLI's own lock of the file
// (lockCLIConfig). When the
// file after the toggle differs from the file before only by that record,
// the bytes from before are written back (the file is removed when the
// toggle created it): the file is byte-identical. When something else
// changed it meanwhile (another save of the claude's, e.g. its
// pluginUsage), only the project's disabledMcpServers is put back as it was
// (the project entry is removed when the toggle created it). undone reports whether the
// file was written; toggle's error is returned as is (the record is still
// undone if the CLI wrote one).
func UnrecordedToggle(opts Options, name string, enabled bool, toggle func() error) (undone bool, err error) {
	loc, err := LocationOf(opts, ScopeLocal)
	if err != nil {
		return false, err
	}
	path := loc.File
	settingsMu.Lock()
	defer settingsMu.Unlock()
	unlock, err := lockFile(path, false)
	if err != nil {
		return false, err
	}
	defer unlock()
	before, existed, err := readConfigFile(path)
	if err != nil {
		return false, fmt.Errorf("read %s: %s", path, errorText(err))
	}
	var mode os.FileMode = 0o600
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}

	terr := toggle()
	if terr == nil && toggleRecordDue(before, existed, loc.Project, name, enabled) {
		// The claude may start its save only after it answered (2.1.332):
		// wait for the record that is due, so the undo below sees it.
		awaitToggleRecord(path, loc.Project, name, enabled)
	}

	// The CLI has saved its record (under its own lock) before it
	// answered; the undo is a read-modify-write like any other of
	// ~/.claude.json, so it takes the CLI's lock too (never around
	// toggle: the claude answering it takes that lock itself).
	release, err := lockCLIConfig(path)
	if err != nil {
		return false, err
	}
	defer release()
	after, exists, err := readConfigFile(path)
	if err != nil {
		return false, fmt.Errorf("read %s after mcp_toggle: %s", path, errorText(err))
	}
	if exists == existed && bytes.Equal(before, after) {
		return false, terr
	}
	if onlyToggleRecord(before, existed, after, loc.Project) {
		if !existed {
			if err := os.Remove(path); err != nil {
				return false, fmt.Errorf("remove %s the CLI created for mcp_toggle: %w", path, err)
			}
			return true, terr
		}
		if err := writeFileAtomic(path, before, mode); err != nil {
			return false, err
		}
		return true, terr
	}
	// Something else wrote too (the CLI writes ~/.claude.json on its own
	// time, e.g. its pluginUsage): put back only the project's list, or
	// take away the project entry the toggle created.
	entry := "projects." + pathKey(loc.Project)
	key := entry + ".disabledMcpServers"
	var out []byte
	if old := gjson.GetBytes(before, key); old.Exists() {
		out, err = sjson.SetRawBytes(after, key, []byte(old.Raw))
	} else if gjson.GetBytes(before, entry).Exists() {
		out, err = sjson.DeleteBytes(after, key)
	} else if gjson.GetBytes(before, "projects").Exists() || len(gjson.GetBytes(after, "projects").Map()) > 1 {
		out, err = sjson.DeleteBytes(after, entry)
	} else {
		out, err = sjson.DeleteBytes(after, "projects")
	}
	if err != nil {
		return false, fmt.Errorf("undo mcp_toggle's record in %s: %w", path, err)
	}
	if err := writeFileAtomic(path, out, mode); err != nil {
		return false, err
	}
	return true, terr
}

// onlyToggleRecord reports whether after is before plus what the CLI
// records for an mcp_toggle in project: its disabledMcpServers, and the
// project entry (and projects) when before had none.
func onlyToggleRecord(before []byte, existed bool, after []byte, project string) bool {
	decode := func(b []byte) (map[string]any, bool) {
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		var m map[string]any
		return m, d.Decode(&m) == nil && m != nil
	}
	a, ok := decode(after)
	if !ok {
		return false
	}
	b := map[string]any{}
	if existed {
		if b, ok = decode(before); !ok {
			return false
		}
	}
	bp, _ := b["projects"].(map[string]any)
	ap, _ := a["projects"].(map[string]any)
	if ap != nil {
		if be, ok := bp[project].(map[string]any); ok {
			if ae, ok := ap[project].(map[string]any); ok {
				if v, ok := be["disabledMcpServers"]; ok {
					ae["disabledMcpServers"] = v
				} else {
					delete(ae, "disabledMcpServers")
				}
			}
		} else {
			delete(ap, project)
			if _, had := b["projects"]; !had && len(ap) == 0 {
				delete(a, "projects")
			}
		}
	}
	return reflect.DeepEqual(a, b)
}

// toggleRecordWait bounds how long UnrecordedToggle waits for a due record
// to land after the claude answered. The CLI saves it within about 150 ms
// of its answer (2.1.329, 2.1.332, docs/CLI-NOTES.md); when another
// claude holds the lock it retries after 200, 400, 800 and 1600 ms
// (proper-lockfile), 3 s in all, so 5 s covers a few such retries on a
// loaded machine. A record that has not landed by then is left to the
// look under the CLI's lock that follows (a CLI that stopped recording
// costs each toggle this wait, and no more).
var toggleRecordWait = 5 * time.Second

// toggleRecordAwait, when set (tests), is called once when UnrecordedToggle
// starts to wait for a due record.
var toggleRecordAwait func()

// toggleListed reports whether name is in the project's disabledMcpServers
// in data, and whether that data could be read as JSON.
func toggleListed(data []byte, project, name string) (listed, ok bool) {
	if !gjson.ValidBytes(data) {
		return false, false
	}
	for _, v := range gjson.GetBytes(data, "projects."+pathKey(project)+".disabledMcpServers").Array() {
		if v.String() == name {
			return true, true
		}
	}
	return false, true
}

// toggleRecordDue reports whether the CLI records a successful mcp_toggle
// of name to enabled, given the file before it (data; existed false when
// there was none): it writes nothing when the project's
// disabledMcpServers already says so (docs/CLI-NOTES.md). A file that is
// not JSON: no record is known to be due.
func toggleRecordDue(before []byte, existed bool, project, name string, enabled bool) bool {
	if !existed {
		return !enabled
	}
	listed, ok := toggleListed(before, project, name)
	return ok && listed == enabled
}

// awaitToggleRecord waits until the file at path records name as enabled
// or disabled in project, polling it every cliLockPoll (a read without the
// lock: the CLI replaces the file by a rename, so a read sees the whole
// old file or the whole new one), for at most toggleRecordWait.
func awaitToggleRecord(path, project, name string, enabled bool) bool {
	if toggleRecordAwait != nil {
		toggleRecordAwait()
	}
	deadline := time.Now().Add(toggleRecordWait)
	for {
		if data, exists, err := readConfigFile(path); err == nil && exists {
			if listed, ok := toggleListed(data, project, name); ok && listed != enabled {
				return true
			}
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(cliLockPoll)
	}
}
