package mcpconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// cliToggle writes what the CLI 2.1.329 records for mcp_toggle of name
// (docs/CLI-NOTES.md): the project entry with the CLI's defaults when
// missing, its disabledMcpServers with name added or removed, two-space
// JSON with no final newline; extra, when set, is written with it (a write
// of the CLI's own at the same time).
func cliToggle(t *testing.T, opts Options, name string, enabled bool, extra string) func() error {
	return func() error {
		path := filepath.Join(opts.HomeDir, ".claude.json")
		data, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			data = []byte("{}")
		} else if err != nil {
			t.Fatal(err)
		}
		entry := "projects." + pathKey(opts.ProjectDir)
		if !gjson.GetBytes(data, entry).Exists() {
			data, _ = sjson.SetRawBytes(data, entry, []byte(`{"allowedTools":[],"mcpContextUris":[],"mcpServers":{},"enabledMcpjsonServers":[],"disabledMcpjsonServers":[],"hasTrustDialogAccepted":false}`))
		}
		var list []string
		for _, v := range gjson.GetBytes(data, entry+".disabledMcpServers").Array() {
			if v.String() != name {
				list = append(list, v.String())
			}
		}
		if !enabled {
			list = append(list, name)
		}
		if list == nil {
			list = []string{}
		}
		data, _ = sjson.SetBytes(data, entry+".disabledMcpServers", list)
		if extra != "" {
			data, _ = sjson.SetBytes(data, extra, 1)
		}
		return os.WriteFile(path, pretty(data), 0o600)
	}
}

func pretty(data []byte) []byte {
	var b bytes.Buffer
	if err := jsonIndent(&b, data); err != nil {
		panic(err)
	}
	return b.Bytes()
}

// TestUnrecordedToggle: what the CLI records for an mcp_toggle is taken
// back byte for byte (the file removed when the toggle created it); with a
// concurrent write of the CLI's own, only the record goes; a toggle that
// fails or writes nothing leaves the file alone; the toggle's error is
// returned.
func TestUnrecordedToggle(t *testing.T) {
	const base = "{\n    \"numStartups\": 3,\n    \"projects\": {\n        \"/elsewhere\": {\n            \"disabledMcpServers\": [\"a\"]\n        }\n    }\n}\n"
	for _, c := range []struct {
		name    string
		initial string // "" = no file
		enabled bool
		extra   string
	}{
		{name: "disable, no project entry", initial: base},
		{name: "disable, no file"},
		{name: "enable a recorded one", initial: `{"projects":{"PROJ":{"allowedTools":[],"disabledMcpServers":["srv","other"]}}}`, enabled: true},
		{name: "disable, entry without list", initial: `{"projects":{"PROJ":{"allowedTools":["x"]}}}`},
		{name: "concurrent write, no project entry", initial: base, extra: "pluginUsage"},
		{name: "concurrent write, no projects", initial: `{"a":1}`, extra: "pluginUsage"},
		{name: "concurrent write, recorded list", initial: `{"projects":{"PROJ":{"disabledMcpServers":["other"]}}}`, extra: "pluginUsage"},
	} {
		t.Run(c.name, func(t *testing.T) {
			opts := writeEnv(t)
			path := filepath.Join(opts.HomeDir, ".claude.json")
			initial := bytes.ReplaceAll([]byte(c.initial), []byte("PROJ"), []byte(opts.ProjectDir))
			if c.initial != "" {
				if err := os.WriteFile(path, initial, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			undone, err := UnrecordedToggle(opts, "srv", c.enabled, cliToggle(t, opts, "srv", c.enabled, c.extra))
			if err != nil || !undone {
				t.Fatalf("undone %v, err %v", undone, err)
			}
			got, rerr := os.ReadFile(path)
			switch {
			case c.initial == "":
				if !errors.Is(rerr, os.ErrNotExist) {
					t.Errorf("the file the toggle created is still there: %s", got)
				}
			case c.extra == "":
				if !bytes.Equal(got, initial) {
					t.Errorf("not byte-identical:\nwas %s\nnow %s", initial, got)
				}
				if st, _ := os.Stat(path); st.Mode().Perm() != 0o644 {
					t.Errorf("mode %v, want 0644", st.Mode().Perm())
				}
			default:
				if !gjson.GetBytes(got, c.extra).Exists() {
					t.Errorf("the concurrent write is lost: %s", got)
				}
				want, _ := sjson.DeleteBytes(got, c.extra)
				if !jsonEqual(t, want, initial) {
					t.Errorf("the record is not taken back:\nwas %s\nnow %s", initial, got)
				}
			}
		})
	}

	t.Run("toggle fails or writes nothing", func(t *testing.T) {
		opts := writeEnv(t)
		path := filepath.Join(opts.HomeDir, ".claude.json")
		if err := os.WriteFile(path, []byte(base), 0o600); err != nil {
			t.Fatal(err)
		}
		boom := errors.New("Server not found: srv")
		undone, err := UnrecordedToggle(opts, "srv", false, func() error { return boom })
		if undone || !errors.Is(err, boom) {
			t.Errorf("failed toggle: undone %v, err %v", undone, err)
		}
		// Enabling a server the list does not name: no record is due, so
		// nothing is waited for.
		toggleRecordAwait = func() { t.Error("waited for a record that is not due") }
		undone, err = UnrecordedToggle(opts, "srv", true, func() error { return nil })
		toggleRecordAwait = nil
		if undone || err != nil {
			t.Errorf("toggle writing nothing: undone %v, err %v", undone, err)
		}
		// A due record that never comes: waited for, up to toggleRecordWait.
		defer func(d time.Duration) { toggleRecordWait = d }(toggleRecordWait)
		toggleRecordWait = 50 * time.Millisecond
		waited := false
		toggleRecordAwait = func() { waited = true }
		defer func() { toggleRecordAwait = nil }()
		undone, err = UnrecordedToggle(opts, "srv", false, func() error { return nil })
		if undone || err != nil || !waited {
			t.Errorf("due record that never came: undone %v, err %v, waited %v", undone, err, waited)
		}
		if got, _ := os.ReadFile(path); string(got) != base {
			t.Errorf("file changed: %s", got)
		}
	})
}

func jsonIndent(b *bytes.Buffer, data []byte) error { return json.Indent(b, data, "", "  ") }

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return reflect.DeepEqual(x, y)
}

// TestUnrecordedToggleRecordAfterAnswer: a claude that starts saving its
// mcp_toggle record only after it answered (seen on 2.1.332,
// docs/CLI-NOTES.md) — under its lock folder, by a rename — still has the
// record taken back: UnrecordedToggle waits for the record that is due
// before it undoes it. The fake claude starts its save once
// UnrecordedToggle waits for it, or once UnrecordedToggle returned, so
// without the wait the record is left in the file every time.
func TestUnrecordedToggleRecordAfterAnswer(t *testing.T) {
	for _, c := range []struct {
		name    string
		initial string
		enabled bool
	}{
		{name: "disable", initial: `{"numStartups":1,"projects":{"PROJ":{"disabledMcpServers":["other"]}}}`},
		{name: "enable", initial: `{"projects":{"PROJ":{"allowedTools":[],"disabledMcpServers":["srv"]}}}`, enabled: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			opts := writeEnv(t)
			path := filepath.Join(opts.HomeDir, ".claude.json")
			lock := path + ".lock"
			initial := bytes.ReplaceAll([]byte(c.initial), []byte("PROJ"), []byte(opts.ProjectDir))
			if err := os.WriteFile(path, initial, 0o600); err != nil {
				t.Fatal(err)
			}
			// The record as the claude would write it, made on a copy.
			other := Options{HomeDir: t.TempDir(), ProjectDir: opts.ProjectDir}
			if err := os.WriteFile(filepath.Join(other.HomeDir, ".claude.json"), initial, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := cliToggle(t, other, "srv", c.enabled, "")(); err != nil {
				t.Fatal(err)
			}
			record, err := os.ReadFile(filepath.Join(other.HomeDir, ".claude.json"))
			if err != nil {
				t.Fatal(err)
			}

			waiting := make(chan struct{})
			toggleRecordAwait = func() { close(waiting) }
			defer func() { toggleRecordAwait = nil }()
			answered := make(chan struct{})
			returned := make(chan struct{})
			saved := make(chan error, 1)
			go func() { // the claude's save, after its answer
				<-answered
				select {
				case <-waiting:
				case <-returned:
				}
				if err := os.Mkdir(lock, 0o777); err != nil {
					saved <- err
					return
				}
				tmp := path + ".tmp.fake"
				err := os.WriteFile(tmp, record, 0o600)
				if err == nil {
					err = os.Rename(tmp, path)
				}
				if rerr := os.Remove(lock); err == nil {
					err = rerr
				}
				saved <- err
			}()
			undone, err := UnrecordedToggle(opts, "srv", c.enabled, func() error {
				close(answered)
				return nil
			})
			close(returned)
			if serr := <-saved; serr != nil {
				t.Fatal(serr)
			}
			if err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(path)
			if !undone || !bytes.Equal(got, initial) {
				t.Errorf("the record saved after the answer was not taken back (undone %v):\nwas %s\nnow %s", undone, initial, got)
			}
		})
	}
}
