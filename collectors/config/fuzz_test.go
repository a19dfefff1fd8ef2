package config

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/tripleo-go/agent/internal/pystr"
	"github.com/tripleo-go/agent/internal/testkit/difftest"
)

// iniSeeds are configuration files: sections, both separators,
// comments, quotes, continuation lines, and the malformed kinds.
var iniSeeds = []string{
	"[DEFAULT]\ncommand = os-refresh-config\npolling_interval: 30\n# comment\n; comment\n[heat]\nauth_url = http://x/v3\n",
	"[DEFAULT]\ncommand = first\n  second\n\tthird\nnext = x\n",
	"[DEFAULT]\nname = 'quoted'\nother = \"double\"\nmixed = 'a\"\nempty =\n",
	"[DEFAULT]\nx = 1\n[Heat]\ny = 2\n[heat]\nz = 3\n",
	"[DEFAULT]\nlist = a\nlist = b\n[DEFAULT]\nlist = c\n",
	"[DEFAULT]\nkey = value = more : colon\nk2: v : w = x\n",
	"name = before any section\n",
	"[DEFAULT]\n= no key\n",
	"[DEFAULT]\nno separator\n",
	"[]\n", "[unclosed\n", "[a] trailing\n", "  continuation first\n",
	"",
}

// iniEntry is one assignment as parseINI reports it.
type iniEntry struct{ Section, Key, Value string }

func readINI(data []byte) ([]iniEntry, error) {
	var got []iniEntry
	err := parseINI("F", data, func(section, key, value string) {
		got = append(got, iniEntry{section, key, value})
	})
	return got, err
}

// FuzzINI reads an INI file. A refused one is a one-line error naming
// the file and the line; what an accepted one holds, written back as an
// INI file (writeINI), reads back the same. With FUZZ_REFERENCE=1 each
// input is also read by oslo.config (checkINI).
func FuzzINI(f *testing.F) {
	for _, s := range iniSeeds {
		f.Add([]byte(s))
	}
	ref := difftest.FuzzReference(f, "testdata/oracle.py", "oslo_config.cfg")
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := readINI(data)
		if err != nil {
			if msg := err.Error(); strings.ContainsAny(msg, "\n\r") || !strings.HasPrefix(msg, "F:") {
				t.Fatalf("error is not one line naming the file and line: %q", msg)
			}
		} else if text, ok := writeINI(got); ok {
			back, err := readINI([]byte(text))
			if err != nil || !reflect.DeepEqual(back, got) {
				t.Fatalf("%q written as %q reads back as %q, %v", got, text, back, err)
			}
		}
		if ref != nil {
			checkINI(t, ref, dir, data)
		}
	})
}

// writeINI writes entries as an INI file: a section header when the
// section changes, "key = value" with the value quoted when its ends
// would be trimmed or unquoted, its further lines indented (a line that
// looks like a comment too). ok is false for what no INI file can hold (a
// key with a separator, a blank line in a value, line breaks in names).
func writeINI(entries []iniEntry) (string, bool) {
	var b strings.Builder
	section, started := "", false
	for _, e := range entries {
		if strings.ContainsAny(e.Section+e.Key, "\r\n") || strings.ContainsAny(e.Key, ":=") ||
			e.Key != strings.TrimFunc(e.Key, pystr.IsSpace) || e.Key == "" || strings.ContainsAny(e.Key[:1], "#;[") ||
			e.Section == "" {
			return "", false
		}
		if e.Section != section || !started {
			fmt.Fprintf(&b, "[%s]\n", e.Section)
			section, started = e.Section, true
		}
		lines := strings.Split(e.Value, "\n")
		first := lines[0]
		if first != strings.TrimFunc(first, pystr.IsSpace) || first != "" && first[0] == first[len(first)-1] && (first[0] == '"' || first[0] == '\'') {
			first = `"` + first + `"`
		}
		fmt.Fprintf(&b, "%s = %s\n", e.Key, first)
		for _, l := range lines[1:] {
			if l == "" || l != strings.TrimFunc(l, pystr.IsSpace) {
				return "", false
			}
			fmt.Fprintf(&b, "  %s\n", l)
		}
	}
	return b.String(), true
}

// The reference's oslo.config over the seeds (checkINI).
func TestINISeedsAgainstOsloConfig(t *testing.T) {
	ref := difftest.StartReference(t, "testdata/oracle.py", "oslo_config.cfg")
	dir := t.TempDir()
	n := 0
	for _, s := range iniSeeds {
		n += checkINI(t, ref, dir, []byte(s))
	}
	for _, vals := range difftest.FuzzCorpus(t, "FuzzINI") {
		n += checkINI(t, ref, dir, vals[0].([]byte))
	}
	t.Logf("%d files compared", n)
}

// checkINI reads data here and with oslo.config's parser: the same
// assignments, section by section in order of first appearance, or both
// refuse it. It returns 1.
func checkINI(t *testing.T, ref *difftest.Reference, dir string, data []byte) int {
	t.Helper()
	var want struct {
		Sections [][2]json.RawMessage
		Error    string
	}
	if !ref.Query(t, map[string]string{"ini": base64.StdEncoding.EncodeToString(data)}, &want) {
		return 0
	}
	got, err := readINI(data)
	switch {
	case want.Error != "" && err == nil:
		t.Errorf("%q: oslo.config refuses it (%s), we read %q", data, want.Error, got)
		return 1
	case want.Error == "" && err != nil:
		t.Errorf("%q: refused (%v), oslo.config reads it", data, err)
		return 1
	case err != nil:
		return 1
	}
	// Ours in oslo.config's shape.
	type keyVals struct {
		key  string
		vals []string
	}
	var order []string
	bySection := map[string][]keyVals{}
	for _, e := range got {
		if _, ok := bySection[e.Section]; !ok {
			order = append(order, e.Section)
		}
		kvs := bySection[e.Section]
		i := 0
		for i < len(kvs) && kvs[i].key != e.Key {
			i++
		}
		if i == len(kvs) {
			kvs = append(kvs, keyVals{key: e.Key})
		}
		kvs[i].vals = append(kvs[i].vals, e.Value)
		bySection[e.Section] = kvs
	}
	var ours []any
	for _, s := range order {
		var keys []any
		for _, kv := range bySection[s] {
			keys = append(keys, []any{kv.key, kv.vals})
		}
		ours = append(ours, []any{s, keys})
	}
	oursJSON, _ := json.Marshal(ours)
	var theirs []any
	for _, s := range want.Sections {
		var name string
		var keys any
		json.Unmarshal(s[0], &name)
		json.Unmarshal(s[1], &keys)
		theirs = append(theirs, []any{name, keys})
	}
	theirsJSON, _ := json.Marshal(theirs)
	if string(oursJSON) != string(theirsJSON) {
		t.Errorf("%q:\nours       %s\noslo.config %s", data, oursJSON, theirsJSON)
	}
	return 1
}
