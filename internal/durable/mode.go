package durable

import "os"

// WriteFileMode is WriteFile with the file's permission bits set to perm
// before the rename: a file another user's daemon reads (node_exporter's
// textfile collector runs as prometheus) is never seen private.
func WriteFileMode(path string, data []byte, perm os.FileMode) error {
	return WriteFileOwned(path, data, perm, -1, -1)
}

// WriteFileOwned is WriteFile with the file's owner and mode set on the
// staged file, before its sync and its rename: the file at path is never
// seen, not even for an instant or after a power cut, with the new bytes
// and another owner or mode. A uid or gid of -1 leaves that one the
// writer's, as os.Chown. The owner is set first, since a chown clears
// the set-user-ID and set-group-ID bits that perm may hold.
func WriteFileOwned(path string, data []byte, perm os.FileMode, uid, gid int) error {
	tmp, err := stageFrom(path, writeAll(data), func(f *os.File) error {
		if uid != -1 || gid != -1 {
			if err := f.Chown(uid, gid); err != nil {
				return err
			}
		}
		return f.Chmod(perm)
	})
	if err != nil {
		return err
	}
	defer os.Remove(tmp) // a no-op after the rename
	if beforeRename != nil {
		beforeRename(tmp)
	}
	return os.Rename(tmp, path)
}

// beforeRename, set by tests, sees the staged file just before the rename.
var beforeRename func(staged string)
