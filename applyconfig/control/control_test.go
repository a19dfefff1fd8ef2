package control

import (
	"errors"
	"testing"
)

// fakeAccounts knows root/0, nobody/65534 and the groups root/0, nogroup/65534.
type fakeAccounts struct{}

var (
	users  = map[string]int{"root": 0, "nobody": 65534}
	groups = map[string]int{"root": 0, "nogroup": 65534}
)

func find(db map[string]int, name string) (int, error) {
	if id, ok := db[name]; ok {
		return id, nil
	}
	return 0, errors.New("unknown")
}

func findID(db map[string]int, id int) (int, error) {
	for _, v := range db {
		if v == id {
			return id, nil
		}
	}
	return 0, errors.New("unknown")
}

func (fakeAccounts) LookupUser(n string) (int, error)  { return find(users, n) }
func (fakeAccounts) LookupUserID(i int) (int, error)   { return findID(users, i) }
func (fakeAccounts) LookupGroup(n string) (int, error) { return find(groups, n) }
func (fakeAccounts) LookupGroupID(i int) (int, error)  { return findID(groups, i) }

// The error texts are the reference's (os_apply_config/oac_file.py 12.0.0).
func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     Control
		err      string
	}{
		{"empty", "", Default(), ""},
		{"comment only", "# nothing\n", Default(), ""},
		{"falsy document", "false\n", Default(), ""},
		{"octal mode", "mode: 0644\n", Control{Mode: 0o644, Owner: -1, Group: -1, AllowEmpty: true}, ""},
		{"octal 0755", "mode: 0755", Control{Mode: 0o755, Owner: -1, Group: -1, AllowEmpty: true}, ""},
		{"mode 0 is unset", "mode: 0", Default(), ""},
		{"decimal out of range", "mode: 644", Control{}, "mode '0o1204' out of range"},
		{"string mode", `mode: "0600"`, Control{}, "mode '0600' is not numeric"},
		{"0o is a string in YAML 1.1", "mode: 0o644", Control{}, "mode '0o644' is not numeric"},
		{"bool mode", "mode: yes", Control{}, "mode 'True' is not numeric"},
		{"float mode", "mode: 1.5", Control{}, "mode '1.5' is not numeric"},
		{"negative mode", "mode: -1", Control{}, "mode '-0o1' out of range"},
		{"mode beyond 64 bits", "mode: 10000000000000000000", Control{}, "mode '0o1053071060221172000000' out of range"},
		{"mode beyond 64 bits, negative", "mode: -0x10000000000000000", Control{}, "mode '-0o2000000000000000000000' out of range"},
		{"owner by name", "owner: nobody\ngroup: nogroup", Control{Owner: 65534, Group: 65534, AllowEmpty: true}, ""},
		{"owner by id", "owner: 65534\ngroup: 0", Control{Owner: 65534, Group: 0, AllowEmpty: true}, ""},
		{"unknown owner", "owner: nosuchuser", Control{}, "owner 'nosuchuser' not found in passwd database"},
		{"unknown uid", "owner: 4242", Control{}, "owner '4242' not found in passwd database"},
		{"unknown group", "group: nosuchgroup", Control{}, "group 'nosuchgroup' not found in group database"},
		{"owner list", "owner: [a]", Control{}, "owner '['a']' must be a string or int"},
		{"owner bool", "owner: on", Control{}, "owner 'True' must be a string or int"},
		{"allow_empty no", "allow_empty: no", Control{Owner: -1, Group: -1}, ""},
		{"allow_empty string", `allow_empty: "false"`, Control{}, "allow_empty requires Boolean, got: 'false'"},
		{"unknown key", "colour: red", Control{}, "unrecognised file control key 'colour'"},
		{"first bad key wins", "owner: nosuchuser\nmode: 644", Control{}, "owner 'nosuchuser' not found in passwd database"},
		{"duplicate keys: last wins", "mode: 0600\nmode: 0640", Control{Mode: 0o640, Owner: -1, Group: -1, AllowEmpty: true}, ""},
		{"list document", "- a\n- b", Control{}, "header is not a dict"},
		{"scalar document", "hello", Control{}, "header is not a dict"},
		{"syntax error is one line", "mode: [0644\n", Control{}, "invalid YAML: line 1: did not find expected ',' or ']'"},
		// yaml.v3 alone would read the first document and drop the rest.
		{"text after a comment line", "no\n#c\nmode: 0600\n", Control{}, "invalid YAML: line 2: did not find expected <document start>"},
		{"two documents", "mode: 0600\n---\nmode: 0644\n", Control{}, "invalid YAML: expected a single document in the stream"},
		{"one document, ended", "---\nmode: 0600\n...\n", Control{Mode: 0o600, Owner: -1, Group: -1, AllowEmpty: true}, ""},
		{"hex and binary ints", "mode: 0x1a4", Control{Mode: 0o644, Owner: -1, Group: -1, AllowEmpty: true}, ""},
		{"underscores", "mode: 0_644", Control{Mode: 0o644, Owner: -1, Group: -1, AllowEmpty: true}, ""},
		{"explicit str tag", "mode: !!str 0644", Control{}, "mode '0644' is not numeric"},
		// Explicit tags are PyYAML's constructors, whatever the text.
		{"int tag, Python's int(s, 8)", "mode: !!int 0o644", Control{Mode: 0o644, Owner: -1, Group: -1, AllowEmpty: true}, ""},
		{"float tag on an integer", "mode: !!float 1", Control{}, "mode '1.0' is not numeric"},
		{"null tag on text", "allow_empty: !!null x", Control{}, "allow_empty requires Boolean, got: 'None'"},
		{"bool tag", "allow_empty: !!bool Off", Control{Owner: -1, Group: -1}, ""},
		{"bool tag on other text", "allow_empty: !!bool 1", Control{}, `invalid YAML: cannot read "1" as !!bool`},
		{"unknown tag", "!0", Control{}, `invalid YAML: could not determine a constructor for the tag "!0"`},
		{"unknown tag on a mapping", "!x {mode: 0600}", Control{}, `invalid YAML: could not determine a constructor for the tag "!x"`},
		{"set", "!!set {mode}", Control{}, "invalid YAML: !!set is not supported"},
		// Merge keys, as PyYAML's safe loader reads them.
		{"merge key", "<<: {mode: 0600, owner: root}\nowner: nobody", Control{Mode: 0o600, Owner: 65534, Group: -1, AllowEmpty: true}, ""},
		{"merge list, the first wins", "<<: [{mode: 0600}, {mode: 0644, group: 0}]", Control{Mode: 0o600, Owner: -1, Group: 0, AllowEmpty: true}, ""},
		{"merge an alias", "x: &d {mode: 0600}\n<<: *d", Control{}, "unrecognised file control key 'x'"},
		{"merge a scalar", "<<: 1", Control{}, "invalid YAML: a merge key (<<) wants a mapping or a list of mappings"},
		{"quoted << is a key", "\"<<\": {mode: 0600}", Control{}, "unrecognised file control key '<<'"},
		{"line breaks quoted", "{0\n\n0}", Control{}, `unrecognised file control key '0\n0'`},
		{"line breaks in a value", "mode: \"a\\r\\nb\"", Control{}, `mode 'a\r\nb' is not numeric`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse([]byte(tc.in), fakeAccounts{})
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("error = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
