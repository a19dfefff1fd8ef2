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
	"golang.org/x/sys/unix"
)

// The bound is the least a correct os-apply-config that renders with the
// library the project requires (cbroglie/mustache) can spend on the fresh
// case, timed in-process like the floor (same signature, same threads):
// decode the metadata (encoding/json into map[string]any, cheaper than an
// order-keeping decoder), read and parse every template, render it, write
// the bodies, one syncfs. If the bound is above the target's multiple of
// the floor, no such program can meet the target on this machine.
//
// It spares itself what a real one must also do, so that it stays a
// lower bound: no process start, no UTF-8 or newline checks, no
// Python-alike value formatting (Go's fmt renders the values), no
// temporary names, no log; and it makes plain system calls where Go's os
// package makes more (boundscan.go, dirMaker.write), the floor's included.
// Merging is deep, as the reference merges: every layer of the corpus
// sets keys under every service, so a shallow merge would drop two
// layers and render less.

// noPartials makes every partial render empty, as our render does.
var noPartials = &mustache.StaticProvider{}

// boundTemplate is one template of the tree as the bound handles it.
type boundTemplate struct {
	rel        string // path under the template root (and the output dir)
	text       []byte
	oac        bool // has a .oac control file
	tmpl       *mustache.Template
	mode       fs.FileMode
	modeSet    bool // the control file sets mode
	allowEmpty bool
	body       []byte // kept only by the breakdown
	old        output // the existing output, read by the steady bound
}

// boundRun holds one run's inputs and what it has made of them.
type boundRun struct {
	root string   // template root
	out  string   // output dir whose existing files the scan reads (steady); "": none
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
		err := r.scan(true)
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
			t.mode, t.modeSet = fs.FileMode(m), true
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

// renderEach renders every template, in parallel, and gives each body to
// use, valid during the call (a pooled buffer).
func (r *boundRun) renderEach(use func(t *boundTemplate, body []byte) error) error {
	return inParallel(len(r.list), func(i int) error {
		t := r.list[i]
		buf := buffers.Get().(*bytes.Buffer)
		defer buffers.Put(buf)
		buf.Reset()
		if err := t.tmpl.FRender(buf, r.view); err != nil {
			return fmt.Errorf("template %s: %w", t.rel, err)
		}
		return use(t, buf.Bytes())
	})
}

// renderWrite renders each template and writes its body: one pass, so a
// body is written while still in the cache.
func (r *boundRun) renderWrite(outDir string) error {
	dirs := newDirMaker(outDir)
	return r.renderEach(dirs.write)
}

// dirMaker creates each output directory once, on first use: only
// directories of files written exist afterwards, as with the programs.
type dirMaker struct {
	root string
	made sync.Map
}

func newDirMaker(root string) *dirMaker { return &dirMaker{root: root} }

// write writes body as t's output (writeInPlace), unless it is empty and
// t's control file does not allow that.
func (m *dirMaker) write(t *boundTemplate, body []byte) error {
	if len(body) == 0 && !t.allowEmpty {
		return nil
	}
	path := filepath.Join(m.root, t.rel)
	if err := m.mkdir(filepath.Dir(path)); err != nil {
		return err
	}
	return writeInPlace(path, body, t.mode, false, syncOnce)
}

// mkdir makes dir and its missing parents: one mkdir when the parent
// exists, where os.MkdirAll stats first.
func (m *dirMaker) mkdir(dir string) error {
	if _, ok := m.made.Load(dir); ok {
		return nil
	}
	err := unix.Mkdir(dir, 0o755)
	if err == unix.ENOENT {
		if err = m.mkdir(filepath.Dir(dir)); err == nil {
			err = unix.Mkdir(dir, 0o755)
		}
	}
	// Another goroutine may have made it meanwhile.
	if err != nil && err != unix.EEXIST {
		return fmt.Errorf("mkdir %s: %w", dir, err)
	}
	m.made.Store(dir, true)
	return nil
}
