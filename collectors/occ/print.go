package occ

import (
	"context"
	"fmt"

	"github.com/tripleo-go/agent/internal/pyjson"
)

// print is --print (or no command): one object of every key, later
// collectors winning, printed as the reference's json.dumps(indent=1);
// the cache is not touched.
func (r *runner) print(ctx context.Context) error {
	got := r.collect(ctx)
	obj := pyjson.NewObject(len(got.entries))
	for _, e := range got.entries {
		if !got.kept[e.Name] {
			obj.Set(e.Name, e.Content)
		}
	}
	fmt.Fprintln(r.env.Stdout, pyjson.DumpsIndent(obj, 1))
	return nil
}
