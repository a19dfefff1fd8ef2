package hostile

import (
	"encoding/json"
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

	// not even room for a new directory
	write(t, w+"/t/etc/new/dir/f4", "f4={{x}}\n", 0o644)
	old = snapshot(t, mnt+"/out")
	leaveFree(t, mnt, 0)
	r = oac("new")
	errs = r.lines("[ERROR]")
	if r.code != 1 || len(errs) != 1 || !strings.Contains(errs[0], "could not write "+mnt+"/out/etc/new/dir/f4: mkdir "+mnt+"/out/etc/new: no space left on device") {
		t.Errorf("exit %d, error lines %q", r.code, errs)
	}
	sameFiles(t, "after a full disk", old, snapshot(t, mnt+"/out"))
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

// diskSteps is how many fill levels the sweeps try: HOSTILE_DISK_STEPS
// (make torture), else a few dozen.
func diskSteps(t *testing.T) int {
	n := 24
	if s := os.Getenv("HOSTILE_DISK_STEPS"); s != "" {
		if _, err := fmt.Sscan(s, &n); err != nil || n < 1 {
			t.Fatalf("HOSTILE_DISK_STEPS=%q", s)
		}
	}
	return n
}

// leaveFree fills the filesystem of dir with a ballast file until about
// want bytes are free (want <= 0: as full as it gets); leaveFree(-1) of
// an empty ballast is undone by noBallast.
func leaveFree(t *testing.T, dir string, want int64) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, "ballast"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for size := free(t, dir) - max(want, 0); size > 0; size -= 4096 {
		if err := syscall.Fallocate(int(f.Fd()), 0, 0, size); err == nil {
			return
		} else if err != syscall.ENOSPC {
			t.Fatalf("fallocate %d: %v", size, err)
		}
	}
}

func noBallast(t *testing.T, dir string) {
	t.Helper()
	if err := os.Remove(filepath.Join(dir, "ballast")); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
}

// The disk fills up at every point of a render in turn (staging each
// file, making a new directory, syncing): each run either succeeds with
// every file new, or fails with one line naming a file and leaves every
// file old, with no staging file left; the next run with room succeeds.
func TestFullDiskSweepRender(t *testing.T) {
	mnt := smallFS(t, 8)
	w := t.TempDir()
	for i, p := range []string{"etc/a", "etc/new/b", "etc/new/deeper/c", "var/d"} {
		write(t, w+"/t/"+p, fmt.Sprintf("%d={{x}}\n", i), 0o644)
	}
	oac := func(value string) result {
		write(t, w+"/md.json", string(mustJSON(map[string]string{"x": value})), 0o644)
		return run(t, nil, nil, "os-apply-config", "-t", w+"/t", "-o", mnt+"/out", "-m", w+"/md.json")
	}
	value := strings.Repeat("v", 300<<10)
	need := 4*int64(len(value)) + 64<<10 // the four files and their directories
	steps, failed := diskSteps(t), 0
	where := map[string]int{} // what the failed runs were doing
	for step := range steps {
		os.RemoveAll(mnt + "/out")
		if r := oac("old"); r.code != 0 {
			t.Fatalf("step %d: first render: %s", step, r.stderr)
		}
		old := snapshot(t, mnt+"/out")
		// from a full disk to room for everything
		leaveFree(t, mnt, int64(step)*need/int64(max(steps-1, 1)))
		r := oac(value)
		switch {
		case r.code == 0:
			if got := read(t, mnt+"/out/etc/new/deeper/c"); got != "2="+value+"\n" {
				t.Fatalf("step %d: success, but c is %.20q", step, got)
			}
		case r.code == 1:
			failed++
			errs := r.lines("[ERROR]")
			if len(errs) != 1 || !strings.Contains(errs[0], "could not write "+mnt) || !strings.Contains(errs[0], "no space left on device") {
				t.Errorf("step %d: error lines %q", step, short(errs))
			} else {
				_, op, _ := strings.Cut(errs[0], ": ") // could not write X: OP Y: no space...
				op, _, _ = strings.Cut(op, " ")
				where[op]++
			}
			now := snapshot(t, mnt+"/out")
			for p, v := range old {
				if now[p] != v {
					t.Errorf("step %d: %s changed on a failed run", step, p)
				}
			}
			for p := range now {
				if _, ok := old[p]; !ok {
					t.Errorf("step %d: %s left by a failed run", step, p)
				}
			}
		default:
			t.Fatalf("step %d: exit %d\n%s", step, r.code, r.stderr)
		}
		noBallast(t, mnt)
		if r := oac(value); r.code != 0 {
			t.Fatalf("step %d: with room again: exit %d\n%s", step, r.code, r.stderr)
		}
	}
	t.Logf("%d fill levels, %d failed runs (%v), every file old or new", steps, failed, where)
}

// The disk fills up at every point of a pass in turn (a key's .json or
// .orig, os_config_files.json, a commit's .last): each pass either
// commits every change, or fails with one line naming the key or file;
// every cache file still parses and is the old or the new content;
// os_config_files.json lists only files that exist; no temporary file is
// left; the command ran only if everything was stored, and once there is
// room again the pass runs it if and only if something was not committed.
func TestFullDiskSweepCacheStore(t *testing.T) {
	mnt := smallFS(t, 8)
	w := t.TempDir()
	cache := mnt + "/cache"
	doc := func(key, content string) string {
		d := string(mustJSON(map[string]string{"v": content}))
		write(t, w+"/local/"+key, d, 0o600)
		return d
	}
	ran := func() int { b, _ := os.ReadFile(w + "/ran"); return strings.Count(string(b), "\n") }
	occ := func() result {
		return run(t, occEnv(w), nil, "os-collect-config", "--config-file", "/dev/null", "--one-time",
			"--cachedir", cache, "--backup-cachedir", w+"/backup", "--local-path", w+"/local",
			"-c", "echo ran >> "+w+"/ran", "local")
	}
	keys := []string{"a", "b", "c"}
	big := strings.Repeat("n", 200<<10)
	need := 7*int64(len(big)) + 64<<10 // three .json, three .last, the list
	steps, failed := diskSteps(t), 0
	where := map[string]int{}
	for step := range steps {
		os.RemoveAll(cache)
		os.RemoveAll(w + "/local")
		for _, k := range keys {
			doc(k, "old "+k)
		}
		if r := occ(); r.code != 0 {
			t.Fatalf("step %d: first pass: %s", step, r.stderr)
		}
		for _, k := range keys {
			doc(k, big+k)
		}
		leaveFree(t, mnt, int64(step)*need/int64(max(steps-1, 1)))
		before := ran()
		r := occ()
		ranNow := ran() - before
		switch r.code {
		case 0:
			if ranNow != 1 {
				t.Errorf("step %d: success with %d command runs", step, ranNow)
			}
		case 1:
			failed++
			errs := r.lines("no space left on device")
			if len(errs) != 1 || !(strings.HasPrefix(errs[0], "storing ") || strings.HasPrefix(errs[0], "committing ") || strings.HasPrefix(errs[0], "writing os_config_files.json")) {
				t.Errorf("step %d: error lines %q\n%s", step, short(errs), r.stderr)
			}
			if len(errs) == 1 {
				what, _, _ := strings.Cut(errs[0], ":")
				where[what]++
				if ranNow != btoi(strings.HasPrefix(errs[0], "committing ")) {
					t.Errorf("step %d: the command ran %d times on %q", step, ranNow, errs[0])
				}
			}
		default:
			t.Fatalf("step %d: exit %d\n%s", step, r.code, r.stderr)
		}
		uncommitted := false
		for _, k := range keys {
			for _, suffix := range []string{".json", ".json.last", ".json.orig"} {
				b, err := os.ReadFile(cache + "/" + k + suffix)
				var v map[string]string
				if err != nil || json.Unmarshal(b, &v) != nil || (v["v"] != "old "+k && v["v"] != big+k) {
					t.Errorf("step %d: %s%s is neither old nor new (%v)", step, k, suffix, err)
				}
				if suffix == ".json.last" && v["v"] != big+k {
					uncommitted = true
				}
			}
		}
		var list []string
		if err := json.Unmarshal([]byte(read(t, cache+"/os_config_files.json")), &list); err != nil {
			t.Errorf("step %d: os_config_files.json: %v", step, err)
		}
		for _, p := range list {
			if _, err := os.Stat(p); err != nil {
				t.Errorf("step %d: os_config_files.json lists %s: %v", step, p, err)
			}
		}
		for _, p := range tree(t, cache) {
			if strings.HasPrefix(p, "tmp") || strings.HasPrefix(p, ".") {
				t.Errorf("step %d: %s left in the cache", step, p)
			}
		}
		noBallast(t, mnt)
		before = ran()
		if r := occ(); r.code != 0 || ran()-before != btoi(uncommitted) {
			t.Errorf("step %d: with room again: exit %d, %d command runs, want %d\n%s", step, r.code, ran()-before, btoi(uncommitted), r.stderr)
		}
	}
	t.Logf("%d fill levels, %d failed passes (%v), the committed state always old or new", steps, failed, where)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
