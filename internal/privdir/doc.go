// Package privdir gives a process private directories that clean up after
// it, even after kill -9, and the file locks and owner-only permissions
// they rest on. ccproxy keeps two kinds there: mcpconfig's --mcp-config
// files (they may hold secrets) and the proxy's replay-log spill files.
//
// A Base is a directory of this user that nobody else may enter (0700; on
// Windows a protected DACL with one entry, for this user: OwnerOnly). A
// Run is <base>/run-<pid>-<random>, made by NewRun with an exclusive lock
// on its lock file held for as long as the process lives (flock(2);
// LockFileEx on Windows); the kernel releases it when the process dies,
// however. RemoveStale, called by a process at start, removes the Run
// directories in a base whose lock is free: what dead processes left,
// never a live one's; Sweep does the same without making the base, for a
// start that may never make a Run (ccproxy serve --demo). RemoveIfEmpty,
// at a clean shutdown, removes a Run that holds nothing but its lock. A
// lock file is closed before its directory is removed, and on Windows it
// is created shared for deletion (createLockFile): Windows neither renames
// nor deletes a file open without that.
//
// Lock is the same exclusive file lock, also used by mcpconfig to
// serialize settings writes across processes. Where the platform has no
// file locks (js, wasip1, plan9) Lock with wait does nothing and without
// wait reports the file held, so RemoveStale removes nothing.
//
// The package starts no goroutine and keeps no state: a Run is its
// caller's (mcpconfig keeps one per process behind its mutex, the proxy's
// spool one per Server).
package privdir
