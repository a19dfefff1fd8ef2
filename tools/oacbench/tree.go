package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

// entry is what the comparison looks at for one path of an output tree.
type entry struct {
	mode fs.FileMode // type bits and permissions
	data []byte      // file contents; nil for directories and symlinks
	link string      // symlink target
}

// snapshot reads a whole output tree into memory (a few MB for the corpus).
func snapshot(root string) (map[string]entry, error) {
	tree := map[string]entry{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil || rel == "." {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		e := entry{mode: info.Mode()}
		switch {
		case info.Mode().IsRegular():
			e.data, err = os.ReadFile(path)
		case info.Mode()&fs.ModeSymlink != 0:
			e.link, err = os.Readlink(path)
		}
		tree[filepath.ToSlash(rel)] = e
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read output tree: %w", err)
	}
	return tree, nil
}

// countFiles counts regular files, to catch an output that is "identical"
// only because both programs wrote nothing.
func countFiles(tree map[string]entry) int {
	n := 0
	for _, e := range tree {
		if e.mode.IsRegular() {
			n++
		}
	}
	return n
}

// diffTrees lists the differences between two trees, sorted by path, one
// human-readable line each.
func diffTrees(a, b map[string]entry, aName, bName string) []string {
	var out []string
	for _, p := range unionPaths(a, b) {
		if d := diffPath(a, b, p, aName, bName); d != "" {
			out = append(out, d)
		}
	}
	return out
}

// changedPaths lists, sorted, the paths diffTrees would name.
func changedPaths(a, b map[string]entry) []string {
	var out []string
	for _, p := range unionPaths(a, b) {
		if diffPath(a, b, p, "a", "b") != "" {
			out = append(out, p)
		}
	}
	return out
}

// diffPath describes how p differs between a and b; "" if it does not.
func diffPath(a, b map[string]entry, p, aName, bName string) string {
	ea, inA := a[p]
	eb, inB := b[p]
	switch {
	case !inA:
		return fmt.Sprintf("%s: only in %s", p, bName)
	case !inB:
		return fmt.Sprintf("%s: only in %s", p, aName)
	case ea.mode != eb.mode:
		return fmt.Sprintf("%s: mode %s=%v %s=%v", p, aName, ea.mode, bName, eb.mode)
	case ea.link != eb.link:
		return fmt.Sprintf("%s: symlink %s=%q %s=%q", p, aName, ea.link, bName, eb.link)
	case !bytes.Equal(ea.data, eb.data):
		return fmt.Sprintf("%s: contents differ at byte %d (%s %d bytes, %s %d bytes)",
			p, firstDiff(ea.data, eb.data), aName, len(ea.data), bName, len(eb.data))
	}
	return ""
}

func unionPaths(a, b map[string]entry) []string {
	paths := make([]string, 0, len(a))
	for p := range a {
		paths = append(paths, p)
	}
	for p := range b {
		if _, ok := a[p]; !ok {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	return paths
}

func firstDiff(a, b []byte) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}
