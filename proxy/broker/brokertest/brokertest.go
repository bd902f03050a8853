// Package brokertest is what the tests of the permission broker (package
// proxy/broker) and of the proxy share about "always" answers: a gate that
// holds the write of an allow rule while the test acts, and the rules a
// session's settings.local.json holds. It starts no goroutines.
package brokertest

import (
	"encoding/json"
	"os"
	"sync"
	"testing"
	"time"
)

// Gate passes AllowRules to Write, but each call first says it entered
// (Entered) and then waits until the test opens the gate (Open); once open
// it stays open. Make one with NewGate.
type Gate struct {
	Write   func(dir string, rules []string) error
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

// NewGate returns a closed gate in front of write.
func NewGate(write func(dir string, rules []string) error) *Gate {
	return &Gate{Write: write, entered: make(chan struct{}, 1), release: make(chan struct{})}
}

// AllowRules enters, waits for the gate to open, then writes.
func (g *Gate) AllowRules(dir string, rules []string) error {
	g.entered <- struct{}{}
	<-g.release
	return g.Write(dir, rules)
}

// Open lets the held write (and every later one) go on.
func (g *Gate) Open() { g.once.Do(func() { close(g.release) }) }

// Entered receives once per AllowRules call, when it has entered.
func (g *Gate) Entered() <-chan struct{} { return g.entered }

// WaitEntered fails the test unless a write enters within limit.
func (g *Gate) WaitEntered(t testing.TB, limit time.Duration) {
	t.Helper()
	select {
	case <-g.entered:
	case <-time.After(limit):
		t.Fatal("the rule write did not start")
	}
}

// Allowed returns permissions.allow of the settings file at path (nil
// when there is no file).
func Allowed(t testing.TB, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	var m struct{ Permissions struct{ Allow []string } }
	if err != nil || json.Unmarshal(data, &m) != nil {
		t.Fatalf("settings.local.json: %v %s", err, data)
	}
	return m.Permissions.Allow
}
