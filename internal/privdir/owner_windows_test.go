//go:build windows

package privdir

import (
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"golang.org/x/sys/windows"
)

// OwnerOnly leaves one access entry, for the current user, and nothing
// inherited; a file created in a directory it was applied to gets the same.
func TestOwnerOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "private.json")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := OwnerOnly(path); err != nil {
		t.Fatal(err)
	}
	checkOwnerOnly(t, path, true)

	dir := filepath.Join(t.TempDir(), "private")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := OwnerOnly(dir); err != nil {
		t.Fatal(err)
	}
	checkOwnerOnly(t, dir, true)
	inner := filepath.Join(dir, "inner.json")
	if err := os.WriteFile(inner, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	checkOwnerOnly(t, inner, false)

	if err := OwnerOnly(filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing file got no error")
	}
}

// checkOwnerOnly checks that path's DACL has one entry, allowing the
// current user, and (if protected) that it inherits nothing.
func checkOwnerOnly(t *testing.T, path string, protected bool) {
	t.Helper()
	sd, err := windows.GetNamedSecurityInfo(path, windows.SE_FILE_OBJECT, windows.DACL_SECURITY_INFORMATION)
	if err != nil {
		t.Fatal(err)
	}
	control, _, err := sd.Control()
	if err != nil {
		t.Fatal(err)
	}
	if protected && control&windows.SE_DACL_PROTECTED == 0 {
		t.Error("the DACL is not protected: entries are inherited")
	}
	dacl, _, err := sd.DACL()
	if err != nil {
		t.Fatal(err)
	}
	if dacl == nil || dacl.AceCount != 1 {
		t.Fatalf("%s: want 1 access entry, got %+v", path, dacl)
	}
	var ace *windows.ACCESS_ALLOWED_ACE
	if err := windows.GetAce(dacl, 0, &ace); err != nil {
		t.Fatal(err)
	}
	user, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		t.Fatal(err)
	}
	sid := (*windows.SID)(unsafe.Pointer(&ace.SidStart))
	if ace.Header.AceType != windows.ACCESS_ALLOWED_ACE_TYPE || !sid.Equals(user.User.Sid) {
		t.Errorf("the entry is type %d for %v, want an allow entry for %v", ace.Header.AceType, sid, user.User.Sid)
	}
}
