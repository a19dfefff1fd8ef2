package metadata

import (
	"os"
	"path/filepath"
	"slices"
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
