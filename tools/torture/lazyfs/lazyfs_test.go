package lazyfs

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func mount(t *testing.T) *Mount {
	t.Helper()
	if testing.Short() {
		t.Skip("mounts a FUSE filesystem")
	}
	if err := Available(); err != nil {
		if os.Getenv("REQUIRE_TORTURE") == "1" {
			t.Fatalf("REQUIRE_TORTURE=1: %v", err)
		}
		t.Skipf("no power-cut tests: %v", err)
	}
	m, err := New(t.TempDir(), EmptyImage())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := m.Close(); err != nil {
			t.Error(err)
		}
	})
	return m
}

// Each case does something to the mounted filesystem, cuts the power,
// and says what the files must hold after: a body, or absent (nil).
func TestCut(t *testing.T) {
	write := func(t *testing.T, path, body string, sync bool) {
		t.Helper()
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString(body); err != nil {
			t.Fatal(err)
		}
		if sync {
			if err := f.Sync(); err != nil {
				t.Fatal(err)
			}
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	syncDir := func(t *testing.T, dir string) {
		t.Helper()
		d, err := os.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		if err := d.Sync(); err != nil {
			t.Fatal(err)
		}
	}
	absent := "\x00absent"
	cases := []struct {
		name string
		// before runs, then everything is made durable; then do runs,
		// and the power is cut.
		before, do func(t *testing.T, dir string)
		want       map[string]string
	}{
		{
			name: "a write without fsync is lost with its name",
			do:   func(t *testing.T, d string) { write(t, d+"/f", "new", false) },
			want: map[string]string{"f": absent},
		},
		{
			name: "fsync without the directory's: the name is lost",
			do:   func(t *testing.T, d string) { write(t, d+"/f", "new", true) },
			want: map[string]string{"f": absent},
		},
		{
			name: "the directory's fsync without the file's: the name, empty",
			do: func(t *testing.T, d string) {
				write(t, d+"/f", "new", false)
				syncDir(t, d)
			},
			want: map[string]string{"f": ""},
		},
		{
			name: "fsync of the file and of its directory keep both",
			do: func(t *testing.T, d string) {
				write(t, d+"/f", "new", true)
				syncDir(t, d)
			},
			want: map[string]string{"f": "new"},
		},
		{
			name:   "an overwrite without fsync leaves the old bytes",
			before: func(t *testing.T, d string) { write(t, d+"/f", "old", false) },
			do:     func(t *testing.T, d string) { write(t, d+"/f", "new-and-longer", false) },
			want:   map[string]string{"f": "old"},
		},
		{
			name:   "fdatasync keeps the bytes",
			before: func(t *testing.T, d string) { write(t, d+"/f", "old", false) },
			do: func(t *testing.T, d string) {
				f, _ := os.OpenFile(d+"/f", os.O_WRONLY|os.O_APPEND, 0)
				f.WriteString("+more")
				if err := syscall.Fdatasync(int(f.Fd())); err != nil {
					t.Fatal(err)
				}
				f.Close()
			},
			want: map[string]string{"f": "old+more"},
		},
		{
			name:   "a rename without the directory's fsync is lost",
			before: func(t *testing.T, d string) { write(t, d+"/f", "old", false) },
			do: func(t *testing.T, d string) {
				write(t, d+"/tmp", "new", true)
				if err := os.Rename(d+"/tmp", d+"/f"); err != nil {
					t.Fatal(err)
				}
			},
			want: map[string]string{"f": "old", "tmp": absent},
		},
		{
			name:   "a synced file renamed, then the directory synced: new",
			before: func(t *testing.T, d string) { write(t, d+"/f", "old", false) },
			do: func(t *testing.T, d string) {
				write(t, d+"/tmp", "new", true)
				os.Rename(d+"/tmp", d+"/f")
				syncDir(t, d)
			},
			want: map[string]string{"f": "new", "tmp": absent},
		},
		{
			name: "a rename into another directory needs both directories",
			before: func(t *testing.T, d string) {
				os.Mkdir(d+"/a", 0o755)
				os.Mkdir(d+"/b", 0o755)
				write(t, d+"/a/f", "x", false)
			},
			do: func(t *testing.T, d string) {
				os.Rename(d+"/a/f", d+"/b/f")
				syncDir(t, d+"/a")
			},
			want: map[string]string{"a/f": absent, "b/f": absent},
		},
		{
			name:   "an unlink without the directory's fsync is undone",
			before: func(t *testing.T, d string) { write(t, d+"/f", "old", false) },
			do:     func(t *testing.T, d string) { os.Remove(d + "/f") },
			want:   map[string]string{"f": "old"},
		},
		{
			name:   "an unlink made durable",
			before: func(t *testing.T, d string) { write(t, d+"/f", "old", false) },
			do: func(t *testing.T, d string) {
				os.Remove(d + "/f")
				syncDir(t, d)
			},
			want: map[string]string{"f": absent},
		},
		{
			name: "a directory whose parent was not synced is lost with its files",
			do: func(t *testing.T, d string) {
				os.Mkdir(d+"/sub", 0o755)
				write(t, d+"/sub/f", "new", true)
				syncDir(t, d+"/sub")
			},
			want: map[string]string{"sub/f": absent},
		},
		{
			name:   "a chmod without fsync is lost; fdatasync does not keep it",
			before: func(t *testing.T, d string) { write(t, d+"/f", "old", false) },
			do: func(t *testing.T, d string) {
				f, _ := os.OpenFile(d+"/f", os.O_WRONLY, 0)
				f.Chmod(0o600)
				syscall.Fdatasync(int(f.Fd()))
				f.Close()
			},
			want: map[string]string{"f": "old", "f mode": "644"},
		},
		{
			name:   "a chmod with fsync is kept",
			before: func(t *testing.T, d string) { write(t, d+"/f", "old", false) },
			do: func(t *testing.T, d string) {
				f, _ := os.OpenFile(d+"/f", os.O_WRONLY, 0)
				f.Chmod(0o600)
				f.Sync()
				f.Close()
			},
			want: map[string]string{"f": "old", "f mode": "600"},
		},
		{
			name: "O_SYNC writes are durable as they are made",
			before: func(t *testing.T, d string) {
				f, _ := os.Create(d + "/f")
				f.Close()
			},
			do: func(t *testing.T, d string) {
				f, err := os.OpenFile(d+"/f", os.O_WRONLY|os.O_SYNC, 0)
				if err != nil {
					t.Fatal(err)
				}
				f.WriteString("synced")
				f.Close()
			},
			want: map[string]string{"f": "synced"},
		},
		{
			name:   "a hard link needs its directory synced; the first name stays",
			before: func(t *testing.T, d string) { write(t, d+"/f", "old", false) },
			do: func(t *testing.T, d string) {
				os.Link(d+"/f", d+"/g")
				os.Remove(d + "/f")
			},
			want: map[string]string{"f": "old", "g": absent},
		},
	}
	m := mount(t)
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(m.Dir, "case", string(rune('a'+i)))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if c.before != nil {
				c.before(t, dir)
			}
			m.Sync()
			c.do(t, dir)
			if err := m.Cut(); err != nil {
				t.Fatal(err)
			}
			for rel, want := range c.want {
				if mode, ok := cutSuffix(rel, " mode"); ok {
					fi, err := os.Stat(filepath.Join(dir, mode))
					if err != nil || fi.Mode().Perm().String() != os.FileMode(parseOctal(want)).String() {
						t.Errorf("%s: mode %v (%v), want %s", mode, fi.Mode(), err, want)
					}
					continue
				}
				got, err := os.ReadFile(filepath.Join(dir, rel))
				switch {
				case want == absent && err == nil:
					t.Errorf("%s: %q, want it absent", rel, got)
				case want == absent && !os.IsNotExist(err):
					t.Errorf("%s: %v, want it absent", rel, err)
				case want != absent && (err != nil || string(got) != want):
					t.Errorf("%s: %q (%v), want %q", rel, got, err, want)
				}
			}
		})
	}
}

func cutSuffix(s, suffix string) (string, bool) {
	if len(s) > len(suffix) && s[len(s)-len(suffix):] == suffix {
		return s[:len(s)-len(suffix)], true
	}
	return s, false
}

func parseOctal(s string) uint32 {
	var n uint32
	for _, c := range s {
		n = n*8 + uint32(c-'0')
	}
	return n
}

// After a freeze every request fails: nothing a dying process does
// reaches the disk.
func TestFrozen(t *testing.T) {
	m := mount(t)
	img := m.Freeze()
	if err := os.WriteFile(filepath.Join(m.Dir, "f"), []byte("x"), 0o644); err == nil {
		t.Error("a write after the freeze succeeded")
	}
	if err := m.Restart(img); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(m.Dir, "f"), []byte("x"), 0o644); err != nil {
		t.Errorf("after the restart: %v", err)
	}
}

// An image taken once can be mounted again and again: each trial starts
// from the same disk.
func TestImageRestart(t *testing.T) {
	m := mount(t)
	os.MkdirAll(filepath.Join(m.Dir, "etc/x"), 0o755)
	os.WriteFile(filepath.Join(m.Dir, "etc/x/conf"), []byte("v1"), 0o640)
	os.Symlink("x/conf", filepath.Join(m.Dir, "etc/link"))
	m.Sync()
	img := m.Image()
	for range 3 {
		os.WriteFile(filepath.Join(m.Dir, "etc/x/conf"), []byte("v2"), 0o640)
		m.Sync()
		if err := m.Restart(img); err != nil {
			t.Fatal(err)
		}
		if b, err := os.ReadFile(filepath.Join(m.Dir, "etc/link")); err != nil || string(b) != "v1" {
			t.Fatalf("after a restart from the image: %q %v", b, err)
		}
		if fi, _ := os.Stat(filepath.Join(m.Dir, "etc/x/conf")); fi.Mode().Perm() != 0o640 {
			t.Fatalf("mode %v", fi.Mode())
		}
	}
	if got := img.Files(); string(got["etc/x/conf"]) != "v1" || string(got["etc/link"]) != "x/conf" {
		t.Errorf("Files: %q", got)
	}
}

func TestMain(m *testing.M) {
	Launched()
	os.Exit(m.Run())
}

// syncfs and sync reach lazyfs from the processes it starts, and only
// after the sync does the call return.
func TestSyncFromProcess(t *testing.T) {
	m := mount(t)
	for _, c := range []struct{ name, script string }{
		{"syncfs", "printf new > a && sync -f a && printf lost > b"},
		{"sync", "printf new > a && sync && printf lost > b"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(m.Dir, c.name)
			os.Mkdir(dir, 0o755)
			m.Sync()
			var out strings.Builder
			r, err := m.Start(Proc{Args: []string{"sh", "-c", c.script}, Env: os.Environ(), Dir: dir, Stdout: &out, Stderr: &out})
			if err != nil {
				t.Fatal(err)
			}
			if err := r.Wait(); err != nil {
				t.Fatalf("%v: %s", err, out.String())
			}
			if err := m.Cut(); err != nil {
				t.Fatal(err)
			}
			if b, err := os.ReadFile(filepath.Join(dir, "a")); err != nil || string(b) != "new" {
				t.Errorf("a: %q %v", b, err)
			}
			if _, err := os.Stat(filepath.Join(dir, "b")); !os.IsNotExist(err) {
				t.Errorf("b, written after the sync, survived the cut: %v", err)
			}
		})
	}
}

// Kill takes the whole tree down: a grandchild that ignores SIGTERM and
// sleeps is gone when Wait returns.
func TestKillTree(t *testing.T) {
	m := mount(t)
	r, err := m.Start(Proc{Args: []string{"sh", "-c", "(trap '' TERM; sleep 60; touch late) & sleep 60"}, Env: os.Environ(), Dir: m.Dir})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	r.Kill()
	select {
	case <-r.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the tree outlived its kill by 10 s")
	}
	if err := m.Cut(); err != nil {
		t.Fatalf("the mount is still in use after the kill: %v", err)
	}
}
