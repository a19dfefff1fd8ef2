package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/tripleo-go/agent/internal/secret"
)

// values is a small program's configuration: one option of each kind.
type values struct {
	Name    string
	Key     secret.String
	List    []string
	Rate    float64
	Count   int
	On      bool
	GroupID string
	Any     []string
}

func (v *values) set() *Set {
	opts := []Option{
		{Name: "name", Short: "n", Default: []string{"anon"}, Into: &v.Name},
		{Name: "key", Into: &v.Key},
		{Name: "list", Default: []string{"a"}, Into: &v.List},
		{Name: "rate", Default: []string{"1.5"}, NonNegative: true, Into: &v.Rate},
		{Name: "count", Default: []string{"3"}, Into: &v.Count},
		{Name: "on", Default: []string{"false"}, Into: &v.On},
		{Name: "any", Positional: true, Into: &v.Any},
	}
	opts = append(opts, InGroup("grp", Option{Name: "group-id", Into: &v.GroupID})...)
	return &Set{Prog: "prog", Version: "1", Basename: "prog.conf", Options: opts}
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name  string
		args  []string
		file  string
		want  values
		files int
	}{
		{name: "defaults", want: values{Name: "anon", List: []string{"a"}, Rate: 1.5, Count: 3}},
		{name: "flags of every kind", args: []string{"-n", "x", "--key", "k", "--list", "b", "--list", "c", "--rate=2", "--count", "4", "--on", "--grp-group-id", "g", "p1", "p2"},
			want: values{Name: "x", Key: "k", List: []string{"b", "c"}, Rate: 2, Count: 4, On: true, GroupID: "g", Any: []string{"p1", "p2"}}},
		{name: "a file, then the command line", args: []string{"--config-file", "F", "--noon", "--list", "z"},
			file: "[DEFAULT]\nname = 'quoted'\non = yes\nlist = x\nlist = y\n[GRP]\ngroup_id = $name-${count}\n",
			want: values{Name: "quoted", List: []string{"x", "y", "z"}, Rate: 1.5, Count: 3, GroupID: "quoted-3"}, files: 1},
		{name: "dollars", args: []string{"--config-file", "F"}, file: "[DEFAULT]\nname = $$HOME \\$x $1 $ end\n",
			want: values{Name: "$HOME $x $1 $ end", List: []string{"a"}, Rate: 1.5, Count: 3}, files: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "F"), []byte(tc.file), 0o644)
			args := make([]string, len(tc.args))
			for i, a := range tc.args {
				args[i] = strings.ReplaceAll(a, "F", filepath.Join(dir, "F"))
			}
			var got values
			files, err := got.set().Parse(args, Env{Root: dir})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) || len(files) != tc.files {
				t.Fatalf("got %+v from %q\nwant %+v", got, files, tc.want)
			}
		})
	}
}

// A value that cannot be used names the option, where it came from and
// why, and never shows a secret.
func TestErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o644)
		return p
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"not a number", []string{"--rate", "fast"}, `invalid value "fast" for option rate (from command line): not a number`},
		{"negative", []string{"--rate", "-1"}, "must not be negative"},
		{"not a boolean", []string{"--config-file", write("a", "[DEFAULT]\non = maybe\n")}, "option on (from " + dir + "/a): not a boolean"},
		{"a secret with a bad template", []string{"--key", "s3cret$nosuch"}, `invalid value "***" for option key`},
		{"no section", []string{"--config-file", write("b", "name = x\n")}, dir + "/b:1: option \"name\" before any [section]"},
		{"continuation first", []string{"--config-file", write("c", "[DEFAULT]\n  x\n")}, dir + "/c:2: unexpected continuation line"},
		{"missing file", []string{"--config-file", dir + "/none"}, "reading config file " + dir + "/none"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var v values
			_, err := v.set().Parse(tc.args, Env{Root: dir})
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "s3cret") {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
	var v values
	if _, err := v.set().Parse([]string{"--rate", "x"}, Env{}); !errors.As(err, new(*Error)) {
		t.Fatalf("error %T, want *Error", err)
	}
}

// oslo.config's parser, rule by rule (the wants were printed by
// oslo_config.cfg.ConfigParser; FuzzINI compares with it at large).
func TestINIAsOsloConfig(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"[DEFAULT]\nbare = \"\nq = 'x'\n", `DEFAULT.bare="" DEFAULT.q="x"`},
		{"[DEFAULT]\nv = a\n  # not a comment\n\tb\n", `DEFAULT.v="a\n# not a comment\nb"`},
		{"[DEFAULT]\nv = \"a\n  b\"\n", `DEFAULT.v="\"a\nb\""`}, // only the first line is unquoted
		{"[ DEFAULT ]\nx = 1\n", `" DEFAULT ".x="1"`},
		{"[DEFAULT]\r\ncrlf = yes\r\ncr = a\rlone = b", `DEFAULT.crlf="yes" DEFAULT.cr="a" DEFAULT.lone="b"`},
		{"[DEFAULT]\n\x1cv = x\x1c\n", `DEFAULT.v="x"`},
		{"[DEFAULT]\nv = a\n\n  after a blank line\n", "F:4: unexpected continuation line"},
		{"  # indented first\n[DEFAULT]\n", "F:1: unexpected continuation line"},
		{"[DEFAULT]\nv = \xff\n", "F: not UTF-8: 'utf-8' codec can't decode byte 0xff in position 14: invalid start byte"},
	} {
		var got []string
		err := parseINI("F", []byte(tc.in), func(section, key, value string) {
			got = append(got, fmt.Sprintf("%s.%s=%q", strconv.Quote(section), key, value))
		})
		s := strings.ReplaceAll(strings.Join(got, " "), `"DEFAULT".`, "DEFAULT.")
		if err != nil {
			s = err.Error()
		}
		if s != tc.want {
			t.Errorf("%q:\n got %s\nwant %s", tc.in, s, tc.want)
		}
	}
}
