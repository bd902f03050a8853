//go:build !unix

package probe

import "os"

func isBrokenPipe(error) bool { return false }

// killedByStop reports whether st is the end of a process that proc.stop
// killed: the job is terminated with exit code 1 (childproc), which a
// process exiting with 1 by itself also has.
func killedByStop(st *os.ProcessState) bool { return st.ExitCode() == 1 }

func isConnRefused(err error) bool { return false }
