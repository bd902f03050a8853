//go:build !unix

package probe

func isBrokenPipe(error) bool { return false }

func isConnRefused(err error) bool { return false }
