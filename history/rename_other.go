//go:build !linux

package history

// renameNoReplace renames from to to, failing (fs.ErrExist) when to
// exists (checked just before: no atomic way here).
func renameNoReplace(from, to string) error { return renameChecked(from, to) }
