package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// A floor is the least any correct program must spend on a case on this
// machine, measured in this process (no process start, no parsing, no
// rendering), alternately with the two programs so that drifts of the
// disk hit all three alike. ref/floor is the best ratio any
// os-apply-config could reach here: a target above it cannot be met by
// making ours faster.
//
//   - fresh: create the output files (bytes of ours' render, their modes)
//     and their directories in an empty directory, then one syncfs, which
//     is the cheapest way to make them durable. No temporary names, no
//     renames.
//   - steady: list the template root, read every template, every existing
//     output and the metadata files. A program that keeps nothing between
//     runs cannot decide what changed without them.
type floor func(outDir string) (time.Duration, error)

// freshFloor writes tree (a snapshot of ours' fresh output) into outDir,
// on as many threads as the programs may use.
func freshFloor(tree map[string]entry) floor {
	var paths, dirs []string
	for p, e := range tree {
		if e.mode.IsRegular() {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	seen := map[string]bool{}
	for _, p := range paths {
		if d := filepath.Dir(p); !seen[d] {
			seen[d] = true
			dirs = append(dirs, d)
		}
	}
	return func(outDir string) (time.Duration, error) {
		start := time.Now()
		for _, d := range dirs {
			if err := os.MkdirAll(filepath.Join(outDir, d), 0o755); err != nil {
				return 0, err
			}
		}
		err := inParallel(len(paths), func(i int) error {
			e := tree[paths[i]]
			return os.WriteFile(filepath.Join(outDir, paths[i]), e.data, e.mode.Perm())
		})
		if err == nil {
			err = syncFilesystem(outDir)
		}
		return time.Since(start), err
	}
}

// steadyFloor lists the template root and reads every template, every
// existing output (paths known beforehand) and the metadata files, on as
// many threads as the programs may use.
func steadyFloor(templates string, meta []string, tree map[string]entry) floor {
	var outputs []string
	for p, e := range tree {
		if e.mode.IsRegular() {
			outputs = append(outputs, p)
		}
	}
	return func(outDir string) (time.Duration, error) {
		start := time.Now()
		files := append([]string(nil), meta...)
		err := filepath.WalkDir(templates, func(path string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				files = append(files, path)
			}
			return err
		})
		if err != nil {
			return 0, err
		}
		for _, p := range outputs {
			files = append(files, filepath.Join(outDir, p))
		}
		err = inParallel(len(files), func(i int) error {
			_, err := os.ReadFile(files[i])
			return err
		})
		return time.Since(start), err
	}
}

// inParallel runs fn(0..n-1) on GOMAXPROCS goroutines and returns the
// first error.
func inParallel(n int, fn func(int) error) error {
	var next atomic.Int64
	errs := make([]error, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for w := range errs {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n || errs[w] != nil {
					return
				}
				errs[w] = fn(i)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

func syncFilesystem(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := unix.Syncfs(int(f.Fd())); err != nil {
		return fmt.Errorf("syncfs %s: %w", dir, err)
	}
	return nil
}
