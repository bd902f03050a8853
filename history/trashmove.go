package history

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// The trash moves a session's files with a rename. When the trash
// directory is on another file system than the projects directory (a
// rename fails with EXDEV), the files are copied instead: each file's
// bytes, mode and modification time (the CLI lists sessions by it),
// folders, and symbolic links as links (never followed), each file synced;
// only once the whole copy is written is the original removed. A failed
// copy removes what it wrote and leaves the original untouched.

// moveOut moves from to to (which must not exist): a rename, else a copy.
func (t *Trash) moveOut(from, to string) error {
	err := t.rename(from, to)
	if !errors.Is(err, syscall.EXDEV) {
		return err
	}
	return copyThenRemove(from, to)
}

// moveBack moves from to to without replacing anything at to (ErrExist):
// a rename that does not replace, else a copy (whose every create is
// exclusive).
func (t *Trash) moveBack(from, to string) error {
	err := t.renameNoReplace(from, to)
	if !errors.Is(err, syscall.EXDEV) {
		return err
	}
	return copyThenRemove(from, to)
}

func copyThenRemove(from, to string) error {
	if err := copyTree(from, to); err != nil {
		if !errors.Is(err, fs.ErrExist) {
			os.RemoveAll(to) // what this copy wrote (an existing to is refused before anything is written)
		}
		return err
	}
	if err := os.RemoveAll(from); err != nil {
		return fmt.Errorf("copied to %s, but the original could not be removed: %w", to, err)
	}
	return nil
}

// copyTree copies the file, folder or link from to to, creating
// everything exclusively.
func copyTree(from, to string) error {
	return filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, path)
		if err != nil {
			return err
		}
		dst := filepath.Join(to, rel)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			if err := os.Mkdir(dst, fi.Mode().Perm()|0o700); err != nil {
				return err
			}
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(path)
			if err != nil {
				return err
			}
			if err := os.Symlink(target, dst); err != nil {
				return err
			}
			return nil
		case d.Type().IsRegular():
			if err := copyFile(path, dst, fi.Mode().Perm()); err != nil {
				return err
			}
		default:
			return fmt.Errorf("%s: not a file, a folder or a link (%v): not copied", path, d.Type())
		}
		return os.Chtimes(dst, fi.ModTime(), fi.ModTime())
	})
}

func copyFile(from, to string, perm fs.FileMode) error {
	src, err := openNoFollow(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	if err := dst.Sync(); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}
