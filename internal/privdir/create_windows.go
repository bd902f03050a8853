//go:build windows

package privdir

import (
	"os"

	"golang.org/x/sys/windows"
)

// createLockFile creates the file at path (it must not exist), for Lock,
// shared for deletion: os.OpenFile does not share it so, and Windows then
// refuses to rename the file while it is open (NewRun renames it, locked,
// into place).
func createLockFile(path string) (*os.File, error) {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	h, err := windows.CreateFile(p, windows.GENERIC_READ|windows.GENERIC_WRITE,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE,
		nil, windows.CREATE_NEW, windows.FILE_ATTRIBUTE_NORMAL, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(h), path), nil
}
