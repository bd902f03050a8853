package mcpconfig

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCLILock: a write of ~/.claude.json (AddServer, user and local scope;
// SetServerDisabled; TrustWorkspace) waits while the CLI's lock folder
// ~/.claude.json.lock is there, writes once it is gone, and leaves no lock
// behind; a lock folder untouched for longer than the stale time is taken
// over; a .mcp.json (project scope) write does not look at it.
func TestCLILock(t *testing.T) {
	def := json.RawMessage(`{"type":"stdio","command":"/bin/true","args":[],"env":{}}`)
	writes := map[string]func(opts Options) error{
		"add user": func(opts Options) error {
			_, err := AddServer(opts, ScopeUser, "u", def, AddNew)
			return err
		},
		"add local": func(opts Options) error {
			_, err := AddServer(opts, ScopeLocal, "l", def, AddNew)
			return err
		},
		"disable": func(opts Options) error { _, err := SetServerDisabled(opts, "x", true); return err },
		"trust":   func(opts Options) error { _, err := TrustWorkspace(opts); return err },
	}
	for name, write := range writes {
		t.Run(name+" waits", func(t *testing.T) {
			opts := writeEnv(t)
			path := filepath.Join(opts.HomeDir, ".claude.json")
			lock := path + ".lock"
			if err := os.WriteFile(path, []byte(`{"numStartups":1}`), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(lock, 0o777); err != nil { // a claude saving
				t.Fatal(err)
			}
			held := make(chan string, 1)
			cliLockHeld = func(dir string) { held <- dir }
			defer func() { cliLockHeld = nil }()
			done := make(chan error, 1)
			go func() { done <- write(opts) }()
			select {
			case dir := <-held:
				if dir != lock {
					t.Errorf("waited for %s, want %s", dir, lock)
				}
			case err := <-done:
				t.Fatalf("wrote while the CLI's lock was held (err %v)", err)
			}
			if b, _ := os.ReadFile(path); string(b) != `{"numStartups":1}` {
				t.Errorf("the file changed while the CLI's lock was held: %s", b)
			}
			// The claude's save: its content, then the lock goes.
			if err := os.WriteFile(path, []byte(`{"numStartups":2}`), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(lock); err != nil {
				t.Fatal(err)
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			b, _ := os.ReadFile(path)
			if !strings.Contains(string(compactJSON(b)), `"numStartups":2`) {
				t.Errorf("the claude's save is lost: %s", b)
			}
			if _, err := os.Stat(lock); !os.IsNotExist(err) {
				t.Errorf("the lock folder is left behind: %v", err)
			}
		})
	}
	t.Run("stale lock taken over", func(t *testing.T) {
		opts := writeEnv(t)
		lock := filepath.Join(opts.HomeDir, ".claude.json.lock")
		if err := os.Mkdir(lock, 0o777); err != nil {
			t.Fatal(err)
		}
		old := time.Now().Add(-cliLockStale - time.Second)
		if err := os.Chtimes(lock, old, old); err != nil {
			t.Fatal(err)
		}
		cliLockHeld = func(string) { t.Error("waited for a stale lock") }
		defer func() { cliLockHeld = nil }()
		if err := writes["add user"](opts); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(lock); !os.IsNotExist(err) {
			t.Errorf("the lock folder is left behind: %v", err)
		}
	})
	t.Run("project scope ignores it", func(t *testing.T) {
		opts := writeEnv(t)
		if err := os.Mkdir(filepath.Join(opts.HomeDir, ".claude.json.lock"), 0o777); err != nil {
			t.Fatal(err)
		}
		cliLockHeld = func(string) { t.Error("a .mcp.json write waited for ~/.claude.json's lock") }
		defer func() { cliLockHeld = nil }()
		if _, err := AddServer(opts, ScopeProject, "p", def, AddNew); err != nil {
			t.Fatal(err)
		}
	})
}

// TestUnrecordedToggleCLILock: the toggle runs without the CLI's lock
// (the claude answering it takes that lock to save its record), and the
// undo waits for it.
func TestUnrecordedToggleCLILock(t *testing.T) {
	opts := writeEnv(t)
	path := filepath.Join(opts.HomeDir, ".claude.json")
	lock := path + ".lock"
	if err := os.WriteFile(path, []byte(`{"numStartups":1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	held := make(chan struct{}, 1)
	cliLockHeld = func(string) { held <- struct{}{} }
	defer func() { cliLockHeld = nil }()
	record := cliToggle(t, opts, "srv", false, "")
	done := make(chan error, 1)
	go func() {
		_, err := UnrecordedToggle(opts, "srv", false, func() error {
			if _, err := os.Stat(lock); !os.IsNotExist(err) {
				t.Errorf("the CLI's lock is held around the toggle: %v", err)
			}
			if err := record(); err != nil {
				return err
			}
			return os.Mkdir(lock, 0o777) // a claude still saving after it answered
		})
		done <- err
	}()
	select {
	case <-held:
	case err := <-done:
		t.Fatalf("the undo did not wait for the CLI's lock (err %v)", err)
	}
	if err := os.Remove(lock); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != `{"numStartups":1}` {
		t.Errorf("the record was not undone: %s", b)
	}
}
