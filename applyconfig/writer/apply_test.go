package writer

import "log/slog"

// Apply writes files as os-apply-config does: a Batch staging them all
// in parallel, then committed. The tests give it whole lists.
func Apply(files []File, log *slog.Logger) (Result, error) {
	b := NewBatch(len(files))
	forEach(len(files), func(i int) error {
		b.Stage(i, files[i])
		return nil
	})
	return b.Commit(log)
}
