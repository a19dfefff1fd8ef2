package nodeconfig

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// The metadata files are os-apply-config's: its fallback files first,
// then OS_CONFIG_FILES (even empty), else the list OS_CONFIG_FILES_PATH
// names, else os-collect-config's list, else (either list empty or
// missing) that list's old place.
func TestMetadataFiles(t *testing.T) {
	root := t.TempDir()
	write := func(p, s string) {
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	custom := filepath.Join(root, "list.json")
	write(custom, `["/c.json", 3]`)
	for _, tc := range []struct {
		name    string
		environ []string
		files   map[string]string
		want    []string
	}{
		{"variable", []string{"OS_CONFIG_FILES=/a.json:/b.json"}, nil, []string{"/a.json", "/b.json"}},
		{"empty variable", []string{"OS_CONFIG_FILES="}, nil, []string{""}},
		{"list path", []string{"OS_CONFIG_FILES_PATH=" + custom}, nil, []string{"/c.json"}},
		{"no list", nil, nil, nil},
		{"default list", nil, map[string]string{"/var/lib/os-collect-config/os_config_files.json": `["/d.json"]`, "/var/run/os-collect-config/os_config_files.json": `["/old.json"]`}, []string{"/d.json"}},
		{"old list", nil, map[string]string{"/var/run/os-collect-config/os_config_files.json": `["/old.json"]`}, []string{"/old.json"}},
		{"list path missing: old list", []string{"OS_CONFIG_FILES_PATH=" + filepath.Join(root, "missing.json")}, map[string]string{"/var/run/os-collect-config/os_config_files.json": `["/old.json"]`}, []string{"/old.json"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := t.TempDir()
			for p, s := range tc.files {
				write(r+p, s)
			}
			env := Env{Root: r, Environ: tc.environ}
			got, err := env.MetadataFiles()
			if err != nil {
				t.Fatal(err)
			}
			want := []string{r + "/var/cache/heat-cfntools/last_metadata", r + "/var/lib/heat-cfntools/cfn-init-data", r + "/var/lib/cloud/data/cfn-init-data"}
			want = append(want, tc.want...)
			if !slices.Equal(got, want) {
				t.Errorf("got %q, want %q", got, want)
			}
		})
	}
	env := Env{Root: root, Environ: []string{"OS_CONFIG_FILES_PATH=" + filepath.Join(root, "bad.json")}}
	write(filepath.Join(root, "bad.json"), `{"not": "a list"}`)
	if _, err := env.MetadataFiles(); err == nil {
		t.Error("a list file that is not a list: no error")
	}
}

// A replaced file keeps its mode, and a link is followed: the file it
// points to is replaced, the link stays.
func TestWriteFileThroughLink(t *testing.T) {
	d := t.TempDir()
	target, link := filepath.Join(d, "hosts.real"), filepath.Join(d, "hosts")
	if err := os.WriteFile(target, []byte("old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Symlink("hosts.real", link)
	p := Resolve(link)
	if err := WriteFile(p, []byte("new\n"), ModeOr(p, 0o644)); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(link); string(b) != "new\n" {
		t.Errorf("through the link: %q", b)
	}
	if fi, _ := os.Lstat(link); fi.Mode()&os.ModeSymlink == 0 {
		t.Error("the link was replaced by a file")
	}
	if fi, _ := os.Stat(target); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %o, want 600", fi.Mode().Perm())
	}
	if ents, _ := os.ReadDir(d); len(ents) != 2 {
		t.Errorf("left behind: %v", ents)
	}
}

// A replaced file keeps its owner and group (the steps run as root).
func TestWriteFileKeepsOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chown needs root")
	}
	p := filepath.Join(t.TempDir(), "hosts")
	if err := os.WriteFile(p, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(p, 65534, 65534); err != nil {
		t.Skip(err)
	}
	if err := WriteFile(p, []byte("new\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(p)
	if uid, gid := ownerOf(st); uid != 65534 || gid != 65534 {
		t.Errorf("owner %d:%d, want 65534:65534", uid, gid)
	}
}

// The replaced file is never seen with another owner: its owner and mode
// are the staged file's before the rename, so the directory's events
// (inotify) show no change of attributes of the file's own name, only of
// the staged one's before it is renamed over the file.
func TestWriteFileNeverShowsAnotherOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chown needs root")
	}
	d := t.TempDir()
	p := filepath.Join(d, "hosts")
	if err := os.WriteFile(p, []byte("old\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(p, 4242, 4343); err != nil {
		t.Skip(err)
	}
	fd, err := syscall.InotifyInit1(syscall.IN_NONBLOCK | syscall.IN_CLOEXEC)
	if err != nil {
		t.Skip(err)
	}
	defer syscall.Close(fd)
	if _, err := syscall.InotifyAddWatch(fd, d, syscall.IN_ATTRIB|syscall.IN_MOVED_TO|syscall.IN_CREATE); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(p, []byte("new\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	var events []string
	buf := make([]byte, 64<<10)
	n, err := syscall.Read(fd, buf)
	if err != nil {
		t.Fatal(err)
	}
	for off := 0; off+syscall.SizeofInotifyEvent <= n; {
		ev := (*syscall.InotifyEvent)(unsafe.Pointer(&buf[off]))
		name := strings.TrimRight(string(buf[off+syscall.SizeofInotifyEvent:off+syscall.SizeofInotifyEvent+int(ev.Len)]), "\x00")
		off += syscall.SizeofInotifyEvent + int(ev.Len)
		what := map[uint32]string{syscall.IN_ATTRIB: "attrib", syscall.IN_MOVED_TO: "moved-to", syscall.IN_CREATE: "create"}[ev.Mask&^syscall.IN_ISDIR]
		if name != "hosts" {
			name = "staged"
		}
		events = append(events, what+" "+name)
	}
	if !slices.Contains(events, "moved-to hosts") || slices.Contains(events, "attrib hosts") {
		t.Errorf("events %q: want the staged file renamed over hosts, and no change of hosts' attributes", events)
	}
	st, _ := os.Stat(p)
	if uid, gid := ownerOf(st); uid != 4242 || gid != 4343 || st.Mode().Perm() != 0o640 {
		t.Errorf("owner %d:%d mode %v, want 4242:4343 0640", uid, gid, st.Mode())
	}
}

// A key is shown as it is, or quoted when it would not read back on one
// line.
func TestKeyText(t *testing.T) {
	for in, want := range map[string]string{
		"net.ipv4.ip_forward": "net.ipv4.ip_forward", "nova::my_ip": "nova::my_ip", "caf\u00e9": "caf\u00e9",
		"": `""`, "a b": `"a b"`, "a\nb": `"a\nb"`, "a\rb": `"a\rb"`, "a\x00": `"a\x00"`, "\u00a0": `"\u00a0"`,
		"a\u2028b": `"a\u2028b"`, "\xff": `"\xff"`,
	} {
		if got := KeyText(in); got != want {
			t.Errorf("KeyText(%q) = %s, want %s", in, got, want)
		}
	}
}

// JQNumber prints a double as jq does (checked against /usr/bin/jq when
// it is there).
func TestJQNumber(t *testing.T) {
	cases := map[float64]string{
		1e16: "1e+16", 1.5e16: "15000000000000000", 1e15: "1000000000000000", 65536: "65536", 0.1: "0.1",
		1e-5: "1e-05", 0.0001: "0.0001", 1.5e300: "1.5e+300", math.Copysign(0, -1): "-0", 123456789.5: "123456789.5",
		12345678901234567: "12345678901234568", math.Inf(1): "1.7976931348623157e+308", -2.5e-7: "-2.5e-07",
	}
	for f, want := range cases {
		if got := JQNumber(f); got != want {
			t.Errorf("JQNumber(%v) = %s, want %s", f, got, want)
		}
	}
	if _, err := exec.LookPath("/usr/bin/jq"); err != nil {
		return
	}
	for f := range cases {
		if math.IsInf(f, 0) {
			continue
		}
		in := strconv.FormatFloat(f, 'g', -1, 64)
		cmd := exec.Command("/usr/bin/jq", ".")
		cmd.Stdin = strings.NewReader(in)
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		if got := JQNumber(f); got != strings.TrimSpace(string(out)) {
			t.Errorf("JQNumber(%s) = %s, jq prints %s", in, got, out)
		}
	}
}
