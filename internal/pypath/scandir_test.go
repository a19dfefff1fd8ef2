package pypath

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
)

// ScanDir lists what os.ReadDir lists, names and types, in its order,
// for a directory larger than one getdents buffer.
func TestScanDirListsAsReadDir(t *testing.T) {
	dir := t.TempDir()
	for i := range 300 {
		name := filepath.Join(dir, strings.Repeat("n", 1+i%40)+string(rune('a'+i%26))+string(rune('a'+i/26)))
		switch i % 4 {
		case 0:
			os.WriteFile(name, nil, 0o644)
		case 1:
			os.Mkdir(name, 0o755)
		case 2:
			os.Symlink("nowhere", name)
		case 3:
			syscall.Mkfifo(name, 0o644)
		}
	}
	got, err := ScanDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadDir(dir)
	var g, w []string
	for _, e := range got {
		g = append(g, e.Name+" "+e.Type.String())
	}
	for _, e := range want {
		w = append(w, e.Name()+" "+e.Type().String())
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("ScanDir:\n%v\nos.ReadDir:\n%v", g, w)
	}
	if _, err := ScanDir(filepath.Join(dir, "missing")); !os.IsNotExist(err) {
		t.Errorf("missing directory: %v", err)
	}
}
