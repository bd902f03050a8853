//go:build !unix

package childproc

import "os"

// ExitStatus says how a process ended: its exit code (signal is always ""
// without Unix signals: a process killed from outside has an exit code
// too). A nil state (the process was never waited for): code -1.
func ExitStatus(st *os.ProcessState) (code int, signal string) {
	if st == nil {
		return -1, ""
	}
	return st.ExitCode(), ""
}
