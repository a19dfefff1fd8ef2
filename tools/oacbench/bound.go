package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/cbroglie/mustache"
)

// The bound is the least a correct os-apply-config that renders with the
// library the project requires (cbroglie/mustache) can spend on the fresh
// case, timed in-process like the floor (same signature, same threads):
// the floor's writes plus what no such program can skip: decode the
// metadata (encoding/json into map[string]any, cheaper than an
// order-keeping decoder), read and parse every template, render it. If the
// bound is above the target's multiple of the floor, the target cannot be
// met by any such program on this machine.
//
// It spares itself what a real one must also do, so that it stays a lower
// bound: no process start, no UTF-8 or newline checks, no Python-alike
// value formatting (Go's fmt renders the values), no temporary names, no
// log. Merging is deep, as the reference merges: every layer of the corpus
// sets keys under every service, so a shallow merge would drop two layers
// and render less.

// noPartials makes every partial render empty, as our render does.
var noPartials = &mustache.StaticProvider{}

// boundTemplate is one template of the tree as the bound handles it.
type boundTemplate struct {
	rel        string // path under the template root (and the output dir)
	text       []byte
	oac        bool // has a .oac control file
	tmpl       *mustache.Template
	mode       fs.FileMode
	allowEmpty bool
	body       []byte // kept only by the breakdown
}

// boundRun holds one run's inputs and what it has made of them.
type boundRun struct {
	root string   // template root
	meta []string // metadata files, in merge order
	list []*boundTemplate
	view map[string]any
}

// freshBound returns the bound of the fresh case for these inputs.
func freshBound(templates string, meta []string) floor {
	return func(outDir string) (time.Duration, error) {
		start := time.Now()
		r := &boundRun{root: templates, meta: meta}
		// The metadata decodes while the templates are listed, read and
		// parsed: parsing needs no metadata.
		decoded := make(chan error, 1)
		go func() { decoded <- r.decode() }()
		err := r.listTemplates()
		if err == nil {
			err = inParallel(len(r.list), func(i int) error {
				if err := r.read(r.list[i]); err != nil {
					return err
				}
				return r.list[i].parse()
			})
		}
		if derr := <-decoded; err == nil {
			err = derr
		}
		if err == nil {
			err = r.renderWrite(outDir)
		}
		if err == nil {
			err = syncFilesystem(outDir)
		}
		return time.Since(start), err
	}
}

// decode reads and decodes the metadata files at once, then merges them
// in order.
func (r *boundRun) decode() error {
	docs := make([]map[string]any, len(r.meta))
	errs := make([]error, len(r.meta))
	var wg sync.WaitGroup
	for i, path := range r.meta {
		wg.Go(func() {
			data, err := os.ReadFile(path)
			if err == nil {
				err = json.Unmarshal(data, &docs[i])
			}
			if err != nil {
				errs[i] = fmt.Errorf("metadata %s: %w", path, err)
			}
		})
	}
	wg.Wait()
	r.view = map[string]any{}
	for i, d := range docs {
		if errs[i] != nil {
			return errs[i]
		}
		deepMerge(r.view, d)
	}
	return nil
}

// deepMerge merges src into dst: objects under the same key merge, any
// other value replaces.
func deepMerge(dst, src map[string]any) {
	for k, v := range src {
		if sv, ok := v.(map[string]any); ok {
			if dv, ok := dst[k].(map[string]any); ok {
				deepMerge(dv, sv)
				continue
			}
		}
		dst[k] = v
	}
}

// listTemplates walks the template root; a file named X.oac is X's
// control file, not a template.
func (r *boundRun) listTemplates() error {
	var rels []string
	oac := map[string]bool{}
	err := filepath.WalkDir(r.root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel := path[len(r.root)+1:]
		if base, ok := strings.CutSuffix(rel, ".oac"); ok {
			oac[base] = true
		} else {
			rels = append(rels, rel)
		}
		return nil
	})
	r.list = make([]*boundTemplate, len(rels))
	for i, rel := range rels {
		r.list[i] = &boundTemplate{rel: rel, oac: oac[rel], mode: 0o644, allowEmpty: true}
	}
	return err
}

// read reads a template and its control file.
func (r *boundRun) read(t *boundTemplate) error {
	path := filepath.Join(r.root, t.rel)
	var err error
	if t.text, err = os.ReadFile(path); err != nil {
		return err
	}
	if !t.oac {
		return nil
	}
	ctl, err := os.ReadFile(path + ".oac")
	if err != nil {
		return err
	}
	return t.control(ctl, path+".oac")
}

// control reads the two keys the corpus's control files set, line by
// line: the cheapest reading of that YAML, not a YAML parser.
func (t *boundTemplate) control(ctl []byte, path string) error {
	for line := range strings.SplitSeq(string(ctl), "\n") {
		key, val, ok := strings.Cut(line, ":")
		if !ok || strings.HasPrefix(key, "#") {
			continue
		}
		val = strings.TrimSpace(val)
		switch strings.TrimSpace(key) {
		case "mode":
			m, err := strconv.ParseUint(val, 8, 32)
			if err != nil {
				return fmt.Errorf("%s: mode %q: %w", path, val, err)
			}
			t.mode = fs.FileMode(m)
		case "allow_empty":
			t.allowEmpty = val != "false"
		}
	}
	return nil
}

// parse parses the template with our render's options (raw: no HTML
// escaping; no partials). The template keeps pointing into its text,
// which is never changed, so it is not copied.
func (t *boundTemplate) parse() error {
	src := unsafe.String(unsafe.SliceData(t.text), len(t.text))
	var err error
	if t.tmpl, err = mustache.ParseStringPartialsRaw(src, noPartials, true); err != nil {
		return fmt.Errorf("template %s: %w", t.rel, err)
	}
	return nil
}

// buffers are render buffers, reused from template to template.
var buffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// renderWrite renders each template and writes its body: one pass, so a
// body is written while still in the cache.
func (r *boundRun) renderWrite(outDir string) error {
	dirs := newDirMaker(outDir)
	return inParallel(len(r.list), func(i int) error {
		t := r.list[i]
		buf := buffers.Get().(*bytes.Buffer)
		defer buffers.Put(buf)
		buf.Reset()
		if err := t.tmpl.FRender(buf, r.view); err != nil {
			return fmt.Errorf("template %s: %w", t.rel, err)
		}
		return dirs.write(t, buf.Bytes())
	})
}

// dirMaker creates each output directory once, on first use: only
// directories of files written exist afterwards, as with the programs.
type dirMaker struct {
	root string
	made sync.Map
}

func newDirMaker(root string) *dirMaker { return &dirMaker{root: root} }

// write writes body as t's output, unless it is empty and t's control
// file does not allow that.
func (m *dirMaker) write(t *boundTemplate, body []byte) error {
	if len(body) == 0 && !t.allowEmpty {
		return nil
	}
	path := filepath.Join(m.root, t.rel)
	dir := filepath.Dir(path)
	if _, ok := m.made.Load(dir); !ok {
		// Two goroutines may both create it: MkdirAll does not mind.
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		m.made.Store(dir, true)
	}
	return os.WriteFile(path, body, t.mode)
}
