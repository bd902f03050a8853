package history

import (
	"testing"
	"time"
)

// OpenTrashAt opens a trash with a clock of the test's.
func OpenTrashAt(t testing.TB, s *Store, dir string, now func() time.Time) *Trash {
	t.Helper()
	tr, err := s.openTrash(dir, now)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}
