// Package hiera is the hiera element's os-refresh-config step,
// configure.d/40-hiera-datafiles: it writes one YAML data file per entry
// of the metadata's hiera.datafiles, as the element's script did with
// bash, jq and os-apply-config --key, byte for byte (see shell.go).
//
// Each data file NAME.yaml is, in this order: the entry's raw_data as it
// is (after `echo -e`), then a line per key of mapped_data (its value as
// a plain scalar when a one-line string, else jq's JSON of it), then a
// line per key of oac_data (the value of the os-apply-config key it
// names). Everything is checked before anything is written: bad metadata
// is one error line naming the key, and no file changes.
package hiera

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/tripleo-go/agent/applyconfig/metadata"
	"github.com/tripleo-go/agent/internal/durable"
	"github.com/tripleo-go/agent/internal/environ"
	"github.com/tripleo-go/agent/internal/exitcode"
	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/nodeconfig"
)

// Name is the program's name, in its messages.
const Name = "40-hiera-datafiles"

// DataDir is where the files go, under $NODECONFIG_ROOT.
const DataDir = "/etc/puppet/hieradata"

// RootVar prefixes every path the program reads or writes (the data
// directory, os-collect-config's list of metadata files, the fallback
// metadata); tests point it at a temporary directory.
const RootVar = "NODECONFIG_ROOT"

// Env is the world the program runs in.
type Env struct {
	Stdout, Stderr io.Writer
	Environ        []string
}

// ProcessEnv is the Env of the running process.
func ProcessEnv() Env { return Env{Stdout: os.Stdout, Stderr: os.Stderr, Environ: os.Environ()} }

// Run writes the data files. It takes no argument.
func Run(_ context.Context, _ []string, env Env) error {
	root := environ.Get(env.Environ, RootVar)
	files, warnings, err := plan(env.Environ, root)
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", Name, err)
		return exitcode.With(exitcode.Failure, err)
	}
	for _, w := range warnings {
		fmt.Fprintf(env.Stderr, "%s: WARNING: %s\n", Name, w)
	}
	if err := write(root+DataDir, files); err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", Name, err)
		return exitcode.With(exitcode.Failure, err)
	}
	return nil
}

// file is one data file to write.
type file struct {
	name string
	data []byte
}

// plan reads the metadata and makes every file, or fails naming the key;
// warnings name the oac_data keys the metadata lacks.
func plan(env []string, root string) (files []file, warnings []string, err error) {
	paths, err := metadata.Files(func(k string) (string, bool) { return environ.Lookup(env, k) }, root)
	if err != nil {
		return nil, nil, err
	}
	cfg, err := metadata.Read(paths)
	if err != nil {
		return nil, nil, err
	}
	// hiera itself: the reference's lookup of hiera.datafiles found
	// nothing in a string, a number or a list, and did nothing; that is
	// a mistake to refuse ("hiera": "yes"), as everything below it.
	if v, ok := metadata.Lookup(cfg, "hiera"); ok && !isEmptyString(v) {
		if _, ok := v.(*jsondoc.Object); !ok {
			return nil, nil, fmt.Errorf("hiera is %s, not an object", jsondoc.KindOf(v))
		}
	}
	v, ok := metadata.Lookup(cfg, "hiera.datafiles")
	if !ok || isEmptyString(v) {
		return nil, nil, nil // the reference's jq reads no key of an empty value
	}
	datafiles, ok := v.(*jsondoc.Object)
	if !ok {
		return nil, nil, fmt.Errorf("hiera.datafiles is %s, not an object", jsondoc.KindOf(v))
	}
	var out []file
	for _, name := range sortedKeys(datafiles) {
		key := "hiera.datafiles." + nodeconfig.KeyText(name)
		if bad := badName(name); bad != "" {
			return nil, nil, fmt.Errorf("%s: the name %s", key, bad)
		}
		entry, _ := datafiles.Get(name)
		if entry == nil {
			entry = jsondoc.NewObject(0)
		}
		obj, ok := entry.(*jsondoc.Object)
		if !ok {
			return nil, nil, fmt.Errorf("%s is %s, not an object", key, jsondoc.KindOf(entry))
		}
		data, missing, err := dataFile(cfg, key, obj)
		if err != nil {
			return nil, nil, err
		}
		warnings = append(warnings, missing...)
		out = append(out, file{name: name + ".yaml", data: data})
	}
	return out, warnings, nil
}

// dataFile is the bytes of one data file; missing are warnings, one for
// each oac_data key that names no value of the metadata (written empty,
// as the reference wrote it, without a word).
func dataFile(cfg *jsondoc.Object, key string, entry *jsondoc.Object) (data []byte, missing []string, err error) {
	var b strings.Builder
	raw, _ := entry.Get("raw_data")
	text, stop := echoEArg(substituted(metadata.Raw(raw)))
	b.WriteString(text)
	if !stop {
		b.WriteByte('\n')
	}
	mapped, err := section(entry, key, "mapped_data")
	if err != nil {
		return nil, nil, err
	}
	for _, k := range sortedKeys(mapped) {
		v, _ := mapped.Get(k)
		if err := checkValue(v, key+".mapped_data."+nodeconfig.KeyText(k)); err != nil {
			return nil, nil, err
		}
		b.WriteString(k + ": " + mappedValue(v) + "\n")
	}
	oac, err := section(entry, key, "oac_data")
	if err != nil {
		return nil, nil, err
	}
	for _, k := range sortedKeys(oac) {
		v, _ := oac.Get(k)
		name, ok := v.(string)
		if !ok {
			return nil, nil, fmt.Errorf("%s.oac_data.%s is %s, not the name of a key", key, nodeconfig.KeyText(k), jsondoc.KindOf(v))
		}
		found, ok := metadata.Lookup(cfg, name)
		if !ok {
			missing = append(missing, fmt.Sprintf("%s.oac_data.%s: no value for %s in the metadata (missing or null); written empty",
				key, nodeconfig.KeyText(k), nodeconfig.KeyText(name)))
		}
		val := substituted(metadata.Raw(found))
		if s, _ := echoE(val); lines(s) > 1 {
			val = "'" + val + "'"
		}
		b.WriteString(k + ": " + val + "\n")
	}
	return []byte(b.String()), missing, nil
}

// section is the entry's mapping under name; absent, null or "" is none.
func section(entry *jsondoc.Object, key, name string) (*jsondoc.Object, error) {
	v, ok := entry.Get(name)
	if !ok || v == nil || isEmptyString(v) {
		return jsondoc.NewObject(0), nil
	}
	obj, ok := v.(*jsondoc.Object)
	if !ok {
		return nil, fmt.Errorf("%s.%s is %s, not an object", key, name, jsondoc.KindOf(v))
	}
	for _, k := range obj.Keys() {
		if strings.ContainsAny(k, "\"\\\n\x00") {
			return nil, fmt.Errorf("%s.%s: a key holds a quote, a backslash, a newline or a NUL", key, name)
		}
	}
	return obj, nil
}

// mappedValue is a mapped_data value as the reference wrote it: a string
// of one line as it is, anything else as jq's JSON.
func mappedValue(v jsondoc.Value) string {
	if s, ok := v.(string); ok {
		raw := substituted(s)
		if out, _ := echoE(raw); lines(out) <= 1 {
			return raw
		}
	}
	return jqPretty(v)
}

// checkValue refuses numbers jq cannot read (Python's NaN and Infinity).
func checkValue(v jsondoc.Value, key string) error {
	switch x := v.(type) {
	case jsondoc.Number:
		if x.Text == "NaN" || strings.HasSuffix(x.Text, "Infinity") {
			return fmt.Errorf("%s holds %s, which is not JSON", key, x.Text)
		}
	case []jsondoc.Value:
		for _, it := range x {
			if err := checkValue(it, key); err != nil {
				return err
			}
		}
	case *jsondoc.Object:
		for i := 0; i < x.Len(); i++ {
			_, it := x.At(i)
			if err := checkValue(it, key); err != nil {
				return err
			}
		}
	}
	return nil
}

// badName says why a data file's name cannot be used: the reference
// looked keys up by a dotted path and wrote NAME.yaml in one directory.
func badName(name string) string {
	switch {
	case name == "":
		return "is empty"
	case strings.ContainsAny(name, "./\x00"):
		return "holds a dot, a slash or a NUL"
	case strings.ContainsAny(name, " \t\n\"\\*?["):
		return "holds white space, a quote, a backslash or a glob character"
	}
	return ""
}

func sortedKeys(o *jsondoc.Object) []string {
	keys := append([]string(nil), o.Keys()...)
	sort.Strings(keys) // jq's keys: by code point, as UTF-8 bytes
	return keys
}

func isEmptyString(v jsondoc.Value) bool { s, ok := v.(string); return ok && s == "" }

// write creates the directory as `umask 077; mkdir -p` does and replaces
// each file whole. A file keeps its mode and owner, as a shell
// redirection keeps them (set on the staged file, before the rename); a
// new one gets 0666 less the umask.
func write(dir string, files []file) error {
	if err := mkdirPrivate(dir); err != nil {
		return err
	}
	mask := syscall.Umask(0)
	syscall.Umask(mask)
	for _, f := range files {
		path := filepath.Join(dir, f.name)
		mode := os.FileMode(0o666 &^ mask)
		uid, gid := -1, -1
		if fi, err := os.Stat(path); err == nil {
			mode = fi.Mode().Perm()
			if st, ok := fi.Sys().(*syscall.Stat_t); ok && (int(st.Uid) != os.Geteuid() || int(st.Gid) != os.Getegid()) {
				uid, gid = int(st.Uid), int(st.Gid)
			}
		}
		if err := durable.WriteFileOwned(path, f.data, mode, uid, gid); err != nil {
			return err
		}
	}
	return nil
}

// mkdirPrivate makes dir and its missing parents 0700.
func mkdirPrivate(dir string) error {
	if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
		return nil
	}
	if err := mkdirPrivate(filepath.Dir(dir)); err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !os.IsExist(err) {
		return err
	}
	return os.Chmod(dir, 0o700)
}
