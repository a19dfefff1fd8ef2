package metadata

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tripleo-go/agent/internal/jsondoc"
)

// Files finds the metadata as os-apply-config --key does: the fallbacks
// first, then OS_CONFIG_FILES (even empty), else the list file
// (OS_CONFIG_FILES_PATH, else the default, else the old default).
func TestFiles(t *testing.T) {
	root := t.TempDir()
	write := func(p, s string) {
		os.MkdirAll(filepath.Dir(root+p), 0o755)
		os.WriteFile(root+p, []byte(s), 0o644)
	}
	custom := filepath.Join(root, "custom.json")
	os.WriteFile(custom, []byte(`["/c.json", 5]`), 0o644)
	var fallbacks []string
	for _, f := range FallbackFiles {
		fallbacks = append(fallbacks, root+f)
	}
	for _, tc := range []struct {
		name    string
		env     map[string]string
		setup   func()
		want    []string
		wantErr bool
	}{
		{name: "OS_CONFIG_FILES", env: map[string]string{"OS_CONFIG_FILES": "/a.json:/b.json"}, want: []string{"/a.json", "/b.json"}},
		{name: "empty OS_CONFIG_FILES", env: map[string]string{"OS_CONFIG_FILES": ""}, want: []string{""}},
		{name: "no list anywhere", want: nil},
		{name: "old list", setup: func() { write(oldOSConfigFilesList, `["/old.json"]`) }, want: []string{"/old.json"}},
		{name: "default list", setup: func() { write(OSConfigFilesList, `["/new.json"]`) }, want: []string{"/new.json"}},
		{name: "OS_CONFIG_FILES_PATH, strings only", env: map[string]string{"OS_CONFIG_FILES_PATH": custom}, want: []string{"/c.json"}},
		{name: "not a list", setup: func() { write(OSConfigFilesList, `{}`) }, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.setup != nil {
				tc.setup()
			}
			got, err := Files(func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok }, root)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want one: %v", err, tc.wantErr)
			}
			if want := append(append([]string(nil), fallbacks...), tc.want...); !tc.wantErr && !slices.Equal(got, want) {
				t.Errorf("Files = %q, want %q", got, want)
			}
		})
	}
}

// Raw prints as os-apply-config --key --type raw does.
func TestRaw(t *testing.T) {
	obj := jsondoc.NewObject(1)
	obj.Set("a", []jsondoc.Value{jsondoc.Int(1), "é"})
	for _, tc := range []struct {
		v    jsondoc.Value
		want string
	}{
		{nil, ""}, {"s", "s"}, {true, "true"}, {jsondoc.Float(1), "1.0"}, {jsondoc.Int(7), "7"},
		{obj, `{"a": [1, "\u00e9"]}`}, {[]jsondoc.Value{}, "[]"},
	} {
		if got := Raw(tc.v); got != tc.want {
			t.Errorf("Raw(%#v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}

// The order, each source present with every one below it: the fallbacks
// always come first, then the first of OS_CONFIG_FILES, the list
// OS_CONFIG_FILES_PATH names, the default list, and the legacy list. The
// legacy list stands in for an empty or missing list read from the
// default place, which OS_CONFIG_FILES_PATH moves (os-apply-config's
// OS_CONFIG_FILES_PATH is its default), but never for a list named on
// the command line.
func TestFilesOrder(t *testing.T) {
	const (
		envFiles = "/env-a.json:/env-b.json"
		pathList = `["/path.json"]`
		defList  = `["/default.json"]`
		oldList  = `["/legacy.json"]`
	)
	for _, tc := range []struct {
		name string
		env  map[string]string // "LIST" in a value is the custom list's path
		// files under root; "LIST" is the custom list
		files map[string]string
		want  []string
	}{
		{"OS_CONFIG_FILES over all",
			map[string]string{"OS_CONFIG_FILES": envFiles, "OS_CONFIG_FILES_PATH": "LIST"},
			map[string]string{"LIST": pathList, OSConfigFilesList: defList, oldOSConfigFilesList: oldList},
			[]string{"/env-a.json", "/env-b.json"}},
		{"empty OS_CONFIG_FILES is one empty name",
			map[string]string{"OS_CONFIG_FILES": ""},
			map[string]string{OSConfigFilesList: defList, oldOSConfigFilesList: oldList},
			[]string{""}},
		{"OS_CONFIG_FILES_PATH over the default list",
			map[string]string{"OS_CONFIG_FILES_PATH": "LIST"},
			map[string]string{"LIST": pathList, OSConfigFilesList: defList, oldOSConfigFilesList: oldList},
			[]string{"/path.json"}},
		{"OS_CONFIG_FILES_PATH empty list: the legacy list",
			map[string]string{"OS_CONFIG_FILES_PATH": "LIST"},
			map[string]string{"LIST": `[]`, OSConfigFilesList: defList, oldOSConfigFilesList: oldList},
			[]string{"/legacy.json"}},
		{"OS_CONFIG_FILES_PATH missing: the legacy list",
			map[string]string{"OS_CONFIG_FILES_PATH": "LIST"},
			map[string]string{OSConfigFilesList: defList, oldOSConfigFilesList: oldList},
			[]string{"/legacy.json"}},
		{"default list over the legacy one",
			nil,
			map[string]string{OSConfigFilesList: defList, oldOSConfigFilesList: oldList},
			[]string{"/default.json"}},
		{"empty default list: the legacy list",
			nil,
			map[string]string{OSConfigFilesList: `[]`, oldOSConfigFilesList: oldList},
			[]string{"/legacy.json"}},
		{"fallbacks alone",
			nil, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			list := filepath.Join(t.TempDir(), "list.json")
			for p, s := range tc.files {
				if p == "LIST" {
					p = list
				} else {
					p = root + p
				}
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			lookup := func(k string) (string, bool) {
				v, ok := tc.env[k]
				return strings.ReplaceAll(v, "LIST", list), ok
			}
			got, err := Files(lookup, root)
			if err != nil {
				t.Fatal(err)
			}
			want := append(Fallbacks(root), tc.want...)
			if !slices.Equal(got, want) {
				t.Errorf("Files = %q, want %q", got, want)
			}
		})
	}
}

// A list named on os-apply-config's command line (--os-config-files)
// that is empty is the answer: no legacy list, no warning. The default
// one, empty, falls back with the reference's DEPRECATED warning.
func TestListedLegacyOnlyForTheDefault(t *testing.T) {
	root := t.TempDir()
	old := root + oldOSConfigFilesList
	os.MkdirAll(filepath.Dir(old), 0o755)
	os.WriteFile(old, []byte(`["/legacy.json"]`), 0o644)
	given := filepath.Join(root, "given.json")
	os.WriteFile(given, []byte(`[]`), 0o644)
	noEnv := func(string) (string, bool) { return "", false }
	for _, tc := range []struct {
		name     string
		listPath string
		want     []string
		warned   string
	}{
		{"given list", given, nil, ""},
		{"default list", ListPath(noEnv, root), []string{"/legacy.json"}, old},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var warned string
			got, err := Listed(noEnv, root, tc.listPath, func(p string) { warned = p })
			if err != nil || !slices.Equal(got, tc.want) || warned != tc.warned {
				t.Errorf("Listed = %q, %v, warned %q; want %q, warned %q", got, err, warned, tc.want, tc.warned)
			}
		})
	}
}

// The lists are where os-apply-config 12.0.0 looks (apply_config.py's
// OS_CONFIG_FILES_PATH and OS_CONFIG_FILES_PATH_OLD), whatever the
// cache's constants they are made of become.
func TestListPlacesAreTheReferences(t *testing.T) {
	if OSConfigFilesList != "/var/lib/os-collect-config/os_config_files.json" ||
		oldOSConfigFilesList != "/var/run/os-collect-config/os_config_files.json" {
		t.Errorf("lists at %s and %s", OSConfigFilesList, oldOSConfigFilesList)
	}
}
