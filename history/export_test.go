package history

import (
	"os"
	"syscall"
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

// AcrossFileSystems makes every rename of tr fail as one across file
// systems does (EXDEV).
func AcrossFileSystems(tr *Trash) {
	exdev := func(from, to string) error {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: syscall.EXDEV}
	}
	tr.rename, tr.renameNoReplace = exdev, exdev
}
