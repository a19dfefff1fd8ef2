package render

import (
	"strings"
	"sync"

	"github.com/cbroglie/mustache"

	"github.com/tripleo-go/agent/internal/jsondoc"
)

// Metadata read lazily (a big file: metadata.LazyFrom) keeps its
// top-level values as checked bytes. Its view is made key by key: a
// template's top-level context holds only the keys the template names,
// each key's view made the first time a template names it. The library
// reaches a dict's entries only by name, and a name it looks up in the
// top-level context is a tag's name, or the part before its first dot
// (the rest is looked up in what that part found, whole), so the
// template renders as it would with every key there. {{.}} of the top
// level prints its JSON, which is written straight from the bytes.

// lazyTop is the top level of lazily read metadata.
type lazyTop struct {
	vb  *viewBuilder
	obj *jsondoc.Object
	ref ref

	mu   sync.Mutex
	keys map[string]*lazyKey
}

// lazyKey is a top-level key's view, made once.
type lazyKey struct {
	once sync.Once
	view any
}

func newLazyTop(vb *viewBuilder, obj *jsondoc.Object) *lazyTop {
	return &lazyTop{vb: vb, obj: obj, ref: ref{id: vb.addDict(obj), nonce: vb.nonce, obj: obj},
		keys: make(map[string]*lazyKey)}
}

// context is the top-level context for tmpl: a *dict, made for this
// template, not a cell (view.go): fmt prints it as a map, which starts
// with its ref's sentinel and which the writer replaces.
func (l *lazyTop) context(tmpl *mustache.Template) any {
	d := dict{refKey: l.ref}
	l.add(d, tmpl.Tags())
	return &d
}

// add puts into d the view of each key that tags and their sections
// name and the metadata has.
func (l *lazyTop) add(d dict, tags []mustache.Tag) {
	for _, t := range tags {
		name := t.Name()
		if name != "." {
			name, _, _ = strings.Cut(name, ".")
		}
		if _, done := d[name]; !done && name != "." { // "": the ref, already there
			if v, ok := l.view(name); ok {
				d[name] = v
			}
		}
		if typ := t.Type(); typ == mustache.Section || typ == mustache.InvertedSection {
			l.add(d, t.Tags())
		}
	}
}

// view is the view of the top-level key name, if the metadata has it.
func (l *lazyTop) view(name string) (any, bool) {
	v, ok := l.obj.Get(name)
	if !ok {
		return nil, false
	}
	l.mu.Lock()
	k := l.keys[name]
	if k == nil {
		k = &lazyKey{}
		l.keys[name] = k
	}
	l.mu.Unlock()
	k.once.Do(func() { k.view = l.vb.view(jsondoc.Materialized(v)) })
	return k.view, true
}
