package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"time"
)

// boundParts is where the bound's time goes: each part run alone, on as
// many threads as the bound, after the parts it needs. The parts' sum is
// above the bound, which overlaps decoding with reading and parsing and
// renders while it writes.
type boundParts struct {
	decode time.Duration // read the metadata files, decode, merge
	read   time.Duration // list the template tree, read templates and .oac files
	parse  time.Duration
	render time.Duration // into memory
	write  time.Duration // mkdir, write the bodies, syncfs
}

// partNames name boundParts' fields in the report, in order.
var partNames = []string{"decode", "read", "parse", "render", "write+syncfs"}

func (p boundParts) list() []time.Duration {
	return []time.Duration{p.decode, p.read, p.parse, p.render, p.write}
}

// measureBoundParts times each part of the fresh bound once, writing into
// outDir, which must be empty.
func measureBoundParts(templates string, meta []string, outDir string) (boundParts, error) {
	var p boundParts
	r := &boundRun{root: templates, meta: meta}
	steps := []struct {
		d   *time.Duration
		run func() error
	}{
		{&p.decode, r.decode},
		{&p.read, func() error { return r.scan(false) }},
		{&p.parse, func() error {
			return inParallel(len(r.list), func(i int) error { return r.list[i].parse() })
		}},
		{&p.render, func() error {
			return inParallel(len(r.list), func(i int) error {
				var buf bytes.Buffer
				err := r.list[i].tmpl.FRender(&buf, r.view)
				r.list[i].body = buf.Bytes()
				return err
			})
		}},
		{&p.write, func() error {
			dirs := newDirMaker(outDir)
			err := inParallel(len(r.list), func(i int) error { return dirs.write(r.list[i], r.list[i].body) })
			if err != nil {
				return err
			}
			return syncFilesystem(outDir)
		}},
	}
	for _, s := range steps {
		start := time.Now()
		if err := s.run(); err != nil {
			return p, err
		}
		*s.d = time.Since(start)
	}
	return p, nil
}

// printBoundParts writes one line: each part's median over the rounds,
// and as a multiple of the floor.
func printBoundParts(w io.Writer, r caseResult) {
	if len(r.parts) == 0 {
		return
	}
	f := median(r.floor)
	fields := make([]string, len(partNames))
	var sum float64
	for i, name := range partNames {
		ss := make([]sample, len(r.parts))
		for j, p := range r.parts {
			ss[j] = sample{Wall: p.list()[i]}
		}
		m := median(ss)
		sum += m
		fields[i] = fmt.Sprintf("%s %.1f ms (%s)", name, m, formatRatio(ratio(m, f)))
	}
	fmt.Fprintf(w, "%s: bound's parts, each alone (median of %d; x the floor): %s; sum %.1f ms (%s)\n",
		r.name, len(r.parts), strings.Join(fields, ", "), sum, formatRatio(ratio(sum, f)))
}
