package occ

import (
	"context"
	"fmt"

	"github.com/tripleo-go/agent/internal/jsondoc"
)

// print is --print (or no command): one object of every key, later
// collectors winning, printed as the reference's json.dumps(indent=1);
// the cache is not touched.
func (r *runner) print(ctx context.Context) error {
	got := r.collect(ctx)
	obj := jsondoc.NewObject(len(got.entries))
	for _, e := range got.entries {
		if !got.kept[e.Name] {
			obj.Set(e.Name, e.Content)
		}
	}
	fmt.Fprintln(r.env.Stdout, jsondoc.DumpsIndent(obj, 1))
	// As the reference, exit 0 with nothing to run; under the Type=notify
	// unit that is a clean stop, not a protocol failure restarted every
	// RestartSec (an image booted before its configuration arrived).
	if r.cfg.Command == "" {
		r.env.Notify.Ready("no command configured: printed the collected data and stopped")
	}
	return nil
}
