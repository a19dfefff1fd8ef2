package main

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"time"
)

// The bound runs in a child of this tool, still timed in-process: the
// children's peak RSS, read from wait4, starts at their parent's peak
// (vfork shares its memory until exec), so the bound's heap, decoded
// metadata and all, must not grow this process. A fresh process also
// pays its heap's first page faults, as the programs do.

// workerFlag, as the first argument, makes this tool a bound worker:
// -bound-worker MODE OUTDIR TEMPLATES META... prints, in nanoseconds,
// the duration of the fresh bound (MODE bound) or of its parts (parts);
// or that of the steady bound and how many outputs it changed (steady,
// with its durability steadySync; steady-syncfs and steady-fdatasync
// force one, to compare them).
const workerFlag = "-bound-worker"

// steadyModes are the worker's steady modes and their durability.
var steadyModes = map[string]*syncMethod{
	"steady":           &steadySync,
	"steady-syncfs":    ptr(syncOnce),
	"steady-fdatasync": ptr(fdatasyncEach),
}

func ptr[T any](v T) *T { return &v }

// workerMemoryLimit is ours' soft memory limit (cmd/tripleo-agent,
// applyConfigMemoryLimit), which keeps it under the 20 MiB peak RSS
// target. The worker collects only when nearing it (GOGC off): the
// fewest collections a program within the same budget can make.
const workerMemoryLimit = 16 << 20

func boundWorker(args []string, stdout io.Writer) error {
	if len(args) < 4 {
		return fmt.Errorf("%s bound|parts|steady OUTDIR TEMPLATES META...: got %q", workerFlag, args)
	}
	how, steady := steadyModes[args[0]]
	if args[0] != "bound" && args[0] != "parts" && !steady {
		return fmt.Errorf("%s bound|parts|steady OUTDIR TEMPLATES META...: got %q", workerFlag, args)
	}
	out, templates, meta := args[1], args[2], args[3:]
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(workerMemoryLimit)
	var ns []int64
	switch {
	case steady:
		d, changed, err := steadyBound(templates, meta, *how)(out)
		if err != nil {
			return err
		}
		ns = []int64{int64(d), int64(changed)}
	case args[0] == "bound":
		d, err := freshBound(templates, meta)(out)
		if err != nil {
			return err
		}
		ns = []int64{int64(d)}
	default:
		p, err := measureBoundParts(templates, meta, out)
		if err != nil {
			return err
		}
		for _, d := range p.list() {
			ns = append(ns, int64(d))
		}
	}
	fields := make([]string, len(ns))
	for i, n := range ns {
		fields[i] = strconv.FormatInt(n, 10)
	}
	_, err := fmt.Fprintln(stdout, strings.Join(fields, " "))
	return err
}

// runBoundWorker runs a worker and returns the figures it printed:
// durations, and for a steady mode a count after the duration.
func runBoundWorker(mode, outDir, templates string, meta []string) ([]time.Duration, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	args := append([]string{workerFlag, mode, outDir, templates}, meta...)
	var stderr bytes.Buffer
	cmd := exec.Command(self, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("bound worker: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	var ds []time.Duration
	for f := range strings.FieldsSeq(string(out)) {
		ns, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("bound worker printed %q", out)
		}
		ds = append(ds, time.Duration(ns))
	}
	return ds, nil
}

// compareBound checks the tree the bound wrote in dir against ours:
// the same paths and modes; bodies are only counted, for Go formats some
// values otherwise than Python. One file at a time, so that this process
// grows no third tree.
func compareBound(dir string, ours map[string]entry) (files, bodies int, err error) {
	seen := 0
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil || rel == "." {
			return err
		}
		rel = filepath.ToSlash(rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		e, ok := ours[rel]
		switch {
		case !ok:
			return fmt.Errorf("%s: written by the bound, not by ours", rel)
		case e.mode != info.Mode():
			return fmt.Errorf("%s: mode ours=%v bound=%v", rel, e.mode, info.Mode())
		}
		seen++
		if !info.Mode().IsRegular() {
			return nil
		}
		files++
		data, err := os.ReadFile(path)
		if err == nil && !bytes.Equal(data, e.data) {
			bodies++
		}
		return err
	})
	if err == nil && seen != len(ours) {
		err = fmt.Errorf("the bound wrote %d paths, ours %d", seen, len(ours))
	}
	return files, bodies, err
}
