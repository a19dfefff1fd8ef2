package sysctl

import (
	"os"
	"path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/internal/testkit/difftest"
	"github.com/tripleo-go/agent/nodeconfig/nodeconfigtest"
)

// applySeeds are metadata documents for 10-sysctl-apply-config, and the
// file of net.ipv4.ip_forward there before ("" for none): good ones, each
// kind of bad one, and what only the kernel or a file refuses.
var applySeeds = []struct{ metadata, existing string }{
	{`{"sysctl": {"vm.swappiness": 10, "kernel.pid_max": 65536.0}}`, ""},
	{`{"sysctl": {"kernel.domainname": "n\u00f6de", "net.core.somaxconn": "1024"}}`, ""},
	{`{"sysctl": {"net.ipv4.tcp_rmem": "4096\t131072\t6291456", "net.ipv4.ip_local_reserved_ports": "35357,35358"}}`, ""},
	{`{"sysctl": {"kernel.pid_max": 1e16, "vm.swappiness": 0.5, "net.core.somaxconn": -0.0}}`, ""},
	{`{"sysctl": {"net.ipv4.ip_forward": 1}}`, "# x\nnet.ipv4.ip_forward = 1\n"},
	{`{"sysctl": {"net.ipv4.ip_forward": 1, "vm.swappiness": 10}}`, "# x\nnet.ipv4.ip_forward = 0\n"},
	{`{"sysctl": {"kernel.domainname": "\ud83d\ude00 \ud800"}}`, ""},
	{`{"sysctl": {"vm.swappiness": "bad", "kernel.pid_max": 1}}`, ""},
	{`{"sysctl": {"vm.swappiness": "\"10\""}}`, ""},
	{`{"sysctl": {"no.such.key": 1}}`, ""},
	{`{"sysctl": {"net.ipv4": 1}}`, ""},
	{`{"sysctl": {"vm.swappiness": null}}`, ""},
	{`{"sysctl": {"vm.swappiness": [1], "kernel.pid_max": {}}}`, ""},
	{`{"sysctl": {"vm.swappiness": "10\nkernel.pid_max = 1"}}`, ""},
	{`{"sysctl": {".et.ipv4.ip_forward": 1}}`, ""},
	{`{"sysctl": {"vm swappiness": 1, "": 2}}`, ""},
	{`{"sysctl": {"vm.swappiness": NaN}}`, ""},
	{`{"sysctl": {"vm.swappiness": 1e400}}`, ""},
	{`{"sysctl": {"vm.swappiness": 123456789012345678901234567890}}`, ""},
	{`{"sysctl": "net.ipv4.ip_forward=1"}`, ""},
	{`{"sysctl": [1, 2]}`, ""},
	{`{"sysctl": true}`, ""},
	{`{"sysctl": ""}`, ""},
	{`{"sysctl": {}}`, ""},
	{`{"hosts": "192.0.2.1 a"}`, ""},
	{`{"sysctl": {`, ""},
	{``, ""},
}

// fuzzCase is a fuzz input as a row: the existing file is 0644, and its
// bytes are existing whole.
func fuzzCase(metadata []byte, existing string) nodeconfigtest.Case {
	c := nodeconfigtest.Case{Name: "fuzz", Metadata: string(metadata), Dirs: []string{Dir}, JQ15: true}
	if existing != "" {
		c.Files = map[string]string{forward: "0644:" + existing}
	}
	return c
}

// FuzzApply runs 10-sysctl-apply-config on a metadata document (and a
// parameter's file already there) in a scratch root, with the recording
// fake of sysctl on PATH (it knows a few parameters and refuses a value
// with a double quote or "bad"). Bad input is one error line naming the
// key (or the metadata file), exit 1, and no change: no file written, no
// command run, but the `sysctl -a` that a name the kernel may lack or a
// file already there needs; a value the kernel refuses leaves the
// parameters before it set and its own file removed. Good input loads a
// file per new parameter, in name order, each the reference's two lines
// with the value as the metadata has it. With FUZZ_REFERENCE=1 (and
// TRIPLEO_IMAGE_ELEMENTS, root) each good input is also run by the
// reference's script, under jq 1.5's -r: the same commands and files but
// where docs/compat.md lists a difference (compareApply).
func FuzzApply(f *testing.F) {
	for _, s := range applySeeds {
		f.Add([]byte(s.metadata), s.existing)
	}
	nodeconfigtest.InMemory(f)
	var ref *applyReference
	if os.Getenv("FUZZ_REFERENCE") == "1" {
		ref = findApplyReference(f)
	}
	f.Fuzz(func(t *testing.T, metadata []byte, existing string) {
		c := fuzzCase(metadata, existing)
		r := nodeconfigtest.Run(t, c, RunApply)
		checkApply(t, c, r)
		if ref != nil {
			compareApply(t, ref, c, r, nodeconfigtest.FuzzLimit)
		}
	})
}

// checkApply checks FuzzApply's properties of one run.
func checkApply(t *testing.T, c nodeconfigtest.Case, r nodeconfigtest.Result) {
	t.Helper()
	existing, hasExisting := strings.CutPrefix(c.Files[forward], "0644:")
	var loaded []string // the files sysctl -p loaded, in order
	for i, call := range r.Calls {
		switch {
		case call == "sysctl -a" && i == 0:
		case strings.HasPrefix(call, "sysctl -p "+Dir+"/"):
			loaded = append(loaded, strings.TrimPrefix(call, "sysctl -p "))
		default:
			t.Fatalf("command %d %q: want sysctl -a first, then sysctl -p of a parameter's file (all %q)", i, call, r.Calls)
		}
	}
	if !sort.StringsAreSorted(loaded) || len(slices.Compact(slices.Clone(loaded))) != len(loaded) {
		t.Fatalf("loaded %q: want each once, in name order", loaded)
	}
	// The step's own lines: sysctl -p's messages pass through.
	var own []string
	for _, l := range strings.SplitAfter(r.Stderr, "\n") {
		if l != "" && (len(loaded) == 0 || strings.HasPrefix(l, ApplyName+": ")) {
			own = append(own, l)
		}
	}
	if r.Status != 0 {
		if len(own) != 1 || !strings.HasSuffix(own[0], "\n") {
			t.Fatalf("stderr %q: want one error line", r.Stderr)
		}
		msg, ok := strings.CutPrefix(own[0], ApplyName+": ERROR: ")
		if !ok {
			t.Fatalf("stderr %q: want one error line", r.Stderr)
		}
		if r.Status != 1 {
			t.Fatalf("status %d, want 1", r.Status)
		}
		if !strings.HasPrefix(msg, Key+":") && !strings.HasPrefix(msg, Key+".") && !strings.Contains(msg, "metadata") {
			t.Fatalf("error %q names no key", msg)
		}
		if len(loaded) == 0 {
			if want := nodeconfigtest.Refused(t, c); r.Text != want {
				t.Fatalf("refused, but left\n%swant\n%s", r.Text, want)
			}
			if len(r.Calls) > 0 && !strings.Contains(msg, "Invalid sysctl key") && !strings.Contains(msg, "Conflicting sysctl.conf setting") {
				t.Fatalf("%q ran sysctl -a before refusing what the metadata alone shows bad", msg)
			}
			return
		}
		last := loaded[len(loaded)-1]
		name := strings.TrimSuffix(path.Base(last), ".conf")
		if _, ok := r.Files[last]; ok || !strings.HasPrefix(msg, keyOf(name)+": sysctl -p ") {
			t.Fatalf("error %q after loading %s: want the kernel's refusal, its file removed (files %v)", msg, last, r.Files)
		}
		loaded = loaded[:len(loaded)-1]
	} else if len(own) != 0 {
		t.Fatalf("succeeded with stderr %q", r.Stderr)
	}
	// Every parameter loaded has the reference's two lines, its value as
	// the metadata has it; no other file changed. A success loaded every
	// parameter but one its file already set.
	settings := metadataSettings(c.Metadata)
	if r.Status == 0 {
		for name := range settings {
			if p := Dir + "/" + name + ".conf"; !slices.Contains(loaded, p) && !(p == forward && hasExisting) {
				t.Fatalf("succeeded without loading %s (loaded %q)", p, loaded)
			}
		}
	}
	for _, p := range loaded {
		name := strings.TrimSuffix(path.Base(p), ".conf")
		v, ok := settings[name]
		if !ok {
			t.Fatalf("loaded %s, which the metadata does not name", p)
		}
		f := r.Files[p]
		value, ok := strings.CutPrefix(f.Data, "# "+DefaultComment+"\n"+name+" = ")
		if !ok || !strings.HasSuffix(value, "\n") || f.Mode != fileMode {
			t.Fatalf("%s: %04o %q: want the reference's two lines, 0644", p, f.Mode, f.Data)
		}
		if !sameValue(v, strings.TrimSuffix(value, "\n")) {
			t.Fatalf("%s: value %q, metadata %s", p, value, jsondoc.Dumps(v))
		}
	}
	for p, f := range r.Files {
		if slices.Contains(loaded, p) {
			continue
		}
		if p != forward || !hasExisting || existing != f.Data {
			t.Fatalf("%s: %q changed or appeared", p, f.Data)
		}
	}
}

// metadataSettings is the sysctl object of a metadata document, read
// apart from the step; none when there is none.
func metadataSettings(metadata string) map[string]jsondoc.Value {
	out := map[string]jsondoc.Value{}
	doc, err := jsondoc.Loads([]byte(metadata))
	if err != nil {
		return out
	}
	if top, ok := doc.(*jsondoc.Object); ok {
		if obj, ok := top.Get(Key); ok {
			if obj, ok := obj.(*jsondoc.Object); ok {
				for i := 0; i < obj.Len(); i++ {
					k, v := obj.At(i)
					out[k] = v
				}
			}
		}
	}
	return out
}

// sameValue tells whether the file's value text is the metadata's value:
// a string as it is, a number the same number.
func sameValue(v jsondoc.Value, text string) bool {
	switch x := v.(type) {
	case string:
		return x == text
	case jsondoc.Number:
		if !x.IsFloat {
			return x.Text == text
		}
		f, err := strconv.ParseFloat(text, 64)
		return err == nil && f == x.Float
	}
	return false
}

// loneHighSurrogate finds a \uD800-\uDBFF escape that no low one
// follows (or an escaped backslash before such text: not compared
// either): ours reads it as U+FFFD, as jsondoc reads every metadata
// file; jq refuses the document.
var loneHighSurrogate = regexp.MustCompile(`(?i)\\ud[89ab][0-9a-f]{2}(?:[^\\]|\\[^u]|\\u(?:[^d]|d[^c-f])|$)`)

// applyReference is where the reference's script and helpers are.
type applyReference struct{ apply, bin string }

func findApplyReference(t testing.TB) *applyReference {
	return &applyReference{
		apply: nodeconfigtest.Reference(t, "elements/sysctl/os-refresh-config/configure.d/10-sysctl-apply-config"),
		bin:   nodeconfigtest.Reference(t, "elements/sysctl/bin"),
	}
}

// compareApply runs the reference on an input ours took and compares
// what both left (commands but `sysctl -a`, files, modes, success); it
// returns 0 when the input is not compared: ours refused it (the
// reference's own outcome is another, listed in docs/compat.md), it
// holds a difference listed there, or the reference took longer than
// limit (0: no limit).
func compareApply(t *testing.T, ref *applyReference, c nodeconfigtest.Case, ours nodeconfigtest.Result, limit time.Duration) int {
	t.Helper()
	if ours.Status != 0 {
		return 0
	}
	if loneHighSurrogate.MatchString(c.Metadata) {
		return 0 // jq cannot read it: the reference fails before doing anything
	}
	for name, v := range metadataSettings(c.Metadata) {
		if n, ok := v.(jsondoc.Number); ok && !n.IsFloat && len(strings.TrimPrefix(n.Text, "-")) > 15 {
			return 0 // jq reads an integer as a double: ours keeps its digits
		}
		if s, ok := v.(string); ok && c.Files[Dir+"/"+name+".conf"] != "" && strings.ContainsAny(s, `.[]*^$\`) {
			return 0 // the reference's grep reads the value as a pattern
		}
	}
	theirs, ok := nodeconfigtest.ReferenceWithin(t, c, ref.apply, ref.bin, limit)
	if !ok {
		return 0
	}
	if theirs.Text != ours.Text {
		t.Errorf("%q:\n--- reference\n%s--- ours\n%s", c.Metadata, theirs.Text, ours.Text)
	}
	return 1
}

// Every seed, and every input kept under testdata/fuzz/FuzzApply (with
// FUZZ_GENERATED=1, the build cache's too), run by ours and by the
// reference (TRIPLEO_IMAGE_ELEMENTS, root; not under -short).
func TestApplySeedsAgainstReference(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the reference")
	}
	ref := findApplyReference(t)
	var inputs [][2]string
	for _, s := range applySeeds {
		inputs = append(inputs, [2]string{s.metadata, s.existing})
	}
	for _, vals := range difftest.FuzzCorpus(t, "FuzzApply") {
		inputs = append(inputs, [2]string{string(vals[0].([]byte)), vals[1].(string)})
	}
	n := 0
	for _, in := range inputs {
		c := fuzzCase([]byte(in[0]), in[1])
		r := nodeconfigtest.Run(t, c, RunApply)
		checkApply(t, c, r)
		n += compareApply(t, ref, c, r, 0)
	}
	t.Logf("%d of %d inputs compared", n, len(inputs))
}
