package main

import (
	"fmt"
	"os"
	"path/filepath"
)

// changedService is the index of the service whose values the steady case
// changes (nova).
const changedService = 0

// metaNames are the three metadata files, passed to -m in this order so
// that later files override earlier ones.
var metaNames = [3]string{"00-base.json", "10-deployment.json", "20-node.json"}

// modifiedMetaName is the steady case's copy of 20-node.json with one
// service's values changed.
const modifiedMetaName = "20-node.modified.json"

// corpus is the generated benchmark input, held in memory so that tests
// can inspect it without touching the disk.
type corpus struct {
	templates []tmpl
	meta      [3][]byte
	modified  []byte // modified copy of meta[2]
	changed   string // name of the service the modified copy changes
}

// buildCorpus generates the corpus; the same seed gives the same bytes.
func buildCorpus(seed uint64) *corpus {
	svcs := newServices(seed)
	c := &corpus{changed: svcs[changedService].name}
	for _, s := range svcs {
		c.templates = append(c.templates, serviceTemplates(serviceRand(seed, s.index, streamTemplates), s)...)
	}
	c.meta, c.modified = metaLayers(seed, svcs, changedService)
	return c
}

func (c *corpus) oacCount() int {
	n := 0
	for _, t := range c.templates {
		if t.oac != "" {
			n++
		}
	}
	return n
}

func (c *corpus) metaBytes() int {
	n := 0
	for _, m := range c.meta {
		n += len(m)
	}
	return n
}

// corpusPaths says where a written corpus lives.
type corpusPaths struct {
	templates string   // template root
	meta      []string // the three metadata files, in merge order
	modified  []string // same with the modified third file
}

// write puts the corpus under dir: dir/templates and dir/metadata.
// Templates are written 0644: an executable template would be run as a
// script instead of rendered.
func (c *corpus) write(dir string) (corpusPaths, error) {
	p := corpusPaths{templates: filepath.Join(dir, "templates")}
	for _, t := range c.templates {
		dst := filepath.Join(p.templates, filepath.FromSlash(t.path))
		if err := writeFile(dst, []byte(t.body)); err != nil {
			return p, err
		}
		if t.oac == "" {
			continue
		}
		if err := writeFile(dst+".oac", []byte(t.oac)); err != nil {
			return p, err
		}
	}
	metaDir := filepath.Join(dir, "metadata")
	for i, m := range c.meta {
		path := filepath.Join(metaDir, metaNames[i])
		if err := writeFile(path, m); err != nil {
			return p, err
		}
		p.meta = append(p.meta, path)
	}
	mod := filepath.Join(metaDir, modifiedMetaName)
	if err := writeFile(mod, c.modified); err != nil {
		return p, err
	}
	p.modified = append(append([]string{}, p.meta[:2]...), mod)
	return p, nil
}

func writeFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("write corpus: %w", err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("write corpus: %w", err)
	}
	return nil
}
