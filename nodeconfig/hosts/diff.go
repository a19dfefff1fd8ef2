package hosts

import (
	"context"
	"os"
	"path/filepath"

	"github.com/tripleo-go/agent/nodeconfig"
)

// showDiff prints diff's view of the change (the reference's "check
// below for changes"): the new text is staged in the temporary
// directory for diff to read, then removed.
func showDiff(ctx context.Context, env nodeconfig.Env, path, now string) error {
	dir, _ := env.Getenv("TMPDIR")
	f, err := os.CreateTemp(dir, "51-hosts.")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	_, err = f.WriteString(now)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return env.Command(ctx, nil, "diff", path, filepath.Clean(f.Name()))
}
