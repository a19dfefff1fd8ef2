package hostile

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// smallFS mounts a fresh ext4 filesystem of sizeMB on a loop device of
// its own and returns its mount point; t.Cleanup unmounts it and
// detaches the device. No blocks are reserved for root, so the disk is
// full for the root-run programs too.
func smallFS(t *testing.T, sizeMB int) string {
	t.Helper()
	agent.Dir(t) // skips under -short, before mounting anything
	var missing []string
	if os.Geteuid() != 0 {
		missing = append(missing, "root")
	}
	for _, tool := range []string{"mkfs.ext4", "losetup", "mount", "umount"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool)
		}
	}
	if len(missing) > 0 {
		if os.Getenv("REQUIRE_REFERENCE") == "1" {
			t.Fatalf("a full disk needs %s", strings.Join(missing, ", "))
		}
		t.Skipf("a full disk needs %s", strings.Join(missing, ", "))
	}
	dir := t.TempDir()
	img, mnt := filepath.Join(dir, "disk.img"), filepath.Join(dir, "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	sh := func(argv ...string) string {
		t.Helper()
		out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	sh("truncate", "-s", fmt.Sprintf("%dM", sizeMB), img)
	sh("mkfs.ext4", "-q", "-F", "-m", "0", img)
	dev := sh("losetup", "--find", "--show", img)
	t.Cleanup(func() {
		if out, err := exec.Command("losetup", "-d", dev).CombinedOutput(); err != nil {
			t.Errorf("losetup -d %s: %v\n%s", dev, err, out)
		}
	})
	sh("mount", dev, mnt)
	t.Cleanup(func() {
		if out, err := exec.Command("umount", mnt).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v\n%s", mnt, err, out)
		}
	})
	return mnt
}

// free is the bytes left for files on the filesystem of path.
func free(t *testing.T, path string) int64 {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		t.Fatal(err)
	}
	return int64(st.Bavail) * st.Bsize
}

// snapshot is every file under dir with its bytes and mode.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, p := range tree(t, dir) {
		if strings.HasSuffix(p, "/") {
			continue
		}
		st, err := os.Lstat(filepath.Join(dir, p))
		if err != nil {
			t.Fatal(err)
		}
		out[p] = fmt.Sprintf("%v %q", st.Mode(), read(t, filepath.Join(dir, p)))
	}
	return out
}

func sameFiles(t *testing.T, what string, before, after map[string]string) {
	t.Helper()
	for p, v := range before {
		if after[p] != v {
			t.Errorf("%s: %s changed or went: %.120s", what, p, after[p])
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("%s: %s appeared", what, p)
		}
	}
}

// os-apply-config renders onto a full disk: one line naming the file
// that could not be staged, exit 1, every old file as it was (bytes and
// mode), no staging file left and no space lost; once the values fit
// again the run succeeds.
func TestFullDiskDuringRender(t *testing.T) {
	mnt := smallFS(t, 8)
	w := t.TempDir()
	for i := 1; i <= 3; i++ {
		write(t, fmt.Sprintf("%s/t/etc/f%d", w, i), fmt.Sprintf("f%d={{x}}\n", i), 0o644)
	}
	write(t, w+"/t/etc/f2.oac", "mode: 0600\n", 0o644)
	oac := func(value string) result {
		write(t, w+"/md.json", string(mustJSON(map[string]string{"x": value})), 0o644)
		return run(t, nil, nil, "os-apply-config", "-t", w+"/t", "-o", mnt+"/out", "-m", w+"/md.json")
	}
	if r := oac("old"); r.code != 0 {
		t.Fatalf("first render: exit %d\n%s", r.code, r.stderr)
	}
	old, room := snapshot(t, mnt+"/out"), free(t, mnt)
	// each file gets half of what is free: the third cannot be staged
	r := oac(strings.Repeat("n", int(room/2)))
	if r.code != 1 {
		t.Errorf("exit %d, want 1\n%s", r.code, r.stderr)
	}
	errs := r.lines("[ERROR]")
	if len(errs) != 1 || !strings.Contains(errs[0], "could not write "+mnt+"/out/etc/f") || !strings.Contains(errs[0], "no space left on device") {
		t.Errorf("error lines %q, want one naming the file and the full disk", short(errs))
	}
	sameFiles(t, "after a full disk", old, snapshot(t, mnt+"/out"))
	if got := free(t, mnt); got != room {
		t.Errorf("%d bytes free after the failed run, %d before: space lost", got, room)
	}
	if r := oac("new"); r.code != 0 || read(t, mnt+"/out/etc/f3") != "f3=new\n" {
		t.Errorf("render once it fits: exit %d\n%s", r.code, r.stderr)
	}
	t.Logf("full disk: %s", errs)
}

// os-collect-config stores onto a full disk: one line naming the key,
// exit 1, the command not run, the committed state (.last) as it was and
// no temporary file left. When the store fits but the commit does not,
// the command has run, the key that could not be committed keeps its old
// .last, and it runs the command again once there is room.
func TestFullDiskDuringCacheStore(t *testing.T) {
	mnt := smallFS(t, 12)
	w := t.TempDir()
	cache := mnt + "/cache"
	doc := func(key string, size int) {
		write(t, w+"/local/"+key, string(mustJSON(map[string]string{"v": strings.Repeat(key, size)})), 0o600)
	}
	occ := func() result {
		return run(t, occEnv(w), nil, "os-collect-config", "--config-file", "/dev/null", "--one-time",
			"--cachedir", cache, "--backup-cachedir", w+"/backup", "--local-path", w+"/local",
			"-c", "echo ran >> "+w+"/ran", "local")
	}
	ran := func() int { b, _ := os.ReadFile(w + "/ran"); return strings.Count(string(b), "\n") }
	doc("a", 10)
	doc("b", 10)
	if r := occ(); r.code != 0 {
		t.Fatalf("first pass: exit %d\n%s", r.code, r.stderr)
	}
	committed := snapshot(t, cache)
	// what the last step frees, to show that a key not committed runs
	// the command again
	write(t, mnt+"/ballast", strings.Repeat("x", 3<<20), 0o600)
	room := int(free(t, mnt))

	// a's new .json fits, b's does not
	doc("a", room*3/5)
	doc("b", room*3/5)
	r := occ()
	if r.code != 1 {
		t.Errorf("exit %d, want 1\n%s", r.code, r.stderr)
	}
	if errs := r.lines("no space left on device"); len(errs) != 1 || !strings.HasPrefix(errs[0], "storing b in the cache: ") {
		t.Errorf("error lines %q, want one naming key b", short(errs))
	}
	if ran() != 1 {
		t.Errorf("the command ran on a failed store")
	}
	after := snapshot(t, cache)
	for _, f := range []string{"a.json.last", "b.json.last", "b.json", "os_config_files.json"} {
		if after[f] != committed[f] {
			t.Errorf("%s changed: %.80s", f, after[f])
		}
	}
	if got, want := slices.Sorted(maps.Keys(after)), slices.Sorted(maps.Keys(committed)); !slices.Equal(got, want) {
		t.Errorf("cache files %q, want %q", got, want)
	}

	// both stores fit, and a's commit, not b's: 3 sizes fit, 4 do not
	doc("a", room*2/7)
	doc("b", room*2/7)
	r = occ()
	if r.code != 1 {
		t.Errorf("exit %d, want 1\n%s", r.code, r.stderr)
	}
	if errs := r.lines("no space left on device"); len(errs) != 1 || !strings.HasPrefix(errs[0], "committing b: ") {
		t.Errorf("error lines %q, want one naming key b's commit\n%s", short(errs), r.stderr)
	}
	if ran() != 2 {
		t.Errorf("the command did not run once the store fitted")
	}
	after = snapshot(t, cache)
	if after["b.json.last"] != committed["b.json.last"] || after["a.json.last"] == committed["a.json.last"] {
		t.Errorf("after a failed commit of b: a.json.last %.40s, b.json.last %.40s", after["a.json.last"], after["b.json.last"])
	}
	if len(after) != len(committed) {
		t.Errorf("cache files %q", slices.Sorted(maps.Keys(after)))
	}

	// with room again, the same metadata runs the command again (b was
	// never committed) and commits it
	if err := os.Remove(mnt + "/ballast"); err != nil {
		t.Fatal(err)
	}
	if r := occ(); r.code != 0 || ran() != 3 {
		t.Errorf("pass once it fits: exit %d, %d commands\n%s", r.code, ran(), r.stderr)
	}
	if r := occ(); r.code != 0 || ran() != 3 {
		t.Errorf("idle pass: exit %d, %d commands\n%s", r.code, ran(), r.stderr)
	}
}
