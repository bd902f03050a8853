//go:build !unix

package claudecli

import "os"

// exitStatus describes how a process ended. Without Unix signals there is
// only an exit code (a process killed from outside has one too).
func exitStatus(st *os.ProcessState) (code *int64, signal *string) {
	if st == nil {
		s := "unknown"
		return nil, &s
	}
	c := int64(st.ExitCode())
	return &c, nil
}
