package cache

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/internal/testkit/difftest"
)

const referencePython = "/usr/bin/python3"

// op is one cache operation: ["store", name, content], ["commit", name]
// or ["meta", [names]].
type op []any

func randomContent(r *rand.Rand) string {
	docs := []string{
		`{"a": 1}`, `{"a": 1.0}`, `{"a": true}`, `{"b": 1, "a": 1}`, `{"a": 1, "b": 1}`,
		`{"a": [1, 2]}`, `{"a": [2, 1]}`, `{"x": {"y": "é"}}`, `{"x": {"y": "\u00e9"}}`,
		`{}`, `{"n": null}`, `[1, 2]`, `"text"`, `{"deep": {"l": [{"k": "v"}]}}`,
	}
	return docs[r.Intn(len(docs))]
}

func randomOps(r *rand.Rand, n int) []op {
	names := []string{"heat_local", "ec2", "d1", "local.json"}
	// A pass always stores before it lists: the reference's list writer
	// does not create the directory.
	ops := []op{{"store", names[0], json.RawMessage(randomContent(r))}}
	for i := 0; i < n; i++ {
		name := names[r.Intn(len(names))]
		switch r.Intn(5) {
		case 0, 1, 2:
			ops = append(ops, op{"store", name, json.RawMessage(randomContent(r))})
		case 3:
			ops = append(ops, op{"commit", name})
		default:
			ops = append(ops, op{"meta", []string{names[0], name}})
		}
	}
	return ops
}

// tree lists the files of dir with their modes and bytes, with dir itself
// replaced by "DIR" in the bytes (os_config_files.json holds paths).
func tree(t *testing.T, dir string) []string {
	var out []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "tmp") {
			out = append(out, "LEFTOVER "+e.Name())
			continue
		}
		info, _ := e.Info()
		data, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		out = append(out, fmt.Sprintf("%s %v %q", e.Name(), info.Mode(), strings.ReplaceAll(string(data), dir, "DIR")))
	}
	sort.Strings(out)
	return out
}

// The reference's cache module and ours, on the same random sequences of
// operations, report the same changes and leave the same files.
func TestAgainstReferenceModule(t *testing.T) {
	difftest.Oracle(t)
	if _, err := exec.Command(referencePython, "-c", "import os_collect_config.cache").CombinedOutput(); err != nil {
		if os.Getenv("REQUIRE_REFERENCE") == "1" {
			t.Fatalf("reference os_collect_config not importable: %v", err)
		}
		t.Skip("reference os_collect_config not installed")
	}
	// Every sequence through one run of the oracle, each in a cache
	// directory of its own.
	const sequences = 20
	r := rand.New(rand.NewSource(1))
	var all []op
	var refDirs []string
	for range sequences {
		refDirs = append(refDirs, filepath.Join(t.TempDir(), "cache"))
		all = append(all, op{refDirs[len(refDirs)-1], randomOps(r, 25)})
	}
	input, _ := json.Marshal(all)
	cmd := exec.Command(referencePython, "testdata/oracle.py")
	cmd.Stdin = strings.NewReader(string(input))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("oracle: %v\n%s", err, out)
	}
	results := strings.SplitAfter(string(out), "--\n")
	if len(results) != sequences+1 || results[sequences] != "" {
		t.Fatalf("oracle: %d results for %d sequences:\n%s", len(results)-1, sequences, out)
	}
	for seq := range sequences {
		ops, refDir := all[seq][1].([]op), refDirs[seq]
		input, _ := json.Marshal(ops)
		want := strings.Split(strings.TrimSpace(strings.TrimSuffix(results[seq], "--\n")), "\n")

		ourDir := filepath.Join(t.TempDir(), "cache")
		c := &Cache{Dir: ourDir}
		var got []string
		for _, o := range ops {
			switch o[0] {
			case "store":
				v, err := jsondoc.Loads(o[2].(json.RawMessage))
				if err != nil {
					t.Fatal(err)
				}
				changed, _, err := c.Store(o[1].(string), v)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, fmt.Sprintf("store %s %v", o[1], pyBool(changed)))
			case "commit":
				if err := c.Commit(o[1].(string)); err != nil {
					t.Fatal(err)
				}
				got = append(got, "commit "+o[1].(string))
			case "meta":
				if _, err := c.StoreMetaList(o[1].([]string)); err != nil {
					t.Fatal(err)
				}
				got = append(got, "meta")
			}
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("sequence %d: results differ\nreference %q\nours      %q\nops %s", seq, want, got, input)
		}
		if a, b := tree(t, refDir), tree(t, ourDir); strings.Join(a, "\n") != strings.Join(b, "\n") {
			t.Fatalf("sequence %d: files differ\nreference %q\nours      %q", seq, a, b)
		}
	}
}

func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

// Deliberate fix: keys that would escape the cache, cannot be file
// names with their suffixes, cannot travel in OS_CONFIG_FILES or would
// split a log line are refused; the others are stored.
func TestHostileNamesRefused(t *testing.T) {
	c := &Cache{Dir: t.TempDir()}
	for _, name := range []string{"../x", "/etc/passwd", "a/b", "..", ".", "", "nul\x00byte",
		strings.Repeat("L", MaxNameBytes+1), "a:b", "new\nline", "tab\tbed", "del\x7f", MetaListName} {
		if _, _, err := c.Store(name, jsondoc.NewObject(0)); !errors.Is(err, ErrBadName) {
			t.Errorf("Store(%q) error %v", name, err)
		}
		if err := c.Commit(name); !errors.Is(err, ErrBadName) {
			t.Errorf("Commit(%q) error %v", name, err)
		}
	}
	for _, name := range []string{"ok", "with space", "dots.in.it", "-dash", "é", "...",
		strings.Repeat("L", MaxNameBytes)} {
		if _, _, err := c.Store(name, jsondoc.NewObject(0)); err != nil {
			t.Errorf("Store(%q): %v", name, err)
		}
		if err := c.Commit(name); err != nil {
			t.Errorf("Commit(%q): %v", name, err)
		}
	}
}

func TestBackupCopiesTheCache(t *testing.T) {
	dir := t.TempDir()
	c := &Cache{Dir: dir + "/cache"}
	v, _ := jsondoc.Loads([]byte(`{"a": 1}`))
	c.Store("ec2", v)
	os.MkdirAll(dir+"/backup/stale", 0o755)
	if err := c.Backup(dir + "/backup"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir + "/backup/stale"); err == nil {
		t.Fatal("old backup content kept")
	}
	if st, err := os.Stat(dir + "/backup/ec2.json"); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("backup %v %v", st, err)
	}
}

// Store streams: a key stored again with the same content leaves its file
// alone (same inode: not rewritten), and with equal JSON written
// otherwise in .last (another key order) it has not changed; a changed
// content replaces the file. Commit copies the file's bytes to .last.
func TestStoreStreamsAndComparesBytes(t *testing.T) {
	c := &Cache{Dir: filepath.Join(t.TempDir(), "cache")}
	doc := func(s string) jsondoc.Value {
		v, err := jsondoc.Loads([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	inode := func(p string) uint64 {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return st.Sys().(*syscall.Stat_t).Ino
	}
	for i, step := range []struct {
		content string
		commit  bool
		last    string // written as .last before the store, when not ""
		changed bool
		same    bool // the file is not rewritten
	}{
		{`{"a": 1, "b": [1, 2]}`, true, "", true, false},
		{`{"a": 1, "b": [1, 2]}`, false, "", false, true},
		{`{"b": [1, 2], "a": 1}`, false, "", false, false},
		{`{"a": 1, "b": [1, 2]}`, false, "{\"b\": [1, 2], \"a\": 1.0}", false, false},
		{`{"a": 2}`, false, "", true, false},
	} {
		path := c.Path("k")
		var before uint64
		if i > 0 {
			before = inode(path)
		}
		if step.last != "" {
			os.WriteFile(path+".last", []byte(step.last), 0o600)
		}
		changed, _, err := c.Store("k", doc(step.content))
		if err != nil || changed != step.changed {
			t.Fatalf("step %d: changed %v, %v; want %v", i, changed, err, step.changed)
		}
		data, _ := os.ReadFile(path)
		if want := jsondoc.DumpsIndent(doc(step.content), 1); string(data) != want {
			t.Fatalf("step %d: file %q, want %q", i, data, want)
		}
		if i > 0 && (inode(path) == before) != step.same {
			t.Fatalf("step %d: file left alone %v, want %v", i, inode(path) == before, step.same)
		}
		if step.commit {
			if err := c.Commit("k"); err != nil {
				t.Fatal(err)
			}
			if last, _ := os.ReadFile(path + ".last"); string(last) != string(data) {
				t.Fatalf("step %d: .last %q, want %q", i, last, data)
			}
		}
	}
}
