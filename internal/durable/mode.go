package durable

import "os"

// WriteFileMode is WriteFile with the file's permission bits set to perm
// before the rename: a file another user's daemon reads (node_exporter's
// textfile collector runs as prometheus) is never seen private.
func WriteFileMode(path string, data []byte, perm os.FileMode) error {
	tmp, err := stage(path, data)
	if err != nil {
		return err
	}
	defer os.Remove(tmp) // a no-op after the rename
	if err := os.Chmod(tmp, perm); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
