package history

import "os"

// FileOwner returns a file's inode and owner (0 and -1 where the platform
// has none): how the index tells a file from one put in its place, and
// checks it is the user's own. history/search keeps its index current by
// the same identity.
func FileOwner(fi os.FileInfo) (ino uint64, uid int) { return fileOwner(fi) }

// OpenNoFollow opens a session file for reading, refusing a symbolic link
// and what is not a regular file (and, where it can, never blocking on a
// FIFO put in its place).
func OpenNoFollow(path string) (*os.File, error) { return openNoFollow(path) }
