//go:build !unix

package mcpconfig

// oNoFollow: no such flag here; lockFile's Lstat checks stand alone.
const oNoFollow = 0
