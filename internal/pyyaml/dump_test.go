package pyyaml_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/internal/pyyaml"
)

// cases are documents (JSON) whose YAML exercises each of PyYAML's
// choices: plain, single- and double-quoted strings, strings that read
// as other types, folding past 80 columns, nesting, empty collections,
// keys that cannot be simple.
var cases = []struct{ json, yaml string }{
	{`{"db": {"image": "redis"}, "web": {"image": "nginx", "links": ["db"], "ports": ["8000:8000"]}}`,
		"db:\n  image: redis\nweb:\n  image: nginx\n  links:\n  - db\n  ports:\n  - 8000:8000\n"},
	{`{}`, "{}\n"},
	{`{"a": [], "b": {}, "c": [[], {}], "d": null, "e": true, "f": 1.5, "g": -3, "h": 1e20}`,
		"a: []\nb: {}\nc:\n- []\n- {}\nd: null\ne: true\nf: 1.5\ng: -3\nh: 1.0e+20\n"},
	{`{"s": ["", "yes", "No", "~", "null", "012", "0x1F", "1_000", "1.5", ".inf", "2001-12-14", "<<", "=", "12:30:00"]}`, ""},
	{`{"s": ["- a", "-a", "? x", "?x", ": y", "a: b", "a:b", "a #c", "a#c", "#c", "@x", "` + "`x" + `", "---x", "...", "x ", " x", "a\tb", "é", "\u2028", "a\nb", "a\n\nb", "a \nb", "a\n b", "\n", "it's", "\"q\""]}`, ""},
	{`{"long": "` + strings.Repeat("word ", 40) + `end", "longquoted": "'` + strings.Repeat("word ", 40) + `", "longdq": "é` + strings.Repeat("word ", 40) + `", "nospace": "` + strings.Repeat("x", 120) + `"}`, ""},
	{`{"nested": [{"a": 1, "b": [1, 2, {"c": "d"}]}, [1, [2, 3]]], "": "empty key", "` + strings.Repeat("k", 130) + `": 1, "multi\nline": "v"}`, ""},
	{`{"env": [{"name": "AUTH", "value": "Vegu95l2jwkucD9RSYAoFpRbUlh0PGF7"}], "version": "v1beta2", "n": 0, "t": "true"}`, ""},
}

// Each case is what the expected YAML says, or, where it says nothing,
// what Python's yaml.safe_dump(default_flow_style=False) prints (the
// test is skipped without python3 and PyYAML, and under -short).
func TestDumpIsPyYAMLs(t *testing.T) {
	for _, tc := range cases {
		v, err := jsondoc.Loads([]byte(tc.json))
		if err != nil {
			t.Fatal(err)
		}
		want := tc.yaml
		if want == "" {
			if testing.Short() {
				continue
			}
			want = pythonDump(t, tc.json)
		}
		if got := pyyaml.Dump(v); got != want {
			t.Errorf("%s\n got %q\nwant %q", tc.json, got, want)
		}
	}
}

func pythonDump(t *testing.T, doc string) string {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed")
	}
	cmd := exec.Command(py, "-c", "import json, sys, yaml; sys.stdout.write(yaml.safe_dump(json.load(sys.stdin), default_flow_style=False))")
	cmd.Stdin = strings.NewReader(doc)
	out, err := cmd.Output()
	if err != nil {
		t.Skipf("python3 with PyYAML: %v", err)
	}
	return string(out)
}
