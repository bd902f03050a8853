package proxy

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"testing"
)

// Components open in order and close in reverse; an open that fails
// closes, in reverse, only the ones opened before it, and closeAll
// returns the first close error after closing every component.
func TestComponentsOpenInOrderCloseInReverse(t *testing.T) {
	var got []string
	comp := func(name string, openErr, closeErr error) component {
		return component{name: name,
			open:  func() error { got = append(got, "open "+name); return openErr },
			close: func(context.Context) error { got = append(got, "close "+name); return closeErr }}
	}
	log := slog.New(slog.DiscardHandler)
	errB := errors.New("b failed to close")
	comps := []component{comp("a", nil, nil), comp("b", nil, errB), comp("c", nil, errors.New("c failed to close"))}
	n, err := openAll(comps)
	if n != 3 || err != nil {
		t.Fatalf("openAll: %d, %v", n, err)
	}
	if err := closeAll(log, comps); err == nil || err.Error() != "c failed to close" {
		t.Errorf("closeAll: %v, want the first error met (c's)", err)
	}
	want := []string{"open a", "open b", "open c", "close c", "close b", "close a"}
	if !slices.Equal(got, want) {
		t.Errorf("order %q, want %q", got, want)
	}

	got = nil
	comps = []component{comp("a", nil, nil), comp("b", nil, nil), comp("c", errors.New("no"), nil), comp("d", nil, nil)}
	n, err = openAll(comps)
	if n != 2 || err == nil {
		t.Fatalf("openAll with c failing: %d, %v; want 2 opened and the error", n, err)
	}
	closeAll(log, comps[:n])
	want = []string{"open a", "open b", "open c", "close b", "close a"}
	if !slices.Equal(got, want) {
		t.Errorf("order %q, want %q", got, want)
	}
}

// The server's components are the documented ones, in the documented
// order (lifecycle.go): closing in reverse is what orders shutdown.
func TestServerComponentOrder(t *testing.T) {
	s, err := New(Options{Token: testToken, Project: t.TempDir(), ReplayOptions: ReplayOptions{SpoolDir: t.TempDir()}, HistoryOptions: HistoryOptions{HistoryHome: "-"}})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range s.components(&httpComponent{}) {
		names = append(names, c.name)
	}
	want := []string{"spool", "connections", "sessions", "spares", "requests", "logins", "loops", "http"}
	if !slices.Equal(names, want) {
		t.Errorf("components %q, want %q", names, want)
	}
}
