//go:build windows

package privdir

import (
	"fmt"
	"os"

	"golang.org/x/sys/windows"
)

// OwnerOnly gives the file or directory at path a protected DACL with a
// single entry: full access for the user ccproxy runs as. Nothing is
// inherited from the parent directory, so no other account (not even
// Administrators or SYSTEM through inheritance) can open it; for a
// directory, what is created in it inherits that one entry. Chmod(0o600)
// does not do this on Windows: it only sets the read-only attribute. Call
// it before the file's content is written.
func OwnerOnly(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("owner-only access: %w", err)
	}
	inherit := uint32(windows.NO_INHERITANCE)
	if st.IsDir() {
		inherit = windows.SUB_CONTAINERS_AND_OBJECTS_INHERIT
	}
	user, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return fmt.Errorf("owner-only access for %s: the current user: %w", path, err)
	}
	acl, err := windows.ACLFromEntries([]windows.EXPLICIT_ACCESS{{
		AccessPermissions: windows.GENERIC_ALL,
		AccessMode:        windows.SET_ACCESS,
		Inheritance:       inherit,
		Trustee: windows.TRUSTEE{
			TrusteeForm:  windows.TRUSTEE_IS_SID,
			TrusteeType:  windows.TRUSTEE_IS_USER,
			TrusteeValue: windows.TrusteeValueFromSID(user.User.Sid),
		},
	}}, nil)
	if err != nil {
		return fmt.Errorf("owner-only access for %s: building the ACL: %w", path, err)
	}
	if err := windows.SetNamedSecurityInfo(path, windows.SE_FILE_OBJECT,
		windows.DACL_SECURITY_INFORMATION|windows.PROTECTED_DACL_SECURITY_INFORMATION,
		nil, nil, acl, nil); err != nil {
		return fmt.Errorf("owner-only access for %s: %w", path, err)
	}
	return nil
}
