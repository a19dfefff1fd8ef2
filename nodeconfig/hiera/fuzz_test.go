package hiera

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tripleo-go/agent/applyconfig/metadata"
	"github.com/tripleo-go/agent/internal/exitcode"
	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/internal/testkit/difftest"
	"github.com/tripleo-go/agent/nodeconfig"
	"github.com/tripleo-go/agent/nodeconfig/nodeconfigtest"
)

// datafilesSeeds are metadata documents for 40-hiera-datafiles, and the
// bytes of hieradata/common.yaml there before ("" for none): the cases'
// kinds of good and bad metadata.
var datafilesSeeds = []struct{ metadata, before string }{
	{`{"hiera": {"datafiles": {"common": {"raw_data": "ntp::servers:\n  - 0.pool.ntp.org\npath: C:\\new\n\n"}}}}`, "old: data\n"},
	{`{"hiera": {"datafiles": {"compute": {"mapped_data": {"a": "[1,2]", "b": true, "c": 1e300, "d": {"x": [null]}, "e": "x\ny", "f": "caf\u00e9"}}}}}`, ""},
	{`{"nova": {"host": "c-0", "my_ip": null, "l": ["a", "b"]}, "hiera": {"datafiles": {"compute": {"raw_data": "x: 1",
	   "oac_data": {"nova::host": "nova.host", "nova::my_ip": "nova.my_ip", "second": "nova.l.1", "none": "no.such.key"}}}}}`, ""},
	{`{"hiera": {"datafiles": {"obj": {"raw_data": {"a": 1}}, "num": {"raw_data": 2.50}, "esc": {"raw_data": "a\\tb\\cc"}, "n": null}}}`, ""},
	{`{"hiera": {"hierarchy": ["common"], "datafiles": {}}}`, "kept: true\n"},
	{`{"hiera": {"datafiles": {"common": {"raw_data": "-n"}, "e": {"raw_data": "-e"}}}}`, ""},
	{`{"os-collect-config": {}}`, ""},
	{`{"hiera": null}`, ""},
	{`{"hiera": ""}`, ""},
	{`{"hiera": "yes"}`, "old: data\n"},
	{`{"hiera": ["datafiles"]}`, ""},
	{`{"hiera": {"datafiles": ["common"]}}`, ""},
	{`{"hiera": {"datafiles": {"a": "x: 1"}}}`, ""},
	{`{"hiera": {"datafiles": {"a.b": {"raw_data": "x: 1"}}}}`, ""},
	{`{"hiera": {"datafiles": {"a b": {}, "": {}}}}`, ""},
	{`{"hiera": {"datafiles": {"a": {"mapped_data": ["k"]}}}}`, ""},
	{`{"hiera": {"datafiles": {"a": {"mapped_data": {"k\"": 1}}}}}`, ""},
	{`{"hiera": {"datafiles": {"a": {"mapped_data": {"k": NaN}}}}}`, ""},
	{`{"hiera": {"datafiles": {"a": {"oac_data": {"k": 5}}}}}`, ""},
	{`{"hiera": {"datafiles": {"a": {"oac_data": {"k": "x"}}, "b": {"oac_data": "k"}}}}`, "old: data\n"},
	{`{"hiera": `, ""},
	{``, ""},
}

// FuzzDatafiles runs 40-hiera-datafiles on a metadata document in a
// scratch root (with a common.yaml there before). Bad input is one
// error line naming a key of hiera (or the metadata file), exit 1, and
// no change: /etc/puppet as it was, not even the data directory made.
// Good input makes the data directory (0700) and a file for each data
// file named, leaves the others, warns once for each oac_data key that
// names no value of the metadata and says nothing else, and a second
// run changes nothing. With FUZZ_REFERENCE=1 (and
// TRIPLEO_PUPPET_ELEMENTS, root) each good input is also run by the
// reference's script, under jq 1.5's -r: the same files, modes and
// bytes but where docs/compat.md lists a difference (compareDatafiles).
func FuzzDatafiles(f *testing.F) {
	for _, s := range datafilesSeeds {
		f.Add([]byte(s.metadata), s.before)
	}
	nodeconfigtest.InMemory(f)
	var ref string
	if os.Getenv("FUZZ_REFERENCE") == "1" {
		ref = puppetElements(f)
	}
	f.Fuzz(func(t *testing.T, md []byte, before string) {
		r := checkDatafiles(t, md, before)
		if ref != "" {
			compareDatafiles(t, ref, md, before, r, nodeconfigtest.FuzzLimit)
		}
	})
}

// A datafilesRun is what one run of ours left.
type datafilesRun struct {
	err    error
	root   string // NODECONFIG_ROOT
	puppet string // its /etc/puppet
}

// checkDatafiles runs ours on the input and checks FuzzDatafiles'
// properties.
func checkDatafiles(t *testing.T, md []byte, before string) datafilesRun {
	t.Helper()
	dir := t.TempDir()
	mdPath := filepath.Join(dir, "metadata.json")
	if err := os.WriteFile(mdPath, md, 0o644); err != nil {
		t.Fatal(err)
	}
	r := datafilesRun{root: filepath.Join(dir, "root")}
	r.puppet = filepath.Join(r.root, "etc/puppet")
	layBefore(t, r.puppet, before)
	wantList, wantFiles := tree(t, r.puppet)
	run := func() (string, string, error) {
		var stdout, stderr bytes.Buffer
		env := Env{Stdout: &stdout, Stderr: &stderr, Environ: []string{"OS_CONFIG_FILES=" + mdPath, RootVar + "=" + r.root}}
		old := syscall.Umask(0o022)
		defer syscall.Umask(old)
		err := Run(context.Background(), nil, env)
		return stdout.String(), stderr.String(), err
	}
	stdout, stderr, err := run()
	r.err = err
	if stdout != "" {
		t.Fatalf("stdout %q", stdout)
	}
	gotList, gotFiles := tree(t, r.puppet)
	if err != nil {
		msg, ok := strings.CutPrefix(stderr, Name+": ")
		if !ok || strings.Count(stderr, "\n") != 1 || !strings.HasSuffix(stderr, "\n") || exitcode.Of(err) != exitcode.Failure {
			t.Fatalf("exit %d, stderr %q: want 1 and one error line", exitcode.Of(err), stderr)
		}
		if !strings.HasPrefix(msg, "hiera") && !strings.Contains(msg, mdPath) {
			t.Fatalf("error %q names no key of hiera, nor the metadata file", msg)
		}
		if gotList != wantList || fmt.Sprint(gotFiles) != fmt.Sprint(wantFiles) {
			t.Fatalf("refused, but /etc/puppet changed:\n%s\nwas\n%s", gotList, wantList)
		}
		return r
	}
	names, warnings := expectedDatafiles(t, md)
	if stderr != warnings {
		t.Fatalf("stderr\n%q\nwant the warnings\n%q", stderr, warnings)
	}
	if !strings.Contains(gotList, "d 0700 hieradata\n") {
		t.Fatalf("no hieradata directory (0700):\n%s", gotList)
	}
	for rel, data := range gotFiles {
		name := strings.TrimSuffix(strings.TrimPrefix(rel, "hieradata/"), ".yaml")
		if _, made := names[name]; !made && !bytes.Equal(data, wantFiles[rel]) {
			t.Fatalf("%s changed or appeared, but no data file names it", rel)
		}
	}
	for name := range names {
		if _, ok := gotFiles["hieradata/"+name+".yaml"]; !ok {
			t.Fatalf("no file for the data file %q", name)
		}
	}
	// Once more: the same files, the same warnings.
	_, again, err := run()
	list2, files2 := tree(t, r.puppet)
	if err != nil || again != stderr || list2 != gotList || fmt.Sprint(files2) != fmt.Sprint(gotFiles) {
		t.Fatalf("a second run: %v, stderr %q, tree\n%s\nwas\n%s", err, again, list2, gotList)
	}
	return r
}

// layBefore makes /etc/puppet, with hieradata (0700) and common.yaml
// (0600) holding before when it is not "".
func layBefore(t *testing.T, puppet, before string) {
	t.Helper()
	if err := os.MkdirAll(puppet, 0o755); err != nil {
		t.Fatal(err)
	}
	if before == "" {
		return
	}
	if err := os.Mkdir(filepath.Join(puppet, "hieradata"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(puppet, "hieradata/common.yaml"), []byte(before), 0o600); err != nil {
		t.Fatal(err)
	}
}

// expectedDatafiles reads a metadata document that ours took, apart from
// the step: the data files it names, and the warnings due (an oac_data
// key naming no value), in the step's order.
func expectedDatafiles(t *testing.T, md []byte) (names map[string]bool, warnings string) {
	t.Helper()
	names = map[string]bool{}
	var b strings.Builder
	eachOACKey(md, sortedKeys, func(cfg *jsondoc.Object, name, k string, v jsondoc.Value) bool {
		if k == "" {
			names[name] = true
			return false
		}
		key := v.(string)
		if _, found := metadata.Lookup(cfg, key); !found {
			fmt.Fprintf(&b, "%s: WARNING: hiera.datafiles.%s.oac_data.%s: no value for %s in the metadata (missing or null); written empty\n",
				Name, nodeconfig.KeyText(name), nodeconfig.KeyText(k), nodeconfig.KeyText(key))
		}
		return false
	})
	return names, b.String()
}

// eachOACKey walks the data files of a metadata document, in the order
// keys gives, calling fn once with a data file's name alone (k "") and
// then with each of its oac_data entries (k, and the key name v it
// holds); it stops when fn returns true, and tells whether it did.
func eachOACKey(md []byte, keys func(*jsondoc.Object) []string, fn func(cfg *jsondoc.Object, name, k string, v jsondoc.Value) bool) bool {
	doc, err := jsondoc.Loads(md)
	cfg, ok := doc.(*jsondoc.Object)
	if err != nil || !ok {
		return false
	}
	v, _ := metadata.Lookup(cfg, "hiera.datafiles")
	datafiles, _ := v.(*jsondoc.Object)
	if datafiles == nil {
		return false
	}
	for _, name := range keys(datafiles) {
		if fn(cfg, name, "", nil) {
			return true
		}
		entry, _ := datafiles.Get(name)
		obj, _ := entry.(*jsondoc.Object)
		if obj == nil {
			continue
		}
		oac, _ := obj.Get("oac_data")
		oacObj, _ := oac.(*jsondoc.Object)
		if oacObj == nil {
			continue
		}
		for _, k := range keys(oacObj) {
			key, _ := oacObj.Get(k)
			if fn(cfg, name, k, key) {
				return true
			}
		}
	}
	return false
}

// puppetElements is the checkout of tripleo-puppet-elements that
// TRIPLEO_PUPPET_ELEMENTS names, or the test is skipped.
func puppetElements(t testing.TB) string {
	t.Helper()
	ref := os.Getenv("TRIPLEO_PUPPET_ELEMENTS")
	if ref == "" {
		t.Skip("TRIPLEO_PUPPET_ELEMENTS is not set: the reference is not run")
	}
	if os.Geteuid() != 0 {
		t.Skip("the reference runs in a private mount namespace: root only")
	}
	for _, tool := range []string{"/usr/bin/os-apply-config", "/usr/bin/jq", "unshare"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is missing", tool)
		}
	}
	return ref
}

// Differences docs/compat.md lists, in the inputs that show them.
var (
	// A \uD800-\uDBFF escape that no low one follows (or an escaped
	// backslash before such text: not compared either): ours reads it
	// as U+FFFD, jq refuses the document.
	loneHighSurrogate = regexp.MustCompile(`(?i)\\ud[89ab][0-9a-f]{2}(?:[^\\]|\\[^u]|\\u(?:[^d]|d[^c-f])|$)`)
)

// compareDatafiles runs the reference on an input ours took and compares
// what both left in /etc/puppet; it returns 0 when the input is not
// compared: ours refused it (the reference's own outcome is another,
// listed in docs/compat.md), it holds a difference listed there, or the
// reference took longer than limit (0: no limit; a Python start for
// each key it looks up).
func compareDatafiles(t *testing.T, ref string, md []byte, before string, ours datafilesRun, limit time.Duration) int {
	t.Helper()
	if ours.err != nil || loneHighSurrogate.Match(md) {
		return 0
	}
	if shellSplitOACKey(md) {
		return 0
	}
	out := t.TempDir()
	layBefore(t, filepath.Join(out, "puppet"), before)
	mdPath := filepath.Join(out, "metadata.json")
	if err := os.WriteFile(mdPath, md, 0o644); err != nil {
		t.Fatal(err)
	}
	script, _ := filepath.Abs("testdata/run-reference.sh")
	b, err := nodeconfigtest.CombinedOutputWithin(exec.Command(script, ref, mdPath, out), limit)
	if errors.Is(err, nodeconfigtest.ErrSlow) {
		t.Logf("the reference took more than %v: not compared", limit)
		return 0
	}
	if err != nil {
		t.Fatalf("%s: %v %s", script, err, b)
	}
	status, _ := os.ReadFile(filepath.Join(out, "status"))
	stderr, _ := os.ReadFile(filepath.Join(out, "stderr"))
	if strings.TrimSpace(string(status)) != "0" {
		t.Errorf("%q: the reference failed (%s): %s", md, strings.TrimSpace(string(status)), stderr)
	}
	compareTrees(t, fmt.Sprintf("%q: ours vs reference", md), ours.puppet, filepath.Join(out, "puppet"))
	return 1
}

// shellSplitOACKey tells whether an oac_data value of the metadata is a
// key name the reference's unquoted `os-apply-config --key $OAC_KEY`
// split or globbed (white space, *?[, a leading dash: docs/compat.md).
func shellSplitOACKey(md []byte) bool {
	return eachOACKey(md, (*jsondoc.Object).Keys, func(_ *jsondoc.Object, _, k string, v jsondoc.Value) bool {
		key, _ := v.(string)
		return k != "" && (key == "" || strings.HasPrefix(key, "-") || strings.ContainsAny(key, " \t\n*?["))
	})
}

// Every seed, and every input kept under testdata/fuzz/FuzzDatafiles
// (with FUZZ_GENERATED=1, the build cache's too), run by ours and by
// the reference (TRIPLEO_PUPPET_ELEMENTS, root; not under -short).
func TestDatafilesSeedsAgainstReference(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the reference")
	}
	ref := puppetElements(t)
	var inputs [][2]string
	for _, s := range datafilesSeeds {
		inputs = append(inputs, [2]string{s.metadata, s.before})
	}
	for _, vals := range difftest.FuzzCorpus(t, "FuzzDatafiles") {
		inputs = append(inputs, [2]string{string(vals[0].([]byte)), vals[1].(string)})
	}
	n := 0
	for _, in := range inputs {
		r := checkDatafiles(t, []byte(in[0]), in[1])
		n += compareDatafiles(t, ref, []byte(in[0]), in[1], r, 0)
	}
	t.Logf("%d of %d inputs compared", n, len(inputs))
}
