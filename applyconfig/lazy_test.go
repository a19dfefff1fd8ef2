package applyconfig

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tripleo-go/agent/applyconfig/metadata"
	"github.com/tripleo-go/agent/internal/jsondoc"
)

// A big metadata file is read lazily (metadata.LazyFrom): its top-level
// values stay bytes until a template or --key looks into them. Every run
// below must come out as it does with the file decoded whole: the files
// written, stdout, the log and the exit code.
func TestLazyMetadataAsEager(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and reads a few MB of metadata")
	}
	dir := t.TempDir()
	big := filepath.Join(dir, "big.json")
	data := lazyCorpus(3 << 20)
	mid := len(data)/2 + strings.Index(data[len(data)/2:], `": `) + 1
	tree(t, dir, map[string]string{
		"big.json": data,
		// Merged over big.json: a dict merged key by key, a dict replaced
		// by a list, a new key, a repeated key at two levels.
		"over.json": `{"service_00001": {"motd": "remplacé", "extra": [1, {"k": null}]}, "service_00002": [1, "deux"],
			"new": {"k": "v", "k": "w"}, "service_00003": {"x": 1, "x": 2}, "service_00003": {"y": {"z": 3}}}`,
		"under.json":        `{"service_00009": {"workers": 99, "only_here": true}, "zzz": [{}]}`,
		"bad.json":          data[:mid] + ";" + data[mid+1:], // a ":" halfway
		"notutf8.json":      data[:len(data)/3] + "\xff" + data[len(data)/3+1:],
		"t/etc/plain.conf":  "{{service_00001.motd}} {{service_00002.workers}} {{service_00003.option_007}} {{missing.key}}\n",
		"t/etc/lists.conf":  "{{#service_00004.hosts}}{{name}} {{ip}} {{roles}} {{workers}}\n{{/service_00004.hosts}}{{flags}}\n",
		"t/etc/dicts.conf":  "{{#service_00005.pools}}{{pool_3.limits}} {{pool_3}}{{/service_00005.pools}}\n{{service_00006}}\n",
		"t/etc/merged.conf": "{{service_00001}}\n{{service_00002}}\n{{new}}\n{{service_00003}}\n{{service_00009}}\n",
		"t/etc/scalars.conf": "{{#service_00007.enabled}}on{{/service_00007.enabled}}{{^service_00008.enabled}}off{{/service_00008.enabled}}" +
			" {{service_00007.ratio}} [{{service_00007.proxy}}] {{numbers}} {{#numbers}}{{z}} {{e}} {{big}}{{/numbers}}\n",
		"t/etc/escapes.conf": "{{escapes}} {{#escapes}}{{.}}|{{/escapes}}\n",
		"sub/s.conf":         "{{pool_1.comment}} {{pool_2}} {{.}}\n",
	})
	// An executable template reads the metadata's JSON on stdin.
	exe := filepath.Join(dir, "t", "etc", "stdin.sum")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\nexec sha256sum\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	type runCase struct {
		name string
		args []string
	}
	m := func(files ...string) []string { // one -m: the last -m wins
		out := []string{"-m"}
		for _, f := range files {
			out = append(out, filepath.Join(dir, f))
		}
		return out
	}
	cases := []runCase{
		{"render", append(m("big.json"), "--fallback-metadata")},
		{"render merged", append(m("under.json", "big.json", "over.json"), "--fallback-metadata")},
		{"render over fallbacks", append(m("over.json"), "--fallback-metadata", big, filepath.Join(dir, "under.json"))},
		{"subhash", append(m("big.json"), "--fallback-metadata", "-s", "service_00005.pools", "-t", filepath.Join(dir, "sub"))},
		{"subhash not a dict", append(m("big.json"), "--fallback-metadata", "-s", "service_00005.hosts")},
		{"malformed", append(m("over.json", "bad.json"), "--fallback-metadata")},
		{"not utf-8", append(m("notutf8.json"), "--fallback-metadata")},
	}
	for _, key := range []string{"service_00001", "service_00001.motd", "service_00004.hosts.1.name", "service_00004.hosts.-1",
		"service_00004.hosts", "numbers.f", "numbers.e", "numbers", "flags", "flags.0", "flags.2", "service_00002.1",
		"escapes", "escapes.0", "new.k", "service_00003", "service_00009.workers", "missing.key", "service_00005.pools.pool_2.limits.1"} {
		for _, typ := range []string{"raw", "default", "int"} {
			cases = append(cases, runCase{"key " + key + " " + typ,
				append(m("under.json", "big.json", "over.json"), "--fallback-metadata", "--key", key, "--type", typ)})
		}
		cases = append(cases, runCase{"key default " + key,
			append(m("big.json"), "--fallback-metadata", "--key", key, "--type", "raw", "--key-default", "none")})
	}
	for _, key := range []string{"service_00007.enabled", "service_00008.enabled", "flags.1", "numbers", "missing"} {
		cases = append(cases, runCase{"boolean " + key, append(m("big.json", "over.json"), "--fallback-metadata", "--boolean-key", key)})
	}
	defer func(old int64) { metadata.LazyFrom = old }(metadata.LazyFrom)
	for _, c := range cases {
		var got [2]string
		for i, from := range []int64{math.MaxInt64, 0} {
			metadata.LazyFrom = from
			out := filepath.Join(dir, fmt.Sprintf("out%d", i))
			args := append([]string{"-t", filepath.Join(dir, "t"), "-o", out}, c.args...)
			r := oac(t, dir, nil, args...)
			got[i] = fmt.Sprintf("exit %d\nstdout %q\nstderr %s\n%s", r.code, r.stdout, strings.ReplaceAll(r.stderr, out, "OUT"), dump(t, out))
		}
		if got[0] != got[1] {
			t.Errorf("%s:\n--- whole\n%s\n--- lazy\n%s", c.name, got[0], got[1])
		}
		if c.name == "render merged" && (!strings.Contains(got[0], "remplac") || !strings.Contains(got[0], "  -\n")) {
			t.Errorf("%s: nothing rendered:\n%s", c.name, got[0])
		}
	}
}

// dump is every file under dir, path and body, and removes them.
func dump(t *testing.T, dir string) string {
	t.Helper()
	var b bytes.Buffer
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			fmt.Fprintf(&b, "== %s\n%s", strings.TrimPrefix(p, dir), read(t, p))
		}
		return nil
	})
	os.RemoveAll(dir)
	return b.String()
}

// lazyCorpus is a metadata document of about size bytes shaped as a big
// overcloud's: services of many options, long values, non-ASCII text,
// every kind of number, lists of dicts, nested dicts, escapes.
func lazyCorpus(size int) string {
	var b strings.Builder
	b.WriteString(`{"numbers": {"i": 1, "f": 2.50, "e": 1E400, "z": -0.0, "big": 123456789012345678901234567890, "n": -7},` +
		` "flags": [true, false, null], "escapes": ["\u00e9\n\"\\\/\ud83d\ude00", "  ", ""]`)
	for s := 0; b.Len() < size; s++ {
		svc := jsondoc.NewObject(0)
		for k := 0; k < 40; k++ {
			svc.Set(fmt.Sprintf("option_%03d", k), fmt.Sprintf("value-%d-%d-%s", s, k, strings.Repeat("x", k%30)))
		}
		svc.Set("certificate", "-----BEGIN CERTIFICATE-----\n"+strings.Repeat("MIIDdzCCAl+gAwIBAgIEbF3h7TAN", 20)+"\n-----END CERTIFICATE-----\n")
		svc.Set("motd", fmt.Sprintf("Bienvenue sur le nœud %d — ne pas éteindre ☃", s))
		svc.Set("workers", jsondoc.Int(int64(s%64)))
		svc.Set("ratio", jsondoc.Float(float64(s%4)/4))
		svc.Set("enabled", s%2 == 1)
		svc.Set("proxy", nil)
		var hosts []jsondoc.Value
		for h := 0; h < 5; h++ {
			host := jsondoc.NewObject(3)
			host.Set("name", fmt.Sprintf("controller-%d-%d", s, h))
			host.Set("ip", fmt.Sprintf("172.16.%d.%d", s%250, h))
			host.Set("roles", []jsondoc.Value{"controller", fmt.Sprintf("az-%d", h%3)})
			hosts = append(hosts, host)
		}
		svc.Set("hosts", hosts)
		pools := jsondoc.NewObject(0)
		for p := 0; p < 5; p++ {
			pool := jsondoc.NewObject(0)
			pool.Set("limits", []jsondoc.Value{jsondoc.Int(int64(p * 100)), jsondoc.Float(1.5)})
			pool.Set("comment", "réglé pour la grande saveur")
			pools.Set(fmt.Sprintf("pool_%d", p), pool)
		}
		svc.Set("pools", pools)
		fmt.Fprintf(&b, ", %q: %s", fmt.Sprintf("service_%05d", s), jsondoc.Dumps(svc))
	}
	b.WriteString("}\n")
	return b.String()
}
